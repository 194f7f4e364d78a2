// The schema registry client: the framing, the JSON of its requests and
// answers, its options, and its calls against a loopback HTTP server that
// answers as a registry does (a real Apicurio Registry is in
// tests/e2e/test_schema_registry.py): a schema fetched once per id whatever
// the number of records, an unknown id and a registry away as decode errors.
#include "connectors/schema_registry/schema_registry.h"

#include <doctest/doctest.h>

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/schema.h"
#include "connector_test_util.h"
#include "connectors/format/codec.h"

using namespace rtsql;
using namespace rtsql::schema_registry;

namespace {

// A registry on 127.0.0.1 that answers GET .../schemas/ids/7 with a schema of
// one long field "n", every other request with 404, and keeps the request
// lines it got. One connection at a time, each closed after its answer.
class FakeRegistry {
 public:
  FakeRegistry()
      : acceptor_(ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}),
        endpoint_(acceptor_.local_endpoint()) {
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeRegistry() {
    stop_ = true;
    boost::system::error_code ec;
    // Wakes the accept with a connection of our own.
    boost::asio::ip::tcp::socket s(ioc_);
    s.connect(endpoint_, ec);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(endpoint_.port()); }
  std::vector<std::string> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  // The head (request line and headers) of the last request.
  std::string lastHead() {
    std::lock_guard lock(mu_);
    return lastHead_;
  }

 private:
  void serve() {
    while (!stop_) {
      boost::asio::ip::tcp::socket s(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(s, ec);
      if (ec || stop_) return;
      std::string in;
      char buf[4096];
      while (in.find("\r\n\r\n") == std::string::npos && in.size() < 65536) {
        size_t n = s.read_some(boost::asio::buffer(buf), ec);
        if (ec) break;
        in.append(buf, n);
      }
      const std::string line = in.substr(0, in.find("\r\n"));
      {
        std::lock_guard lock(mu_);
        requests_.push_back(line);
        lastHead_ = in.substr(0, in.find("\r\n\r\n"));
      }
      std::string body, status = "200 OK";
      const std::string_view tail = "/schemas/ids/7 HTTP/1.1";
      if (line.starts_with("GET ") && line.ends_with(tail)) {
        body =
            R"({"schema":"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"}]}"})";
      } else {
        status = "404 Not Found";
        body = R"({"error_code":40403,"message":"Schema not found"})";
      }
      const std::string out = "HTTP/1.1 " + status +
                              "\r\nContent-Type: application/json\r\nConnection: close\r\n"
                              "Content-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
      boost::asio::write(s, boost::asio::buffer(out), ec);
      s.close(ec);
    }
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  const boost::asio::ip::tcp::endpoint endpoint_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<std::string> requests_;
  std::string lastHead_;
  std::thread thread_;
};

std::string framedLong(int32_t id, int64_t v) {
  std::string out;
  appendFraming(out, id);
  uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  do {
    uint8_t b = z & 0x7f;
    z >>= 7;
    out += static_cast<char>(z ? b | 0x80 : b);
  } while (z);
  return out;
}

bool decode(RecordDecoder& d, const std::string& value, Row& row, std::string& error) {
  RecordView r;
  r.value = value.data();
  r.valueLen = value.size();
  return d.decode(r, row, error);
}

}  // namespace

TEST_CASE("schema registry: the framing is magic 0 and the id big-endian") {
  std::string out;
  appendFraming(out, 0x01020304);
  CHECK(out == std::string("\0\x01\x02\x03\x04", 5));
  int32_t id = 0;
  std::string error;
  REQUIRE(readFraming(out.data(), out.size(), id, error));
  CHECK(id == 0x01020304);
  out.clear();
  appendFraming(out, 2000000000);
  REQUIRE(readFraming(out.data(), out.size(), id, error));
  CHECK(id == 2000000000);

  CHECK_FALSE(readFraming("\0\0\0", 3, id, error));
  CHECK(error.find("3 bytes is too short") != std::string::npos);
  CHECK_FALSE(readFraming(nullptr, 0, id, error));
  CHECK_FALSE(readFraming("\x07\0\0\0\x01z", 6, id, error));
  CHECK(error == "magic byte 7 where the schema registry's framing has 0");
}

TEST_CASE("schema registry: the JSON of requests and answers") {
  CHECK(schemaRequestBody(R"({"type":"string"})", "AVRO") ==
        R"({"schema":"{\"type\":\"string\"}"})");
  CHECK(schemaRequestBody("syntax = \"proto3\";\n", "PROTOBUF") ==
        R"({"schema":"syntax = \"proto3\";\n","schemaType":"PROTOBUF"})");

  CHECK(parseSchemaAnswer(R"({"schema":"{\"type\":\"long\"}"})") ==
        std::string(R"({"type":"long"})"));
  CHECK(parseSchemaAnswer(R"({"subject":"t-value","version":2,"id":5,"schema":"\"int\""})") ==
        std::string("\"int\""));
  CHECK_FALSE(parseSchemaAnswer(R"({"id":5})"));
  CHECK_FALSE(parseSchemaAnswer("not json"));

  CHECK(parseIdAnswer(R"({"id":42})") == 42);
  CHECK_FALSE(parseIdAnswer(R"({"id":"42"})"));
  CHECK_FALSE(parseIdAnswer(R"({"id":9999999999})"));

  std::string reasons;
  CHECK(parseCompatibilityAnswer(R"({"is_compatible":true})", reasons) == true);
  CHECK(reasons.empty());
  CHECK(parseCompatibilityAnswer(R"({"is_compatible":false,"messages":["a","b"]})", reasons) ==
        false);
  CHECK(reasons == "a; b");
  CHECK_FALSE(parseCompatibilityAnswer(R"({"compatible":true})", reasons));

  int code = 0;
  CHECK(parseErrorMessage(R"({"error_code":40403,"message":"Schema 9 not found."})", &code) ==
        "Schema 9 not found.");
  CHECK(code == 40403);
  CHECK(parseErrorMessage("<html>").empty());
}

TEST_CASE("schema registry: its options are checked") {
  auto config =
      registryConfig(testing::opts({{kUrlOption, "http://127.0.0.1:8081/apis/ccompat/v7/"},
                                    {kUserInfoOption, "ana:secret"},
                                    {kTimeoutOption, "2500"}}));
  CHECK(config.url == "http://127.0.0.1:8081/apis/ccompat/v7");
  CHECK(config.base.target == "/apis/ccompat/v7");
  CHECK(config.base.port == "8081");
  CHECK(config.userInfo == "ana:secret");
  CHECK(config.timeoutMs == 2500);

  auto refused = [](std::vector<std::pair<std::string, std::string>> o) {
    try {
      registryConfig(testing::opts(o));
    } catch (const SqlError& e) {
      return std::string(e.sqlstate());
    }
    return std::string("accepted");
  };
  CHECK(refused({{kUrlOption, "ftp://127.0.0.1"}}) == "22023");
  CHECK(refused({{kUrlOption, "http://ana:pw@127.0.0.1"}}) == "22023");
  CHECK(refused({{kUrlOption, "http://127.0.0.1"}, {kUserInfoOption, "no-colon"}}) == "22023");
  CHECK(refused({{kUrlOption, "http://127.0.0.1"}, {kTimeoutOption, "0"}}) == "22023");
  CHECK(refused({{kUserInfoOption, "a:b"}}) == "22023");
}

TEST_CASE("schema registry: an avro source fetches each writer's schema once") {
  FakeRegistry fake;
  Schema s;
  s.columns.push_back({"n", testing::t(TypeId::BigInt), false});
  auto d = makeDecoder("avro", s, testing::opts({{kUrlOption, fake.url() + "/apis/ccompat/v7"}}));
  Row row;
  std::string error;
  for (int64_t i = 0; i < 200; ++i) {
    REQUIRE_MESSAGE(decode(*d, framedLong(7, i * 1000003 - 5), row, error), error);
    CHECK(row[0] == Value::bigint(i * 1000003 - 5));
  }
  CHECK(fake.requests() == std::vector<std::string>{"GET /apis/ccompat/v7/schemas/ids/7 HTTP/1.1"});

  // An unknown id is a decode error, and is not asked for again at once.
  for (int i = 0; i < 50; ++i) {
    error.clear();
    CHECK_FALSE(decode(*d, framedLong(8, 1), row, error));
  }
  CHECK(error.find("schema id 8 is not in the schema registry") != std::string::npos);
  CHECK(error.find("Schema not found") != std::string::npos);
  CHECK(fake.requests().size() == 2);

  // A bad magic byte never reaches the registry.
  std::string bad = framedLong(7, 1);
  bad[0] = 1;
  CHECK_FALSE(decode(*d, bad, row, error));
  CHECK(error == "magic byte 1 where the schema registry's framing has 0");
  CHECK(fake.requests().size() == 2);
}

TEST_CASE("schema registry: a registry that does not answer is a decode error within the timeout") {
  // A port nothing listens on: take one, then close it.
  std::string url;
  {
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
    url = "http://127.0.0.1:" + std::to_string(a.local_endpoint().port());
  }
  Schema s;
  s.columns.push_back({"n", testing::t(TypeId::BigInt), false});
  auto d = makeDecoder("avro", s, testing::opts({{kUrlOption, url}, {kTimeoutOption, "2000"}}));
  Row row;
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(decode(*d, framedLong(7, 1), row, error));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  CHECK(error.find("the schema registry did not answer GET " + url + "/schemas/ids/7") == 0);
}

TEST_CASE(
    "schema registry: basic auth from the user info, and a request body with a registration") {
  FakeRegistry fake;
  RegistryConfig config = registryConfig(
      testing::opts({{kUrlOption, fake.url() + "/"}, {kUserInfoOption, "ana:s3cr:et"}}));
  SchemaRegistryClient client(config);
  RegistryError error;
  auto schema = client.schemaById(7, error);
  REQUIRE(schema);
  CHECK(schema->find("\"name\":\"n\"") != std::string::npos);
  // base64("ana:s3cr:et"): the password may hold ':'.
  CHECK(fake.lastHead().find("\r\nAuthorization: Basic YW5hOnMzY3I6ZXQ=") != std::string::npos);
  CHECK(fake.requests().back() == "GET /schemas/ids/7 HTTP/1.1");
  // Cached: no second request.
  REQUIRE(client.schemaById(7, error));
  CHECK(client.requests() == 1);

  // A registration the registry answers 404 to is NotFound, with its message.
  auto id = client.registerSchema("t-value", R"({"type":"string"})", "AVRO", error);
  CHECK_FALSE(id);
  CHECK(error.kind == RegistryError::Kind::NotFound);
  CHECK(error.message.find("answered 404") != std::string::npos);
  CHECK(error.message.find("Schema not found") != std::string::npos);
  CHECK(fake.requests().back() == "POST /subjects/t-value/versions HTTP/1.1");
  CHECK(fake.lastHead().find("Content-Type: application/vnd.schemaregistry.v1+json") !=
        std::string::npos);

  // A subject without versions takes any schema.
  std::string reasons;
  CHECK(client.compatible("t-value", R"({"type":"string"})", "AVRO", reasons, error) == true);
}
