// The extended query protocol on a connection: prepared statements and portals,
// Describe answered from QueryHandler::describe() or, when the handler cannot
// tell, by running the statement, Execute with row limits, and the
// skip-until-Sync rule after an error.
//
// Anything that calls the handler runs on a worker thread, like a simple
// query: the connection is "executing" meanwhile, so no other message touches
// the statement and portal maps until the job is done.
#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <exception>

#include "common/error.h"
#include "common/sql_text.h"
#include "server/handler_error.h"
#include "server/pgwire/codec.h"
#include "server/pgwire/connection.h"
#include "server/pgwire/describe.h"
#include "server/pgwire/extended.h"
#include "server/pgwire/framing.h"

namespace rtsql::pgwire {

namespace asio = boost::asio;

namespace {

// Per-connection bounds, so one client cannot grow the server without limit.
constexpr size_t kMaxPreparedStatements = 10000;
constexpr size_t kMaxPortals = 10000;
// Rows a portal holds beyond an Execute's row limit. A result larger than
// this must be fetched without a limit (or in a live query, which streams).
constexpr size_t kMaxBufferedBytes = 64 * 1024 * 1024;

std::string statementLabel(const std::string& name) {
  return name.empty() ? std::string("unnamed prepared statement")
                      : fmt::format("prepared statement \"{}\"", name);
}

// Runs DEALLOCATE; returns its error, if any.
std::optional<SqlError> deallocate(ExtendedState& ext, const std::string& name) {
  if (name.empty()) {
    ext.statements.clear();
    return std::nullopt;
  }
  if (ext.statements.erase(name) == 0) {
    return SqlError(sqlstate::kInvalidStatementName,
                    fmt::format("prepared statement \"{}\" does not exist", name));
  }
  return std::nullopt;
}

std::string deallocateTag(const std::string& name) {
  return name.empty() ? "DEALLOCATE ALL" : "DEALLOCATE";
}


// Moves up to `maxRows` (0: all) of the rows a portal holds beyond earlier row
// limits into `out`; returns how many.
size_t takeBuffered(Portal& portal, std::string& out, int32_t maxRows) {
  size_t taken = 0;
  while (!portal.buffered.empty() && (maxRows <= 0 || taken < static_cast<size_t>(maxRows))) {
    out += portal.buffered.front();
    portal.bufferedBytes -= portal.buffered.front().size();
    portal.buffered.pop_front();
    ++taken;
  }
  return taken;
}

}  // namespace

// Runs a portal for Execute: rows up to the row limit go to the client, the
// rest wait in the portal for the next Execute. A statement that ends by
// itself runs to its end, and the next Execute takes its rows from the portal.
// A statement that goes on producing rows (a live query) asks cancelled()
// between rows: once the limit is reached the run is suspended there, keeping
// the statement's state, and the next Execute of the portal lets it go on.
// With `describe` it answers the Describe that was deferred to this Execute
// too, when the handler could not describe the statement without running it
// (describe.h): the answer then follows the run, RowDescription when the
// statement announces its columns and NoData when it completes without any.
class PortalWriter final : public ResultWriter {
 public:
  PortalWriter(Connection& c, std::shared_ptr<Portal> p, int32_t maxRows, bool describe)
      : conn_(c), portalRef_(std::move(p)), portal_(*portalRef_), describe_(describe),
        limit_(maxRows > 0 ? static_cast<size_t>(maxRows) : 0) {}

  void columns(const std::vector<ResultColumn>& cols) override {
    if (stopped_) return;
    sawColumns_ = true;
    try {
      formats_ = resultFormatsFor(portal_.resultFormats, cols);
    } catch (const SqlError& e) {
      return stop(e);
    }
    columns_ = cols;
    portal_.columns = cols;
    if (describe_) {
      buf_.clear();
      try {
        appendRowDescription(buf_, cols, formats_);
      } catch (const SqlError& e) {
        return stop(e);
      }
      send();
    }
  }

  void row(const std::vector<std::optional<std::string>>& values) override {
    if (stopped_) return;
    buf_.clear();
    try {
      appendDataRowFormatted(buf_, values, columns_, formats_);
    } catch (const SqlError& e) {
      return stop(e);
    }
    if (limit_ == 0 || sent_ < limit_) {
      ++sent_;
      return send();
    }
    portal_.bufferedBytes += buf_.size();
    portal_.buffered.push_back(buf_);
    if (portal_.bufferedBytes > kMaxBufferedBytes) {
      stop(SqlError(sqlstate::kProgramLimitExceeded,
                    fmt::format("the rows of portal \"{}\" beyond the Execute row limit exceed "
                                "{} MiB",
                                portal_.name, kMaxBufferedBytes / (1024 * 1024)),
                    SqlError::npos, "Execute the portal without a row limit."));
    }
  }

  void complete(const std::string& commandTag) override {
    portal_.completedTag = commandTag;
    if (stopped_) return;
    reported_ = true;
    buf_.clear();
    if (describe_ && !sawColumns_) appendNoData(buf_);
    if (portal_.buffered.empty()) {
      appendCommandComplete(buf_, commandTag);
    } else {
      appendCommandComplete(portal_.tail, commandTag);
    }
    send();
  }

  void error(const SqlError& err) override {
    if (stopped_) return;
    stop(err);
  }

  void notice(const std::string& message) override {
    if (ended_) return;
    buf_.clear();
    appendNoticeResponse(buf_, message);
    send();
  }

  void warning(const std::string& sqlstate, const std::string& message) override {
    if (ended_) return;
    buf_.clear();
    appendWarningResponse(buf_, sqlstate, message);
    send();
  }

  void parameterStatus(const std::string& name, const std::string& value) override {
    if (ended_) return;
    buf_.clear();
    appendParameterStatus(buf_, name, value);
    send();
  }

  bool cancelledFromAnyThread() const override { return ExtendedProtocol::cancelled(conn_); }
  bool cancelled() const override {
    if (stopped_ || ExtendedProtocol::cancelled(conn_)) return true;
    if (limit_ != 0 && sent_ >= limit_) return !waitForNextExecute();
    return false;
  }

  // After the handler returned: what the run still owes the client. Returns
  // true when an error was sent (the messages up to Sync are then skipped).
  bool finish() {
    portal_.started = true;
    if (ended_) {
      // The run was ended while suspended; what it produced since is dropped,
      // and a later Execute of the portal returns no more rows.
      portal_.buffered.clear();
      portal_.bufferedBytes = 0;
      portal_.tail.clear();
      portal_.tailIsError = false;
      return false;
    }
    buf_.clear();
    if (!reported_) {
      // An empty statement, as for a simple query.
      if (describe_) appendNoData(buf_);
      appendEmptyQueryResponse(buf_);
    }
    if (!portal_.buffered.empty()) appendPortalSuspended(buf_);
    send();
    return failed_;
  }

 private:
  // Suspends the run at the row limit until the next Execute of the portal,
  // which first takes the rows the portal holds. Returns false when the run
  // is to end instead (Sync, another statement, the client gone).
  bool waitForNextExecute() const {
    for (;;) {
      buf_.clear();
      appendPortalSuspended(buf_);
      send();
      int32_t maxRows = 0;
      if (!ExtendedProtocol::suspend(conn_, portalRef_, maxRows)) {
        ended_ = true;
        stopped_ = true;
        return false;
      }
      limit_ = maxRows > 0 ? static_cast<size_t>(maxRows) : 0;
      buf_.clear();
      sent_ = takeBuffered(portal_, buf_, maxRows);
      send();
      if (limit_ == 0 || sent_ < limit_) return true;
    }
  }

  // Ends the run with `err`: now, or after the rows already buffered.
  void stop(const SqlError& err) {
    stopped_ = true;
    reported_ = true;
    std::string& target = portal_.buffered.empty() ? buf_ : portal_.tail;
    if (&target == &buf_) buf_.clear();
    appendErrorResponse(target, portal_.bound.mapError(err), portal_.sql);
    if (&target == &buf_) {
      failed_ = true;
      send();
    } else {
      portal_.tailIsError = true;
    }
  }

  void send() const {
    if (buf_.empty()) return;
    ExtendedProtocol::sendFromWorker(conn_, buf_);
  }

  Connection& conn_;
  const std::shared_ptr<Portal> portalRef_;
  Portal& portal_;
  const bool describe_;
  std::vector<ResultColumn> columns_;
  std::vector<int16_t> formats_;
  // cancelled() is where a suspended run waits, and a resumed one takes up
  // the next Execute's limit, so what the wait changes is mutable.
  mutable size_t limit_;
  mutable size_t sent_ = 0;
  mutable std::string buf_;
  mutable bool stopped_ = false;
  mutable bool ended_ = false;  // ended while suspended: nothing more is sent
  bool sawColumns_ = false;
  bool reported_ = false;
  bool failed_ = false;
};

// Collects what a statement run on the strand (PreparedQuery::executeNow)
// reports, as the messages of one Execute, in one buffer the connection
// queues at once: such a statement answers at most one row and never waits,
// so there is no row limit to suspend at and nothing to cancel.
class NowWriter final : public ResultWriter {
 public:
  NowWriter(const Portal& portal, std::string& out) : portal_(portal), out_(out) {}

  void columns(const std::vector<ResultColumn>& cols) override {
    if (failed_) return;
    try {
      formats_ = resultFormatsFor(portal_.resultFormats, cols);
    } catch (const SqlError& e) {
      return error(e);
    }
    columns_ = &cols;
  }
  void row(const std::vector<std::optional<std::string>>& values) override {
    if (failed_ || !columns_) return;
    try {
      appendDataRowFormatted(out_, values, *columns_, formats_);
    } catch (const SqlError& e) {
      error(e);
    }
  }
  void complete(const std::string& commandTag) override {
    tag_ = commandTag;
    if (!failed_) appendCommandComplete(out_, commandTag);
  }
  void error(const SqlError& err) override {
    if (failed_) return;
    failed_ = true;
    appendErrorResponse(out_, portal_.bound.mapError(err), portal_.sql);
  }
  void notice(const std::string& message) override { appendNoticeResponse(out_, message); }
  void warning(const std::string& sqlstate, const std::string& message) override {
    appendWarningResponse(out_, sqlstate, message);
  }
  void parameterStatus(const std::string& name, const std::string& value) override {
    appendParameterStatus(out_, name, value);
  }
  bool cancelled() const override { return false; }

  bool failed() const { return failed_; }
  const std::string& tag() const { return tag_; }

 private:
  const Portal& portal_;
  std::string& out_;
  // The columns the statement reported; it keeps them while it reports rows.
  const std::vector<ResultColumn>* columns_ = nullptr;
  std::vector<int16_t> formats_;
  std::string tag_;
  bool failed_ = false;
};

// ---- plumbing ---------------------------------------------------------------------

bool ExtendedProtocol::cancelled(const Connection& c) { return c.cancelled(); }

void ExtendedProtocol::sendFromWorker(Connection& c, std::string_view bytes) {
  c.enqueue(bytes, Connection::Flush::kSoon);
  c.waitForRoom();
}

void ExtendedProtocol::fail(Connection& c, const SqlError& err, std::string_view sql) {
  std::string out;
  appendErrorResponse(out, err, sql);
  c.enqueue(out, Connection::Flush::kSoon);
  c.ignoreTillSync_ = true;
}

void ExtendedProtocol::submit(Connection& c, std::function<bool()> job) {
  c.executing_ = true;
  c.cancelRequested_.store(false);
  auto self = c.shared_from_this();
  const bool submitted = c.state_->pool.submit([self, job = std::move(job)] {
    bool failed = true;
    // Jobs report their own errors; a stray exception still only fails this
    // exchange.
    if (auto err = callHandler([&] { failed = job(); })) {
      std::string out;
      appendErrorResponse(out, *err);
      self->enqueue(out, Connection::Flush::kSoon);
    }
    asio::post(self->strand_, [self, failed] {
      if (failed) self->ignoreTillSync_ = true;
      self->statementDone();
    });
  });
  if (!submitted) {
    c.executing_ = false;
    c.closeNow();
  }
}

bool ExtendedProtocol::suspend(Connection& c, const std::shared_ptr<Portal>& portal,
                               int32_t& maxRows) {
  auto run = std::make_shared<SuspendedRun>();
  run->portal = portal;
  // The connection is still this worker's until the strand runs the post
  // below, so the strand state may be set here.
  c.extended_.suspended = run;
  auto self = c.shared_from_this();
  asio::post(c.strand_, [self] {
    self->executing_ = false;
    if (!self->closed_) self->processInbox();
  });
  std::unique_lock lock(c.outMu_);
  c.outCv_.wait(lock, [&] { return c.outClosed_ || run->next != SuspendedRun::Next::kWait; });
  if (c.outClosed_ || run->next != SuspendedRun::Next::kResume) return false;
  maxRows = run->maxRows;
  return true;
}

void ExtendedProtocol::wakeSuspended(Connection& c, SuspendedRun::Next next, int32_t maxRows) {
  std::shared_ptr<SuspendedRun> run = std::move(c.extended_.suspended);
  c.extended_.suspended.reset();
  // The run's worker has the connection again until it suspends or ends.
  c.executing_ = true;
  c.cancelRequested_.store(false);
  {
    std::lock_guard lock(c.outMu_);
    run->maxRows = maxRows;
    run->next = next;
  }
  c.outCv_.notify_all();
}

bool ExtendedProtocol::settleSuspended(Connection& c, char type, std::string_view body) {
  if (!c.extended_.suspended) return false;
  const std::string& name = c.extended_.suspended->portal->name;
  if (type == frontend::kFlush) return false;
  try {
    if (type == frontend::kExecute && decodeExecute(body).portal == name) return false;
    if (type == frontend::kDescribe) {
      const TargetMessage target = decodeTarget(body);
      if (target.kind == 'P' && target.name == name) return false;
    }
  } catch (const SqlError&) {
    // A malformed message is reported when it is handled, after the run ended.
  }
  wakeSuspended(c, SuspendedRun::Next::kEnd, 0);
  return true;
}

std::shared_ptr<PreparedQuery> ExtendedProtocol::preparedOnWorker(Connection& c,
                                                                  PreparedStatement& stmt) {
  if (stmt.prepareAsked) return stmt.prepared;
  stmt.prepareAsked = true;
  // The unnamed statement is run once and replaced (PQexecParams, drivers'
  // unprepared statements): preparing it would only parse it twice.
  if (!stmt.returnsRows || !stmt.named) return nullptr;
  try {
    // NULL stands for each parameter, as for a Describe before Bind; the
    // handler learns where each is.
    const BoundStatement bound = substituteParameters(
        stmt.sql, std::vector<std::string>(stmt.paramTypes.size(), "NULL"));
    std::vector<ParameterAt> parameters;
    for (const auto& r : bound.replacements) parameters.push_back({r.at, r.parameter});
    stmt.prepared = c.state_->handler.prepare(*c.session_, bound.text, parameters);
  } catch (const std::exception&) {
    stmt.prepared = nullptr;  // the text, run, reports what is wrong with it
  }
  return stmt.prepared;
}

Description ExtendedProtocol::describeOnWorker(Connection& c, const BoundStatement& bound) {
  return describeStatement(c.state_->handler, *c.session_, bound, c.closedFlag_);
}

// ---- messages ---------------------------------------------------------------------

void ExtendedProtocol::handle(Connection& c, char type, std::string_view body) {
  try {
    switch (type) {
      case frontend::kParse: return parse(c, body);
      case frontend::kBind: return bind(c, body);
      case frontend::kDescribe: return describe(c, body);
      case frontend::kExecute: return execute(c, body);
      case frontend::kClose: return close(c, body);
      case frontend::kFlush: return c.enqueue({}, Connection::Flush::kNow);
      default: break;
    }
  } catch (const SqlError& e) {
    fail(c, e, {});
  }
}

void ExtendedProtocol::parse(Connection& c, std::string_view body) {
  ParseMessage m = decodeParse(body);
  auto& statements = c.extended_.statements;
  if (!m.statement.empty() && statements.count(m.statement) != 0) {
    throw SqlError(sqlstate::kDuplicatePreparedStatement,
                   fmt::format("prepared statement \"{}\" already exists", m.statement));
  }
  if (statements.count(m.statement) == 0 && statements.size() >= kMaxPreparedStatements) {
    throw SqlError(sqlstate::kProgramLimitExceeded,
                   fmt::format("too many prepared statements (at most {} per connection)",
                               kMaxPreparedStatements),
                   SqlError::npos, "Close prepared statements that are no longer needed.");
  }
  size_t count = 0;
  try {
    const auto pieces = splitStatements(m.query);
    if (pieces.size() > 1) {
      throw SqlError(sqlstate::kSyntaxError,
                     "cannot insert multiple commands into a prepared statement",
                     pieces[1].offset);
    }
    count = countParameters(m.query);
  } catch (const SqlError& e) {
    return fail(c, e, m.query);
  }
  auto stmt = std::make_shared<PreparedStatement>();
  stmt->paramTypes = std::move(m.paramTypes);
  if (stmt->paramTypes.size() < count) stmt->paramTypes.resize(count, extype::kUnspecified);
  stmt->returnsRows = returnsRows(m.query);
  stmt->named = !m.statement.empty();
  stmt->sql = std::move(m.query);
  statements[m.statement] = std::move(stmt);
  std::string out;
  appendParseComplete(out);
  c.enqueue(out, Connection::Flush::kSoon);
}

void ExtendedProtocol::bind(Connection& c, std::string_view body) {
  BindMessage m = decodeBind(body);
  auto& ext = c.extended_;
  auto it = ext.statements.find(m.statement);
  if (it == ext.statements.end()) {
    throw SqlError(sqlstate::kInvalidStatementName,
                   fmt::format("{} does not exist", statementLabel(m.statement)));
  }
  const PreparedStatement& stmt = *it->second;
  if (!m.portal.empty() && ext.portals.count(m.portal) != 0) {
    throw SqlError(sqlstate::kDuplicateCursor,
                   fmt::format("portal \"{}\" already exists", m.portal));
  }
  if (ext.portals.count(m.portal) == 0 && ext.portals.size() >= kMaxPortals) {
    throw SqlError(sqlstate::kProgramLimitExceeded,
                   fmt::format("too many portals (at most {} per connection)", kMaxPortals));
  }
  const size_t n = stmt.paramTypes.size();
  if (m.params.size() != n) {
    throw SqlError(sqlstate::kProtocolViolation,
                   fmt::format("bind message supplies {} parameters, but {} requires {}",
                               m.params.size(), statementLabel(m.statement), n));
  }
  if (m.paramFormats.size() > 1 && m.paramFormats.size() != n) {
    throw SqlError(sqlstate::kProtocolViolation,
                   fmt::format("bind message has {} parameter formats but {} parameters",
                               m.paramFormats.size(), n));
  }
  std::vector<std::string> literals;
  literals.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const int16_t format = m.paramFormats.empty()       ? kTextFormat
                           : m.paramFormats.size() == 1 ? m.paramFormats[0]
                                                        : m.paramFormats[i];
    try {
      literals.push_back(parameterLiteral(m.params[i], stmt.paramTypes[i], format));
    } catch (SqlError& e) {
      // Say which parameter, as the message alone may not.
      if (e.detail().empty()) e.withDetail(fmt::format("In parameter ${}.", i + 1));
      throw;
    }
  }
  auto portal = std::make_shared<Portal>();
  portal->name = m.portal;
  portal->sql = stmt.sql;
  portal->statement = it->second;
  // A prepared form knows its columns: a Describe of the portal need not wait.
  if (stmt.prepared) portal->columns = stmt.prepared->columns();
  try {
    portal->bound = substituteParameters(stmt.sql, literals);
  } catch (const SqlError& e) {
    return fail(c, e, stmt.sql);
  }
  portal->literals = std::move(literals);
  portal->returnsRows = stmt.returnsRows;
  portal->resultFormats = std::move(m.resultFormats);
  if (!portal->returnsRows) {
    portal->columns = std::vector<ResultColumn>{};
    if (portal->resultFormats.size() > 1) {
      throw SqlError(sqlstate::kProtocolViolation,
                     fmt::format("bind message has {} result formats but query has 0 columns",
                                 portal->resultFormats.size()));
    }
  }
  ext.portals[m.portal] = std::move(portal);
  std::string out;
  appendBindComplete(out);
  c.enqueue(out, Connection::Flush::kSoon);
}

void ExtendedProtocol::describe(Connection& c, std::string_view body) {
  TargetMessage m = decodeTarget(body);
  auto& ext = c.extended_;
  if (m.kind == 'S') {
    auto it = ext.statements.find(m.name);
    if (it == ext.statements.end()) {
      throw SqlError(sqlstate::kInvalidStatementName,
                     fmt::format("{} does not exist", statementLabel(m.name)));
    }
    std::shared_ptr<PreparedStatement> stmt = it->second;
    std::string out;
    std::vector<uint32_t> types = stmt->paramTypes;
    // A type the client left open is inferred as text: every value can be
    // sent as text and the statement casts where it needs another type.
    for (auto& t : types) {
      if (t == extype::kUnspecified) t = pgtype::kText;
    }
    appendParameterDescription(out, types);
    if (!stmt->returnsRows) stmt->columns = std::vector<ResultColumn>{};
    if (stmt->columns) {
      appendDescription(out, *stmt->columns);
      return c.enqueue(out, Connection::Flush::kSoon);
    }
    // The parameters are unknown before Bind; NULL stands in for each.
    BoundStatement bound;
    try {
      bound = substituteParameters(stmt->sql,
                                   std::vector<std::string>(stmt->paramTypes.size(), "NULL"));
    } catch (const SqlError& e) {
      return fail(c, e, stmt->sql);
    }
    Connection* conn = &c;
    submit(c, [conn, stmt, bound = std::move(bound), out = std::move(out)]() mutable {
      if (auto prepared = preparedOnWorker(*conn, *stmt)) {
        stmt->columns = prepared->columns();
        appendDescription(out, *stmt->columns);
        sendFromWorker(*conn, out);
        return false;
      }
      Description d = describeOnWorker(*conn, bound);
      if (d.error) {
        out.clear();  // an error replaces the whole answer
        appendErrorResponse(out, *d.error, stmt->sql);
        sendFromWorker(*conn, out);
        return true;
      }
      stmt->columns = d.columns;
      appendDescription(out, *d.columns);
      sendFromWorker(*conn, out);
      return false;
    });
    return;
  }

  auto it = ext.portals.find(m.name);
  if (it == ext.portals.end()) {
    // A cursor DECLARE made is a portal too (drivers describe it by name).
    Connection* conn = &c;
    submit(c, [conn, name = m.name] {
      std::string out;
      try {
        auto columns = conn->state_->handler.describeCursor(*conn->session_, name);
        if (!columns) {
          throw SqlError(sqlstate::kInvalidCursorName,
                         fmt::format("portal \"{}\" does not exist", name));
        }
        appendDescription(out, *columns);
      } catch (const SqlError& e) {
        out.clear();
        appendErrorResponse(out, e);
        sendFromWorker(*conn, out);
        return true;
      }
      sendFromWorker(*conn, out);
      return false;
    });
    return;
  }
  const Portal& portal = *it->second;
  if (portal.columns) {
    std::string out;
    appendPortalDescription(out, portal.resultFormats, *portal.columns);
    return c.enqueue(out, Connection::Flush::kSoon);
  }
  // Unknown columns: wait for the next message. If it executes this portal,
  // one run answers both; otherwise the columns are found first.
  ext.deferredDescribe = m.name;
}

bool ExtendedProtocol::settleDeferred(Connection& c, char type, std::string_view body) {
  auto& ext = c.extended_;
  if (!ext.deferredDescribe) return false;
  if (type == frontend::kExecute) {
    try {
      if (decodeExecute(body).portal == *ext.deferredDescribe) return false;
    } catch (const SqlError&) {
      // A malformed Execute is reported when it is handled, after the Describe.
    }
  }
  const std::string name = std::move(*ext.deferredDescribe);
  ext.deferredDescribe.reset();
  auto it = ext.portals.find(name);
  if (it == ext.portals.end()) return false;
  std::shared_ptr<Portal> portal = it->second;
  Connection* conn = &c;
  submit(c, [conn, portal] {
    Description d = describeOnWorker(*conn, portal->bound);
    std::string out;
    if (d.columns) {
      try {
        appendPortalDescription(out, portal->resultFormats, *d.columns);
        portal->columns = std::move(d.columns);
      } catch (const SqlError& e) {
        d.error = e;
      }
    }
    if (d.error) appendErrorResponse(out, *d.error, portal->sql);
    sendFromWorker(*conn, out);
    return d.error.has_value();
  });
  return true;
}

void ExtendedProtocol::execute(Connection& c, std::string_view body) {
  ExecuteMessage m = decodeExecute(body);
  auto& ext = c.extended_;
  const bool describeToo = ext.deferredDescribe && *ext.deferredDescribe == m.portal;
  ext.deferredDescribe.reset();
  auto it = ext.portals.find(m.portal);
  if (it == ext.portals.end()) {
    throw SqlError(sqlstate::kInvalidCursorName,
                   fmt::format("portal \"{}\" does not exist", m.portal));
  }
  std::shared_ptr<Portal> portal = it->second;
  // settleSuspended() let only an Execute of the suspended run's portal
  // through.
  if (ext.suspended) return wakeSuspended(c, SuspendedRun::Next::kResume, m.maxRows);
  if (portal->started) return resume(c, *portal, m.maxRows);
  if (auto target = deallocateTarget(portal->sql)) {
    portal->started = true;
    portal->completedTag = deallocateTag(*target);
    if (auto err = deallocate(ext, *target)) throw *err;
    std::string out;
    appendCommandComplete(out, portal->completedTag);
    return c.enqueue(out, Connection::Flush::kSoon);
  }

  if (executeNow(c, *portal, describeToo)) return;

  Connection* conn = &c;
  submit(c, [conn, portal, maxRows = m.maxRows, describeToo] {
    // A statement the handler prepared runs without its text (query_handler.h).
    std::shared_ptr<PreparedQuery> prepared =
        portal->statement ? preparedOnWorker(*conn, *portal->statement) : nullptr;
    bool describeByRunning = false;
    if (describeToo && prepared) {
      std::string out;
      try {
        appendPortalDescription(out, portal->resultFormats, prepared->columns());
      } catch (const SqlError& e) {
        out.clear();
        appendErrorResponse(out, e, portal->sql);
        sendFromWorker(*conn, out);
        return true;
      }
      sendFromWorker(*conn, out);
    } else if (describeToo) {
      // The handler may know the columns without running; then the
      // RowDescription goes out before the first row as usual.
      Description d = askHandler(conn->state_->handler, *conn->session_, portal->bound);
      std::string out;
      if (d.columns) {
        try {
          appendPortalDescription(out, portal->resultFormats, *d.columns);
        } catch (const SqlError& e) {
          d.error = e;
        }
      }
      if (d.error) {
        appendErrorResponse(out, *d.error, portal->sql);
        sendFromWorker(*conn, out);
        return true;
      }
      if (d.columns) {
        sendFromWorker(*conn, out);
      } else {
        describeByRunning = true;
      }
    }
    PortalWriter writer(*conn, portal, maxRows, describeByRunning);
    if (auto e = callHandler([&] {
          if (prepared && prepared->execute(*conn->session_, portal->literals, writer)) return;
          conn->state_->handler.execute(*conn->session_, portal->bound.text, writer);
        })) {
      writer.error(*e);
    }
    return writer.finish();
  });
}

bool ExtendedProtocol::executeNow(Connection& c, Portal& portal, bool describeToo) {
  // Only a statement a worker has prepared already (its first Describe or
  // Execute): preparing parses its text.
  const PreparedStatement* stmt = portal.statement.get();
  if (!stmt || !stmt->prepareAsked || !stmt->prepared || !c.session_) return false;
  PreparedQuery& prepared = *stmt->prepared;
  std::string out;
  if (describeToo) {
    try {
      appendPortalDescription(out, portal.resultFormats, prepared.columns());
    } catch (const SqlError&) {
      return false;  // the worker reports it
    }
  }
  NowWriter writer(portal, out);
  bool answered = false;
  if (auto e = callHandler([&] {
        answered = prepared.executeNow(*c.session_, portal.literals, writer);
      })) {
    if (!answered) return false;
    writer.error(*e);
  }
  if (!answered) return false;
  portal.started = true;
  portal.completedTag = writer.tag();
  if (describeToo) portal.columns = prepared.columns();
  if (writer.failed()) c.ignoreTillSync_ = true;
  c.enqueue(out, Connection::Flush::kSoon);
  return true;
}

void ExtendedProtocol::resume(Connection& c, Portal& portal, int32_t maxRows) {
  std::string out;
  takeBuffered(portal, out, maxRows);
  if (!portal.buffered.empty()) {
    appendPortalSuspended(out);
  } else if (!portal.tail.empty()) {
    out += portal.tail;
    portal.tail.clear();
    if (portal.tailIsError) c.ignoreTillSync_ = true;
  } else {
    // Executing a finished portal again returns no more rows.
    const std::string& tag = portal.completedTag;
    appendCommandComplete(out, tag.rfind("SELECT", 0) == 0 ? std::string("SELECT 0") : tag);
  }
  c.enqueue(out, Connection::Flush::kSoon);
}

void ExtendedProtocol::close(Connection& c, std::string_view body) {
  TargetMessage m = decodeTarget(body);
  // Closing something that does not exist is not an error.
  if (m.kind == 'S') {
    c.extended_.statements.erase(m.name);
  } else {
    c.extended_.portals.erase(m.name);
  }
  std::string out;
  appendCloseComplete(out);
  c.enqueue(out, Connection::Flush::kSoon);
}

bool ExtendedProtocol::simpleQuery(Connection& c, std::string_view sql) {
  auto target = deallocateTarget(sql);
  if (!target) return false;
  std::string out;
  if (auto err = deallocate(c.extended_, *target)) {
    appendErrorResponse(out, *err);
  } else {
    appendCommandComplete(out, deallocateTag(*target));
  }
  appendReadyForQuery(out, c.transactionStatus());
  c.enqueue(out, Connection::Flush::kNow);
  return true;
}

void ExtendedProtocol::sync(Connection& c) {
  c.extended_.portals.clear();
  c.extended_.deferredDescribe.reset();
}

}  // namespace rtsql::pgwire
