#include "server/cursor.h"

#include <pthread.h>

#include <chrono>

#include "common/interrupt.h"
#include "server/transaction.h"

namespace rtsql {

// What the cursor's query writes to: rows into the buffer, waiting while it
// is full; cancelled once the cursor closes.
class Cursor::Writer final : public ResultWriter {
 public:
  explicit Writer(Cursor& c) : c_(c) {}
  void columns(const std::vector<ResultColumn>&) override {}
  void row(const std::vector<std::optional<std::string>>& values) override {
    std::unique_lock lock(c_.mu_);
    c_.cv_.wait(lock, [&] { return c_.closing_ || c_.rows_.size() < c_.bufferRows_; });
    if (c_.closing_) return;
    c_.rows_.push_back(values);
    c_.cv_.notify_all();
  }
  void complete(const std::string&) override {}
  void error(const SqlError& err) override {
    std::lock_guard lock(c_.mu_);
    if (!c_.error_) c_.error_ = err;
  }
  void notice(const std::string&) override {}
  bool cancelled() const override { return cancelledFromAnyThread(); }
  bool cancelledFromAnyThread() const override {
    std::lock_guard lock(c_.mu_);
    return c_.closing_;
  }

 private:
  Cursor& c_;
};

Cursor::Cursor(std::vector<ResultColumn> columns, std::vector<Row> rows, bool hold)
    : columns_(std::move(columns)), hold_(hold), rows_(rows.begin(), rows.end()) {}

Cursor::Cursor(std::vector<ResultColumn> columns, Run run, bool hold, size_t bufferRows)
    : columns_(std::move(columns)), hold_(hold), bufferRows_(bufferRows), ended_(false) {
  thread_ = std::thread([this, run = std::move(run)] {
    Writer writer(*this);
    // A function that loops long on a value polls the same flag.
    InterruptScope interrupt(
        [](const void* w) { return static_cast<const ResultWriter*>(w)->cancelled(); }, &writer,
        [](const void* w) { return static_cast<const ResultWriter*>(w)->cancelledFromAnyThread(); });
    try {
      run(writer);
    } catch (const SqlError& e) {
      writer.error(e);
    } catch (const std::exception& e) {
      writer.error(SqlError(sqlstate::kInternalError, e.what()));
    }
    std::lock_guard lock(mu_);
    ended_ = true;
    cv_.notify_all();
  });
  pthread_setname_np(thread_.native_handle(), "cursor");
}

Cursor::~Cursor() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<Cursor::Row> Cursor::fetch(int64_t n, int64_t waitMs, const ResultWriter& out) {
  std::vector<Row> got;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMs);
  std::unique_lock lock(mu_);
  for (;;) {
    while (!rows_.empty() && static_cast<int64_t>(got.size()) < n) {
      got.push_back(std::move(rows_.front()));
      rows_.pop_front();
      cv_.notify_all();  // room in the buffer for the query's next row
    }
    if (static_cast<int64_t>(got.size()) >= n) return got;
    if (ended_) {
      // The query's error comes after the rows that came before it.
      if (got.empty() && error_) {
        SqlError e = *error_;
        error_.reset();
        throw e;
      }
      return got;
    }
    if (out.cancelled()) throw Interrupted();
    if (std::chrono::steady_clock::now() >= until) return got;
    // Woken by each row and by the end; the cancel and deadline are polled.
    cv_.wait_for(lock, std::chrono::milliseconds(50));
  }
}

}  // namespace rtsql
