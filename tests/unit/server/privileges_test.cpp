// Who may do what (server/privileges.h): superusers, paths confined to
// --files-dir (through '..' and symbolic links), passwords only a superuser or
// their own user may change, the per-user bound on live-query slots, and a
// catalog restored at start whose files are opened beneath the new --files-dir.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "connectors/net/outbound_policy.h"
#include "connectors/provider.h"
#include "server/catalog_file.h"
#include "server/engine.h"
#include "server/live_query_quota.h"
#include "server/privileges.h"
#include "server/users.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::TempDir;
using rtsql::testing::requireOk;
namespace fs = std::filesystem;

namespace {

void writeFile(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// What one execute() answered, as it runs: a live query ends once `cancel`
// is set, and another thread may watch its rows arrive through `rowCount`.
class LiveCapture : public testing::ResultCapture {
 public:
  std::atomic<bool> cancel{false};
  std::atomic<int> rowCount{0};

  void row(const std::vector<std::optional<std::string>>& v) override {
    ResultCapture::row(v);
    ++rowCount;
  }
  bool cancelled() const override { return cancel; }
};

// An engine whose users file lists alice (the first user, a superuser), bob,
// carol and dave; dave is a superuser by --superuser.
struct Server {
  TempDir dir;
  DefaultConnectorProvider connectors;
  std::shared_ptr<UserStore> users;
  std::unique_ptr<Engine> engine;

  explicit Server(std::vector<std::string> filesDirs = {}, int liveSlotsPerUser = 0) {
    writeFile(dir.path / "users", "alice:a\nbob:b\ncarol:c\ndave:d\n");
    users = std::make_shared<UserStore>(UserStore::loadFile((dir.path / "users").string()));
    EngineOptions eo;
    eo.dataDir = (dir.path / "data").string();
    fs::create_directories(eo.dataDir);
    eo.slots = 8;
    eo.users = users;
    eo.superusers = {"dave"};
    eo.filesDirs = std::move(filesDirs);
    eo.maxLiveQuerySlotsPerUser = liveSlotsPerUser;
    engine = std::make_unique<Engine>(eo, connectors);
  }

  void run(const std::string& sql, const std::string& user, LiveCapture& out) {
    auto session = engine->openSession(user, "rtsql");
    engine->execute(*session, sql, out);
  }
  std::unique_ptr<LiveCapture> run(const std::string& sql, const std::string& user) {
    auto out = std::make_unique<LiveCapture>();
    run(sql, user, *out);
    return out;
  }
};

void requireDenied(const testing::ResultCapture& c, const std::string& what) {
  REQUIRE_MESSAGE(c.err, what, " was allowed");
  CHECK(c.err->sqlstate() == sqlstate::kInsufficientPrivilege);
  CHECK_FALSE(c.err->hint().empty());
}

std::string tableFrom(const std::string& path, const std::string& name = "t") {
  return "CREATE TABLE " + name + " (a STRING) WITH (connector = 'file', path = '" + path +
         "', format = 'csv')";
}

}  // namespace

TEST_CASE("privileges: superusers are the first user, --superuser names, and everyone in trust mode") {
  auto users = std::make_shared<UserStore>(UserStore::parse("# x\nalice:a\nbob:b\n", "test"));
  Privileges p(users, {"carol"}, {});
  CHECK(p.isSuperuser("alice"));
  CHECK_FALSE(p.isSuperuser("bob"));
  CHECK(p.isSuperuser("carol"));
  CHECK_FALSE(p.isSuperuser(""));
  Privileges trusted(nullptr, {}, {});
  CHECK(trusted.isSuperuser("anyone"));

  try {
    p.requireSuperuser("bob", "create users", "ask alice");
    FAIL("bob is no superuser");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == sqlstate::kInsufficientPrivilege);
    CHECK(e.message() == "permission denied to create users: user \"bob\" is not a superuser");
    CHECK(e.hint() == "ask alice");
  }
}

TEST_CASE("privileges: file paths resolve inside --files-dir or are refused") {
  TempDir tmp;
  const fs::path allowed = tmp.path / "files";
  const fs::path secret = tmp.path / "secret";
  fs::create_directories(allowed / "sub");
  fs::create_directories(secret);
  writeFile(allowed / "ok.csv", "x\n");
  writeFile(secret / "key.pem", "private\n");
  fs::create_symlink(secret / "key.pem", allowed / "link.csv");
  fs::create_symlink(secret, allowed / "dirlink");
  fs::create_symlink(secret / "missing.jsonl", allowed / "dangling.jsonl");
  fs::create_directories(tmp.path / "files-other");  // shares a prefix with "files"

  auto users = std::make_shared<UserStore>(UserStore::parse("alice:a\nbob:b\n", "test"));
  Privileges p(users, {}, {(tmp.path / "files" / "sub" / "..").string()});
  REQUIRE(p.filesDirs() == std::vector<std::string>{allowed.string()});

  auto check = [&](const std::string& user, const std::string& path) {
    OptionEntry e{"path", path, 10, 20};
    try {
      p.checkFile(user, e);
      return std::string();
    } catch (const SqlError& err) {
      CHECK(err.position() == 20);
      CHECK(err.hint().find(allowed.string()) != std::string::npos);
      return err.sqlstate();
    }
  };
  for (const std::string user : {"alice", "bob"}) {
    CAPTURE(user);
    CHECK(check(user, (allowed / "ok.csv").string()).empty());
    CHECK(check(user, (allowed / "sub" / "new.jsonl").string()).empty());  // a sink's new file
    CHECK(check(user, (allowed / "sub" / ".." / "ok.csv").string()).empty());
    CHECK(check(user, "/proc/self/environ") == sqlstate::kInsufficientPrivilege);
    CHECK(check(user, (secret / "key.pem").string()) == sqlstate::kInsufficientPrivilege);
    CHECK(check(user, (allowed / ".." / "secret" / "key.pem").string()) ==
          sqlstate::kInsufficientPrivilege);
    CHECK(check(user, (allowed / "nope" / ".." / ".." / "secret" / "key.pem").string()) ==
          sqlstate::kInsufficientPrivilege);
    CHECK(check(user, (allowed / "link.csv").string()) == sqlstate::kInsufficientPrivilege);
    CHECK(check(user, (allowed / "dirlink" / "key.pem").string()) ==
          sqlstate::kInsufficientPrivilege);
    CHECK(check(user, (allowed / "dangling.jsonl").string()) == sqlstate::kInsufficientPrivilege);
    CHECK(check(user, (tmp.path / "files-other" / "x.csv").string()) ==
          sqlstate::kInsufficientPrivilege);
  }

  // A relative path is relative to rtsqld's working directory.
  const fs::path cwd = fs::current_path();
  fs::current_path(allowed);
  CHECK(check("bob", "ok.csv").empty());
  CHECK(check("bob", "../secret/key.pem") == sqlstate::kInsufficientPrivilege);
  fs::current_path(cwd);

  // Without --files-dir only superusers may name files, any file.
  Privileges open(users, {}, {});
  OptionEntry environ{"path", "/proc/self/environ", 0, 5};
  CHECK_NOTHROW(open.checkFile("alice", environ));
  try {
    open.checkFile("bob", environ);
    FAIL("bob may not name files");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == sqlstate::kInsufficientPrivilege);
    CHECK(e.message().find("user \"bob\" is not a superuser") != std::string::npos);
    CHECK(e.hint().find("--files-dir") != std::string::npos);
  }

  CHECK_THROWS_AS(Privileges(users, {}, {(tmp.path / "absent").string()}), SqlError);
  // A files directory must keep clear of the data directory and the users
  // file, either way round, or a file sink could write into them.
  for (const auto& pair : std::vector<std::pair<fs::path, fs::path>>{
           {tmp.path, allowed / "data"}, {allowed, tmp.path}, {allowed, allowed / "users"}}) {
    const fs::path& files = pair.first;
    const fs::path& own = pair.second;
    CAPTURE(files);
    CAPTURE(own);
    try {
      Privileges(users, {}, {files.string()}, {own.string()});
      FAIL("overlap accepted");
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == sqlstate::kInvalidParameterValue);
      CHECK(e.message().find("overlaps") != std::string::npos);
    }
  }
  CHECK_NOTHROW(Privileges(users, {}, {allowed.string()}, {(tmp.path / "data").string(), ""}));
}

TEST_CASE("privileges: a non-superuser cannot load a server file into a table") {
  TempDir files;
  writeFile(files.path / "codes.csv", "A\nB\n");
  fs::create_directories(files.path / "sub");
  fs::create_symlink("/proc/self/environ", files.path / "env.csv");
  Server s({files.path.string()});

  // The file that holds the server's environment, directly, through '..' and
  // through a link inside the allowed directory.
  const std::string viaDots = (files.path / "sub" / ".." / ".." / ".." / ".." / ".." / ".." / ".." /
                               ".." / "proc" / "self" / "environ")
                                  .string();
  for (const std::string& path :
       {std::string("/proc/self/environ"), viaDots, (files.path / "env.csv").string()}) {
    for (const std::string user : {"bob", "alice"}) {
      CAPTURE(path);
      CAPTURE(user);
      const std::string sql = tableFrom(path);
      auto c = s.run(sql, user);
      requireDenied(*c, sql);
      CHECK(c->err->position() == sql.find("'" + path + "'"));
      CHECK(c->err->message().find("PATH=") == std::string::npos);
    }
  }
  // Nothing was created.
  auto c = s.run("DESCRIBE t", "alice");
  CHECK(c->err);

  // A file inside is loaded, for any user.
  const std::string ok = tableFrom((files.path / "sub" / ".." / "codes.csv").string());
  c = s.run(ok, "bob");
  requireOk(*c, ok);
  REQUIRE(c->notices.size() == 1);
  CHECK(c->notices[0].find("loaded 2 rows") != std::string::npos);

  // The same goes for file sinks and for the Kafka client's files.
  c = s.run("CREATE SINK out WITH (connector = 'file', path = '/tmp/rtsql-out.jsonl')", "bob");
  requireDenied(*c, "a file sink outside --files-dir");
  c = s.run("CREATE SINK out WITH (connector = 'file', path = '" +
                (files.path / "out.jsonl").string() + "')",
            "bob");
  requireOk(*c, "a file sink inside --files-dir");
  const std::string kafka = "CREATE SOURCE k (a BIGINT) WITH (connector = 'kafka', "
                            "kafka.bootstrap.servers = '127.0.0.1:1', subscribe = 't', ";
  c = s.run(kafka + "kafka.ssl.ca.location = '/etc/ssl/private/key.pem')", "bob");
  requireDenied(*c, "a Kafka CA file outside --files-dir");
  c = s.run(kafka + "kafka.ssl.ca.location = 'probe')", "bob");
  requireOk(*c, "the system's CA files");
  c = s.run(kafka + "kafka.plugin.library.paths = '/tmp/evil.so')", "bob");
  requireDenied(*c, "a Kafka plugin library");
  CHECK(c->err->message().find("load a library or run a command") != std::string::npos);
}

TEST_CASE("privileges: without --files-dir only superusers name files") {
  TempDir files;
  writeFile(files.path / "codes.csv", "A\nB\n");
  Server s;
  const std::string sql = tableFrom((files.path / "codes.csv").string());
  auto c = s.run(sql, "bob");
  requireDenied(*c, "bob naming a file");
  CHECK(c->err->message().find("\"bob\" is not a superuser") != std::string::npos);
  requireOk(*s.run(sql, "alice"), sql);
  requireOk(*s.run(tableFrom((files.path / "codes.csv").string(), "t2"), "dave"), sql);
  // A superuser may load any file the server can read, as PostgreSQL's may: a
  // system file (whose one line holds no comma, so it loads as one column).
  requireOk(*s.run(tableFrom("/proc/sys/kernel/ostype", "os"), "alice"), "a system file");
  c = s.run("CREATE SOURCE k (a BIGINT) WITH (connector = 'kafka', kafka.bootstrap.servers = "
            "'127.0.0.1:1', subscribe = 't', kafka.sasl.kerberos.kinit.cmd = 'touch /tmp/x')",
            "bob");
  requireDenied(*c, "a Kafka kinit command");
}

TEST_CASE("privileges: outbound destinations and the server's AWS keys are superusers' alone") {
  Server s;
  const std::string sink =
      "CREATE SINK h WITH (connector = 'http', url = 'http://169.254.169.254/latest')";
  auto c = s.run(sink, "bob");
  requireDenied(*c, "bob aiming an HTTP sink");
  CHECK(c->err->message().find("aim the server at") != std::string::npos);
  CHECK(c->err->hint().find("--outbound-allow") != std::string::npos);
  CHECK(c->err->position() != SqlError::npos);
  requireOk(*s.run(sink, "alice"), sink);

  const std::string registry =
      "CREATE SOURCE r (id BIGINT) WITH (connector = 'kafka', kafka.bootstrap.servers = "
      "'127.0.0.1:1', subscribe = 't', format = 'avro', 'schema.registry.url' = "
      "'http://127.0.0.1:1')";
  requireDenied(*s.run(registry, "bob"), "bob naming a schema registry");

  const std::string kinesis =
      "CREATE SOURCE k (id BIGINT) WITH (connector = 'kinesis', 'kinesis.stream' = 's', "
      "'kinesis.region' = 'us-east-1'";
  c = s.run(kinesis + ", 'kinesis.endpoint' = 'http://127.0.0.1:1', 'kinesis.accessKeyId' = "
                      "'A', 'kinesis.secretKey' = 'B')",
            "bob");
  requireDenied(*c, "bob naming a Kinesis endpoint");
  // The server's own keys, even on the service's own endpoint.
  c = s.run(kinesis + ")", "bob");
  requireDenied(*c, "bob using the server's AWS keys");
  CHECK(c->err->message().find("AWS credentials") != std::string::npos);
  CHECK(c->err->hint().find("kinesis.accessKeyId") != std::string::npos);
  requireOk(*s.run(kinesis + ", 'kinesis.accessKeyId' = 'A', 'kinesis.secretKey' = 'B')", "bob"),
            "bob's own keys");
  requireOk(*s.run("CREATE SOURCE k2 (id BIGINT) WITH (connector = 'kinesis', 'kinesis.stream' = "
                   "'s', 'kinesis.region' = 'us-east-1')",
                   "alice"),
            "a superuser's source on the server's keys");

  // With an allow-list, everyone may name what it lists, and no one anything else.
  net::OutboundPolicy::setProcess(net::OutboundPolicy::parse({"10.0.0.0/8", "127.0.0.1:8081"}));
  requireOk(*s.run("CREATE SINK h1 WITH (connector = 'http', url = 'http://10.1.2.3/x')", "bob"),
            "a listed network");
  requireOk(*s.run("CREATE SINK h2 WITH (connector = 'http', url = 'http://127.0.0.1:8081/x')",
                   "bob"),
            "a listed loopback port");
  for (const char* user : {"bob", "alice"}) {
    CAPTURE(user);
    c = s.run("CREATE SINK h3 WITH (connector = 'http', url = 'http://127.0.0.1:8080/x')", user);
    requireDenied(*c, "an unlisted loopback port");
    CHECK(c->err->message().find("outbound allow-list") != std::string::npos);
    requireDenied(*s.run("CREATE SINK h3 WITH (connector = 'http', url = "
                         "'http://[::ffff:169.254.169.254]/x')",
                         user),
                  "a mapped metadata address");
  }
  net::OutboundPolicy::setProcess(net::OutboundPolicy());
}

TEST_CASE("privileges: with an allow-list, Kafka brokers must be in it; 'embedded' always is") {
  Server s;
  auto source = [](const std::string& name, const std::string& bootstrap) {
    return "CREATE SOURCE " + name + " (id BIGINT) WITH (connector = 'kafka', " +
           "kafka.bootstrap.servers = '" + bootstrap + "', subscribe = 't')";
  };
  // Without one, anyone names brokers (a real broker may be down: only the
  // privilege is checked here, so 42501 is what must not come).
  auto c = s.run(source("k0", "127.0.0.1:1"), "bob");
  CHECK((!c->err || c->err->sqlstate() != sqlstate::kInsufficientPrivilege));

  net::OutboundPolicy::setProcess(net::OutboundPolicy::parse({"10.0.0.0/8:9092", "127.0.0.1:1"}));
  for (const char* user : {"bob", "alice"}) {
    CAPTURE(user);
    c = s.run(source(std::string("k1") + user, "10.0.0.7:9092, 127.0.0.2:9092"), user);
    requireDenied(*c, "an unlisted loopback broker");
    CHECK(c->err->message().find("Kafka broker \"127.0.0.2:9092\"") != std::string::npos);
    CHECK(c->err->hint().find("--outbound-allow") != std::string::npos);
    CHECK(c->err->position() != SqlError::npos);
    requireDenied(*s.run(source(std::string("k2") + user, "SSL://169.254.169.254:9092"), user),
                  "a metadata address behind a scheme");
    requireDenied(*s.run(source(std::string("k3") + user, "10.0.0.7:9093"), user),
                  "a listed network on another port");
  }
  // No port is librdkafka's default, 9092, which the network lists.
  c = s.run(source("k6", "10.0.0.7"), "bob");
  CHECK((!c->err || c->err->sqlstate() != sqlstate::kInsufficientPrivilege));
  c = s.run(source("k4", "127.0.0.1:1"), "bob");
  CHECK((!c->err || c->err->sqlstate() != sqlstate::kInsufficientPrivilege));
  c = s.run(source("k5", "embedded"), "bob");
  CHECK((!c->err || c->err->sqlstate() != sqlstate::kInsufficientPrivilege));
  net::OutboundPolicy::setProcess(net::OutboundPolicy());
}

TEST_CASE("privileges: users change their own password; superusers manage users") {
  Server s;
  // bob may change his own password, not carol's, and may not manage users.
  requireOk(*s.run("ALTER USER bob PASSWORD 'bob2'", "bob"), "own password");
  auto c = s.run("ALTER USER carol PASSWORD 'mine now'", "bob");
  requireDenied(*c, "bob changing carol's password");
  CHECK(c->err->message() ==
        "permission denied to change the password of user \"carol\": user \"bob\" is not a "
        "superuser");
  CHECK(c->err->message().find("mine now") == std::string::npos);
  c = s.run("ALTER USER alice PASSWORD 'x'", "bob");
  requireDenied(*c, "bob changing the superuser's password");
  c = s.run("ALTER USER nobody PASSWORD 'x'", "bob");
  requireDenied(*c, "bob probing for users");
  requireDenied(*s.run("CREATE USER eve PASSWORD 'x'", "bob"), "bob creating a user");
  requireDenied(*s.run("DROP USER carol", "bob"), "bob dropping a user");
  CHECK(s.users->find("carol") != nullptr);

  // The first user and a --superuser may do all of it.
  requireOk(*s.run("ALTER USER carol PASSWORD 'c2'", "alice"), "alice altering carol");
  requireOk(*s.run("ALTER USER bob PASSWORD 'b3'", "dave"), "dave altering bob");
  requireOk(*s.run("CREATE USER eve PASSWORD 'e'", "dave"), "dave creating eve");
  requireOk(*s.run("DROP USER eve", "alice"), "alice dropping eve");
  // The first user owns the server and cannot be dropped.
  c = s.run("DROP USER alice", "dave");
  REQUIRE(c->err);
  CHECK(c->err->sqlstate() == sqlstate::kObjectInUse);
  CHECK(s.users->find("alice") != nullptr);

  c = s.run("SHOW USERS", "bob");
  requireOk(*c, "SHOW USERS");
  REQUIRE(c->cols.size() == 2);
  CHECK(c->cols[1].name == "superuser");
  std::vector<std::vector<std::optional<std::string>>> expected = {
      {"alice", "t"}, {"bob", "f"}, {"carol", "f"}, {"dave", "t"}};
  CHECK(c->rows == expected);
}

TEST_CASE("privileges: the live-query slot bound counts per user, and releases") {
  LiveQueryQuota quota(2);
  {
    auto a = quota.acquire("bob", 2);
    CHECK(quota.held("bob") == 2);
    try {
      quota.acquire("bob", 1);
      FAIL("bob is over his bound");
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == sqlstate::kConfigurationLimitExceeded);
      CHECK(e.message().find("\"bob\"") != std::string::npos);
      CHECK(e.hint().find("--max-live-query-slots-per-user") != std::string::npos);
    }
    auto c = quota.acquire("carol", 1);
    CHECK(quota.held("carol") == 1);
    CHECK_THROWS_AS(quota.acquire("carol", 2), SqlError);
  }
  CHECK(quota.held("bob") == 0);
  CHECK(quota.held("carol") == 0);
  auto again = quota.acquire("bob", 2);
  CHECK(quota.held("bob") == 2);
}

TEST_CASE("privileges: one user's live queries cannot take every slot") {
  Server s({}, /*liveSlotsPerUser=*/1);
  requireOk(*s.run("CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', "
                   "rowsPerSecond = '200')",
                   "alice"),
            "CREATE SOURCE");
  // bob's and alice's queries run until cancelled.
  LiveCapture bobs, alices;
  std::thread bob([&] { s.run("SELECT a FROM gen", "bob", bobs); });
  std::thread alice([&] { s.run("SELECT a FROM gen", "alice", alices); });
  const bool running = testing::eventually(
      [&] { return bobs.rowCount > 0 && alices.rowCount > 0; }, std::chrono::seconds(30));
  CHECK(running);

  auto c = s.run("SELECT a FROM gen LIMIT 1", "bob");
  REQUIRE_MESSAGE(c->err, "bob's second live query ran");
  CHECK(c->err->sqlstate() == sqlstate::kConfigurationLimitExceeded);
  CHECK(c->err->message().find("\"bob\"") != std::string::npos);
  // Another user still gets one, and a superuser is not bound.
  c = s.run("SELECT a FROM gen LIMIT 1", "carol");
  requireOk(*c, "carol's live query");
  CHECK(c->rows.size() == 1);
  c = s.run("SELECT a FROM gen LIMIT 1", "alice");
  requireOk(*c, "alice's second live query");

  bobs.cancel = true;
  alices.cancel = true;
  bob.join();
  alice.join();
  CHECK_FALSE(bobs.err);
  // bob's slot came back with his query's end.
  requireOk(*s.run("SELECT a FROM gen LIMIT 1", "bob"), "bob's next live query");
}

TEST_CASE("privileges: a restored catalog opens its files beneath the new --files-dir") {
  testing::EngineFixture<> f(4);
  const fs::path& tmp = f.tmp.path;
  writeFile(tmp / "codes.csv", "A\nB\n");
  fs::create_directories(tmp / "files");
  writeFile(tmp / "files" / "inner.csv", "C\n");
  {
    // Trust mode: everyone is a superuser and may name any file.
    testing::RestoredEngine first(f.options, f.connectors);
    first.runAll({tableFrom((tmp / "codes.csv").string()),
                  tableFrom((tmp / "files" / "inner.csv").string(), "inner_t")});
    first.engine.shutdown();
  }
  // The next start confines files to a directory only one table's file is in.
  writeFile(tmp / "users", "alice:a\nbob:b\n");
  f.options.users = std::make_shared<UserStore>(UserStore::loadFile((tmp / "users").string()));
  f.options.filesDirs = {(tmp / "files").string()};
  testing::RestoredEngine restarted(f.options, f.connectors, "bob");
  // The definitions are not checked again, but every file is opened beneath
  // the directories: the table outside them is not restored (it stays in the
  // catalog, for a start that allows its file again).
  requireOk(restarted.run("DESCRIBE inner_t"), "DESCRIBE inner_t");
  CHECK(restarted.run("DESCRIBE t").err);
  // A new definition naming the outside file is refused, even to a superuser.
  testing::ResultCapture again;
  auto admin = restarted.engine.openSession("alice", "rtsql");
  restarted.engine.execute(*admin, tableFrom((tmp / "codes.csv").string(), "t2"), again);
  requireDenied(again, "a file outside --files-dir");
}

TEST_CASE("privileges: a superuser's Python function and processor come back after a restart") {
  // The catalog replays them without a session user: the check was made when
  // they were created, and a replay must not refuse them for want of one.
  Server s;
  requireOk(*s.run("CREATE FUNCTION py_twice(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS "
                   "$$return a * 2 if a is not None else None$$",
                   "alice"),
            "CREATE FUNCTION");
  requireOk(*s.run("CREATE PROCESSOR counter RETURNS (n BIGINT) LANGUAGE PYTHON AS $$\n"
                   "class Counter:\n"
                   "    def handle_input_rows(self, key, rows):\n"
                   "        yield (1,)\n"
                   "$$",
                   "alice"),
            "CREATE PROCESSOR");
  // Still refused to anyone else.
  requireDenied(*s.run("CREATE FUNCTION py_b(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS $$return a$$",
                       "bob"),
                "bob's Python function");
  s.engine.reset();

  EngineOptions eo;
  eo.dataDir = (s.dir.path / "data").string();
  eo.slots = 8;
  eo.users = s.users;
  eo.superusers = {"dave"};
  Engine restored(eo, s.connectors);
  restored.restore();
  auto session = restored.openSession("bob", "rtsql");
  testing::ResultCapture functions;
  restored.execute(*session, "SHOW USER FUNCTIONS", functions);
  requireOk(functions, "SHOW USER FUNCTIONS");
  REQUIRE(functions.rows.size() == 1);
  CHECK(functions.rows[0][0] == std::optional<std::string>("py_twice"));
  testing::ResultCapture processors;
  restored.execute(*session, "SHOW PROCESSORS", processors);
  requireOk(processors, "SHOW PROCESSORS");
  REQUIRE(processors.rows.size() == 1);
  CHECK(processors.rows[0][0] == std::optional<std::string>("counter"));
  restored.shutdown();
}

namespace {

// The body column of function `name` in SHOW USER FUNCTIONS as `user` sees it.
std::optional<std::string> shownBody(Server& s, const std::string& user, const std::string& name) {
  auto shown = s.run("SHOW USER FUNCTIONS", user);
  requireOk(*shown, "SHOW USER FUNCTIONS");
  for (const auto& row : shown->rows) {
    if (row[0] == std::optional<std::string>(name)) return row[4];
  }
  FAIL("no function ", name);
  return std::nullopt;
}

// DESCRIBE FUNCTION's row `what` (owner, body) as `user` sees it.
std::optional<std::string> describedRow(Server& s, const std::string& user,
                                        const std::string& name, const std::string& what) {
  auto described = s.run("DESCRIBE FUNCTION " + name, user);
  requireOk(*described, "DESCRIBE FUNCTION");
  for (const auto& row : described->rows) {
    if (row[0] == std::optional<std::string>(what)) return row[1];
  }
  FAIL("no row ", what);
  return std::nullopt;
}

void requireDeniedNaming(const testing::ResultCapture& c, const std::string& what,
                         const std::string& owner) {
  requireDenied(c, what);
  if (!c.err) return;
  CHECK_MESSAGE(c.err->message().find("belongs to user \"" + owner + "\"") != std::string::npos,
                c.err->message());
  CHECK_MESSAGE(c.err->hint().find("\"" + owner + "\"") != std::string::npos, c.err->hint());
  CHECK(c.err->position() != SqlError::npos);
}

}  // namespace

TEST_CASE("privileges: only a function's owner or a superuser replaces, drops or reads it") {
  Server s;
  requireOk(*s.run("CREATE FUNCTION bob_twice(a BIGINT) RETURNS BIGINT AS a * 2", "bob"),
            "bob's function");
  requireOk(*s.run("CREATE FUNCTION py_secret(a BIGINT) RETURNS BIGINT LANGUAGE PYTHON AS "
                   "$$return a + 41$$",
                   "alice"),
            "alice's Python function");

  // carol may neither replace nor drop bob's function, nor read its body.
  requireDeniedNaming(
      *s.run("CREATE OR REPLACE FUNCTION bob_twice(a BIGINT) RETURNS BIGINT AS a * 3", "carol"),
      "carol replacing bob's function", "bob");
  requireDeniedNaming(*s.run("DROP FUNCTION bob_twice", "carol"), "carol dropping bob's function",
                      "bob");
  requireDeniedNaming(*s.run("DROP FUNCTION IF EXISTS bob_twice", "carol"),
                      "carol dropping bob's function IF EXISTS", "bob");
  CHECK(shownBody(s, "carol", "bob_twice") == std::nullopt);
  CHECK(describedRow(s, "carol", "bob_twice", "body") == std::nullopt);
  CHECK(describedRow(s, "carol", "bob_twice", "owner") == std::optional<std::string>("bob"));
  // A superuser's Python function is no one else's to replace with SQL.
  requireDeniedNaming(
      *s.run("CREATE OR REPLACE FUNCTION py_secret(a BIGINT) RETURNS BIGINT AS a", "bob"),
      "bob replacing alice's Python function", "alice");
  requireDeniedNaming(*s.run("DROP FUNCTION py_secret", "bob"), "bob dropping alice's function",
                      "alice");
  CHECK(shownBody(s, "bob", "py_secret") == std::nullopt);
  // A superuser's processor likewise.
  requireOk(*s.run("CREATE PROCESSOR counter RETURNS (n BIGINT) LANGUAGE PYTHON AS $$\n"
                   "class Counter:\n"
                   "    def handle_input_rows(self, key, rows):\n"
                   "        yield (1,)\n"
                   "$$",
                   "alice"),
            "alice's processor");
  requireDeniedNaming(*s.run("DROP PROCESSOR counter", "bob"), "bob dropping alice's processor",
                      "alice");
  requireOk(*s.run("DROP PROCESSOR counter", "dave"), "a superuser dropping alice's processor");
  auto still = s.run("SELECT py_secret(1)", "bob");
  requireOk(*still, "calling alice's function");
  CHECK(still->rows.at(0).at(0) == std::optional<std::string>("42"));

  // The owner and the superusers see the body; the owner replaces it and keeps it.
  CHECK(shownBody(s, "bob", "bob_twice") == std::optional<std::string>("a * 2"));
  CHECK(shownBody(s, "dave", "bob_twice") == std::optional<std::string>("a * 2"));
  CHECK(describedRow(s, "alice", "bob_twice", "body") == std::optional<std::string>("a * 2"));
  requireOk(*s.run("CREATE OR REPLACE FUNCTION bob_twice(a BIGINT) RETURNS BIGINT AS a * 3", "bob"),
            "bob replacing his function");
  // A superuser's replacement leaves the function bob's, as in PostgreSQL.
  requireOk(
      *s.run("CREATE OR REPLACE FUNCTION bob_twice(a BIGINT) RETURNS BIGINT AS a * 4", "dave"),
      "dave replacing bob's function");
  CHECK(describedRow(s, "bob", "bob_twice", "owner") == std::optional<std::string>("bob"));
  CHECK(shownBody(s, "bob", "bob_twice") == std::optional<std::string>("a * 4"));
  s.engine.reset();

  // The owners come back with the catalog.
  EngineOptions eo;
  eo.dataDir = (s.dir.path / "data").string();
  eo.slots = 8;
  eo.users = s.users;
  eo.superusers = {"dave"};
  s.engine = std::make_unique<Engine>(eo, s.connectors);
  s.engine->restore();
  CHECK(shownBody(s, "carol", "bob_twice") == std::nullopt);
  CHECK(shownBody(s, "bob", "bob_twice") == std::optional<std::string>("a * 4"));
  requireDeniedNaming(*s.run("DROP FUNCTION bob_twice", "carol"),
                      "carol dropping bob's function after a restart", "bob");
  requireDeniedNaming(*s.run("DROP FUNCTION py_secret", "bob"),
                      "bob dropping alice's function after a restart", "alice");
  requireOk(*s.run("DROP FUNCTION bob_twice", "bob"), "bob dropping his function");
  requireOk(*s.run("DROP FUNCTION py_secret", "dave"), "a superuser dropping alice's function");
  s.engine->shutdown();
}

TEST_CASE("privileges: only a flow's owner or a superuser stops, starts or drops it") {
  TempDir files;
  Server s({files.path.string()});
  requireOk(*s.run("CREATE SOURCE gen (a BIGINT) WITH (connector = 'datagen', rowsPerSecond = '1')",
                   "bob"),
            "CREATE SOURCE");
  requireOk(*s.run("CREATE SINK out WITH (connector = 'file', path = '" +
                       (files.path / "out.jsonl").string() + "')",
                   "bob"),
            "CREATE SINK");
  requireOk(*s.run("CREATE FLOW bobs INTO out AS SELECT a FROM gen", "bob"), "bob's flow");

  requireDeniedNaming(*s.run("STOP FLOW bobs", "carol"), "carol stopping bob's flow", "bob");
  requireDeniedNaming(*s.run("DROP FLOW bobs", "carol"), "carol dropping bob's flow", "bob");
  requireOk(*s.run("STOP FLOW bobs", "bob"), "bob stopping his flow");
  requireDeniedNaming(*s.run("START FLOW bobs", "carol"), "carol starting bob's flow", "bob");
  auto described = s.run("DESCRIBE bobs", "carol");
  requireOk(*described, "DESCRIBE");
  bool ownerShown = false;
  for (const auto& row : described->rows) {
    ownerShown = ownerShown || (row[0] == std::optional<std::string>("owner") &&
                                row[1] == std::optional<std::string>("bob"));
  }
  CHECK(ownerShown);
  // A dry run is refused as the statement would be.
  auto dry = s.engine->openSession("carol", "rtsql");
  testing::ResultCapture set, drop;
  s.engine->execute(*dry, "SET rtsql.dry_run = on", set);
  requireOk(set, "SET");
  s.engine->execute(*dry, "DROP FLOW bobs", drop);
  requireDeniedNaming(drop, "carol's dry-run drop of bob's flow", "bob");
  s.engine.reset();

  // The owner comes back with the catalog.
  EngineOptions eo;
  eo.dataDir = (s.dir.path / "data").string();
  eo.slots = 8;
  eo.users = s.users;
  eo.superusers = {"dave"};
  eo.filesDirs = {files.path.string()};
  s.engine = std::make_unique<Engine>(eo, s.connectors);
  s.engine->restore();
  requireDeniedNaming(*s.run("START FLOW bobs", "carol"),
                      "carol starting bob's flow after a restart", "bob");
  requireOk(*s.run("START FLOW bobs", "alice"), "a superuser starting bob's flow");
  requireOk(*s.run("DROP FLOW bobs", "bob"), "bob dropping his flow");
  s.engine->shutdown();
}

TEST_CASE("privileges: an object of a catalog without owners is the superusers'") {
  Server s;
  // A catalog written before owners were recorded.
  writeCatalogFile((s.dir.path / "data" / "catalog").string(),
                   {CatalogRecord{"function", "old_f",
                                  "CREATE FUNCTION old_f(a BIGINT) RETURNS BIGINT AS a + 1",
                                  true,
                                  {},
                                  ""}});
  s.engine->restore();
  auto denied = s.run("DROP FUNCTION old_f", "bob");
  requireDenied(*denied, "bob dropping a function of an old catalog");
  if (denied->err) {
    CHECK_MESSAGE(denied->err->message().find("belongs to the superusers") != std::string::npos,
                  denied->err->message());
  }
  CHECK(shownBody(s, "bob", "old_f") == std::nullopt);
  CHECK(describedRow(s, "bob", "old_f", "owner") == std::nullopt);
  CHECK(shownBody(s, "alice", "old_f") == std::optional<std::string>("a + 1"));
  requireOk(*s.run("DROP FUNCTION old_f", "dave"), "a superuser dropping it");
  s.engine->shutdown();
}
