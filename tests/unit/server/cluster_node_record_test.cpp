// What a node tells the others about itself (server/cluster/node_record.h)
// and how a node forwarding a read marks its connection
// (server/views/view_forward.h). Two members of a group learning each other's
// address are in cluster_group_test (Kafka clients, so not in the TSan build).
#include "server/cluster/node_record.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "server/views/view_forward.h"

using namespace rtsql;

TEST_CASE("a node record carries the node's name and its PostgreSQL address") {
  const std::string bytes = encodeNodeRecord({"a", "10.0.0.5:5433"});
  CHECK(bytes == "a\npg=10.0.0.5:5433");
  auto back = decodeNodeRecord(bytes);
  REQUIRE(back);
  CHECK(back->node == "a");
  CHECK(back->pgAddress == "10.0.0.5:5433");
  // Without an address it is the name alone, as records were before.
  CHECK(encodeNodeRecord({"b", ""}) == "b");
}

TEST_CASE("a record from before the address still reads, and odd fields are skipped") {
  auto old = decodeNodeRecord("node-1");
  REQUIRE(old);
  CHECK(old->node == "node-1");
  CHECK(old->pgAddress.empty());
  auto later = decodeNodeRecord("n\nzone=eu\npg=[::1]:6000\n");
  REQUIRE(later);
  CHECK(later->node == "n");
  CHECK(later->pgAddress == "[::1]:6000");
  // An address that is not host:port is not taken.
  for (const char* bad : {"n\npg=host", "n\npg=host:0", "n\npg=host:70000", "n\npg=a b:1",
                          "n\npg=h/x:5", "n\npg=[zz]:5", "n\npg=:5"}) {
    auto r = decodeNodeRecord(bad);
    REQUIRE(r);
    CHECK_MESSAGE(r->pgAddress.empty(), bad);
  }
  CHECK_FALSE(decodeNodeRecord(""));
  CHECK_FALSE(decodeNodeRecord("\npg=h:1"));
  CHECK_FALSE(decodeNodeRecord(std::string(kMaxNodeRecordBytes + 1, 'a')));
}

TEST_CASE("an address splits into host and port") {
  using HostPort = std::pair<std::string, std::string>;
  CHECK(splitNodeAddress("h.example:5433") == HostPort{"h.example", "5433"});
  CHECK(splitNodeAddress("[::1]:5433") == HostPort{"::1", "5433"});
  CHECK(validNodeAddress("127.0.0.1:1"));
  CHECK_FALSE(validNodeAddress("127.0.0.1"));
}

TEST_CASE("a forwarded connection names its node in the startup options") {
  CHECK(forwardedByOf("-c rtsql.forwarded_by=a") == std::optional<std::string>("a"));
  CHECK(forwardedByOf("-c  datestyle=ISO -crtsql.forwarded_by=b") ==
        std::optional<std::string>("b"));
  CHECK(forwardedByOf("--rtsql.forwarded_by=c") == std::optional<std::string>("c"));
  CHECK_FALSE(forwardedByOf(""));
  CHECK_FALSE(forwardedByOf("-c rtsql.forwarded_by="));
  CHECK_FALSE(forwardedByOf("-c other=1 rtsql.forwarded_by=x"));
}
