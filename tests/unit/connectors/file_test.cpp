#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "connector_test_util.h"
#include "common/error.h"
#include "common/file_beneath.h"
#include "common/json.h"
#include "connectors/file/file_sink.h"
#include "connectors/file/table_loader.h"

using namespace rtsql;
namespace fs = std::filesystem;

namespace {

using testing::opts;
using testing::t;

// A fresh directory under the system temp dir, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("rtsql-file-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string file(const std::string& name, const std::string& content = {}) const {
    fs::path p = path / name;
    if (!content.empty()) {
      std::ofstream out(p, std::ios::binary);
      out << content;
    }
    return p.string();
  }
};

std::vector<std::string> readLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

Schema merchantSchema() {
  Schema s;
  s.columns.push_back({"id", t(TypeId::BigInt), false});
  s.columns.push_back({"name", t(TypeId::String), false});
  s.columns.push_back({"risk", t(TypeId::Double), false});
  return s;
}

SinkSpec fileSink(const std::string& path, std::vector<std::pair<std::string, std::string>> extra = {}) {
  SinkSpec sink;
  sink.name = "audit";
  sink.connector = "file";
  sink.format = "json";
  std::vector<std::pair<std::string, std::string>> kv = {{"connector", "file"}, {"path", path}};
  kv.insert(kv.end(), extra.begin(), extra.end());
  sink.options = opts(kv);
  sink.input = merchantSchema();
  return sink;
}

void expectError(const std::function<void()>& f, const char* state, size_t pos, const std::string& text) {
  try {
    f();
    FAIL("expected an error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == state);
    CHECK(e.position() == pos);
    CHECK_MESSAGE(e.message().find(text) != std::string::npos, e.message());
  }
}

}  // namespace

TEST_CASE("file sink: one JSON line per row, appended, visible without a flush") {
  TempDir dir;
  std::string path = dir.file("out.jsonl", "{\"old\":1}\n");
  auto sink = makeFileSink(fileSink(path), 0);
  sink->write({Value::bigint(1), Value::string("a\nb"), Value::float64(0.5)}, 0);
  sink->write({Value::bigint(2), Value(), Value()}, 0);
  auto lines = readLines(path);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == R"({"old":1})");
  CHECK(lines[1] == R"({"id":1,"name":"a\nb","risk":0.5})");
  CHECK(lines[2] == R"({"id":2,"name":null,"risk":null})");
  sink->flush(1000);
  CHECK(sink->deliveryErrors() == 0);
  CHECK(sink->description() == "FileSink[" + path + "]");
}

TEST_CASE("file sink: buffered writes reach the file at flush, fsync accepted") {
  TempDir dir;
  std::string path = dir.file("buffered.jsonl");
  auto sink = makeFileSink(fileSink(path, {{"buffer.bytes", "65536"}, {"fsync", "true"}}), 0);
  sink->write({Value::bigint(1), Value::string("x"), Value::float64(1)}, 0);
  CHECK(readLines(path).empty());
  sink->flush(1000);
  CHECK(readLines(path).size() == 1);
  // Destroying the sink writes what is still pending.
  sink->write({Value::bigint(2), Value::string("y"), Value::float64(2)}, 0);
  sink.reset();
  CHECK(readLines(path).size() == 2);
}

TEST_CASE("file sink: several tasks append whole lines to the same file") {
  TempDir dir;
  std::string path = dir.file("shared.jsonl");
  constexpr int kTasks = 4, kRows = 2000;
  std::vector<std::thread> threads;
  for (int task = 0; task < kTasks; ++task) {
    threads.emplace_back([&, task]() {
      auto sink = makeFileSink(fileSink(path, {{"buffer.bytes", "1000"}}), task);
      for (int i = 0; i < kRows; ++i)
        sink->write({Value::bigint(task), Value::string(std::string(50, static_cast<char>('a' + task))),
                     Value::float64(i)},
                    0);
      sink->flush(1000);
    });
  }
  for (auto& th : threads) th.join();
  auto lines = readLines(path);
  REQUIRE(lines.size() == static_cast<size_t>(kTasks * kRows));
  std::vector<int> perTask(kTasks);
  for (const auto& line : lines) {
    REQUIRE(line.size() > 10);
    int task = line[6] - '0';
    REQUIRE(task >= 0);
    REQUIRE(task < kTasks);
    ++perTask[static_cast<size_t>(task)];
    CHECK(line.find(std::string(50, static_cast<char>('a' + task))) != std::string::npos);
    CHECK(line.back() == '}');
  }
  for (int n : perTask) CHECK(n == kRows);
}

TEST_CASE("file sink: option and path errors") {
  TempDir dir;
  std::string missingDir = (dir.path / "nope" / "out.jsonl").string();
  expectError([&]() { makeFileSink(fileSink(missingDir), 0); }, "58030", 150, missingDir);
  expectError([&]() { validateFileSinkOptions(opts({{"connector", "file"}, {"path", missingDir}}), 3); },
              "58030", 150, "does not exist");
  expectError([&]() { validateFileSinkOptions(opts({{"connector", "file"}}), 3); }, "22023", 3, "path");
  expectError(
      [&]() {
        validateFileSinkOptions(opts({{"path", dir.file("a")}, {"format", "avro"}}), 3);
      },
      "22023", 150, "format");
  expectError([&]() { validateFileSinkOptions(opts({{"path", dir.file("a")}, {"fsync", "maybe"}}), 3); },
              "22023", 150, "fsync");
  expectError([&]() { validateFileSinkOptions(opts({{"path", dir.file("a")}, {"pathh", "x"}}), 3); },
              "22023", 100, "pathh");
  expectError([&]() { validateFileSinkOptions(opts({{"path", dir.path.string()}}), 3); }, "58030", 50,
              "is a directory");
  CHECK_NOTHROW(validateFileSinkOptions(opts({{"connector", "file"}, {"path", dir.file("ok.jsonl")},
                                              {"format", "json"}}),
                                        3));
}

TEST_CASE("file sink: csv lines, a header once when the file starts empty") {
  TempDir dir;
  std::string path = dir.file("out.csv");
  SinkSpec spec =
      fileSink(path, {{"format", "csv"}, {"csv.header", "true"}, {"csv.delimiter", ";"}});
  spec.format = "csv";
  spec.input.columns.push_back({"note;s", t(TypeId::String), false});
  spec.input.columns.push_back({"hidden", t(TypeId::String), true});
  {
    // Two tasks open the empty file: one header between them.
    auto first = makeFileSink(spec, 0);
    auto second = makeFileSink(spec, 1);
    first->write(
        {Value::bigint(1), Value::string("a;b"), Value::float64(0.5), Value(), Value::string("h")},
        0);
    second->write({Value::bigint(2), Value::string(""), Value(), Value::string("x\"y"), Value()},
                  0);
    first->flush(1000);
    second->flush(1000);
  }
  // A file that already has lines gets no second header.
  makeFileSink(spec, 0)->write({Value::bigint(3), Value(), Value(), Value(), Value()}, 0);
  auto lines = readLines(path);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "id;name;risk;\"note;s\"");
  CHECK(lines[1] == "1;\"a;b\";0.5;");
  CHECK(lines[2] == "2;\"\";;\"x\"\"y\"");
  CHECK(lines[3] == "3;;;");

  // Without csv.header, no header.
  std::string plain = dir.file("plain.csv");
  SinkSpec noHeader = fileSink(plain, {{"format", "csv"}});
  noHeader.format = "csv";
  makeFileSink(noHeader, 0)->write({Value::bigint(1), Value::string("a,b"), Value::float64(2)}, 0);
  CHECK(readLines(plain) == std::vector<std::string>{"1,\"a,b\",2.0"});

  expectError(
      [&]() {
        validateFileSinkOptions(opts({{"path", dir.file("a")}, {"csv.header", "true"}}), 3);
      },
      "22023", 100, "'csv.header' applies to format 'csv'");
  expectError(
      [&]() {
        validateFileSinkOptions(
            opts({{"path", dir.file("a")}, {"format", "csv"}, {"csv.header", "maybe"}}), 3);
      },
      "22023", 250, "csv.header");
  expectError(
      [&]() {
        validateFileSinkOptions(
            opts({{"path", dir.file("a")}, {"format", "csv"}, {"csv.delimiter", "ab"}}), 3);
      },
      "22023", 250, "csv.delimiter");
}

TEST_CASE("table loader: csv with header, quotes and NULLs") {
  TempDir dir;
  std::string path = dir.file("merchants.csv",
                              "id,name,risk\r\n"
                              "1,Acme,0.5\r\n"
                              "2,\"Bob, \"\"the\"\" builder\",\r\n"
                              "\n"
                              "3,\"multi\nline\",1e-3\n");
  auto rows = loadTableFile(merchantSchema(),
                            opts({{"connector", "file"}, {"path", path}, {"format", "csv"}, {"header", "true"}}), 0);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == Row{Value::bigint(1), Value::string("Acme"), Value::float64(0.5)});
  CHECK(rows[1] == Row{Value::bigint(2), Value::string("Bob, \"the\" builder"), Value()});
  CHECK(rows[2] == Row{Value::bigint(3), Value::string("multi\nline"), Value::float64(0.001)});

  // Without header = 'true' the header line is data, and a bad one.
  expectError([&]() { loadTableFile(merchantSchema(), opts({{"path", path}, {"format", "csv"}}), 0); }, "22P02",
              50, path + ":1: field 'id': expected BIGINT");
}

TEST_CASE("table loader: bad csv lines name the file and line") {
  TempDir dir;
  std::string path = dir.file("m.csv", "id,name,risk\n1,a,0.1\n2,b,0.2\n\n3,c,x\n");
  expectError(
      [&]() {
        loadTableFile(merchantSchema(), opts({{"path", path}, {"format", "csv"}, {"header", "true"}}), 9);
      },
      "22P02", 50, path + ":5: field 'risk': expected DOUBLE");
  std::string shortLine = dir.file("s.csv", "1,a,0.1\n2,b\n");
  expectError([&]() { loadTableFile(merchantSchema(), opts({{"path", shortLine}}), 9); }, "22P02", 50,
              shortLine + ":2: expected 3 fields, got 2");
}

TEST_CASE("table loader: errors name the line and field, never the file's text") {
  // The file is the server's: what it holds must not reach the client through
  // an error, only where the error is.
  TempDir dir;
  Schema one;
  one.columns.push_back({"id", t(TypeId::BigInt), false});
  for (const auto& file : std::vector<std::pair<std::string, std::string>>{
           {"env.csv", "1\nSECRET=hunter2\n"}, {"env.jsonl", "{\"id\": 1}\n{\"id\": \"SECRET=hunter2\"}\n"}}) {
    CAPTURE(file.first);
    const std::string path = dir.file(file.first, file.second);
    try {
      loadTableFile(one, opts({{"path", path}}), 0);
      FAIL("the bad line loaded");
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == "22P02");
      CHECK(e.message() == path + ":2: field 'id': expected BIGINT");
      CHECK(e.message().find("SECRET") == std::string::npos);
    }
  }
}

TEST_CASE("table loader: json lines, format from the extension") {
  TempDir dir;
  std::string path = dir.file("m.jsonl",
                              "{\"id\": 1, \"name\": \"a\", \"risk\": 0.25}\n"
                              "\n"
                              "{\"name\": \"b\", \"id\": 2}\n");
  auto rows = loadTableFile(merchantSchema(), opts({{"connector", "file"}, {"path", path}}), 0);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0] == Row{Value::bigint(1), Value::string("a"), Value::float64(0.25)});
  CHECK(rows[1] == Row{Value::bigint(2), Value::string("b"), Value()});

  std::string bad = dir.file("bad.txt", "{\"id\": 1}\n{\"id\": \"one\"}\n");
  expectError([&]() { loadTableFile(merchantSchema(), opts({{"path", bad}, {"format", "json"}}), 0); }, "22P02",
              50, bad + ":2: field 'id': expected BIGINT");
  std::string broken = dir.file("broken.json", "{\"id\": 1\n");
  expectError([&]() { loadTableFile(merchantSchema(), opts({{"path", broken}}), 0); }, "22P02", 50,
              broken + ":1: invalid JSON at byte ");
}

TEST_CASE("table loader: missing file and option errors") {
  TempDir dir;
  std::string missing = (dir.path / "missing.csv").string();
  expectError([&]() { loadTableFile(merchantSchema(), opts({{"path", missing}}), 4); }, "58030", 50,
              "could not read table file \"" + missing + "\"");
  expectError([&]() { validateTableOptions(opts({{"connector", "file"}}), 4); }, "22023", 4, "path");
  expectError([&]() { validateTableOptions(opts({{"path", "a.csv"}, {"format", "xml"}}), 4); }, "22023", 150,
              "format");
  expectError([&]() { validateTableOptions(opts({{"path", "a.csv"}, {"header", "yes please"}}), 4); }, "22023",
              150, "header");
  expectError([&]() { validateTableOptions(opts({{"path", "a.csv"}, {"headers", "true"}}), 4); }, "22023", 100,
              "headers");
  CHECK_NOTHROW(validateTableOptions(
      opts({{"connector", "file"}, {"path", "a.csv"}, {"header", "true"}, {"csv.delimiter", ";"}}), 4));
}

TEST_CASE("file sink and table loader: a link swapped in under --files-dir is not followed") {
  TempDir dir;
  fs::create_directories(dir.path / "files" / "sub");
  fs::create_directories(dir.path / "elsewhere");
  const std::string outside = dir.file("elsewhere/victim", "untouched\n");
  const std::string sinkPath = (dir.path / "files" / "out.jsonl").string();
  const std::string nestedPath = (dir.path / "files" / "sub" / "victim").string();
  const std::string tablePath = (dir.path / "files" / "t.csv").string();
  // The statements were checked while the paths were plain files inside.
  setServerFileRoots({fs::canonical(dir.path / "files").string()});
  struct Reset {
    ~Reset() { setServerFileRoots({}); }
  } reset;
  auto first = makeFileSink(fileSink(sinkPath), 0);
  first.reset();
  // Then the file, a directory on its way, and a table file become links out.
  fs::remove(sinkPath);
  fs::create_symlink(outside, sinkPath);
  fs::remove_all(dir.path / "files" / "sub");
  fs::create_directory_symlink(dir.path / "elsewhere", dir.path / "files" / "sub");
  fs::create_symlink(outside, tablePath);
  for (const std::string& path : {sinkPath, nestedPath}) {
    expectError([&]() { makeFileSink(fileSink(path), 0); }, "58030", 150,
                "could not open \"" + path + "\": it is outside the directories rtsqld allows");
  }
  expectError([&]() { loadTableFile(merchantSchema(), opts({{"path", tablePath}}), 4); }, "58030",
              50, "could not read table file \"" + tablePath + "\": it is outside");
  CHECK(readLines(outside) == std::vector<std::string>{"untouched"});
}
