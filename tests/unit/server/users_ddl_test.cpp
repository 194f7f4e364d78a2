// CREATE / ALTER / DROP USER: the user store's changes and how they rewrite the
// users file (atomically, comments kept, plain passwords turned into
// verifiers, permissions kept), then the engine's statements, and a real
// server where libpq logs in as a user created a moment before, and is
// refused once its password changed or it was dropped.
#include <doctest/doctest.h>
#include <libpq-fe.h>
#include <sys/stat.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "connectors/provider.h"
#include "server/engine.h"
#include "server/pgwire/auth.h"
#include "server/pgwire/server.h"
#include "server/users.h"
#include "server_test_util.h"

using namespace rtsql;
using rtsql::testing::TempDir;
using namespace rtsql::pgwire;
using rtsql::testing::ResultCapture;
namespace fs = std::filesystem;

namespace {


std::string readFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeFile(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// True when `password` is the password of `user` in `store`.
bool passwordIs(const UserStore& store, const std::string& user, const std::string& password) {
  const ScramVerifier* v = store.find(user);
  return v != nullptr &&
         makeScramVerifier(password, v->salt, v->iterations).storedKey == v->storedKey;
}

std::string sqlstateOf(const std::function<void()>& f, std::string* message = nullptr) {
  try {
    f();
  } catch (const SqlError& e) {
    if (message) *message = e.message() + " " + e.hint();
    return e.sqlstate();
  }
  return "";
}


}  // namespace

// ---- The store ------------------------------------------------------------------------

TEST_CASE("users: changes rewrite the file, keeping comments and permissions") {
  TempDir dir;
  const fs::path file = dir.path / "users";
  writeFile(file, "# rtsql users\n"
                  "alice:wonderland\n"
                  "\n"
                  "  # bob below\n"
                  "bob:" + formatScramVerifier(makeScramVerifier("builder")) + "\n");
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  UserStore store = UserStore::loadFile(file.string());
  CHECK(store.path() == file.string());
  CHECK(store.names() == std::vector<std::string>{"alice", "bob"});

  REQUIRE(store.create("carol", "c4rol pass"));
  CHECK(passwordIs(store, "carol", "c4rol pass"));
  const std::string text = readFile(file);
  // Comments and blank lines stay; alice's plain password became a verifier.
  CHECK(text.rfind("# rtsql users\nalice:SCRAM-SHA-256$4096:", 0) == 0);
  CHECK(text.find("\n\n  # bob below\nbob:SCRAM-SHA-256$") != std::string::npos);
  CHECK(text.find("\ncarol:SCRAM-SHA-256$") != std::string::npos);
  CHECK(text.find("wonderland") == std::string::npos);
  CHECK(text.find("c4rol") == std::string::npos);
  // The file's mode is kept, and no temporary file is left behind.
  struct stat st {};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  CHECK(std::distance(fs::directory_iterator(dir.path), fs::directory_iterator()) == 1);

  // What a restart would load is what the store holds.
  UserStore reloaded = UserStore::loadFile(file.string());
  CHECK(passwordIs(reloaded, "alice", "wonderland"));
  CHECK(passwordIs(reloaded, "bob", "builder"));
  CHECK(passwordIs(reloaded, "carol", "c4rol pass"));

  const ScramVerifier* before = store.find("carol");
  store.alter("carol", "n3w");
  CHECK(passwordIs(store, "carol", "n3w"));
  CHECK_FALSE(passwordIs(store, "carol", "c4rol pass"));
  // A pointer handed out before the change still points at a live verifier.
  CHECK(makeScramVerifier("c4rol pass", before->salt, before->iterations).storedKey ==
        before->storedKey);
  CHECK(passwordIs(UserStore::loadFile(file.string()), "carol", "n3w"));

  REQUIRE(store.drop("alice"));
  CHECK(store.find("alice") == nullptr);
  CHECK(store.names() == std::vector<std::string>{"bob", "carol"});
  CHECK(readFile(file).find("alice") == std::string::npos);
  CHECK(UserStore::loadFile(file.string()).size() == 2);

  // A verifier is taken as it is.
  store.create("dave", formatScramVerifier(makeScramVerifier("pencil")));
  CHECK(passwordIs(store, "dave", "pencil"));
}

TEST_CASE("users: refused changes say why and never show the password") {
  UserStore store = UserStore::parse("alice:wonderland\n", "test");
  std::string msg;
  CHECK(sqlstateOf([&] { store.create("alice", "s3cr3t-1"); }, &msg) == sqlstate::kDuplicateObject);
  CHECK(msg.find("s3cr3t") == std::string::npos);
  CHECK_FALSE(store.create("alice", "s3cr3t-1", /*ifNotExists=*/true));
  CHECK(passwordIs(store, "alice", "wonderland"));

  CHECK(sqlstateOf([&] { store.alter("nobody", "s3cr3t-2"); }, &msg) == sqlstate::kUndefinedObject);
  CHECK(msg.find("s3cr3t") == std::string::npos);
  CHECK(sqlstateOf([&] { store.drop("nobody"); }) == sqlstate::kUndefinedObject);
  CHECK_FALSE(store.drop("nobody", /*ifExists=*/true));

  for (const std::string& bad : std::vector<std::string>{"", "a b", "a:b", "#x", "tab\tname",
                                                           std::string(64, 'n')}) {
    CAPTURE(bad);
    CHECK(sqlstateOf([&] { store.create(bad, "pw"); }) == sqlstate::kInvalidParameterValue);
  }
  CHECK(store.create(std::string(63, 'n'), "pw"));
  CHECK(sqlstateOf([&] { store.create("erin", ""); }) == sqlstate::kInvalidParameterValue);
  CHECK(sqlstateOf([&] { store.create("erin", "SCRAM-SHA-256$4096:s3cr3t-3"); }, &msg) ==
        sqlstate::kInvalidParameterValue);
  CHECK(msg.find("s3cr3t") == std::string::npos);

  // The last user cannot go: the server would not start on an empty file.
  store.drop(std::string(63, 'n'));
  CHECK(sqlstateOf([&] { store.drop("alice"); }) == sqlstate::kObjectNotInPrerequisiteState);
  CHECK(store.size() == 1);
}

TEST_CASE("users: a file that cannot be written leaves the store unchanged") {
  TempDir dir;
  const fs::path sub = dir.path / "etc";
  fs::create_directory(sub);
  writeFile(sub / "users", "alice:wonderland\n");
  UserStore store = UserStore::loadFile((sub / "users").string());
  fs::remove_all(sub);  // no directory to write the temporary file in
  std::string msg;
  CHECK(sqlstateOf([&] { store.create("bob", "builder"); }, &msg) == sqlstate::kIoError);
  CHECK(msg.find("could not write users file") != std::string::npos);
  CHECK(store.find("bob") == nullptr);
  CHECK(store.size() == 1);
}

// ---- The engine and a real server --------------------------------------------------

namespace {

// An engine whose users are `store`, behind a PostgreSQL-protocol server on an
// ephemeral loopback port.
struct EngineServer {
  TempDir dir;
  DefaultConnectorProvider connectors;
  std::shared_ptr<UserStore> users;
  std::unique_ptr<Engine> engine;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> guard;
  std::unique_ptr<PgServer> server;
  std::vector<std::thread> threads;

  explicit EngineServer(std::shared_ptr<UserStore> store) : users(std::move(store)) {
    EngineOptions eo;
    eo.dataDir = (dir.path / "data").string();
    eo.slots = 4;
    eo.users = users;
    engine = std::make_unique<Engine>(eo, connectors);
    PgServerOptions po;
    po.host = "127.0.0.1";
    po.port = 0;
    po.users = users;
    server = std::make_unique<PgServer>(io, *engine, po);
    server->start();
    guard.emplace(io.get_executor());
    for (int i = 0; i < 2; ++i) threads.emplace_back([this] { io.run(); });
  }
  ~EngineServer() {
    server->stop();
    guard.reset();
    testing::eventually([this] { return io.stopped(); }, std::chrono::milliseconds(3000));
    io.stop();
    for (auto& t : threads) t.join();
    server.reset();
    engine.reset();
  }

  // A session of `user` (no password check: the engine is called directly).
  ResultCapture run(const std::string& sql, const std::string& user = "alice") {
    auto session = engine->openSession(user, "rtsql");
    ResultCapture out;
    engine->execute(*session, sql, out);
    return out;
  }

  // Logs in with libpq; returns "" on success, else libpq's error.
  std::string login(const std::string& user, const std::string& password) {
    const std::string conninfo = "host=127.0.0.1 port=" + std::to_string(server->port()) +
                                 " user=" + user + " password='" + password +
                                 "' dbname=rtsql connect_timeout=5 gssencmode=disable";
    PGconn* c = PQconnectdb(conninfo.c_str());
    std::string err = PQstatus(c) == CONNECTION_OK ? "" : PQerrorMessage(c);
    PQfinish(c);
    return err;
  }
};

}  // namespace

TEST_CASE("users: CREATE / ALTER / DROP USER take effect for the next login") {
  TempDir files;
  const fs::path file = files.path / "users";
  writeFile(file, "alice:wonderland\n");
  EngineServer es(std::make_shared<UserStore>(UserStore::loadFile(file.string())));

  CHECK(es.login("bob", "builder").find("password authentication failed") != std::string::npos);
  ResultCapture r = es.run("CREATE USER bob WITH PASSWORD 'builder'");
  REQUIRE_MESSAGE(!r.err, r.err->message());
  CHECK(r.tag == "CREATE ROLE");
  CHECK(es.login("bob", "builder").empty());

  r = es.run("SHOW USERS");
  REQUIRE(r.cols.size() == 2);
  CHECK(r.cols[0].name == "name");
  CHECK(r.cols[1].name == "superuser");
  REQUIRE(r.rows.size() == 2);
  CHECK(r.rows[0][0] == "alice");
  CHECK(r.rows[1][0] == "bob");
  CHECK(r.tag == "SHOW 2");

  r = es.run("ALTER USER bob PASSWORD 'architect'", "bob");
  CHECK(r.tag == "ALTER ROLE");
  CHECK_FALSE(es.login("bob", "builder").empty());
  CHECK(es.login("bob", "architect").empty());

  // bob is no superuser; alice, the first user, is one but cannot drop herself.
  r = es.run("DROP USER bob", "bob");
  REQUIRE(r.err);
  CHECK(r.err->sqlstate() == sqlstate::kInsufficientPrivilege);
  r = es.run("DROP USER alice");
  REQUIRE(r.err);
  CHECK(r.err->sqlstate() == sqlstate::kObjectInUse);
  r = es.run("DROP USER bob");
  CHECK(r.tag == "DROP ROLE");
  CHECK(es.login("bob", "architect").find("password authentication failed") !=
        std::string::npos);
  r = es.run("DROP USER IF EXISTS bob");
  CHECK(r.tag == "DROP ROLE");
  CHECK(r.notices.size() == 1);

  r = es.run("CREATE USER alice PASSWORD 'hunter2'");
  REQUIRE(r.err);
  CHECK(r.err->sqlstate() == sqlstate::kDuplicateObject);
  CHECK(r.err->message().find("hunter2") == std::string::npos);
  CHECK_FALSE(r.err->hasPosition());

  // The file holds what the server accepts.
  const UserStore reloaded = UserStore::loadFile(file.string());
  CHECK(reloaded.names() == std::vector<std::string>{"alice"});

  // The extended protocol's Describe knows SHOW USERS' column.
  auto session = es.engine->openSession("alice", "rtsql");
  auto cols = es.engine->describe(*session, "SHOW USERS");
  REQUIRE(cols);
  REQUIRE(cols->size() == 2);
  CHECK((*cols)[0].name == "name");
  CHECK((*cols)[1].name == "superuser");
  CHECK(es.engine->describe(*session, "DROP USER x")->empty());
}

TEST_CASE("users: without a users file the statements explain what is missing") {
  TempDir dir;
  DefaultConnectorProvider connectors;
  EngineOptions eo;
  eo.dataDir = (dir.path / "data").string();
  eo.slots = 2;
  Engine engine(eo, connectors);
  auto session = engine.openSession("rtsql", "rtsql");
  for (const char* sql : {"CREATE USER bob PASSWORD 'hunter2'", "ALTER USER bob PASSWORD 'x'",
                          "DROP USER bob", "SHOW USERS"}) {
    CAPTURE(sql);
    ResultCapture out;
    engine.execute(*session, sql, out);
    REQUIRE(out.err);
    CHECK(out.err->sqlstate() == sqlstate::kObjectNotInPrerequisiteState);
    CHECK(out.err->hint().find("--users-file") != std::string::npos);
    CHECK(out.err->message().find("hunter2") == std::string::npos);
  }
}
