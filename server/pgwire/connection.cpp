// A client connection's transport: the socket (or its TLS session), reading
// whole frames into the inbox, the outbox that statements write into, and
// closing. What the messages mean is the state machine's
// (state_machine.cpp); the server-wide connection registry is here too.
#include "server/pgwire/connection.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <exception>
#include <optional>

#include "server/pgwire/framing.h"

namespace rtsql::pgwire {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// A batch this large is written at once rather than waiting for the timer.
constexpr size_t kFlushBytes = 64 * 1024;
// Output that is smaller than kFlushBytes leaves within this delay: long enough
// to batch a burst of rows into one write, short enough to be unnoticeable.
constexpr auto kFlushDelay = std::chrono::milliseconds(2);
// Reading pauses while this much input is queued behind a running statement.
constexpr size_t kMaxInboxBytes = 1024 * 1024;
// Message bodies are read in pieces of this size, so a header that merely
// claims a large body cannot make us allocate it all up front.
constexpr size_t kReadChunkBytes = 256 * 1024;
// Messages are read through a buffer of this size: a client's Bind, Execute
// and Sync, sent in one write, take one read (not one per header and body).
constexpr size_t kReadBufferBytes = 16 * 1024;
// Write buffers above this size are released after use rather than kept.
constexpr size_t kRetainBytes = 1024 * 1024;
// How long a closing connection waits for the client to close its side, so the
// final error is not lost to a reset caused by unread input.
constexpr auto kDrainTimeout = std::chrono::seconds(2);

// Password messages are small; PostgreSQL caps them at 64 kB as well.
constexpr size_t kMaxAuthMessageBytes = 65535;
// A too-large statement is read and thrown away in pieces of this size.
constexpr size_t kSkipChunkBytes = 64 * 1024;

}  // namespace

// ---- ServerState ---------------------------------------------------------------

ServerState::ServerState(QueryHandler& h, PgServerOptions o)
    : handler(h), options(std::move(o)), pool(options.maxConnections + 16) {
  std::random_device seed;
  random_.seed(seed());
}

std::pair<int32_t, int32_t> ServerState::add(const std::shared_ptr<Connection>& conn,
                                             bool counted) {
  std::lock_guard lock(mu_);
  while (connections_.count(nextPid_) != 0 || nextPid_ <= 0) {
    nextPid_ = nextPid_ <= 0 ? 1000 : nextPid_ + 1;
  }
  const int32_t pid = nextPid_;
  nextPid_ = pid == INT32_MAX ? 1000 : pid + 1;
  const auto secret = static_cast<int32_t>(random_());
  connections_[pid] = Entry{conn, secret};
  if (counted) ++active;
  return {pid, secret};
}

void ServerState::remove(int32_t pid, bool counted) {
  std::lock_guard lock(mu_);
  connections_.erase(pid);
  if (counted) --active;
}

void ServerState::cancel(int32_t pid, int32_t secret) {
  std::shared_ptr<Connection> target;
  {
    std::lock_guard lock(mu_);
    auto it = connections_.find(pid);
    if (it == connections_.end() || it->second.secret != secret) return;
    target = it->second.conn.lock();
  }
  if (target) target->requestCancel();
}

void ServerState::abortAll() {
  std::vector<std::shared_ptr<Connection>> all;
  {
    std::lock_guard lock(mu_);
    for (auto& [pid, entry] : connections_) {
      if (auto c = entry.conn.lock()) all.push_back(std::move(c));
    }
  }
  for (auto& c : all) c->abort();
}

// ---- Connection: the byte stream ----------------------------------------------

// One branch per operation: plain TCP keeps its direct path, and a TLS session
// encrypts in the same composed read or write.
template <typename Buffers, typename Handler>
void Connection::asyncRead(const Buffers& buffers, Handler&& handler) {
  if (tls_) {
    asio::async_read(*tls_, buffers, std::forward<Handler>(handler));
  } else {
    asio::async_read(socket_, buffers, std::forward<Handler>(handler));
  }
}

template <typename Buffers, typename Handler>
void Connection::asyncReadSome(const Buffers& buffers, Handler&& handler) {
  if (tls_) {
    tls_->async_read_some(buffers, std::forward<Handler>(handler));
  } else {
    socket_.async_read_some(buffers, std::forward<Handler>(handler));
  }
}

template <typename Buffers, typename Handler>
void Connection::asyncWrite(const Buffers& buffers, Handler&& handler) {
  if (tls_) {
    asio::async_write(*tls_, buffers, std::forward<Handler>(handler));
  } else {
    asio::async_write(socket_, buffers, std::forward<Handler>(handler));
  }
}

// ---- Connection: lifetime -----------------------------------------------------

Connection::Connection(asio::ip::tcp::socket socket, Strand strand,
                       std::shared_ptr<ServerState> state)
    : socket_(std::move(socket)),
      strand_(std::move(strand)),
      state_(std::move(state)),
      flushTimer_(strand_),
      deadline_(strand_) {}

Connection::~Connection() {
  // Normally closeNow() has unregistered us; this covers a connection dropped
  // with the io_context, whose handlers never ran.
  if (registered_) state_->remove(pid_, counted_);
}

void Connection::start(bool counted) {
  // Registered here rather than on the strand so the slot is taken before the
  // listener accepts the next client; nothing else runs on this connection yet.
  counted_ = counted;
  auto [pid, secret] = state_->add(shared_from_this(), counted);
  pid_ = pid;
  secret_ = secret;
  registered_ = true;
  asio::dispatch(strand_, [self = shared_from_this()] {
    if (self->state_->stopping.load()) {
      self->closeNow();
      return;
    }
    error_code ignored;
    self->socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
    self->socket_.set_option(asio::socket_base::keep_alive(true), ignored);
    // flush() writes what the socket takes at once, never waiting for it.
    self->socket_.non_blocking(true, ignored);
    self->deadline_.expires_after(self->state_->options.startupTimeout);
    self->deadline_.async_wait(
        asio::bind_executor(self->strand_, [self](const error_code& ec) {
          if (!ec && !self->started_) self->closeNow();
        }));
    self->readStartupHeader();
  });
}

void Connection::abort() {
  closedFlag_.store(true);
  {
    std::lock_guard lock(outMu_);
    outClosed_ = true;
    pending_.clear();
  }
  outCv_.notify_all();
  asio::post(strand_, [self = shared_from_this()] { self->closeNow(); });
}

void Connection::requestCancel() {
  cancelRequested_.store(true);
  // Wake a statement that waits for the client to read, so it can see the
  // cancel and stop.
  { std::lock_guard lock(outMu_); }
  outCv_.notify_all();
}

void Connection::closeNow() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  closedFlag_.store(true);
  {
    std::lock_guard lock(outMu_);
    outClosed_ = true;
    pending_.clear();
  }
  outCv_.notify_all();
  error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  flushTimer_.cancel();
  deadline_.cancel();
  inbox_.clear();
  if (registered_) {
    state_->remove(pid_, counted_);
    registered_ = false;
  }
  // A statement that is still running, or suspended at an Execute's row
  // limit, uses the session; statementDone() releases it when the statement
  // returns.
  if (!executing_ && !extended_.suspended) session_.reset();
}

void Connection::fail(const SqlError& err) {
  std::string out;
  appendErrorResponse(out, err, {}, Severity::kFatal);
  enqueue(out, Flush::kNow);
  // A statement still running would only write into a closing connection.
  cancelRequested_.store(true);
  closeAfterFlush();
}

void Connection::closeAfterFlush() {
  closing_ = true;
  inbox_.clear();
  flush();
}

void Connection::drainAndClose() {
  if (closed_) return;
  if (!draining_) {
    // Half-close, then read and discard until the client closes too: closing
    // with unread input would reset the connection and could destroy the
    // error we just sent before the client reads it.
    draining_ = true;
    error_code ignored;
    socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    deadline_.expires_after(kDrainTimeout);
    deadline_.async_wait(
        asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec) {
          if (!ec) self->closeNow();
        }));
  }
  if (!reading_) discardInput();
}

void Connection::discardInput() {
  reading_ = true;
  // Raw socket reads even under TLS: the bytes are thrown away unread, and
  // the TLS session may no longer be usable once our side is shut down.
  socket_.async_read_some(
      asio::buffer(drainBuf_),
      asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec, size_t) {
        self->reading_ = false;
        if (ec) return self->closeNow();
        if (!self->closed_) self->discardInput();
      }));
}

// ---- Connection: the startup packet and TLS ----------------------------------------

void Connection::readStartupHeader() {
  reading_ = true;
  asyncRead(
      asio::buffer(header_, 4),
      asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec, size_t) {
        self->reading_ = false;
        if (ec) return self->closeNow();
        if (self->closing_) return self->discardInput();
        const uint32_t length = readBigEndian32(self->header_);
        if (length < 8 || length > kMaxStartupPacketBytes) {
          return self->fail(SqlError(sqlstate::kProtocolViolation,
                                     fmt::format("invalid length of startup packet: {}", length)));
        }
        self->readStartupBody(length - 4);
      }));
}

void Connection::readStartupBody(size_t length) {
  reading_ = true;
  readBody_.assign(length, '\0');
  asyncRead(
      asio::buffer(readBody_),
      asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec, size_t) {
        self->reading_ = false;
        if (ec) return self->closeNow();
        if (self->closing_) return self->discardInput();
        std::string body = std::move(self->readBody_);
        self->readBody_.clear();
        self->handleStartup(body);
      }));
}

void Connection::beginTls() {
  tlsAfterFlush_ = false;
  tls_ = std::make_unique<TlsStream>(socket_, *state_->tls);
  tls_->async_handshake(
      TlsStream::server,
      asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec) {
        // A failed handshake cannot carry an error message the client could
        // read; the startup deadline bounds a handshake that never ends.
        if (ec || self->closing_) return self->closeNow();
        self->readStartupHeader();
      }));
}

// ---- Connection: reading messages ------------------------------------------------

void Connection::readMessageHeader() {
  // Called back while the loop below handles a message (a handler that
  // processes the inbox): the loop goes on by itself.
  if (inReadLoop_) return;
  inReadLoop_ = true;
  {
    std::lock_guard lock(outMu_);
    batching_ = true;
  }
  while (!reading_ && !closing_ && inboxBytes_ < kMaxInboxBytes && !outputBacklogged() &&
         takeBufferedMessage()) {
    processMessages();
  }
  inReadLoop_ = false;
  bool flushNow = false;
  bool armTimer = false;
  {
    std::lock_guard lock(outMu_);
    batching_ = false;
    flushNow = flushWanted_ && !flushPosted_;
    armTimer = !flushNow && !pending_.empty() && !timerArmed_ && !flushPosted_;
    flushWanted_ = false;
    if (flushNow) flushPosted_ = true;
    if (armTimer) timerArmed_ = true;
  }
  // What the messages answered leaves now, from this strand, rather than
  // from a handler posted to it (which wakes another I/O thread).
  if (flushNow) flush();
  if (armTimer) armFlushTimer();
  if (reading_ || closing_ || closed_ || inboxBytes_ >= kMaxInboxBytes) return;
  if (outputBacklogged()) {
    // The answers wait for the client: flush() reads on once it took them.
    readPaused_ = true;
    return;
  }
  // The rest of a message, or the next ones: what is left moves to the
  // buffer's front, and the buffer is filled behind it.
  if (readBuf_.empty()) readBuf_.resize(kReadBufferBytes);
  if (readPos_ > 0) {
    std::memmove(readBuf_.data(), readBuf_.data() + readPos_, readEnd_ - readPos_);
    readEnd_ -= readPos_;
    readPos_ = 0;
  }
  reading_ = true;
  asyncReadSome(
      asio::buffer(readBuf_.data() + readEnd_, readBuf_.size() - readEnd_),
      asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec, size_t n) {
        self->reading_ = false;
        if (ec) return self->closeNow();
        self->readEnd_ += n;
        if (self->closing_) return self->discardInput();
        self->readMessageHeader();
      }));
}

bool Connection::takeBufferedMessage() {
  const size_t avail = readEnd_ - readPos_;
  if (avail < 5) return false;
  const char* header = readBuf_.data() + readPos_;
  const char type = header[0];
  const uint32_t length = readBigEndian32(reinterpret_cast<const unsigned char*>(header) + 1);
  if (length < 4) {
    fail(SqlError(sqlstate::kProtocolViolation, fmt::format("invalid message length {}", length)));
    return false;
  }
  const size_t bodyLength = length - 4;
  if (auth_ && bodyLength > kMaxAuthMessageBytes) {
    fail(SqlError(sqlstate::kProtocolViolation, fmt::format("invalid message length {}", length)));
    return false;
  }
  const size_t inBuffer = std::min(bodyLength, avail - 5);
  if (bodyLength > state_->options.maxMessageBytes && !auth_ &&
      (type == frontend::kQuery || type == frontend::kParse)) {
    readPos_ += 5 + inBuffer;
    if (inBuffer < bodyLength) {
      skipMessageBody(type, bodyLength - inBuffer);
      return false;
    }
    inboxBytes_ += 5;
    inbox_.push_back(Inbound{type, {}, true});
    return true;
  }
  if (bodyLength > state_->options.maxMessageBytes) {
    fail(SqlError(sqlstate::kProtocolViolation,
                  fmt::format("message of {} bytes exceeds the limit of {} bytes", bodyLength,
                              state_->options.maxMessageBytes)));
    return false;
  }
  if (inBuffer == bodyLength) {
    inboxBytes_ += bodyLength + 5;
    inbox_.push_back(Inbound{type, std::string(header + 5, bodyLength)});
    readPos_ += 5 + bodyLength;
    return true;
  }
  // A body the buffer can hold waits for the buffer's next read; a larger
  // one is read by itself, after what the buffer has of it.
  if (bodyLength + 5 <= kReadBufferBytes) return false;
  readBody_.assign(header + 5, inBuffer);
  readPos_ += 5 + inBuffer;
  readMessageBody(type, bodyLength - inBuffer);
  return false;
}

void Connection::readMessageBody(char type, size_t remaining) {
  reading_ = true;
  const size_t chunk = std::min(remaining, kReadChunkBytes);
  const size_t offset = readBody_.size();
  readBody_.resize(offset + chunk);
  asyncRead(
      asio::buffer(readBody_.data() + offset, chunk),
      asio::bind_executor(strand_, [self = shared_from_this(), type, remaining, chunk](
                                       const error_code& ec, size_t) {
        self->reading_ = false;
        if (ec) return self->closeNow();
        if (self->closing_) return self->discardInput();
        if (remaining > chunk) return self->readMessageBody(type, remaining - chunk);
        self->inboxBytes_ += self->readBody_.size() + 5;
        self->inbox_.push_back(Inbound{type, std::move(self->readBody_)});
        self->readBody_ = std::string();
        self->processInbox();
      }));
}

void Connection::skipMessageBody(char type, size_t remaining) {
  reading_ = true;
  const size_t chunk = std::min(remaining, kSkipChunkBytes);
  readBody_.resize(chunk);
  asyncRead(
      asio::buffer(readBody_.data(), chunk),
      asio::bind_executor(strand_, [self = shared_from_this(), type, remaining, chunk](
                                       const error_code& ec, size_t) {
        self->reading_ = false;
        if (ec) return self->closeNow();
        if (self->closing_) return self->discardInput();
        if (remaining > chunk) return self->skipMessageBody(type, remaining - chunk);
        self->readBody_ = std::string();
        self->inboxBytes_ += 5;
        self->inbox_.push_back(Inbound{type, {}, true});
        self->processInbox();
      }));
}

void Connection::processMessages() {
  while (!executing_ && !closing_ && !inbox_.empty()) {
    Inbound msg = std::move(inbox_.front());
    inbox_.pop_front();
    inboxBytes_ -= msg.body.size() + 5;
    handleMessage(msg);
  }
}

void Connection::processInbox() {
  processMessages();
  if (!reading_ && !closing_ && inboxBytes_ < kMaxInboxBytes) readMessageHeader();
}

// ---- Connection: writing ------------------------------------------------------------

void Connection::enqueue(std::string_view bytes, Flush when) {
  std::lock_guard lock(outMu_);
  if (outClosed_) return;
  pending_.append(bytes);
  if (batching_) {
    // The read loop handling messages decides at its end (readMessageHeader).
    if (when == Flush::kNow || pending_.size() >= kFlushBytes) flushWanted_ = true;
    return;
  }
  if (when == Flush::kNow || pending_.size() >= kFlushBytes) {
    if (!flushPosted_) {
      flushPosted_ = true;
      asio::post(strand_, [self = shared_from_this()] { self->flush(); });
    }
  } else if (!timerArmed_ && !flushPosted_) {
    timerArmed_ = true;
    asio::post(strand_, [self = shared_from_this()] { self->armFlushTimer(); });
  }
}

void Connection::waitForRoom() {
  std::unique_lock lock(outMu_);
  outCv_.wait(lock, [this] {
    return outClosed_ || cancelRequested_.load() ||
           pending_.size() < state_->options.maxOutputBytes;
  });
}

void Connection::armFlushTimer() {
  if (closed_) return;
  {
    // A flush posted since (the Sync that ended the exchange whose messages
    // asked for the timer) sends the output: no timer, and no wake-up of an
    // I/O thread 2 ms later for nothing, per exchange.
    std::lock_guard lock(outMu_);
    if (flushPosted_) {
      timerArmed_ = false;
      return;
    }
  }
  flushTimer_.expires_after(kFlushDelay);
  flushTimer_.async_wait(
      asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec) {
        {
          std::lock_guard lock(self->outMu_);
          self->timerArmed_ = false;
        }
        if (!ec) self->flush();
      }));
}

void Connection::flush() {
  {
    std::lock_guard lock(outMu_);
    flushPosted_ = false;
  }
  for (;;) {
    if (writing_ || closed_) return;
    bool empty = false;
    {
      std::lock_guard lock(outMu_);
      if (pending_.empty()) {
        empty = true;
      } else {
        writeBuf_.swap(pending_);
      }
    }
    if (empty) {
      if (closing_) {
        drainAndClose();
      } else if (tlsAfterFlush_) {
        beginTls();
      } else if (readPaused_) {
        // The client took every answer: its next messages are read.
        readPaused_ = false;
        processInbox();
      }
      return;
    }
    outCv_.notify_all();
    if (!tls_) {
      // An answer the socket's buffer takes is written at once (the socket
      // does not block), without an asynchronous write whose completion is
      // posted to the I/O threads; the rest, if any, is written as usual.
      error_code ec;
      const size_t n = socket_.write_some(asio::buffer(writeBuf_), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) {
        ec.clear();
      } else if (ec) {
        return closeNow();
      } else if (n == writeBuf_.size()) {
        releaseWriteBuffer();
        continue;
      } else {
        writeBuf_.erase(0, n);
      }
    }
    writing_ = true;
    asyncWrite(
        asio::buffer(writeBuf_),
        asio::bind_executor(strand_, [self = shared_from_this()](const error_code& ec, size_t) {
          self->onWritten(ec);
        }));
    return;
  }
}

void Connection::releaseWriteBuffer() {
  if (writeBuf_.capacity() > kRetainBytes) {
    std::string().swap(writeBuf_);
  } else {
    writeBuf_.clear();
  }
}

void Connection::onWritten(const error_code& ec) {
  writing_ = false;
  releaseWriteBuffer();
  if (ec) return closeNow();
  flush();
}

bool Connection::outputBacklogged() {
  std::lock_guard lock(outMu_);
  return pending_.size() + writeBuf_.size() >= state_->options.maxOutputBytes;
}

}  // namespace rtsql::pgwire
