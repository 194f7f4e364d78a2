// The web console's HTTP side without a socket: the embedded files and their
// content types, the routes that serve them and the plan JSON, and the cache
// of verified Basic credentials that spares the polling page a key
// derivation per request.
#include <doctest/doctest.h>

#include <chrono>
#include <string>

#include "server/http/basic_auth.h"
#include "server/http/console_assets.h"
#include "server/http/routes.h"
#include "server/http/sql_endpoint.h"
#include "server/pgwire/auth.h"

using namespace rtsql::http;
using namespace std::chrono_literals;
namespace pgwire = rtsql::pgwire;

namespace {

class PlanSource : public Source {
 public:
  std::vector<FlowStatus> flows(bool) const override { return {}; }
  std::optional<std::string> progress(const std::string&) const override { return std::nullopt; }
  SlotUsage slots() const override { return {0, 8}; }
  std::optional<std::string> planJson(const std::string& flow) const override {
    if (flow == "has/slash") return std::string("{\"flow\":\"has/slash\"}");
    if (flow != "clicks") return std::nullopt;
    return std::string("{\"flow\":\"clicks\"}");
  }
};

std::string header(const Reply& r, const std::string& name) {
  for (const auto& [n, v] : r.headers) {
    if (n == name) return v;
  }
  return {};
}

std::string basic(const std::string& userColonPassword) {
  return "Basic " + pgwire::encodeBase64(userColonPassword);
}

}  // namespace

TEST_CASE("console: the page, its script and style sheet are embedded and found by path") {
  const EmbeddedFile* index = findConsoleFile("/");
  REQUIRE(index);
  CHECK(std::string(index->name) == "index.html");
  CHECK(findConsoleFile("/index.html") == index);
  const std::string html(index->data, index->size);
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  // The page loads only what rtsqld serves: no other host.
  CHECK(html.find("/console/console.js") != std::string::npos);
  CHECK(html.find("/console/console.css") != std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);

  const EmbeddedFile* script = findConsoleFile("/console/console.js");
  REQUIRE(script);
  CHECK(std::string(script->data, script->size).find("/flows") != std::string::npos);
  CHECK(findConsoleFile("/console/console.css"));

  for (const char* path : {"/console/", "/console/nothing.js", "/console.js", "/index.htm",
                           "/console/../console/console.js", "//", ""}) {
    CHECK_MESSAGE(findConsoleFile(path) == nullptr, path);
  }
}

TEST_CASE("console: content types follow the file's extension") {
  CHECK(std::string(contentTypeOf("index.html")) == "text/html; charset=utf-8");
  CHECK(std::string(contentTypeOf("console.js")) == "text/javascript; charset=utf-8");
  CHECK(std::string(contentTypeOf("console.css")) == "text/css; charset=utf-8");
  CHECK(std::string(contentTypeOf("logo.svg")) == "image/svg+xml");
  CHECK(std::string(contentTypeOf("shot.png")) == "image/png");
  CHECK(std::string(contentTypeOf("README")) == "application/octet-stream");
}

TEST_CASE("console: routes serve the files with a cache header, and refuse other methods") {
  PlanSource src;
  Reply page = route(src, "GET", "/");
  CHECK(page.status == 200);
  CHECK(page.contentType == "text/html; charset=utf-8");
  CHECK(header(page, "Cache-Control") == "private, max-age=300");
  // The query string selects nothing.
  CHECK(route(src, "GET", "/?flow=clicks").body == page.body);

  Reply script = route(src, "GET", "/console/console.js");
  CHECK(script.status == 200);
  CHECK(script.contentType == "text/javascript; charset=utf-8");
  CHECK(header(script, "X-Content-Type-Options") == "nosniff");

  // Browsers ask for /favicon.ico whatever the page links.
  Reply icon = route(src, "GET", "/favicon.ico");
  CHECK(icon.status == 200);
  CHECK(icon.contentType == "image/svg+xml");
  CHECK(icon.body.find("<svg") != std::string::npos);
  CHECK(route(src, "GET", "/console/favicon.svg").body == icon.body);

  CHECK(route(src, "GET", "/console/missing.css").status == 404);
  CHECK(route(src, "GET", "/consolejs").status == 404);
  Reply post = route(src, "POST", "/");
  CHECK(post.status == 405);
  CHECK(header(post, "Allow") == "GET");
}

TEST_CASE("plan route: a flow's plan JSON, 404 for an unknown flow") {
  PlanSource src;
  Reply r = route(src, "GET", "/flows/clicks/plan");
  CHECK(r.status == 200);
  CHECK(r.contentType == "application/json");
  CHECK(r.body == "{\"flow\":\"clicks\"}");
  CHECK(route(src, "GET", "/flows/has%2Fslash/plan").status == 200);
  Reply missing = route(src, "GET", "/flows/nothing/plan");
  CHECK(missing.status == 404);
  CHECK(missing.body.find("nothing") != std::string::npos);
  CHECK(route(src, "GET", "/flows/a/b/plan").status == 404);
  CHECK(route(src, "GET", "/flows//plan").status == 404);
  CHECK(route(src, "DELETE", "/flows/clicks/plan").status == 405);
}

TEST_CASE("credential cache: a check is remembered until its TTL or the user's stamp changes") {
  using Clock = CredentialCache::Clock;
  CredentialCache cache(8, 60s, 2s);
  const Clock::time_point t0 = Clock::now();
  const std::string alice = basic("alice:secret");
  CHECK(cache.lookup(alice, 1, t0) == CredentialCache::Verdict::Unknown);
  cache.remember(alice, true, 1, t0);
  CHECK(cache.lookup(alice, 1, t0 + 59s) == CredentialCache::Verdict::Accepted);
  // Another header (another password) is another entry.
  CHECK(cache.lookup(basic("alice:other"), 1, t0) == CredentialCache::Verdict::Unknown);
  // ALTER USER changed the user's verifier: the old check no longer holds,
  // and the entry is gone.
  CHECK(cache.lookup(alice, 2, t0 + 1s) == CredentialCache::Verdict::Unknown);
  CHECK(cache.lookup(alice, 1, t0 + 1s) == CredentialCache::Verdict::Unknown);

  cache.remember(alice, true, 1, t0);
  CHECK(cache.lookup(alice, 1, t0 + 60s) == CredentialCache::Verdict::Unknown);  // expired

  // A refusal holds only briefly.
  const std::string wrong = basic("alice:guess");
  cache.remember(wrong, false, 1, t0);
  CHECK(cache.lookup(wrong, 1, t0 + 1s) == CredentialCache::Verdict::Refused);
  CHECK(cache.lookup(wrong, 1, t0 + 2s) == CredentialCache::Verdict::Unknown);
}

TEST_CASE("credential cache: bounded, expired entries go first, then the oldest") {
  using Clock = CredentialCache::Clock;
  CredentialCache cache(3, 60s, 2s);
  const Clock::time_point t0 = Clock::now();
  cache.remember(basic("u0:p"), false, 0, t0);  // expires at t0 + 2s
  cache.remember(basic("u1:p"), true, 0, t0 + 1s);
  cache.remember(basic("u2:p"), true, 0, t0 + 2s);
  CHECK(cache.size() == 3);
  cache.remember(basic("u3:p"), true, 0, t0 + 3s);  // u0 has expired: it goes
  CHECK(cache.size() == 3);
  CHECK(cache.lookup(basic("u1:p"), 0, t0 + 3s) == CredentialCache::Verdict::Accepted);
  cache.remember(basic("u4:p"), true, 0, t0 + 4s);  // none expired: the oldest (u1) goes
  CHECK(cache.size() == 3);
  CHECK(cache.lookup(basic("u1:p"), 0, t0 + 4s) == CredentialCache::Verdict::Unknown);
  CHECK(cache.lookup(basic("u2:p"), 0, t0 + 4s) == CredentialCache::Verdict::Accepted);
  CHECK(cache.lookup(basic("u4:p"), 0, t0 + 4s) == CredentialCache::Verdict::Accepted);
}

TEST_CASE("authorize with a cache: one derivation for a repeated header, again after ALTER USER") {
  int checks = 0;
  PasswordCheck check = [&checks](std::string_view user, std::string_view password) {
    ++checks;
    return user == "alice" && password == "secret";
  };
  uint64_t aliceStamp = 7;
  CredentialStamp stamp = [&aliceStamp](std::string_view user) {
    return user == "alice" ? aliceStamp : 0;
  };
  CredentialCache cache;
  const auto now = CredentialCache::Clock::now();
  const std::string good = basic("alice:secret");
  for (int i = 0; i < 5; ++i) {
    // Checked or cached, the request goes on as alice (the SQL box runs as her).
    std::string user;
    CHECK_FALSE(authorize(check, "/flows", good, &cache, stamp, now, &user));
    CHECK(user == "alice");
  }
  CHECK(checks == 1);

  // Wrong credentials repeated (a browser retrying) are refused without a
  // derivation each time, with the same answer as the first.
  const std::string bad = basic("alice:guess");
  std::optional<Reply> first = authorize(check, "/flows", bad, &cache, stamp, now);
  REQUIRE(first);
  CHECK(first->status == 401);
  std::optional<Reply> again = authorize(check, "/flows", bad, &cache, stamp, now);
  REQUIRE(again);
  CHECK(again->body == first->body);
  CHECK(checks == 2);

  aliceStamp = 8;  // the password was changed
  CHECK_FALSE(authorize(check, "/flows", good, &cache, stamp, now));
  CHECK(checks == 3);

  // Without a cache every request is checked.
  CHECK_FALSE(authorize(check, "/flows", good));
  CHECK_FALSE(authorize(check, "/flows", good));
  CHECK(checks == 5);
  // /healthz and missing credentials never reach the check.
  CHECK_FALSE(authorize(check, "/healthz", "", &cache, stamp, now));
  CHECK(authorize(check, "/", "", &cache, stamp, now));
  CHECK(checks == 5);
}

TEST_CASE("sql box: only one SHOW, DESCRIBE, EXPLAIN or SELECT statement is run") {
  for (const char* sql :
       {"SHOW FLOWS", "show sources;", "SHOW PROGRESS f", "SHOW USERS", "DESCRIBE clicks",
        "EXPLAIN FLOW f", "EXPLAIN CREATE FLOW f INTO s AS SELECT * FROM src", "SELECT 1",
        "SELECT * FROM clicks LIMIT 5"}) {
    CHECK_NOTHROW_MESSAGE(checkReadOnly(sql), sql);
  }
  auto stateOf = [](const char* sql) {
    try {
      checkReadOnly(sql);
    } catch (const rtsql::SqlError& e) {
      return e.sqlstate();
    }
    return std::string("none");
  };
  for (const char* sql :
       {"CREATE SOURCE s (a INT) WITH (connector = 'datagen')", "DROP FLOW f", "STOP FLOW f",
        "SET rtsql.dry_run = on", "CREATE USER bob PASSWORD 'x'", "DROP USER bob",
        "INSERT INTO t VALUES (1)", "CREATE FLOW f INTO s AS SELECT * FROM src"}) {
    CHECK_MESSAGE(stateOf(sql) == "25006", sql);
  }
  CHECK(stateOf("SHOW FLOWS; DROP FLOW f") == "42601");
  CHECK(stateOf("SELECT 1; SELECT 2") == "42601");
  CHECK(stateOf("") == "42601");
  CHECK(stateOf("SHOW WHAT EVER (") == "42601");
}

TEST_CASE("sql box: POST /sql runs a read-only statement and answers its rows as JSON") {
  struct SqlSource : PlanSource {
    mutable std::vector<std::pair<std::string, std::string>> ran;  // user, sql
    mutable SqlLimits lastLimits;
    SqlResult runReadOnly(const std::string& user, const std::string& sql,
                          const SqlLimits& limits) const override {
      ran.emplace_back(user, sql);
      lastLimits = limits;
      SqlResult r;
      if (sql == "SHOW PROGRESS nope") {
        r.error =
            rtsql::SqlError("42704", "flow \"nope\" does not exist", 14, "SHOW FLOWS lists them");
        return r;
      }
      r.command = "SHOW";
      r.columns = {"name", "error"};
      r.rows = {{"f\"1", std::nullopt}};
      return r;
    }
  };
  SqlSource src;
  Request req;
  req.method = "POST";
  req.target = "/sql";
  req.contentType = "application/json; charset=utf-8";
  req.body = R"({"sql": "SHOW FLOWS"})";
  req.user = "alice";
  Reply ok = route(src, req);
  CHECK(ok.status == 200);
  CHECK(ok.contentType == "application/json");
  CHECK(ok.body ==
        "{\"command\":\"SHOW\",\"columns\":[{\"name\":\"name\"},{\"name\":\"error\"}],"
        "\"rows\":[[\"f\\\"1\",null]],\"stopped\":null}\n");
  REQUIRE(src.ran.size() == 1);
  CHECK(src.ran[0] == std::make_pair(std::string("alice"), std::string("SHOW FLOWS")));

  req.body = R"({"sql": "SHOW PROGRESS nope"})";
  Reply missing = route(src, req);
  CHECK(missing.status == 400);
  CHECK(missing.body ==
        "{\"error\":\"flow \\\"nope\\\" does not exist\",\"sqlstate\":\"42704\",\"position\":14,"
        "\"hint\":\"SHOW FLOWS lists them\"}\n");

  // A statement that would change something never reaches the source.
  req.body = R"({"sql": "DROP FLOW f"})";
  Reply refused = route(src, req);
  CHECK(refused.status == 400);
  CHECK(refused.body.find("\"sqlstate\":\"25006\"") != std::string::npos);
  CHECK(src.ran.size() == 2);

  req.body = "SHOW FLOWS";  // not JSON
  CHECK(route(src, req).status == 400);
  req.body = R"({"sql": "SHOW FLOWS"})";
  req.contentType = "text/plain";  // what another site's page could send unasked
  CHECK(route(src, req).status == 415);
  req.contentType = "application/json";
  req.user = "";  // no users file: the default user
  CHECK(route(src, req).status == 200);
  CHECK(src.ran.back().first == "rtsql");
  CHECK(src.ran.size() == 3);

  Reply get = route(src, "GET", "/sql");
  CHECK(get.status == 405);
  CHECK(header(get, "Allow") == "POST");
}

TEST_CASE("sql box: a statement's limits come from the request, checked before it runs") {
  struct LimitsSource : PlanSource {
    mutable int runs = 0;
    mutable SqlLimits seen;
    SqlResult runReadOnly(const std::string&, const std::string&,
                          const SqlLimits& limits) const override {
      ++runs;
      seen = limits;
      SqlResult r;
      r.command = "SELECT 1";
      r.columns = {"a"};
      r.rows = {{"1"}};
      r.stopped = "timeout";
      return r;
    }
  };
  LimitsSource src;
  Request req;
  req.method = "POST";
  req.target = "/sql";
  req.contentType = "application/json";
  bool gone = false;
  req.cancelled = [&gone] { return gone; };

  req.body = R"({"sql": "SELECT * FROM clicks"})";
  Reply defaults = route(src, req);
  CHECK(defaults.status == 200);
  CHECK(src.seen.timeout == std::chrono::milliseconds(10'000));
  CHECK(src.seen.maxRows == 1000);
  // The request's cancel check reaches the statement.
  REQUIRE(src.seen.cancelled);
  CHECK_FALSE(src.seen.cancelled());
  gone = true;
  CHECK(src.seen.cancelled());
  // A statement stopped by its limits still answers its rows, saying why.
  CHECK(defaults.body ==
        "{\"command\":\"SELECT 1\",\"columns\":[{\"name\":\"a\"}],\"rows\":[[\"1\"]],"
        "\"stopped\":\"timeout\"}\n");

  req.body = R"({"sql": "SELECT * FROM clicks", "timeout_ms": 1500, "max_rows": 7})";
  CHECK(route(src, req).status == 200);
  CHECK(src.seen.timeout == std::chrono::milliseconds(1500));
  CHECK(src.seen.maxRows == 7);
  CHECK(src.runs == 2);

  for (const char* body :
       {R"({"sql": "SELECT 1", "timeout_ms": 0})", R"({"sql": "SELECT 1", "timeout_ms": 60001})",
        R"({"sql": "SELECT 1", "timeout_ms": "5s"})", R"({"sql": "SELECT 1", "timeout_ms": 1.5})",
        R"({"sql": "SELECT 1", "max_rows": 0})", R"({"sql": "SELECT 1", "max_rows": 10001})",
        R"({"sql": "SELECT 1", "max_rows": -3})"}) {
    req.body = body;
    Reply bad = route(src, req);
    CHECK_MESSAGE(bad.status == 400, body);
    CHECK_MESSAGE(bad.body.find("\"sqlstate\":\"22023\"") != std::string::npos, body);
  }
  CHECK(src.runs == 2);
}
