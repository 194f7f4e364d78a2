#include "server/pgwire/describe.h"

#include "server/handler_error.h"
#include "server/pgwire/codec.h"

namespace rtsql::pgwire {

namespace {

// Records the columns a running statement announces and asks it to stop
// there: cancelled() turns true as soon as they are known.
class ProbeWriter final : public ResultWriter {
 public:
  explicit ProbeWriter(const std::atomic<bool>& connectionGone) : gone_(connectionGone) {}

  void columns(const std::vector<ResultColumn>& cols) override {
    if (!columns_ && !error_) columns_ = cols;
  }
  void row(const std::vector<std::optional<std::string>>&) override {}
  void complete(const std::string&) override {}
  void error(const SqlError& err) override {
    // An error after the columns is the cancellation this probe asked for.
    if (!columns_ && !error_) error_ = err;
  }
  void notice(const std::string&) override {}
  bool cancelled() const override { return columns_.has_value() || gone_.load(); }

  std::optional<std::vector<ResultColumn>> columns_;
  std::optional<SqlError> error_;

 private:
  const std::atomic<bool>& gone_;
};

}  // namespace

Description askHandler(QueryHandler& handler, Session& session, const BoundStatement& bound) {
  Description d;
  if (auto err = callHandler([&] { d.columns = handler.describe(session, bound.text); })) {
    d.columns.reset();
    d.error = bound.mapError(*err);
  }
  return d;
}

Description describeStatement(QueryHandler& handler, Session& session,
                              const BoundStatement& bound, const std::atomic<bool>& gone) {
  Description d = askHandler(handler, session, bound);
  if (d.columns || d.error) return d;
  ProbeWriter probe(gone);
  if (auto err = callHandler([&] { handler.execute(session, bound.text, probe); })) {
    probe.error(*err);
  }
  if (probe.columns_) {
    d.columns = std::move(probe.columns_);
  } else if (probe.error_) {
    d.error = bound.mapError(*probe.error_);
  } else {
    d.columns.emplace();  // it ran without returning rows
  }
  return d;
}

void appendDescription(std::string& out, const std::vector<ResultColumn>& columns,
                       const std::vector<int16_t>& formats) {
  if (columns.empty()) return appendNoData(out);
  appendRowDescription(out, columns, formats);
}

void appendPortalDescription(std::string& out, const std::vector<int16_t>& resultFormats,
                             const std::vector<ResultColumn>& columns) {
  appendDescription(out, columns, resultFormatsFor(resultFormats, columns));
}

}  // namespace rtsql::pgwire
