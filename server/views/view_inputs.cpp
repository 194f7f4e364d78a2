// A materialized view's changelog as a flow's source (view_inputs.h).
#include "server/views/view_inputs.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "common/schema.h"
#include "executor/state/view_changelog.h"
#include "planner/view_input.h"

namespace rtsql {

int ViewInputProvider::sourcePartitions(const ScanSpec& scan) {
  // One reader follows every task of the view (view_changelog.h).
  if (scan.connector == kViewChangelogConnector) return 1;
  return base_.sourcePartitions(scan);
}

std::unique_ptr<SourceTask> ViewInputProvider::openSource(const ScanSpec& scan,
                                                          const std::string& flowName, int task,
                                                          int tasks) {
  if (scan.connector != kViewChangelogConnector) {
    return base_.openSource(scan, flowName, task, tasks);
  }
  return openViewChangelogSource(scan.name, checkpointRoot_(scan.name), scan.schema);
}

namespace {

// The identifiers of `sql`, lower-cased (a quoted one without its quotes).
std::set<std::string> wordsOf(const std::string& sql) {
  std::set<std::string> words;
  std::string word;
  bool quoted = false;
  for (char c : sql) {
    if (quoted) {
      if (c == '"') {
        words.insert(toLower(word));
        word.clear();
        quoted = false;
      } else {
        word += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else if (!word.empty()) {
      words.insert(toLower(word));
      word.clear();
    }
  }
  if (!word.empty()) words.insert(toLower(word));
  return words;
}

}  // namespace

ViewChangelogBound makeViewChangelogBound(const Catalog& catalog,
                                          std::function<std::string(const std::string&)> flowDir,
                                          std::mutex& statements) {
  return [&catalog, flowDir = std::move(flowDir),
          &statements](const std::string& view) -> std::optional<ViewChangelogEnds> {
    // Under the statement lock no flow is being created: one that starts
    // reading the view later starts from a checkpoint at least as new as
    // the one read here (view_changelog.h).
    std::unique_lock lock(statements, std::try_to_lock);
    if (!lock.owns_lock()) return std::nullopt;
    Catalog::FlowPtr def = catalog.findFlow(view);
    if (!def || !def->materializedView) return std::nullopt;
    auto checkpoints = [&](const std::string& flow) {
      return (std::filesystem::path(flowDir(flow)) / "checkpoints").string();
    };
    std::optional<ViewChangelogEnds> bound = checkpointedChangelogEnds(checkpoints(view));
    if (!bound) return std::nullopt;
    const std::string name = toLower(view);
    for (const Catalog::FlowPtr& flow : catalog.flows()) {
      if (toLower(flow->name) == name || !wordsOf(flow->sql).count(name)) continue;
      bool reads = false;
      std::optional<ViewChangelogEnds> at = readerPosition(checkpoints(flow->name), view, &reads);
      if (!at) return std::nullopt;
      if (!reads) continue;  // names the view's name, but does not read it
      ViewChangelogEnds merged;
      for (const auto& [task, next] : *bound) {
        auto other = at->find(task);
        if (other != at->end()) merged[task] = std::min(next, other->second);
      }
      bound = std::move(merged);
    }
    return bound;
  };
}

void orderViewsBeforeReaders(std::vector<CatalogRecord>& records) {
  std::vector<size_t> places;
  std::vector<CatalogRecord> flows;
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind != "flow") continue;
    places.push_back(i);
    flows.push_back(records[i]);
  }
  std::vector<std::set<std::string>> words;
  for (const CatalogRecord& f : flows) words.push_back(wordsOf(f.sql));
  // Repeatedly the first record that names no flow still waiting: a stable
  // topological order (a flow naming another flow that is no view only
  // reorders them, harmlessly).
  std::vector<CatalogRecord> ordered;
  std::vector<bool> done(flows.size(), false);
  for (size_t round = 0; round < flows.size(); ++round) {
    size_t pick = flows.size();
    for (size_t i = 0; i < flows.size() && pick == flows.size(); ++i) {
      if (done[i]) continue;
      bool waits = false;
      for (size_t j = 0; j < flows.size() && !waits; ++j) {
        waits = j != i && !done[j] && words[i].count(toLower(flows[j].name)) > 0;
      }
      if (!waits) pick = i;
    }
    if (pick == flows.size()) return;  // a cycle: the order stays as it was
    done[pick] = true;
    ordered.push_back(flows[pick]);
  }
  for (size_t k = 0; k < places.size(); ++k) records[places[k]] = std::move(ordered[k]);
}

}  // namespace rtsql
