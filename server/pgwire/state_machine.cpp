// The protocol state machine of one connection: what each message means in
// the state the connection is in. Startup (SSL negotiation, the startup
// packet), authentication (SCRAM), opening the session, then ready for
// queries: a simple Query runs through the QueryHandler and ends with
// ReadyForQuery; extended-protocol messages go to ExtendedProtocol
// (extended_connection.cpp), and after an error in that exchange everything
// up to the next Sync is skipped, as PostgreSQL does.
//
// These are Connection members; connection.cpp holds the rest of the class
// (the socket, reading frames, the outbox and closing), which knows nothing
// of what the messages mean.
#include <fmt/format.h>

#include <boost/asio/post.hpp>
#include <optional>

#include "server/handler_error.h"
#include "server/pgwire/codec.h"
#include "server/pgwire/connection.h"
#include "server/pgwire/framing.h"
#include "server/users.h"
#include "server/views/view_forward.h"

namespace rtsql::pgwire {

namespace asio = boost::asio;

namespace {

bool isExtendedQueryMessage(char type) {
  switch (type) {
    case frontend::kParse:
    case frontend::kBind:
    case frontend::kDescribe:
    case frontend::kExecute:
    case frontend::kClose:
    case frontend::kFlush:
      return true;
    default:
      return false;
  }
}

}  // namespace

// ---- StatementWriter -------------------------------------------------------------

// Turns one query's ResultWriter calls into protocol messages in the
// connection's outbox. Runs on the worker thread that executes the query.
class StatementWriter final : public ResultWriter {
 public:
  StatementWriter(Connection& conn, const std::string& sql) : conn_(conn), sql_(sql) {}

  void columns(const std::vector<ResultColumn>& cols) override {
    buf_.clear();
    appendRowDescription(buf_, cols);
    send();
  }
  void row(const std::vector<std::optional<std::string>>& values) override {
    buf_.clear();
    appendDataRow(buf_, values);
    send();
  }
  void complete(const std::string& commandTag) override {
    reported_ = true;
    buf_.clear();
    appendCommandComplete(buf_, commandTag);
    send();
  }
  void error(const SqlError& err) override {
    reported_ = true;
    buf_.clear();
    appendErrorResponse(buf_, err, sql_);
    send();
  }
  void notice(const std::string& message) override {
    buf_.clear();
    appendNoticeResponse(buf_, message);
    send();
  }
  void warning(const std::string& sqlstate, const std::string& message) override {
    buf_.clear();
    appendWarningResponse(buf_, sqlstate, message);
    send();
  }
  void parameterStatus(const std::string& name, const std::string& value) override {
    buf_.clear();
    appendParameterStatus(buf_, name, value);
    send();
  }
  bool cancelled() const override { return conn_.cancelled(); }
  bool cancelledFromAnyThread() const override { return conn_.cancelled(); }

  // Whether the handler reported any statement; if not, the query was empty.
  bool reportedAnything() const { return reported_; }

 private:
  void send() {
    conn_.enqueue(buf_, Connection::Flush::kSoon);
    conn_.waitForRoom();
  }

  Connection& conn_;
  const std::string& sql_;
  std::string buf_;
  bool reported_ = false;
};

// ---- Startup and authentication ------------------------------------------------------

void Connection::handleStartup(std::string_view body) {
  StartupPacket packet;
  try {
    packet = decodeStartupPacket(body);
  } catch (const SqlError& e) {
    return fail(e);
  }
  switch (packet.kind) {
    case StartupPacket::Kind::kSslRequest:
    case StartupPacket::Kind::kGssEncRequest:
      if (tls_) {
        return fail(SqlError(sqlstate::kProtocolViolation,
                             "encryption requested on a connection that is already encrypted"));
      }
      if (packet.kind == StartupPacket::Kind::kSslRequest && state_->tls) {
        // 'S', then the TLS handshake once it is written; the real startup
        // packet follows inside the TLS session.
        enqueue("S", Flush::kNow);
        tlsAfterFlush_ = true;
        return;
      }
      // 'N' tells the client to carry on in plain text with a real
      // StartupMessage on the same connection (GSSAPI encryption is never
      // offered).
      enqueue("N", Flush::kNow);
      return readStartupHeader();
    case StartupPacket::Kind::kCancelRequest:
      // A cancel request arrives on a connection of its own, which gets no
      // answer and is closed.
      state_->cancel(packet.cancelPid, packet.cancelSecret);
      return closeNow();
    case StartupPacket::Kind::kStartup:
      break;
  }

  const uint32_t major = packet.protocolVersion >> 16;
  const uint32_t minor = packet.protocolVersion & 0xFFFF;
  if (major != 3) {
    return fail(SqlError(
        sqlstate::kFeatureNotSupported,
        fmt::format("unsupported frontend protocol {}.{}: server supports 3.0 to 3.0", major,
                    minor)));
  }
  if (state_->options.tlsRequired && !tls_) {
    return fail(SqlError(sqlstate::kInvalidAuthorization, "TLS is required", SqlError::npos,
                         "Connect with sslmode=require."));
  }
  if (!counted_) {
    return fail(SqlError(sqlstate::kTooManyConnections, "sorry, too many clients already"));
  }
  auto user = packet.parameter("user");
  if (!user || user->empty()) {
    return fail(
        SqlError(sqlstate::kInvalidAuthorization, "no user name specified in startup packet"));
  }
  std::string database = packet.parameter("database").value_or("");
  if (database.empty()) database = *user;
  user_ = *user;
  applicationName_ = packet.parameter("application_name").value_or("");
  forwardedBy_ = forwardedByOf(packet.parameter("options").value_or("")).value_or("");

  // Protocol options (_pq_.*) and minor versions above 3.0 are declined, and
  // the client told so, before anything else is sent.
  std::vector<std::string> unrecognized;
  for (const auto& [name, value] : packet.parameters) {
    if (name.rfind("_pq_.", 0) == 0) unrecognized.push_back(name);
  }
  if (minor > 0 || !unrecognized.empty()) {
    std::string out;
    appendNegotiateProtocolVersion(out, 0, unrecognized);
    enqueue(out, Flush::kSoon);
  }

  database_ = std::move(database);
  if (state_->options.users) return beginAuthentication();
  openSession();
}

void Connection::beginAuthentication() {
  const UserStore& users = *state_->options.users;
  const ScramVerifier* verifier = users.find(user_);
  // Another node forwarding its client's read proves the cluster's secret,
  // for a user that exists here (whose privileges then decide the read).
  if (!forwardedBy_.empty() && state_->options.forwardVerifier && verifier)
    verifier = &*state_->options.forwardVerifier;
  auth_ = std::make_unique<ScramExchange>(verifier ? *verifier : users.mockVerifier(user_),
                                          verifier != nullptr);
  // Channel binding needs the certificate the client saw, so it is offered
  // only inside TLS.
  if (tls_ && !state_->tlsEndPoint.empty()) auth_->offerChannelBinding(state_->tlsEndPoint);
  std::string out;
  appendAuthenticationSasl(out, auth_->offersChannelBinding());
  enqueue(out, Flush::kNow);
  processInbox();
}

void Connection::handleAuthMessage(Inbound& msg) {
  if (msg.type == frontend::kTerminate) return closeAfterFlush();
  if (msg.type != frontend::kPassword) {
    return fail(SqlError(sqlstate::kProtocolViolation,
                         fmt::format("expected SASL response, got message type {}",
                                     static_cast<int>(static_cast<unsigned char>(msg.type)))));
  }
  std::string out;
  try {
    if (!authContinued_) {
      const SaslInitialResponse initial = decodeSaslInitialResponse(msg.body);
      if (initial.mechanism != kScramSha256 && initial.mechanism != kScramSha256Plus) {
        return fail(SqlError(sqlstate::kProtocolViolation,
                             "client selected an invalid SASL authentication mechanism"));
      }
      appendAuthenticationSaslContinue(out, auth_->serverFirst(initial.data, initial.mechanism));
      authContinued_ = true;
      return enqueue(out, Flush::kNow);
    }
    const auto serverFinal = auth_->serverFinal(msg.body);
    if (!serverFinal) {
      // The same answer for an unknown user and a wrong password.
      return fail(SqlError(sqlstate::kInvalidPassword,
                           fmt::format("password authentication failed for user \"{}\"", user_)));
    }
    appendAuthenticationSaslFinal(out, *serverFinal);
  } catch (const SqlError& e) {
    return fail(e);
  }
  auth_.reset();
  // AuthenticationOk follows once the session is open.
  enqueue(out, Flush::kSoon);
  openSession();
}

void Connection::openSession() {
  executing_ = true;
  const bool submitted =
      state_->pool.submit([self = shared_from_this(), u = user_, d = database_] {
        self->openSessionOnWorker(u, d);
      });
  if (!submitted) {
    executing_ = false;
    closeNow();
  }
}

void Connection::openSessionOnWorker(std::string user, std::string database) {
  std::optional<SqlError> failure = callHandler([&] {
    session_ = state_->handler.openSession(user, database);
    if (!session_) throw InternalError("the engine opened no session");
    session_->backendPid = pid_;
    session_->forwardedBy = forwardedBy_;
  });
  asio::post(strand_, [self = shared_from_this(), failure = std::move(failure)] {
    self->executing_ = false;
    if (self->closed_) {
      self->session_.reset();
      return;
    }
    if (failure) return self->fail(*failure);
    self->sessionOpened();
  });
}

void Connection::sessionOpened() {
  started_ = true;
  deadline_.cancel();
  std::string out;
  appendAuthenticationOk(out);
  // The parameters PostgreSQL reports at startup. Drivers read several of them:
  // integer_datetimes and standard_conforming_strings change how they encode
  // values, and server_version gates features.
  appendParameterStatus(out, "application_name", applicationName_);
  appendParameterStatus(out, "client_encoding", "UTF8");
  appendParameterStatus(out, "DateStyle", "ISO, MDY");
  appendParameterStatus(out, "integer_datetimes", "on");
  appendParameterStatus(out, "IntervalStyle", "postgres");
  appendParameterStatus(out, "is_superuser", "off");
  appendParameterStatus(out, "server_encoding", "UTF8");
  appendParameterStatus(out, "server_version", state_->options.serverVersion);
  appendParameterStatus(out, "session_authorization", user_);
  // Off: a '...' literal reads backslash escapes as Spark's does, so a driver
  // that quotes a value itself doubles its backslashes (server/session_text.h).
  appendParameterStatus(out, "standard_conforming_strings", "off");
  appendParameterStatus(out, "TimeZone", "UTC");
  appendBackendKeyData(out, pid_, secret_);
  appendReadyForQuery(out, kTxIdle);
  enqueue(out, Flush::kNow);
  // Messages may have arrived during authentication; a read may be running.
  processInbox();
}

// ---- Ready: queries -------------------------------------------------------------------

void Connection::handleMessage(Inbound& msg) {
  if (auth_) return handleAuthMessage(msg);
  // A portal run suspended at a row limit ends, and a Describe deferred to see
  // whether an Execute follows is answered, before any other message; this
  // one then waits at the front of the inbox.
  if (ExtendedProtocol::settleSuspended(*this, msg.type, msg.body) ||
      ExtendedProtocol::settleDeferred(*this, msg.type, msg.body)) {
    inboxBytes_ += msg.body.size() + 5;
    inbox_.push_front(std::move(msg));
    return;
  }
  if (msg.tooLarge && !ignoreTillSync_) return statementTooLarge(msg);
  if (msg.tooLarge) return;
  if (msg.type == frontend::kTerminate) return closeAfterFlush();
  if (msg.type == frontend::kSync) {
    ignoreTillSync_ = false;
    ExtendedProtocol::sync(*this);
    std::string out;
    appendReadyForQuery(out, transactionStatus());
    return enqueue(out, Flush::kNow);
  }
  // After an error in an extended-protocol exchange, everything up to the
  // next Sync is skipped, as PostgreSQL does, so the client sees one error.
  if (ignoreTillSync_) return;

  switch (msg.type) {
    case frontend::kQuery: {
      std::string sql;
      try {
        sql = decodeQuery(msg.body);
      } catch (const SqlError& e) {
        return fail(e);
      }
      if (ExtendedProtocol::simpleQuery(*this, sql)) return;
      return startQuery(std::move(sql));
    }
    case frontend::kFunctionCall: {
      std::string out;
      appendErrorResponse(out, SqlError(sqlstate::kFeatureNotSupported,
                                        "the function call protocol is not supported"));
      appendReadyForQuery(out, transactionStatus());
      return enqueue(out, Flush::kNow);
    }
    case frontend::kCopyData:
    case frontend::kCopyDone:
    case frontend::kCopyFail:
      // Outside a COPY these are ignored, as PostgreSQL does.
      return;
    default:
      break;
  }
  if (isExtendedQueryMessage(msg.type)) return ExtendedProtocol::handle(*this, msg.type, msg.body);
  fail(SqlError(sqlstate::kProtocolViolation,
                fmt::format("invalid frontend message type {}",
                            static_cast<int>(static_cast<unsigned char>(msg.type)))));
}

void Connection::statementTooLarge(const Inbound& msg) {
  const SqlError err(sqlstate::kProgramLimitExceeded, "statement too large", SqlError::npos,
                     fmt::format("The server accepts statements of up to {} bytes "
                                 "(rtsqld --max-statement-bytes).",
                                 state_->options.maxMessageBytes));
  std::string out;
  appendErrorResponse(out, err);
  if (msg.type == frontend::kQuery) {
    appendReadyForQuery(out, transactionStatus());
  } else {
    // A failed Parse skips the rest of its extended-protocol exchange.
    ignoreTillSync_ = true;
  }
  enqueue(out, Flush::kNow);
}

void Connection::startQuery(std::string sql) {
  executing_ = true;
  cancelRequested_.store(false);
  const bool submitted =
      state_->pool.submit([self = shared_from_this(), sql = std::move(sql)]() mutable {
        self->runStatementOnWorker(std::move(sql));
      });
  if (!submitted) {
    executing_ = false;
    closeNow();
  }
}

void Connection::runStatementOnWorker(std::string sql) {
  StatementWriter writer(*this, sql);
  // The handler promises not to throw; a stray exception still becomes an
  // error for this query rather than a dead server.
  if (auto err = callHandler([&] { state_->handler.execute(*session_, sql, writer); })) {
    writer.error(*err);
  }
  std::string tail;
  if (!writer.reportedAnything()) appendEmptyQueryResponse(tail);
  appendReadyForQuery(tail, transactionStatus());
  enqueue(tail, Flush::kNow);
  asio::post(strand_, [self = shared_from_this()] { self->statementDone(); });
}

char Connection::transactionStatus() const {
  return session_ ? state_->handler.transactionStatus(*session_) : kTxIdle;
}

void Connection::statementDone() {
  executing_ = false;
  if (closed_) {
    session_.reset();
    return;
  }
  processInbox();
}

}  // namespace rtsql::pgwire
