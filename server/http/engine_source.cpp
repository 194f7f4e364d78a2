// EngineSource: Engine::FlowInfo to http::FlowStatus.
#include "server/http/engine_source.h"

#include "server/http/plan_json.h"

namespace rtsql::http {

std::vector<FlowStatus> EngineSource::flows(bool withProgress) const {
  std::vector<FlowStatus> out;
  for (auto& info : engine_.flowInfos(withProgress)) {
    FlowStatus f;
    f.name = std::move(info.name);
    f.sink = std::move(info.sink);
    f.state = flowStateName(info.state);
    f.error = std::move(info.failure);
    f.slots = info.slots;
    f.progressJson = std::move(info.progressJson);
    out.push_back(std::move(f));
  }
  return out;
}

std::optional<std::string> EngineSource::progress(const std::string& flow) const {
  return engine_.progress(flow);
}

SlotUsage EngineSource::slots() const { return {engine_.slotsUsed(), engine_.slotsTotal()}; }

}  // namespace rtsql::http

namespace rtsql::http {

namespace {

// Keeps what one statement returns for the SQL box.
class CollectingWriter : public ResultWriter {
 public:
  explicit CollectingWriter(SqlResult& result) : result_(result) {}
  void columns(const std::vector<ResultColumn>& cols) override {
    result_.columns.clear();
    for (const auto& c : cols) result_.columns.push_back(c.name);
  }
  void row(const std::vector<std::optional<std::string>>& values) override {
    result_.rows.push_back(values);
  }
  void complete(const std::string& commandTag) override { result_.command = commandTag; }
  void error(const SqlError& err) override { result_.error = err; }
  void notice(const std::string&) override {}

 private:
  SqlResult& result_;
};

}  // namespace

SqlResult EngineSource::runReadOnly(const std::string& user, const std::string& sql) const {
  SqlResult result;
  CollectingWriter out(result);
  std::unique_ptr<Session> session = engine_.openSession(user, "rtsql");
  engine_.execute(*session, sql, out);
  return result;
}

std::optional<std::string> EngineSource::planJson(const std::string& flow) const {
  std::optional<std::string> out;
  engine_.readPlan(flow, [&out](const PhysicalPlan& plan) { out = http::planJson(plan); });
  return out;
}

}  // namespace rtsql::http
