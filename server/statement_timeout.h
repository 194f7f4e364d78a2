// statement_timeout: how long one statement may run. The session's SET value
// (PostgreSQL's forms: 5000, '5000ms', '5s', '1min'; 0: no limit) becomes a
// deadline per statement, which the statement sees through the same
// cancelled() it checks for a cancel request or a disconnect. A statement that
// stops because its deadline passed reports 57014, as PostgreSQL does.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "server/query_handler.h"

namespace rtsql {

// Milliseconds of a statement_timeout value; 0 means no limit. Throws SqlError
// 22023 at `pos` for a value that is not a non-negative number with an
// optional unit (ms, s, min, h, d; ms when none).
int64_t parseStatementTimeoutMs(const std::string& text, size_t pos);

// Forwards one statement's results to another writer and reports cancelled()
// once the deadline has passed too. A statement that sees the deadline and
// completes has its completion turned into the 57014 error.
class DeadlineWriter final : public ResultWriter {
 public:
  using Clock = std::chrono::steady_clock;
  // timeoutMs 0: no deadline.
  DeadlineWriter(ResultWriter& out, int64_t timeoutMs);

  void columns(const std::vector<ResultColumn>& cols) override { out_.columns(cols); }
  void row(const std::vector<std::optional<std::string>>& values) override { out_.row(values); }
  void complete(const std::string& commandTag) override;
  void error(const SqlError& err) override { out_.error(err); }
  void notice(const std::string& message) override { out_.notice(message); }
  void warning(const std::string& sqlstate, const std::string& message) override {
    out_.warning(sqlstate, message);
  }
  void parameterStatus(const std::string& name, const std::string& value) override {
    out_.parameterStatus(name, value);
  }
  bool cancelled() const override;
  bool cancelledFromAnyThread() const override {
    return deadlinePassed() || out_.cancelledFromAnyThread();
  }

  // Whether the deadline passed while the statement ran (and it saw it).
  bool expired() const { return expired_; }
  // Whether the deadline has passed, seen or not.
  bool deadlinePassed() const { return hasDeadline_ && Clock::now() >= deadline_; }
  static SqlError timeoutError();

 private:
  ResultWriter& out_;
  bool hasDeadline_;
  Clock::time_point deadline_;
  mutable bool expired_ = false;
};

}  // namespace rtsql
