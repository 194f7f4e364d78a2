#include <doctest/doctest.h>
#include <librdkafka/rdkafka.h>
#include <sys/prctl.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "connectors/embedded/broker.h"
#include "connectors/kafka/client.h"
#include "connectors/kafka/main_thread_timers.h"

using namespace rtsql;

namespace {

struct ThreadSlack {
  std::string name;
  long slackNanos = -1;
};

// Name and timer slack of every thread of this process.
std::vector<ThreadSlack> threadSlacks() {
  std::vector<ThreadSlack> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    ThreadSlack t;
    std::ifstream comm(task.path() / "comm");
    // The slack of a thread is shown at /proc/TID only, not under task/.
    std::ifstream slack(std::filesystem::path("/proc") / task.path().filename() / "timerslack_ns");
    if (!std::getline(comm, t.name) || !(slack >> t.slackNanos)) continue;  // thread gone
    out.push_back(t);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "the main threads of clients and of the embedded broker wait with timer slack; broker "
    "threads do not") {
  // A slack of the calling thread's own that no thread has by default, so
  // that the broker threads show whose slack they were given.
  const int previous = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  constexpr long kCallerSlack = 70'000;
  REQUIRE(prctl(PR_SET_TIMERSLACK, kCallerSlack, 0, 0, 0) == 0);
  {
    EmbeddedKafka broker;
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    kafka::setProperty(conf, "bootstrap.servers", broker.bootstrap(), SqlError::npos);
    kafka::HandlePtr client = kafka::newHandle(RD_KAFKA_PRODUCER, conf);
    // After a metadata answer the client has the thread of broker 1 too,
    // started by one of its own threads rather than by this one.
    const rd_kafka_metadata_t* md = nullptr;
    REQUIRE(rd_kafka_metadata(client.get(), 1, nullptr, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_metadata_destroy(md);

    int mains = 0, brokers = 0;
    for (const ThreadSlack& t : threadSlacks()) {
      if (t.name == "rdk:main") {
        ++mains;
        CHECK(t.slackNanos == kafka::kMainThreadSlackNanos);
      } else if (t.name.rfind("rdk:broker", 0) == 0) {
        ++brokers;
        CHECK_MESSAGE(t.slackNanos == kCallerSlack, t.name);
      }
    }
    CHECK(mains == 2);  // the embedded broker's handle and the client
    CHECK(brokers >= 2);
  }
  prctl(PR_SET_TIMERSLACK, previous > 0 ? previous : 0, 0, 0, 0);
}
