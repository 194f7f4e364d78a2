// The shell's one connection to rtsqld over libpq. It runs a statement as a
// simple query and turns what comes back into ResultSets and a ServerError, so
// the rest of the shell never touches libpq. A SIGINT handler cancels the
// statement in flight (a live SELECT runs until cancelled or until its LIMIT).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "client/result.h"

struct pg_conn;
struct pg_cancel;

namespace rtsql::client {

struct ConnectOptions {
  std::string host = "127.0.0.1";
  std::string port = "5433";
  // Empty means libpq's default (the operating-system user name).
  std::string user;
  std::string dbname;
};

// What one call to Connection::execute gave back: the results that completed
// (a query string with several statements gives several), then at most one
// error, which ends the query string.
struct Outcome {
  std::vector<ResultSet> results;
  std::optional<ServerError> error;
  // The connection broke during the statement (or was already broken).
  bool connectionLost = false;
};

class Connection {
 public:
  // Connects, or returns null and sets `error` to libpq's message.
  static std::unique_ptr<Connection> open(const ConnectOptions& options,
                                          std::string* error);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends `sql` as one simple query and waits for all of its results. Rows are
  // fetched one at a time, so an interrupted live query keeps the rows it got.
  Outcome execute(std::string_view sql);

  bool connected() const;
  // Reconnects with the same parameters (PQreset); true when that worked.
  bool reset();
  // libpq's last message, e.g. why a connection failed.
  std::string lastError() const;
  // "host:port", for messages.
  std::string endpoint() const;
  // The server's version string from the startup parameters, or "".
  std::string serverVersion() const;

 private:
  explicit Connection(pg_conn* conn);
  void refreshCancel();

  pg_conn* conn_;
  pg_cancel* cancel_ = nullptr;
};

// Installs the SIGINT handler: a statement in flight is cancelled on the server,
// and the interrupt is remembered for takeInterrupt(). Without it, Ctrl-C ends
// the process as usual.
void installInterruptHandler();
// True (once) when SIGINT arrived since the last call.
bool takeInterrupt();

}  // namespace rtsql::client
