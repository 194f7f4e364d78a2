// The schema registry client: the framing, the JSON of its requests and
// answers, its options, and its calls against a loopback HTTP server that
// answers as a registry does (a real Apicurio Registry is in
// tests/e2e/test_schema_registry.py): a schema fetched once per id whatever
// the number of records, an unknown id and a registry away as decode errors.
#include "connectors/schema_registry/schema_registry.h"

#include <doctest/doctest.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/timestamp.pb.h>

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/schema.h"
#include "connector_test_util.h"
#include "connectors/format/codec.h"
#include "connectors/format/proto_text.h"

using namespace rtsql;
using namespace rtsql::schema_registry;

namespace {

// Schema id 9: a PROTOBUF schema that imports shop/common.proto (subject
// "shop/common.proto", version 1) and a well-known type, with a nested message.
constexpr const char* kProtoAnswer =
    R"({"schema":"syntax = \"proto3\";\npackage shop;\nimport \"shop/common.proto\";\n)"
    R"(import \"google/protobuf/timestamp.proto\";\nmessage Other { string x = 1; }\n)"
    R"(message Order {\n  message Line { string sku = 1; int32 qty = 2; Money price = 3; }\n)"
    R"(  int64 id = 1;\n  repeated Line lines = 2;\n  google.protobuf.Timestamp at = 3;\n}\n",)"
    R"("schemaType":"PROTOBUF","references":[{"name":"shop/common.proto",)"
    R"("subject":"shop/common.proto","version":1}]})";
constexpr const char* kCommonAnswer =
    R"({"subject":"shop/common.proto","version":1,"id":10,"schemaType":"PROTOBUF",)"
    R"("schema":"syntax = \"proto3\";\npackage shop;\nmessage Money { int64 cents = 1; }\n"})";

// A registry on 127.0.0.1 that answers GET .../schemas/ids/7 with a schema of
// one long field "n", .../schemas/ids/9 and the version it references with
// the protobuf schemas above, every other request with 404, and keeps the
// request lines it got. One connection at a time, each closed after its answer.
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
  std::string lastBody() {
    std::lock_guard lock(mu_);
    return lastBody_;
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
      // The body, by its Content-Length.
      const size_t headEnd = in.find("\r\n\r\n");
      const size_t lengthAt = in.find("Content-Length: ");
      if (headEnd != std::string::npos && lengthAt != std::string::npos && lengthAt < headEnd) {
        const size_t want = headEnd + 4 + std::stoul(in.substr(lengthAt + 16));
        while (!ec && in.size() < want && in.size() < (1u << 20)) {
          size_t n = s.read_some(boost::asio::buffer(buf), ec);
          if (!ec) in.append(buf, n);
        }
      }
      const std::string line = in.substr(0, in.find("\r\n"));
      {
        std::lock_guard lock(mu_);
        requests_.push_back(line);
        lastHead_ = in.substr(0, in.find("\r\n\r\n"));
        lastBody_ =
            in.find("\r\n\r\n") == std::string::npos ? "" : in.substr(in.find("\r\n\r\n") + 4);
      }
      std::string body, status = "200 OK";
      if (line.starts_with("GET ") && line.ends_with("/schemas/ids/7 HTTP/1.1")) {
        body =
            R"({"schema":"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"n\",\"type\":\"long\"}]}"})";
      } else if (line.starts_with("GET ") && line.ends_with("/schemas/ids/9 HTTP/1.1")) {
        body = kProtoAnswer;
      } else if (line.starts_with("GET ") &&
                 line.ends_with("/subjects/shop%2Fcommon.proto/versions/1 HTTP/1.1")) {
        body = kCommonAnswer;
      } else if (line == "POST /subjects/pb-value/versions HTTP/1.1") {
        body = R"({"id":21})";
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
  std::string lastBody_;
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

  CHECK(parseSchemaAnswer(R"({"schema":"{\"type\":\"long\"}"})")->text ==
        std::string(R"({"type":"long"})"));
  CHECK(parseSchemaAnswer(R"({"schema":"x"})")->type == "AVRO");
  CHECK(parseSchemaAnswer(R"({"subject":"t-value","version":2,"id":5,"schema":"\"int\""})")->text ==
        std::string("\"int\""));
  auto proto = parseSchemaAnswer(kProtoAnswer);
  REQUIRE(proto);
  CHECK(proto->type == "PROTOBUF");
  REQUIRE(proto->references.size() == 1);
  CHECK(proto->references[0].name == "shop/common.proto");
  CHECK(proto->references[0].subject == "shop/common.proto");
  CHECK(proto->references[0].version == 1);
  CHECK_FALSE(parseSchemaAnswer(R"({"schema":"x","references":[{"name":"a"}]})"));
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
  // A query or a fragment would make the calls' paths a parameter of a path
  // the user chose.
  CHECK(refused({{kUrlOption, "http://169.254.169.254/latest/meta-data?"}}) == "22023");
  CHECK(refused({{kUrlOption, "http://127.0.0.1:8080/admin#"}}) == "22023");
  // A timeout is capped.
  CHECK(refused({{kUrlOption, "http://127.0.0.1"}, {kTimeoutOption, "60000"}}) == "accepted");
  CHECK(refused({{kUrlOption, "http://127.0.0.1"}, {kTimeoutOption, "600000"}}) == "22023");
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
  // The registry's answer: its status and size, not its text.
  CHECK(error.find("answered 404 (") != std::string::npos);
  CHECK(error.find("Schema not found") == std::string::npos);
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
  CHECK(schema->text.find("\"name\":\"n\"") != std::string::npos);
  // base64("ana:s3cr:et"): the password may hold ':'.
  CHECK(fake.lastHead().find("\r\nAuthorization: Basic YW5hOnMzY3I6ZXQ=") != std::string::npos);
  CHECK(fake.requests().back() == "GET /schemas/ids/7 HTTP/1.1");
  // Cached: no second request.
  REQUIRE(client.schemaById(7, error));
  CHECK(client.requests() == 1);

  // A registration the registry answers 404 to is NotFound, with the
  // answer's status and size but not its text.
  auto id = client.registerSchema("t-value", R"({"type":"string"})", "AVRO", error);
  CHECK_FALSE(id);
  CHECK(error.kind == RegistryError::Kind::NotFound);
  CHECK(error.message.find("answered 404 (") != std::string::npos);
  CHECK(error.message.find(" bytes)") != std::string::npos);
  CHECK(error.message.find("Schema not found") == std::string::npos);
  CHECK(fake.requests().back() == "POST /subjects/t-value/versions HTTP/1.1");
  CHECK(fake.lastHead().find("Content-Type: application/vnd.schemaregistry.v1+json") !=
        std::string::npos);

  // A subject without versions takes any schema.
  std::string reasons;
  CHECK(client.compatible("t-value", R"({"type":"string"})", "AVRO", reasons, error) == true);
}

TEST_CASE("schema registry: protobuf message indexes both ways") {
  auto written = [](std::vector<int32_t> path) {
    std::string out;
    appendMessageIndexes(out, path);
    return out;
  };
  // [0] is the single byte 0; others a zigzag count, then zigzag indexes.
  CHECK(written({0}) == std::string(1, '\0'));
  CHECK(written({1}) == "\x02\x02");
  CHECK(written({1, 0}) == std::string("\x04\x02\x00", 3));
  CHECK(written({0, 2, 70}) == std::string("\x06\x00\x04\x8c\x01", 5));

  auto read = [](const std::string& bytes, std::vector<int32_t>& path, size_t& used,
                 std::string& error) {
    return readMessageIndexes(bytes.data(), bytes.size(), path, used, error);
  };
  std::vector<int32_t> path;
  size_t used = 0;
  std::string error;
  for (const std::vector<int32_t>& p : std::vector<std::vector<int32_t>>{
           {0}, {1}, {1, 0}, {0, 2, 70}, {3, 1, 4, 1, 5}, {2147483647}}) {
    const std::string bytes = written(p) + "rest";
    REQUIRE_MESSAGE(read(bytes, path, used, error), error);
    CHECK(path == p);
    CHECK(bytes.substr(used) == "rest");
  }
  // [0] may also be written in full.
  REQUIRE(read(std::string("\x02\x00", 2), path, used, error));
  CHECK(path == std::vector<int32_t>{0});
  CHECK(used == 2);

  CHECK_FALSE(read("", path, used, error));
  CHECK(error == "no message indexes after the schema id");
  CHECK_FALSE(read("\x01", path, used, error));  // a count of -1
  CHECK(error == "a count of -1 message indexes after the schema id");
  CHECK_FALSE(read("\x06\x02", path, used, error));  // 3 indexes, 1 byte
  CHECK_FALSE(read("\x02\x01", path, used, error));  // index -1
  CHECK(error == "message index 1 of 1 after the schema id is not one");
  CHECK_FALSE(read("\x02\xff\xff\xff\xff\xff\x01", path, used, error));  // over 32 bits
  // At most kMaxMessageIndexes: a count of 101, then 101 zeros.
  CHECK_FALSE(read("\xca\x01" + std::string(101, '\0'), path, used, error));
  CHECK(read("\xc8\x01" + std::string(100, '\0'), path, used, error));
}

namespace {

// A framed protobuf value of schema id 9's message at `path`, set by `fill`
// through libprotobuf's reflection (an implementation independent of rtsql's
// walk).
std::string framedProto(const std::vector<int32_t>& path,
                        const std::function<void(google::protobuf::Message&)>& fill) {
  auto answer = parseSchemaAnswer(kProtoAnswer);
  auto common = parseSchemaAnswer(kCommonAnswer);
  format::ProtoFiles files;
  std::string error;
  REQUIRE(format::buildProtoFiles(answer->text, "nine.proto", {{"shop/common.proto", common->text}},
                                  files, error));
  const google::protobuf::Descriptor* d = format::messageAtIndexes(*files.file, path);
  REQUIRE(d);
  google::protobuf::DynamicMessageFactory factory(files.pool.get());
  std::unique_ptr<google::protobuf::Message> m(factory.GetPrototype(d)->New());
  fill(*m);
  std::string out;
  appendFraming(out, 9);
  appendMessageIndexes(out, path);
  return out + m->SerializeAsString();
}

}  // namespace

TEST_CASE("schema registry: a protobuf source reads messages by id and indexes") {
  FakeRegistry fake;
  Schema s;
  s.columns.push_back({"id", testing::t(TypeId::BigInt), false});
  s.columns.push_back(
      {"lines",
       DataType::arrayOf(DataType::structOf(
           {{"sku", testing::t(TypeId::String)},
            {"qty", testing::t(TypeId::Int)},
            {"price", DataType::structOf({{"cents", testing::t(TypeId::BigInt)}})}})),
       false});
  s.columns.push_back({"at", testing::t(TypeId::Timestamp), false});
  s.columns.push_back({"sku", testing::t(TypeId::String), false});
  // INT widens to a BIGINT column, as avro's int does.
  s.columns.push_back({"qty", testing::t(TypeId::BigInt), false});
  s.columns.push_back({"missing", testing::t(TypeId::String), false});
  auto d = makeDecoder("protobuf", s, testing::opts({{kUrlOption, fake.url()}}));
  Row row;
  std::string error;
  // shop.Order is the second message of the file: indexes [1].
  for (int i = 0; i < 40; ++i) {
    const std::string order = framedProto({1}, [&](google::protobuf::Message& m) {
      const auto* r = m.GetReflection();
      const auto* desc = m.GetDescriptor();
      r->SetInt64(&m, desc->FindFieldByName("id"), 300 + i);
      google::protobuf::Message* line = r->AddMessage(&m, desc->FindFieldByName("lines"));
      const auto* lr = line->GetReflection();
      lr->SetString(line, line->GetDescriptor()->FindFieldByName("sku"), "ab");
      lr->SetInt32(line, line->GetDescriptor()->FindFieldByName("qty"), -2);
      google::protobuf::Message* price =
          lr->MutableMessage(line, line->GetDescriptor()->FindFieldByName("price"));
      price->GetReflection()->SetInt64(price, price->GetDescriptor()->FindFieldByName("cents"), 5);
      google::protobuf::Message* at = r->MutableMessage(&m, desc->FindFieldByName("at"));
      at->GetReflection()->SetInt64(at, at->GetDescriptor()->FindFieldByName("seconds"), 1);
      at->GetReflection()->SetInt32(at, at->GetDescriptor()->FindFieldByName("nanos"), 2000);
    });
    REQUIRE_MESSAGE(decode(*d, order, row, error), error);
    CHECK(row[0] == Value::bigint(300 + i));
    REQUIRE(row[1].asList().size() == 1);
    CHECK(row[1].asList()[0].asList()[0] == Value::string("ab"));
    CHECK(row[1].asList()[0].asList()[1] == Value::integer(-2));
    CHECK(row[1].asList()[0].asList()[2].asList()[0] == Value::bigint(5));
    CHECK(row[2] == Value::timestamp(1'000'002));
    CHECK(row[3].isNull());
    CHECK(row[5].isNull());
  }
  // The nested shop.Order.Line: indexes [1, 0]; its fields fill the columns of their names.
  const std::string line = framedProto({1, 0}, [](google::protobuf::Message& m) {
    m.GetReflection()->SetString(&m, m.GetDescriptor()->FindFieldByName("sku"), "cd");
    m.GetReflection()->SetInt32(&m, m.GetDescriptor()->FindFieldByName("qty"), 7);
  });
  REQUIRE_MESSAGE(decode(*d, line, row, error), error);
  CHECK(row[0].isNull());
  CHECK(row[3] == Value::string("cd"));
  CHECK(row[4] == Value::bigint(7));
  // The schema and its reference were fetched once each.
  CHECK(fake.requests() ==
        std::vector<std::string>{"GET /schemas/ids/9 HTTP/1.1",
                                 "GET /subjects/shop%2Fcommon.proto/versions/1 HTTP/1.1"});

  // Indexes that name no message, an id the registry lacks, an avro id.
  std::string bad;
  appendFraming(bad, 9);
  appendMessageIndexes(bad, {1, 4});
  CHECK_FALSE(decode(*d, bad, row, error));
  CHECK(error == "message indexes [1, 4] name no message of the writer's schema (id 9)");
  bad.clear();
  appendFraming(bad, 8);
  appendMessageIndexes(bad, {0});
  CHECK_FALSE(decode(*d, bad, row, error));
  CHECK(error.find("schema id 8 is not in the schema registry") == 0);
  bad.clear();
  appendFraming(bad, 7);
  appendMessageIndexes(bad, {0});
  CHECK_FALSE(decode(*d, bad, row, error));
  CHECK(error == "schema id 7 is a AVRO schema, not a PROTOBUF one");
  // A bad count of indexes, and bytes that are no message.
  CHECK_FALSE(decode(*d, std::string("\0\0\0\0\x09\x07", 6), row, error));
  CHECK(error.find("message indexes") != std::string::npos);
  CHECK_FALSE(decode(*d, std::string("\0\0\0\0\x09\x02\x02\x0a\x05", 9), row, error));
  CHECK(error.find("not a protobuf message shop.Order (schema id 9)") == 0);
}

TEST_CASE("schema registry: a protobuf sink registers its message and frames values") {
  FakeRegistry fake;
  SinkSpec sink;
  sink.name = "pb";
  sink.connector = "kafka";
  sink.format = "protobuf";
  sink.options = testing::opts({{"topic", "pb"}, {kUrlOption, fake.url()}});
  sink.input.columns = {{"id", testing::t(TypeId::BigInt), false},
                        {"name", testing::t(TypeId::String), false}};
  auto encoder = makeEncoder(sink);
  CHECK(fake.requests() == std::vector<std::string>{"POST /subjects/pb-value/versions HTTP/1.1"});
  auto registered = parseSchemaAnswer(fake.lastBody());
  REQUIRE(registered);
  CHECK(registered->type == "PROTOBUF");
  CHECK(registered->text == format::protobufSinkProto(sink.input, "pb"));
  EncodedRecord out;
  encoder->encode(Row{Value::bigint(5), Value()}, out);
  // Magic byte, id 21, the first message, then id = 5 (the NULL name unset).
  CHECK(out.value == std::string("\0\0\0\0\x15\0\x08\x05", 8));

  // What it writes a protobuf source of the registry reads back.
  // (Decoded with the generated text by hand: the fake registry knows no id 21.)
  format::ProtoFiles files;
  std::string error;
  REQUIRE(format::buildProtoFiles(registered->text, "pb.proto", {}, files, error));
  google::protobuf::DynamicMessageFactory factory(files.pool.get());
  std::unique_ptr<google::protobuf::Message> m(
      factory.GetPrototype(files.file->message_type(0))->New());
  REQUIRE(m->ParseFromString(out.value.substr(6)));
  CHECK(m->GetReflection()->GetInt64(*m, m->GetDescriptor()->FindFieldByName("id")) == 5);
  CHECK_FALSE(m->GetReflection()->HasField(*m, m->GetDescriptor()->FindFieldByName("name")));
}
