#include "client/connection.h"

#include <libpq-fe.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace rtsql::client {

namespace {

// The cancel object of the statement in flight, read by the signal handler.
// PQcancel is documented as safe to call from a signal handler.
std::atomic<PGcancel*> g_activeCancel{nullptr};
std::atomic<bool> g_interrupted{false};

extern "C" void onInterrupt(int) {
  const bool again = g_interrupted.exchange(true);
  PGcancel* cancel = g_activeCancel.load();
  if (again && cancel != nullptr) {
    // A second Ctrl-C while the cancel request is still unanswered: the server
    // is not listening, so stop the shell as if no handler were installed.
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  if (cancel != nullptr) {
    char errbuf[256];
    PQcancel(cancel, errbuf, sizeof errbuf);
  }
}

// Shows NOTICE and WARNING messages from the server on stderr, as psql does.
void receiveNotice(void*, const PGresult* res) {
  const char* severity = PQresultErrorField(res, PG_DIAG_SEVERITY);
  const char* message = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
  std::fprintf(stderr, "%s: %s\n", severity ? severity : "NOTICE", message ? message : "");
}

std::string field(const PGresult* res, int code) {
  const char* v = PQresultErrorField(res, code);
  return v ? std::string(v) : std::string();
}

ServerError errorFrom(const PGresult* res, PGconn* conn) {
  ServerError e;
  e.severity = field(res, PG_DIAG_SEVERITY);
  if (e.severity.empty()) e.severity = "ERROR";
  e.sqlstate = field(res, PG_DIAG_SQLSTATE);
  e.message = field(res, PG_DIAG_MESSAGE_PRIMARY);
  e.detail = field(res, PG_DIAG_MESSAGE_DETAIL);
  e.hint = field(res, PG_DIAG_MESSAGE_HINT);
  const std::string pos = field(res, PG_DIAG_STATEMENT_POSITION);
  if (!pos.empty()) e.position = std::strtoul(pos.c_str(), nullptr, 10);
  if (e.message.empty()) {
    // Errors raised by libpq itself (a broken connection) have no fields, only
    // the message text.
    std::string msg = res ? PQresultErrorMessage(res) : PQerrorMessage(conn);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    if (msg.rfind("ERROR:  ", 0) == 0) msg.erase(0, 8);
    e.message = msg.empty() ? "unknown error" : msg;
  }
  return e;
}

bool isNumericType(Oid type) {
  // int8, int2, int4, oid, float4, float8, numeric.
  switch (type) {
    case 20:
    case 21:
    case 23:
    case 26:
    case 700:
    case 701:
    case 1700:
      return true;
    default:
      return false;
  }
}

void describe(const PGresult* res, ResultSet& rs) {
  rs.hasRows = true;
  rs.columns.clear();
  const int n = PQnfields(res);
  for (int c = 0; c < n; ++c) {
    rs.columns.push_back({PQfname(res, c), isNumericType(PQftype(res, c))});
  }
}

void appendRows(const PGresult* res, ResultSet& rs) {
  const int nrows = PQntuples(res);
  const int ncols = PQnfields(res);
  for (int r = 0; r < nrows; ++r) {
    ResultRow row;
    row.reserve(ncols);
    for (int c = 0; c < ncols; ++c) {
      if (PQgetisnull(res, r, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(PQgetvalue(res, r, c),
                                     static_cast<size_t>(PQgetlength(res, r, c))));
      }
    }
    rs.rows.push_back(std::move(row));
  }
}

}  // namespace

std::unique_ptr<Connection> Connection::open(const ConnectOptions& options,
                                             std::string* error) {
  // rtsqld listens on loopback without TLS; not asking for it saves a round trip.
  std::vector<const char*> keys{"host", "port", "application_name", "connect_timeout",
                                "sslmode", "gssencmode"};
  std::vector<const char*> values{options.host.c_str(), options.port.c_str(), "rtsql",
                                  "10", "disable", "disable"};
  if (!options.user.empty()) {
    keys.push_back("user");
    values.push_back(options.user.c_str());
  }
  if (!options.dbname.empty()) {
    keys.push_back("dbname");
    values.push_back(options.dbname.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = PQconnectdbParams(keys.data(), values.data(), 0);
  if (conn == nullptr) {
    if (error) *error = "out of memory";
    return nullptr;
  }
  if (PQstatus(conn) != CONNECTION_OK) {
    if (error) {
      *error = PQerrorMessage(conn);
      while (!error->empty() && (error->back() == '\n' || error->back() == ' ')) {
        error->pop_back();
      }
    }
    PQfinish(conn);
    return nullptr;
  }
  return std::unique_ptr<Connection>(new Connection(conn));
}

Connection::Connection(pg_conn* conn) : conn_(conn) {
  PQsetNoticeReceiver(conn_, receiveNotice, nullptr);
  refreshCancel();
}

Connection::~Connection() {
  g_activeCancel.store(nullptr);
  if (cancel_) PQfreeCancel(cancel_);
  PQfinish(conn_);
}

void Connection::refreshCancel() {
  g_activeCancel.store(nullptr);
  if (cancel_) PQfreeCancel(cancel_);
  cancel_ = PQgetCancel(conn_);
}

bool Connection::connected() const { return PQstatus(conn_) == CONNECTION_OK; }

bool Connection::reset() {
  PQreset(conn_);
  // The backend key changes with a new connection, so does the cancel object.
  refreshCancel();
  return connected();
}

std::string Connection::lastError() const {
  std::string msg = PQerrorMessage(conn_);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  return msg;
}

std::string Connection::endpoint() const {
  const char* host = PQhost(conn_);
  const char* port = PQport(conn_);
  return std::string(host ? host : "") + ":" + (port ? port : "");
}

std::string Connection::serverVersion() const {
  const char* v = PQparameterStatus(conn_, "server_version");
  return v ? v : "";
}

Outcome Connection::execute(std::string_view sql) {
  Outcome out;
  if (!connected()) {
    out.connectionLost = true;
    return out;
  }
  const std::string query(sql);
  if (!PQsendQuery(conn_, query.c_str())) {
    out.error = errorFrom(nullptr, conn_);
    out.connectionLost = !connected();
    return out;
  }
  PQsetSingleRowMode(conn_);
  // An interrupt that came before this statement was already handled by the
  // caller; from here on one Ctrl-C cancels and a second one ends the shell.
  g_interrupted.store(false);
  g_activeCancel.store(cancel_);

  ResultSet current;
  bool inRows = false;
  while (PGresult* res = PQgetResult(conn_)) {
    switch (PQresultStatus(res)) {
      case PGRES_SINGLE_TUPLE:
        if (!inRows) {
          describe(res, current);
          inRows = true;
        }
        appendRows(res, current);
        break;
      case PGRES_TUPLES_OK:
        if (!inRows) describe(res, current);
        appendRows(res, current);
        current.tag = PQcmdStatus(res);
        out.results.push_back(std::move(current));
        current = ResultSet{};
        inRows = false;
        break;
      case PGRES_COMMAND_OK: {
        ResultSet rs;
        rs.tag = PQcmdStatus(res);
        out.results.push_back(std::move(rs));
        break;
      }
      case PGRES_EMPTY_QUERY:
        break;
      case PGRES_COPY_IN:
      case PGRES_COPY_OUT:
      case PGRES_COPY_BOTH: {
        // rtsql has no COPY; end the exchange rather than wait on it forever.
        if (!out.error) {
          out.error = ServerError{"ERROR", "0A000", "COPY is not supported by rtsql", "", "", 0};
        }
        if (PQresultStatus(res) == PGRES_COPY_IN) {
          PQputCopyEnd(conn_, "COPY is not supported by rtsql");
        } else {
          char* buffer = nullptr;
          while (PQgetCopyData(conn_, &buffer, 0) > 0) PQfreemem(buffer);
        }
        break;
      }
      default:
        // Rows received before an error (a cancelled live query) are kept.
        if (inRows) {
          out.results.push_back(std::move(current));
          current = ResultSet{};
          inRows = false;
        }
        if (!out.error) out.error = errorFrom(res, conn_);
        break;
    }
    PQclear(res);
  }
  g_activeCancel.store(nullptr);
  if (inRows) out.results.push_back(std::move(current));
  out.connectionLost = !connected();
  return out;
}

void installInterruptHandler() {
  struct sigaction sa {};
  sa.sa_handler = onInterrupt;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a read at the prompt is interrupted, so Ctrl-C discards the
  // line being typed instead of waiting for Enter.
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
}

bool takeInterrupt() { return g_interrupted.exchange(false); }

}  // namespace rtsql::client
