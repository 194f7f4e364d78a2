// EngineSource: FlowInfo to http::FlowStatus.
#include "server/http/engine_source.h"

#include <chrono>

#include "server/http/plan_json.h"

namespace rtsql::http {

std::vector<FlowStatus> EngineSource::flows(bool withProgress) const {
  std::vector<FlowStatus> out;
  for (auto& info : flows_.flowInfos(withProgress)) {
    FlowStatus f;
    f.name = std::move(info.name);
    f.sink = std::move(info.sink);
    f.state = flowStateName(info.state);
    f.error = std::move(info.failure);
    f.slots = info.slots;
    f.progressJson = std::move(info.progressJson);
    f.materializedView = info.materializedView;
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<std::string> EngineSource::progress(const std::string& flow) const {
  return flows_.progress(flow);
}

SlotUsage EngineSource::slots() const { return {flows_.slotsUsed(), flows_.slotsTotal()}; }

}  // namespace rtsql::http

namespace rtsql::http {

namespace {

// Keeps what one statement returns for the SQL box, and tells the statement to
// stop (cancelled()) once it is past its limits: a live query polls it while
// it waits for rows, a long static query between rows and inside functions.
class CollectingWriter : public ResultWriter {
 public:
  CollectingWriter(SqlResult& result, const SqlLimits& limits)
      : result_(result),
        limits_(limits),
        deadline_(std::chrono::steady_clock::now() + limits.timeout) {}

  void columns(const std::vector<ResultColumn>& cols) override {
    result_.columns.clear();
    for (const auto& c : cols) result_.columns.push_back(c.name);
  }
  void row(const std::vector<std::optional<std::string>>& values) override {
    // A statement sends at most a poll's rows more after it is told to stop.
    if (result_.rows.size() < limits_.maxRows) result_.rows.push_back(values);
  }
  void complete(const std::string& commandTag) override {
    // A live query counts the rows it sent, which may pass max_rows by the
    // rest of one poll's rows; the answer holds max_rows of them and says so.
    result_.command = !result_.stopped.empty() && commandTag.starts_with("SELECT ")
                          ? "SELECT " + std::to_string(result_.rows.size())
                          : commandTag;
  }
  void error(const SqlError& err) override {
    // Stopped by its limits, a statement ends with the rows it had: the cancel
    // it reports is not an error of the statement.
    if (!result_.stopped.empty() && err.sqlstate() == sqlstate::kQueryCanceled) {
      result_.command = "SELECT " + std::to_string(result_.rows.size());
      return;
    }
    result_.error = err;
  }
  void notice(const std::string&) override {}
  bool cancelled() const override {
    if (!result_.stopped.empty()) return true;
    if (limits_.cancelled && limits_.cancelled()) {
      result_.stopped = "cancelled";
    } else if (result_.rows.size() >= limits_.maxRows) {
      result_.stopped = "max_rows";
    } else if (std::chrono::steady_clock::now() >= deadline_) {
      result_.stopped = "timeout";
    }
    return !result_.stopped.empty();
  }

 private:
  SqlResult& result_;
  const SqlLimits& limits_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace

SqlResult EngineSource::runReadOnly(const std::string& user, const std::string& sql,
                                    const SqlLimits& limits) const {
  SqlResult result;
  CollectingWriter out(result, limits);
  std::unique_ptr<Session> session = statements_.openSession(user, "rtsql");
  statements_.execute(*session, sql, out);
  return result;
}

std::optional<std::string> EngineSource::planJson(const std::string& flow) const {
  std::optional<std::string> out;
  flows_.readPlan(flow, [&out](const PhysicalPlan& plan) { out = http::planJson(plan); });
  return out;
}

}  // namespace rtsql::http
