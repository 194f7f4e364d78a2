// One client connection: reads frontend messages, answers startup, hands each
// simple query to the QueryHandler on a worker thread, and streams the results
// back. Internal to the pgwire server. The class is defined in three files:
// connection.cpp (the socket, frames, outbox and closing), state_machine.cpp
// (startup, authentication and the simple query cycle: what each message
// means when) and extended_connection.cpp (the extended query protocol).
//
// Reading and writing happen on the connection's strand. A running statement
// writes into an outbox from its worker thread; the strand drains the outbox
// with one socket write per batch, flushing at once when a batch is large or a
// statement ends, and within a few milliseconds otherwise, so a live query's
// rows arrive promptly without one system call per row. A statement that
// produces rows faster than the client reads them blocks once the outbox is
// full, which bounds memory per connection.
//
// The connection keeps reading while a statement runs (queueing what arrives),
// so a client that disconnects mid-statement is noticed at once and the
// statement sees ResultWriter::cancelled().
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/error.h"
#include "server/pgwire/auth.h"
#include "server/pgwire/codec.h"
#include "server/pgwire/extended.h"
#include "server/pgwire/server.h"
#include "server/pgwire/tls.h"
#include "server/pgwire/worker_pool.h"
#include "server/query_handler.h"

namespace rtsql::pgwire {

class Connection;

// What every connection of one server shares. Connections hold it by
// shared_ptr, so it outlives the PgServer object if connections linger.
struct ServerState {
  ServerState(QueryHandler& h, PgServerOptions o);

  QueryHandler& handler;
  const PgServerOptions options;
  WorkerPool pool;
  // Set by PgServer::start() before the first client when TLS is configured,
  // with the certificate's channel-binding data (empty: not offered).
  std::shared_ptr<TlsContext> tls;
  std::string tlsEndPoint;

  // Registers a connection under a fresh backend pid and returns the pid and
  // its cancel secret. `counted` is false for a connection that is refused
  // for lack of slots, which must not take a slot itself.
  std::pair<int32_t, int32_t> add(const std::shared_ptr<Connection>& conn, bool counted);
  void remove(int32_t pid, bool counted);
  // Asks the connection `pid` to cancel its running statement if `secret`
  // matches; a wrong secret is ignored silently, as PostgreSQL does.
  void cancel(int32_t pid, int32_t secret);
  // Closes every connection (server shutdown).
  void abortAll();
  size_t activeCount() const { return active.load(); }
  bool hasFreeSlot() const { return active.load() < options.maxConnections; }

  std::atomic<size_t> active{0};
  std::atomic<bool> stopping{false};

 private:
  struct Entry {
    std::weak_ptr<Connection> conn;
    int32_t secret;
  };
  mutable std::mutex mu_;
  std::unordered_map<int32_t, Entry> connections_;
  int32_t nextPid_ = 1000;
  std::mt19937 random_;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  Connection(boost::asio::ip::tcp::socket socket, Strand strand,
             std::shared_ptr<ServerState> state);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Registers with the server and starts reading the startup packet.
  // `counted` is false when the server is full: the client then gets
  // "too many clients" after its startup packet.
  void start(bool counted);
  // Thread-safe: cancels the running statement and closes the socket.
  void abort();
  // Thread-safe: the running statement (if any) sees cancelled().
  void requestCancel();

 private:
  friend class StatementWriter;
  friend class ExtendedProtocol;
  enum class Flush { kSoon, kNow };
  struct Inbound {
    char type;
    std::string body;
    // A Query or Parse above the size limit: its body was skipped unread and
    // it is answered with "statement too large".
    bool tooLarge = false;
  };

  // ---- strand only ----
  void readStartupHeader();
  void readStartupBody(size_t length);
  void handleStartup(std::string_view body);
  void beginTls();
  void beginAuthentication();
  void handleAuthMessage(Inbound& msg);
  void openSession();
  void sessionOpened();
  // Reads messages into the inbox through readBuf_, handling them as they
  // come (processMessages); then flushes or times what they answered.
  void readMessageHeader();
  // Moves the next message whole in readBuf_ to the inbox (true); false
  // when there is none (more is to be read), or the message is read, skipped
  // or refused by itself.
  bool takeBufferedMessage();
  void readMessageBody(char type, size_t length);
  void skipMessageBody(char type, size_t remaining);
  void statementTooLarge(const Inbound& msg);
  void processInbox();
  void processMessages();  // the inbox's messages, while no statement runs
  void handleMessage(Inbound& msg);
  void startQuery(std::string sql);
  void statementDone();
  // ReadyForQuery's status byte: the session's transaction block, as the handler says.
  char transactionStatus() const;
  // Sends an error that ends the connection, then closes once it is written.
  void fail(const SqlError& err);
  void closeAfterFlush();
  void flush();
  void onWritten(const boost::system::error_code& ec);
  // The answers not yet written reach options.maxOutputBytes: no more
  // messages are read until the client takes some.
  bool outputBacklogged();
  void releaseWriteBuffer();
  void armFlushTimer();
  void drainAndClose();
  void discardInput();
  void closeNow();
  // Reads and writes go through TLS once it is started, else to the socket.
  template <typename Buffers, typename Handler>
  void asyncRead(const Buffers& buffers, Handler&& handler);
  template <typename Buffers, typename Handler>
  void asyncReadSome(const Buffers& buffers, Handler&& handler);
  template <typename Buffers, typename Handler>
  void asyncWrite(const Buffers& buffers, Handler&& handler);

  // ---- worker threads ----
  void openSessionOnWorker(std::string user, std::string database);
  void runStatementOnWorker(std::string sql);
  // Waits while the outbox is full and the connection is alive.
  void waitForRoom();
  bool cancelled() const { return closedFlag_.load() || cancelRequested_.load(); }

  // ---- any thread ----
  void enqueue(std::string_view bytes, Flush when);

  boost::asio::ip::tcp::socket socket_;
  // The TLS session over socket_, once the client asked for it; declared
  // after socket_ so it is destroyed first.
  std::unique_ptr<TlsStream> tls_;
  Strand strand_;
  std::shared_ptr<ServerState> state_;
  boost::asio::steady_timer flushTimer_;
  boost::asio::steady_timer deadline_;

  int32_t pid_ = 0;
  int32_t secret_ = 0;
  bool counted_ = false;
  bool registered_ = false;

  // Strand state.
  unsigned char header_[5] = {};
  std::string readBody_;
  // Read from the client: [readPos_, readEnd_) is not taken yet.
  std::vector<char> readBuf_;
  size_t readPos_ = 0;
  size_t readEnd_ = 0;
  bool inReadLoop_ = false;
  bool readPaused_ = false;  // reading waits for the answers to be written
  std::deque<Inbound> inbox_;
  size_t inboxBytes_ = 0;
  bool started_ = false;   // startup finished; messages are queries now
  bool reading_ = false;   // a read is outstanding
  bool executing_ = false;  // a worker owns session_ (openSession or a statement)
  bool ignoreTillSync_ = false;
  bool closing_ = false;   // no more input is processed; close after the last write
  bool draining_ = false;  // our side is shut down; waiting for the client's
  bool closed_ = false;
  bool writing_ = false;
  std::string writeBuf_;
  char drainBuf_[512] = {};
  std::unique_ptr<Session> session_;
  // Prepared statements and portals of the extended query protocol.
  ExtendedState extended_;
  std::string user_;
  std::string database_;
  std::string applicationName_;
  std::string forwardedBy_;  // startup option rtsql.forwarded_by (PgServerOptions::forwardVerifier)
  bool tlsAfterFlush_ = false;  // 'S' is queued; the handshake starts once it is written
  // The password exchange in progress (users are configured and the session
  // is not yet authenticated).
  std::unique_ptr<ScramExchange> auth_;
  bool authContinued_ = false;  // the server-first-message was sent

  // Shared with worker threads.
  std::atomic<bool> closedFlag_{false};
  std::atomic<bool> cancelRequested_{false};
  std::mutex outMu_;
  std::condition_variable outCv_;
  std::string pending_;
  bool flushPosted_ = false;
  bool timerArmed_ = false;
  // The read loop handles messages (readMessageHeader): what they enqueue
  // is flushed or timed at its end, and flushWanted_ says which.
  bool batching_ = false;
  bool flushWanted_ = false;
  bool outClosed_ = false;
};

}  // namespace rtsql::pgwire
