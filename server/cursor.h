// Cursors (DECLARE ... CURSOR FOR query, FETCH, MOVE, CLOSE): a query whose
// rows a session takes a few at a time. A constant query's rows are made at
// DECLARE; a live query runs on a thread of the cursor's from DECLARE to
// CLOSE, holding its task slots, and its rows wait in a bounded buffer (the
// query waits while the buffer is full). FETCH n returns when it has n rows,
// when the query has ended, or when its wait bound has passed (with the rows
// that came by then, perhaps none), and at once on a cancel or the
// statement_timeout. Destroying the cursor ends its query and releases its
// slots: CLOSE, the end of the transaction block for a cursor without HOLD,
// the end of the session.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "server/query_handler.h"

namespace rtsql {

class Cursor {
 public:
  using Row = std::vector<std::optional<std::string>>;
  // Runs a query into the writer it is given until the query ends or the
  // writer says cancelled(); throws SqlError when the query fails.
  using Run = std::function<void(ResultWriter&)>;

  // A cursor over rows made already (a constant query).
  Cursor(std::vector<ResultColumn> columns, std::vector<Row> rows, bool hold);
  // A cursor over a query `run` runs on the cursor's thread; at most
  // `bufferRows` rows wait for FETCH.
  Cursor(std::vector<ResultColumn> columns, Run run, bool hold, size_t bufferRows);
  ~Cursor();
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  const std::vector<ResultColumn>& columns() const { return columns_; }
  bool hold() const { return hold_; }

  // Up to `n` rows (BlockCommand::kAll: until the query ends), waiting at
  // most `waitMs` for them; ends early when `out` is cancelled (throws
  // Interrupted then). After the last row, the query's error, if it failed.
  std::vector<Row> fetch(int64_t n, int64_t waitMs, const ResultWriter& out);

 private:
  class Writer;
  std::vector<ResultColumn> columns_;
  bool hold_;
  size_t bufferRows_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Row> rows_;
  bool ended_ = true;   // no more rows will come
  bool closing_ = false;
  std::optional<SqlError> error_;
  std::thread thread_;
};

// A session's cursors by name.
using Cursors = std::map<std::string, std::unique_ptr<Cursor>>;

}  // namespace rtsql
