#include "connectors/kafka/sink_topic.h"

#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>

#include <memory>

#include "connectors/kafka/client.h"
#include "tests/unit/connectors/kafka_test_util.h"

using namespace rtsql;

TEST_CASE("an internal topic on another rtsqld's embedded broker is taken as made on demand") {
  // A bare mock cluster stands for the embedded broker of another process:
  // it answers no admin request, so asking it to create a topic would wait
  // the request's whole timeout for a controller.
  testkafka::MockCluster broker;
  std::unique_ptr<rd_kafka_t, void (*)(rd_kafka_t*)> rk(
      testkafka::client(RD_KAFKA_PRODUCER, broker.bootstrap()), rd_kafka_destroy);
  kafka::InternalTopic topic = kafka::ensureInternalTopic(
      rk.get(), broker.bootstrap(), "_rtsql-t-slots", 16, {{"cleanup.policy", "compact"}}, 15000,
      "a hint");
  CHECK(topic.partitions > 0);
  CHECK(topic.notCreated.find("creates topics only on demand") != std::string::npos);
  CHECK(topic.notCreated.find("controller") == std::string::npos);
}
