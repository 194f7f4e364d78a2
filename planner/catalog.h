// The catalog: every source, sink, static table and flow the server knows, by
// case-insensitive name in one namespace per kind (a source and a sink may not
// share a name either: FROM and INTO must be unambiguous), and the user's SQL
// functions in a namespace of their own (they are called, never named in FROM
// or INTO). Thread-safe; the server's sessions share one catalog. Definitions
// are immutable once added.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/options.h"
#include "common/schema.h"
#include "common/value.h"
#include "planner/connector_traits.h"
#include "planner/sink_options.h"
#include "planner/source_options.h"

namespace rtsql {

struct UserFunctionDef;  // planner/user_function.h
struct ProcessorDef;     // planner/processor.h

struct WatermarkDef {
  int column = -1;          // index in the source schema of the event-time column
  int64_t delayMicros = 0;  // watermark = max event time - delay
};

struct SourceDef {
  std::string name;
  std::string connector;  // kafka | datagen
  std::string format;     // json | csv | raw (datagen: none)
  Schema schema;          // declared columns, then hidden metadata columns
  std::optional<WatermarkDef> watermark;
  Options options;
  // What the connector read from `options` (Connector::parseSource) and
  // answers about its sources, recorded at CREATE SOURCE so that planning
  // needs no connector.
  std::shared_ptr<const SourceOptions> parsed;
  SourceTraits traits;
  std::string sql;  // the CREATE statement, for SHOW and durability
};

struct SinkDef {
  std::string name;
  std::string connector;  // kafka | file
  std::string format;     // json | raw
  // Whether the connector can write an epoch's rows in one transaction
  // ('delivery' = 'exactly-once'): Connector::exactlyOnce(), recorded at
  // CREATE SINK so that planning needs no connector.
  bool exactlyOnce = false;
  // The connector's other answers (Connector::sinkTraits), likewise.
  SinkTraits traits;
  Options options;
  // What the connector read from `options` (Connector::parseSink), carried
  // into the plan's SinkSpec.
  std::shared_ptr<const SinkOptions> parsed;
  std::string sql;
};

struct TableDef {
  std::string name;
  Schema schema;
  Options options;
  std::shared_ptr<const std::vector<Row>> rows;  // replaced as a whole on INSERT
  std::string sql;
};

struct FlowDef {
  std::string name;
  std::string sink;
  int64_t checkpointIntervalMicros = 5LL * 60 * 1000 * 1000;
  Options options;
  std::string sql;        // the whole CREATE FLOW statement
  std::string queryText;  // its SELECT
  // The user functions its query calls (lower-cased): they cannot be dropped
  // or replaced while the flow exists.
  std::vector<std::string> functions;
  // The processors its TRANSFORM items use (lower-cased), likewise.
  std::vector<std::string> processors;
  // The user who created it, who may stop, start and drop it besides the
  // superusers; empty for a flow made before owners were recorded, which is
  // the superusers' alone (server/privileges.h).
  std::string owner;
  // CREATE MATERIALIZED VIEW: the flow's sink is the view's keyed table
  // (executor/state/view_table.h), named like the flow.
  bool materializedView = false;
};

class Catalog {
 public:
  using SourcePtr = std::shared_ptr<const SourceDef>;
  using SinkPtr = std::shared_ptr<const SinkDef>;
  using TablePtr = std::shared_ptr<const TableDef>;
  using FlowPtr = std::shared_ptr<const FlowDef>;
  using FunctionPtr = std::shared_ptr<const UserFunctionDef>;
  using ProcessorPtr = std::shared_ptr<const ProcessorDef>;

  Catalog() = default;
  // A copy that changes independently (definitions are immutable and shared).
  Catalog(const Catalog& other);
  Catalog& operator=(const Catalog&) = delete;

  // add* throw SqlError 42710 (duplicate object, at `pos`) unless ifNotExists, in
  // which case they return false and leave the catalog unchanged.
  bool addSource(SourceDef def, bool ifNotExists, size_t pos);
  bool addSink(SinkDef def, bool ifNotExists, size_t pos);
  bool addTable(TableDef def, bool ifNotExists, size_t pos);
  bool addFlow(FlowDef def, bool ifNotExists, size_t pos);

  SourcePtr findSource(const std::string& name) const;
  SinkPtr findSink(const std::string& name) const;
  TablePtr findTable(const std::string& name) const;
  FlowPtr findFlow(const std::string& name) const;

  // Replaces a table's rows (INSERT INTO ... VALUES appends by building a new vector).
  void setTableRows(const std::string& name, std::shared_ptr<const std::vector<Row>> rows);

  // Drop: 42P01/42704 when missing (unless ifExists); 55006 (object in use) when a
  // flow still reads from or writes to the object.
  bool dropSource(const std::string& name, bool ifExists, size_t pos);
  bool dropSink(const std::string& name, bool ifExists, size_t pos);
  bool dropTable(const std::string& name, bool ifExists, size_t pos);
  bool dropFlow(const std::string& name, bool ifExists, size_t pos);
  // Records which relations a flow reads (filled by the server after planning).
  void setFlowInputs(const std::string& flow, std::vector<std::string> relations);
  // DROP of materialized view `name`: 2BP01 at `pos` when another flow or
  // view reads it (planner/view_input.h). `action` names what is refused.
  void requireNoReaders(const std::string& name, size_t pos, const char* action = "drop") const;

  // ALTER: the definition of an existing source, sink or flow of the same
  // name, replaced in place (the flows that use it, and a flow's recorded
  // inputs, stay). The names of the flows that read `relation` or write to
  // it, as declared.
  void replaceSource(SourceDef def);
  void replaceSink(SinkDef def);
  void replaceFlow(FlowDef def);
  std::vector<std::string> flowsUsing(const std::string& relation) const;

  std::vector<SourcePtr> sources() const;
  std::vector<SinkPtr> sinks() const;
  std::vector<TablePtr> tables() const;
  std::vector<FlowPtr> flows() const;

  // CREATE [OR REPLACE] FUNCTION: 42723 when a function of that name exists,
  // unless ifNotExists (then false, unchanged) or orReplace (then replaced,
  // provided no flow or other function calls it: 2BP01).
  bool addFunction(UserFunctionDef def, bool orReplace, bool ifNotExists, size_t pos);
  FunctionPtr findFunction(const std::string& name) const;
  // DROP FUNCTION: 42883 when missing (unless ifExists); 2BP01 while a flow
  // or another function calls it.
  bool dropFunction(const std::string& name, bool ifExists, size_t pos);
  // In creation order, which replays (a function comes after those it calls).
  std::vector<FunctionPtr> functions() const;

  // CREATE [OR REPLACE] PROCESSOR: 42710 when one of that name exists, unless
  // ifNotExists (then false, unchanged) or orReplace (then replaced, provided
  // no flow uses it: 2BP01).
  bool addProcessor(ProcessorDef def, bool orReplace, bool ifNotExists, size_t pos);
  ProcessorPtr findProcessor(const std::string& name) const;
  // DROP PROCESSOR: 42704 when missing (unless ifExists); 2BP01 while a flow
  // uses it.
  bool dropProcessor(const std::string& name, bool ifExists, size_t pos);
  // By name.
  std::vector<ProcessorPtr> processors() const;

 private:
  void checkFree(const std::string& key, size_t pos) const;  // any kind

  mutable std::mutex mu_;
  std::map<std::string, SourcePtr> sources_;  // keys lower-cased
  std::map<std::string, SinkPtr> sinks_;
  std::map<std::string, TablePtr> tables_;
  std::map<std::string, FlowPtr> flows_;
  std::map<std::string, std::vector<std::string>> flowInputs_;
  std::map<std::string, FunctionPtr> functions_;
  uint64_t nextFunctionSequence_ = 1;
  std::map<std::string, ProcessorPtr> processors_;
  // 2BP01 when a flow uses processor `key`.
  void checkProcessorUnused(const std::string& key, const std::string& what, size_t pos) const;
  // 2BP01 when a flow or a function other than `key` itself calls function `key`.
  void checkNoDependents(const std::string& key, const std::string& what, size_t pos) const;
};

}  // namespace rtsql
