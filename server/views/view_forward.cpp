#include "server/views/view_forward.h"

#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "common/error.h"
#include "common/function_determinism.h"
#include "common/interrupt.h"
#include "common/options.h"
#include "connectors/net/http_client.h"
#include "executor/state/view_latest.h"
#include "parser/expr_walker.h"
#include "planner/catalog.h"
#include "server/cluster/node_record.h"
#include "server/pgwire/codec.h"
#include "server/session_settings.h"
#include "server/statement_timeout.h"

namespace rtsql {

namespace {

using Clock = std::chrono::steady_clock;
// How long one wait on the socket lasts before cancel, deadline and shutdown
// are looked at again.
constexpr int kSliceMs = 50;

using Conn = std::unique_ptr<PGconn, decltype(&PQfinish)>;
using Result = std::unique_ptr<PGresult, decltype(&PQclear)>;

std::string quoted(const std::string& value) {
  std::string out = "'";
  for (char c : value) {
    out.push_back(c);
    if (c == '\'') out.push_back('\'');
  }
  return out + "'";
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class Forward {
 public:
  Forward(const ForwardedRead& read, ResultWriter& out) : read_(read), out_(out) {
    const OptionEntry* timeout = read.settings.find("statement_timeout");
    const int64_t ms = timeout ? parseStatementTimeoutMs(timeout->value, SqlError::npos) : 0;
    start_ = Clock::now();
    if (ms > 0) deadline_ = start_ + std::chrono::milliseconds(ms);
  }

  std::optional<uint64_t> run() {
    connect();
    send();
    return receive();
  }

 private:
  // 55000 naming the holder: what a read there would have said before,
  // with why the read could not be sent.
  [[noreturn]] void unreachable(const std::string& why) const {
    throw SqlError(sqlstate::kObjectNotInPrerequisiteState,
                   fmt::format("materialized view \"{}\" runs on another node of the cluster: "
                               "node \"{}\", which cannot be reached",
                               read_.view, read_.holder),
                   read_.pos,
                   fmt::format("read it on node \"{}\" once it is back; if it is down, another "
                               "node takes the view within the cluster's --node-timeout",
                               read_.holder))
        .withDetail(why);
  }

  // Stops the holder's statement and ends the connection.
  void cancelRemote() {
    if (!conn_) return;
    if (PGcancel* c = PQgetCancel(conn_.get())) {
      char err[256];
      PQcancel(c, err, sizeof err);
      PQfreeCancel(c);
    }
    conn_.reset();
  }

  // Whether the client's statement is over: cancelled, past its deadline, or
  // rtsqld stopping.
  bool over() const {
    return out_.cancelled() || net::outboundStopped() ||
           (deadline_ && Clock::now() >= *deadline_);
  }

  // Waits up to one slice for the socket.
  void waitSocket(bool forWrite) const {
    pollfd p{PQsocket(conn_.get()), static_cast<short>(forWrite ? POLLOUT : POLLIN), 0};
    ::poll(&p, 1, kSliceMs);
  }

  void connect() {
    const auto [host, port] = splitNodeAddress(read_.route.address);
    const std::string options = fmt::format("-c {}={}", kForwardedBySetting, read_.route.self);
    const std::string timeout = std::to_string(kForwardConnectMs / 1000);
    std::vector<const char*> keys{"host", "port", "user", "dbname", "options",
                                  "application_name", "connect_timeout", "gssencmode",
                                  "client_encoding"};
    std::vector<const char*> values{host.c_str(), port.c_str(), read_.user.c_str(),
                                    read_.database.c_str(), options.c_str(),
                                    "rtsqld forwarded read", timeout.c_str(), "disable", "UTF8"};
    if (!read_.route.secret.empty()) {
      keys.push_back("password");
      values.push_back(read_.route.secret.c_str());
    }
    keys.push_back(nullptr);
    values.push_back(nullptr);
    conn_ = Conn(PQconnectStartParams(keys.data(), values.data(), 0), PQfinish);
    if (!conn_ || PQstatus(conn_.get()) == CONNECTION_BAD)
      unreachable(conn_ ? trimmed(PQerrorMessage(conn_.get())) : "out of memory");
    // Three quarters of the statement's time at most: a holder that does
    // not answer is named (55000) before the statement's own timeout.
    Clock::time_point until = start_ + std::chrono::milliseconds(kForwardConnectMs);
    if (deadline_) until = std::min(until, start_ + (*deadline_ - start_) * 3 / 4);
    PostgresPollingStatusType state = PGRES_POLLING_WRITING;
    while (state != PGRES_POLLING_OK) {
      if (state == PGRES_POLLING_FAILED) {
        const std::string why = trimmed(PQerrorMessage(conn_.get()));
        if (why.find("authentication") != std::string::npos ||
            why.find("password") != std::string::npos) {
          throw SqlError(sqlstate::kInvalidAuthorization,
                         fmt::format("node \"{}\", which holds materialized view \"{}\", refused "
                                     "the read forwarded as user \"{}\"",
                                     read_.holder, read_.view, read_.user),
                         read_.pos,
                         "every node of a cluster needs the same --cluster-secret-file, and the "
                         "user must exist on the holder")
              .withDetail(why);
        }
        unreachable(why);
      }
      if (out_.cancelled() || net::outboundStopped()) {
        conn_.reset();
        throw Interrupted();
      }
      if (Clock::now() >= until) {
        conn_.reset();
        const auto ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(until - start_).count();
        unreachable(fmt::format("no connection to {} within {} ms", read_.route.address, ms));
      }
      waitSocket(state == PGRES_POLLING_WRITING);
      state = PQconnectPoll(conn_.get());
    }
    PQsetNoticeReceiver(
        conn_.get(),
        [](void* arg, const PGresult* res) {
          const char* msg = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
          if (msg) static_cast<ResultWriter*>(arg)->notice(msg);
        },
        &out_);
  }

  void send() {
    // The session's settings that change what the read answers
    // (server/session_settings.h), a whole read's result bound too.
    std::string sets;
    for (const CarriedSetting& c : settingsForRead(read_.settings, read_.clientText))
      sets += fmt::format("SET {} = {};\n", c.name, quoted(c.value));
    std::string text;
    // The holder ends the read when the client's deadline passes, too.
    if (deadline_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*deadline_ - Clock::now()).count();
      text += fmt::format("SET statement_timeout = {};\n", std::max<int64_t>(1, left));
    }
    text += sets;
    prefix_ = text.size();
    // On a line of its own: a comment at the read's end ends there.
    text += read_.text + "\n;\nSHOW rtsql.view_epoch";
    sent_ = text;
    if (!PQsendQuery(conn_.get(), text.c_str()) || !PQsetSingleRowMode(conn_.get()))
      unreachable(trimmed(PQerrorMessage(conn_.get())));
  }

  // The next result, waiting for it within the bounds.
  Result next() {
    while (PQisBusy(conn_.get())) {
      if (over()) {
        cancelRemote();
        throw Interrupted();
      }
      waitSocket(false);
      if (!PQconsumeInput(conn_.get())) unreachable(trimmed(PQerrorMessage(conn_.get())));
    }
    return Result(PQgetResult(conn_.get()), PQclear);
  }

  // The holder's error, its position moved back into the read's text.
  [[noreturn]] void relayError(const PGresult* res) const {
    auto field = [&](int code) {
      const char* v = PQresultErrorField(res, code);
      return std::string(v ? v : "");
    };
    std::string state = field(PG_DIAG_SQLSTATE);
    if (state.size() != 5) state = sqlstate::kObjectNotInPrerequisiteState;
    size_t pos = SqlError::npos;
    const std::string at = field(PG_DIAG_STATEMENT_POSITION);
    if (!at.empty() && !read_.clientText) {
      pos = read_.pos;
    } else if (!at.empty()) {
      // A character's position in the text sent, as PostgreSQL counts it.
      const size_t p = pgwire::byteOffsetOfPosition(
          sent_, static_cast<size_t>(std::strtoull(at.c_str(), nullptr, 10)));
      if (p >= prefix_ && p - prefix_ < read_.text.size()) pos = read_.pos + (p - prefix_);
    }
    SqlError err(state, field(PG_DIAG_MESSAGE_PRIMARY), pos, field(PG_DIAG_MESSAGE_HINT));
    if (const std::string d = field(PG_DIAG_MESSAGE_DETAIL); !d.empty()) err.withDetail(d);
    throw err;
  }

  std::optional<uint64_t> receive() {
    // Results: the SETs' (no rows), the read's rows one at a time and its
    // end, then the epoch's.
    int statement = 0;  // 0: the read, 1: SHOW rtsql.view_epoch
    bool described = false;
    size_t bytes = 0;
    std::optional<std::optional<std::string>> epoch;
    std::optional<SqlError> failure;
    std::string tag;
    for (Result res = next(); res; res = next()) {
      const ExecStatusType st = PQresultStatus(res.get());
      if (st == PGRES_FATAL_ERROR) {
        try {
          relayError(res.get());
        } catch (const SqlError& e) {
          if (!failure) failure = e;
        }
        continue;
      }
      if (failure) continue;
      if (st != PGRES_SINGLE_TUPLE && st != PGRES_TUPLES_OK) continue;
      if (statement == 0 && !described) {
        std::vector<ResultColumn> cols;
        for (int c = 0; c < PQnfields(res.get()); ++c)
          cols.push_back({PQfname(res.get(), c), PQftype(res.get(), c)});
        out_.columns(cols);
        described = true;
      }
      if (st == PGRES_TUPLES_OK) {
        if (statement == 0) tag = PQcmdStatus(res.get());
        ++statement;
        continue;
      }
      if (statement == 1) {
        if (PQnfields(res.get()) == 1 && !PQgetisnull(res.get(), 0, 0))
          epoch = std::string(PQgetvalue(res.get(), 0, 0));
        else
          epoch = std::optional<std::string>();
        continue;
      }
      std::vector<std::optional<std::string>> row;
      for (int c = 0; c < PQnfields(res.get()); ++c) {
        // A NULL counts as one byte: the bound bounds rows of NULLs too (a
        // part of a query is read with no bound on its rows).
        if (PQgetisnull(res.get(), 0, c)) {
          ++bytes;
          row.emplace_back();
          continue;
        }
        bytes += static_cast<size_t>(PQgetlength(res.get(), 0, c)) + 1;
        row.emplace_back(std::string(PQgetvalue(res.get(), 0, c),
                                     static_cast<size_t>(PQgetlength(res.get(), 0, c))));
      }
      if (bytes > kMaxForwardedBytes) {
        cancelRemote();
        throw SqlError(sqlstate::kProgramLimitExceeded,
                       fmt::format("the read of materialized view \"{}\" from node \"{}\" returns "
                                   "more than {} MiB",
                                   read_.view, read_.holder, kMaxForwardedBytes >> 20),
                       read_.pos,
                       "narrow the query with WHERE or LIMIT, or read the view on its node");
      }
      out_.row(row);
    }
    if (failure) throw *failure;
    out_.complete(tag.empty() ? std::string("SELECT 0") : tag);
    if (!epoch || !*epoch) return std::nullopt;
    if (**epoch == "latest") return ViewLatest::kLatestEpoch;
    return static_cast<uint64_t>(std::strtoull((*epoch)->c_str(), nullptr, 10));
  }

  const ForwardedRead& read_;
  ResultWriter& out_;
  Clock::time_point start_;
  std::optional<Clock::time_point> deadline_;
  Conn conn_{nullptr, PQfinish};
  size_t prefix_ = 0;  // bytes sent before the read's text
  std::string sent_;    // the whole text sent
};

}  // namespace

std::optional<std::string> forwardedByOf(const std::string& startupOptions) {
  std::vector<std::string> words;
  std::string word;
  for (char c : startupOptions) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  const std::string key = std::string(kForwardedBySetting) + "=";
  for (size_t i = 0; i < words.size(); ++i) {
    std::string setting;
    if (words[i] == "-c" && i + 1 < words.size()) {
      setting = words[++i];
    } else if (words[i].rfind("-c", 0) == 0) {
      setting = words[i].substr(2);
    } else if (words[i].rfind("--", 0) == 0) {
      setting = words[i].substr(2);
    }
    if (setting.rfind(key, 0) == 0 && setting.size() > key.size())
      return setting.substr(key.size());
  }
  return std::nullopt;
}

bool sendsWhole(const ast::Query& query, const Catalog& catalog) {
  bool whole = true;
  ast::enumerate(query, [&](const ast::Expr& e) {
    if (e.kind != ast::ExprKind::Call) return;
    if (isFlaggedNotDeterministic(e.name) || catalog.findFunction(e.name)) whole = false;
  });
  return whole;
}

std::optional<uint64_t> forwardViewRead(const ForwardedRead& read, ResultWriter& out) {
  return Forward(read, out).run();
}

}  // namespace rtsql
