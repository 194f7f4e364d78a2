// Planning a flow: the AST query is bound into a logical plan (a list of nodes
// in data-flow order: scan, filters, projection), checked against what the sink
// needs, and cut into physical stages. Today every runnable flow is stateless
// and becomes one stage; grouping, windows, deduplication, joins and unions are
// recognised and refused with 0A000 at the construct, and will enter as new
// logical node kinds whose stage cuts happen in cutStages().
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "planner/binder.h"
#include "planner/planner.h"

namespace rtsql {

using planner_detail::ExprBinder;
using planner_detail::ExprContext;
using planner_detail::kDuplicateColumn;
using planner_detail::Scope;
using planner_detail::ScopeColumn;

namespace {

enum class Mode { Flow, Query };

struct OutputColumn {
  std::string name;
  ExprPtr expr;  // over the scanned row
  size_t pos = SqlError::npos;
};

struct LogicalNode {
  enum class Kind { Scan, Filter, Project } kind = Kind::Scan;
  Catalog::SourcePtr source;          // Scan
  ExprPtr predicate;                  // Filter
  std::vector<OutputColumn> outputs;  // Project
};
// Nodes in data-flow order; every expression reads the scanned row because
// subqueries are flattened while binding.
using LogicalPlan = std::vector<LogicalNode>;

// A bound relation in FROM: what is scanned, which filters already apply, and
// the columns the enclosing query may name.
struct Relation {
  Catalog::SourcePtr source;
  std::vector<ExprPtr> filters;
  Scope scope;
};

// A bound (sub)query.
struct BoundQuery {
  Catalog::SourcePtr source;
  std::vector<ExprPtr> filters;
  std::vector<OutputColumn> outputs;
};

// The offset of the last LIMIT keyword in `text` (which starts at `base`), for
// pointing at it: the AST keeps the limit's value but not its place.
size_t findLimitPos(const std::string& text, size_t base) {
  std::string lower = toLower(text);
  size_t found = std::string::npos;
  for (size_t at = lower.find("limit"); at != std::string::npos; at = lower.find("limit", at + 1)) {
    bool startOk = at == 0 || !(std::isalnum(static_cast<unsigned char>(lower[at - 1])) ||
                                lower[at - 1] == '_');
    size_t end = at + 5;
    bool endOk = end >= lower.size() ||
                 !(std::isalnum(static_cast<unsigned char>(lower[end])) || lower[end] == '_');
    if (startOk && endOk) found = at;
  }
  return found == std::string::npos ? SqlError::npos : base + found;
}

class QueryBinder {
 public:
  QueryBinder(const PlanContext& ctx, Mode mode) : ctx_(ctx), mode_(mode) {}

  // `limitPos` is where the top-level LIMIT is written, if known.
  BoundQuery bindQuery(const ast::Query& q, bool top, size_t limitPos) const {
    if (q.terms.empty()) throw InternalError("query without a SELECT");
    if (q.terms.size() > 1) unsupported("UNION ALL", q.terms[1].pos);
    if (!q.orderBy.empty()) unsupported("ORDER BY", q.orderBy[0].expr->pos);
    if (q.limit && (mode_ == Mode::Flow || !top)) {
      SqlError err(sqlstate::kFeatureNotSupported,
                   top ? "LIMIT is not allowed in a flow" : "LIMIT is not supported in a subquery",
                   top ? limitPos : q.pos);
      if (top) err.withHint("a flow runs until it is stopped; use LIMIT in a live SELECT");
      throw err;
    }
    return bindSelect(q.terms[0], top);
  }

 private:
  [[noreturn]] void unsupported(const std::string& what, size_t pos) const {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("{} is not supported in {} yet", what,
                               mode_ == Mode::Flow ? "flows" : "queries"),
                   pos);
  }

  BoundQuery bindSelect(const ast::Select& s, bool top) const {
    if (!s.distinctOn.empty()) unsupported("DISTINCT ON", s.distinctOn[0]->pos);
    if (s.distinct) unsupported("SELECT DISTINCT", s.pos);
    if (!s.groupBy.empty()) unsupported("GROUP BY", s.groupBy[0]->pos);
    if (s.having) unsupported("HAVING", s.having->pos);
    if (s.emitOnWindowClose) unsupported("EMIT ON WINDOW CLOSE", s.pos);
    if (!s.from) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     mode_ == Mode::Flow ? "a flow must read FROM a source"
                                         : "a query without FROM cannot be planned as a stream",
                     s.pos, "add FROM <source>");
    }
    Relation rel = bindFrom(*s.from);
    BoundQuery out;
    out.source = rel.source;
    out.filters = rel.filters;

    if (s.where) {
      ExprPtr pred = ExprBinder(rel.scope, ExprContext::Where).bind(*s.where);
      TypeId t = pred->type()->id;
      if (t != TypeId::Boolean && t != TypeId::Null) {
        throw SqlError(sqlstate::kDatatypeMismatch,
                       fmt::format("argument of WHERE must be type BOOLEAN, not type {}",
                                   pred->type()->toString()),
                       s.where->pos);
      }
      out.filters.push_back(std::move(pred));
    }

    ExprBinder binder(rel.scope, ExprContext::SelectList);
    for (const auto& item : s.items) {
      const ast::Expr& e = *item.expr;
      if (e.kind == ast::ExprKind::Star) {
        expandStar(rel.scope, e, out.outputs);
        continue;
      }
      ExprPtr bound = binder.bind(e);
      out.outputs.push_back(OutputColumn{outputName(item, *bound), bound, e.pos});
    }
    if (top && mode_ == Mode::Flow) checkUniqueNames(out.outputs);
    return out;
  }

  static std::string outputName(const ast::SelectItem& item, const Expr& bound) {
    if (!item.alias.empty()) return item.alias;
    const ast::Expr& e = *item.expr;
    if (e.kind == ast::ExprKind::Column && !e.parts.empty()) return e.parts.back();
    if (e.kind == ast::ExprKind::Field) return e.name;
    if (!item.text.empty()) return item.text;
    return bound.toString();
  }

  static void expandStar(const Scope& scope, const ast::Expr& star, std::vector<OutputColumn>& out) {
    const std::string* qualifier = star.parts.empty() ? nullptr : &star.parts.back();
    if (qualifier && !scope.hasQualifier(*qualifier)) {
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("missing FROM-clause entry for table \"{}\"", *qualifier),
                     star.pos);
    }
    for (const ScopeColumn& c : scope.columns) {
      if (c.hidden) continue;
      if (qualifier && !iequals(c.qualifier, *qualifier)) continue;
      out.push_back(OutputColumn{c.name, c.expr, star.pos});
    }
  }

  // A flow's rows become JSON objects (or raw sink fields by name), so every
  // output column needs its own name.
  static void checkUniqueNames(const std::vector<OutputColumn>& outputs) {
    for (size_t i = 0; i < outputs.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        if (iequals(outputs[i].name, outputs[j].name)) {
          throw SqlError(kDuplicateColumn,
                         fmt::format("column \"{}\" specified more than once", outputs[i].name),
                         outputs[i].pos,
                         fmt::format("give one of them another name: ... AS {}_2", outputs[i].name));
        }
      }
    }
  }

  Relation bindFrom(const ast::TableRef& ref) const {
    switch (ref.kind) {
      case ast::TableRef::Kind::Join:
        unsupported("JOIN", ref.right ? ref.right->pos : ref.pos);
      case ast::TableRef::Kind::Subquery: {
        if (!ref.subquery) throw InternalError("subquery reference without a query");
        // Flattening: the outer query's references to the subquery's columns
        // become the subquery's own expressions over the scanned row. A
        // non-deterministic expression (rand()) referenced twice outside is
        // therefore evaluated twice.
        BoundQuery inner = bindQuery(*ref.subquery, false, SqlError::npos);
        Relation rel;
        rel.source = inner.source;
        rel.filters = std::move(inner.filters);
        for (auto& o : inner.outputs) {
          rel.scope.columns.push_back(ScopeColumn{ref.alias, o.name, o.expr->type(), false, o.expr});
        }
        return rel;
      }
      case ast::TableRef::Kind::Named:
        break;
    }
    const Catalog& catalog = *ctx_.catalog;
    Catalog::SourcePtr source = catalog.findSource(ref.name);
    if (!source) {
      if (catalog.findTable(ref.name)) {
        throw SqlError(sqlstate::kFeatureNotSupported,
                       fmt::format("\"{}\" is a static table; a {} reads from a source", ref.name,
                                   mode_ == Mode::Flow ? "flow" : "live query"),
                       ref.pos, "tables are joined to a source's rows");
      }
      SqlError err(sqlstate::kUndefinedTable,
                   fmt::format("relation \"{}\" does not exist", ref.name), ref.pos);
      if (catalog.findSink(ref.name)) {
        err.withHint(fmt::format("\"{}\" is a sink: flows write INTO sinks", ref.name));
      } else {
        std::vector<std::string> names;
        for (const auto& s : catalog.sources()) names.push_back(s->name);
        std::string close = planner_detail::closestName(ref.name, names);
        if (!close.empty()) err.withHint(fmt::format("perhaps you meant \"{}\"", close));
      }
      throw err;
    }
    Relation rel;
    rel.source = source;
    rel.scope = planner_detail::scopeFromSchema(source->schema,
                                                ref.alias.empty() ? source->name : ref.alias);
    return rel;
  }

  const PlanContext& ctx_;
  Mode mode_;
};

LogicalPlan toLogical(const BoundQuery& q) {
  LogicalPlan plan;
  LogicalNode scan;
  scan.kind = LogicalNode::Kind::Scan;
  scan.source = q.source;
  plan.push_back(std::move(scan));
  for (const auto& f : q.filters) {
    LogicalNode node;
    node.kind = LogicalNode::Kind::Filter;
    node.predicate = f;
    plan.push_back(std::move(node));
  }
  LogicalNode project;
  project.kind = LogicalNode::Kind::Project;
  project.outputs = q.outputs;
  plan.push_back(std::move(project));
  return plan;
}

Schema outputSchema(const std::vector<OutputColumn>& outputs) {
  Schema schema;
  for (const auto& o : outputs) schema.columns.push_back(Column{o.name, o.expr->type(), false});
  return schema;
}

// Stage 0 reads the source with min(maxPartitions, partitions) tasks: more
// tasks than partitions would sit idle holding slots.
int sourceTasks(const SourceDef& source, const PlanContext& ctx, int* partitionsOut) {
  int partitions = ctx.sourcePartitions ? ctx.sourcePartitions(source) : 0;
  *partitionsOut = std::max(partitions, 0);
  if (source.options.has("maxPartitions")) {
    int64_t maxPartitions = 1;
    try {
      maxPartitions = source.options.getInt("maxPartitions", 1, 1, 1 << 20);
    } catch (SqlError& e) {
      // The option's position is in the CREATE SOURCE text, not in this one.
      e.setPosition(SqlError::npos);
      e.withDetail(fmt::format("in the options of source \"{}\"", source.name));
      throw;
    }
    if (partitions > 0) return static_cast<int>(std::min<int64_t>(maxPartitions, partitions));
    return static_cast<int>(maxPartitions);
  }
  return partitions > 0 ? partitions : 1;
}

// Cuts the logical plan into stages. Every node today is stateless and fuses
// into the stage that scans the source; shuffling nodes (aggregation,
// deduplication, stream-stream joins) will end a stage here.
PhysicalPlan cutStages(const LogicalPlan& logical, const PlanContext& ctx) {
  PhysicalPlan plan;
  StageSpec stage;
  stage.id = 0;
  Schema current;
  for (const LogicalNode& node : logical) {
    switch (node.kind) {
      case LogicalNode::Kind::Scan: {
        const SourceDef& src = *node.source;
        plan.scan.name = src.name;
        plan.scan.connector = src.connector;
        plan.scan.format = src.format;
        plan.scan.options = src.options;
        plan.scan.schema = src.schema;
        if (src.watermark) {
          plan.scan.eventTimeColumn = src.watermark->column;
          plan.scan.watermarkDelayMicros = src.watermark->delayMicros;
        }
        stage.tasks = sourceTasks(src, ctx, &plan.scan.partitions);
        current = src.schema;
        break;
      }
      case LogicalNode::Kind::Filter: {
        OperatorSpec op;
        op.kind = OperatorKind::Filter;
        op.predicate = node.predicate;
        op.output = current;
        stage.operators.push_back(std::move(op));
        break;
      }
      case LogicalNode::Kind::Project: {
        OperatorSpec op;
        op.kind = OperatorKind::Project;
        for (const auto& o : node.outputs) op.exprs.push_back(o.expr);
        op.output = outputSchema(node.outputs);
        current = op.output;
        stage.operators.push_back(std::move(op));
        break;
      }
    }
  }
  plan.stages.push_back(std::move(stage));
  plan.sink.input = current;
  return plan;
}

bool isText(const DataType& t) { return t.id == TypeId::String || t.id == TypeId::Binary; }

bool isHeadersType(const DataType& t) {
  if (t.id != TypeId::Array || !t.element || t.element->id != TypeId::Struct) return false;
  const DataType& s = *t.element;
  int k = s.fieldIndex("key"), v = s.fieldIndex("value");
  return s.fields.size() == 2 && k >= 0 && v >= 0 &&
         s.fields[static_cast<size_t>(k)].type->id == TypeId::String &&
         isText(*s.fields[static_cast<size_t>(v)].type);
}

int findOutput(const std::vector<OutputColumn>& outputs, std::string_view name) {
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (iequals(outputs[i].name, name)) return static_cast<int>(i);
  }
  return -1;
}

// Fills the sink spec and checks that the query's columns suit the sink's format.
void bindSink(SinkSpec& spec, const SinkDef& sink, const std::vector<OutputColumn>& outputs,
              size_t queryPos) {
  spec.name = sink.name;
  spec.connector = sink.connector;
  spec.format = sink.format;
  spec.options = sink.options;
  auto typed = [&](const char* column, bool (*ok)(const DataType&), const char* wanted) {
    int i = findOutput(outputs, column);
    if (i < 0) return -1;
    const OutputColumn& o = outputs[static_cast<size_t>(i)];
    if (!ok(*o.expr->type())) {
      throw SqlError(sqlstate::kDatatypeMismatch,
                     fmt::format("column \"{}\" of a raw sink must be {}, not {}", column, wanted,
                                 o.expr->type()->toString()),
                     o.pos, fmt::format("write CAST(... AS STRING) AS {}", column));
    }
    return i;
  };
  if (iequals(sink.format, "raw")) {
    spec.valueColumn = typed("value", isText, "STRING or BINARY");
    if (spec.valueColumn < 0) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("sink \"{}\" has format 'raw': the query must give a column "
                                 "named \"value\"",
                                 sink.name),
                     queryPos, "name the payload: SELECT to_json(struct(*)) AS value ...");
    }
    spec.keyColumn = typed("key", isText, "STRING or BINARY");
    spec.headersColumn =
        typed("headers", isHeadersType, "ARRAY<STRUCT<key: STRING, value: BINARY>>");
    spec.topicColumn = typed("topic", [](const DataType& t) { return t.id == TypeId::String; },
                             "STRING");
    return;
  }
  if (const OptionEntry* key = sink.options.find("key")) {
    spec.keyColumn = findOutput(outputs, key->value);
    if (spec.keyColumn < 0) {
      std::vector<std::string> names;
      for (const auto& o : outputs) names.push_back(o.name);
      std::string close = planner_detail::closestName(key->value, names);
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("sink \"{}\" uses key = '{}', but the query has no column \"{}\"",
                                 sink.name, key->value, key->value),
                     queryPos,
                     close.empty() ? fmt::format("the query's columns: {}", fmt::join(names, ", "))
                                   : fmt::format("perhaps you meant \"{}\"", close));
    }
  }
}

Options toOptions(const std::vector<ast::Option>& options) {
  std::vector<OptionEntry> entries;
  for (const auto& o : options) entries.push_back(OptionEntry{o.key, o.value, o.keyPos, o.valuePos});
  return Options(std::move(entries));
}

void checkFlowOptions(const Options& options) {
  options.checkKnown({"shuffle.partitions", "delivery"});
  if (options.has("shuffle.partitions")) options.getInt("shuffle.partitions", 1, 1, 100000);
  std::string delivery =
      options.getEnum("delivery", "at-least-once", {"at-least-once", "exactly-once"});
  if (iequals(delivery, "exactly-once")) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   "'delivery' = 'exactly-once' is not supported yet",
                   options.find("delivery")->valuePos,
                   "use 'at-least-once': rows since the last checkpoint are replayed after a "
                   "failure");
  }
}

void requireCatalog(const PlanContext& ctx) {
  if (!ctx.catalog) throw InternalError("PlanContext without a catalog");
}

}  // namespace

PhysicalPlan planFlow(const ast::CreateFlow& stmt, const PlanContext& ctx) {
  requireCatalog(ctx);
  Catalog::SinkPtr sink = ctx.catalog->findSink(stmt.sink);
  if (!sink) {
    SqlError err(sqlstate::kUndefinedObject, fmt::format("sink \"{}\" does not exist", stmt.sink),
                 stmt.sinkPos);
    if (ctx.catalog->findSource(stmt.sink) || ctx.catalog->findTable(stmt.sink)) {
      err.withHint(fmt::format("\"{}\" is a relation; a flow writes INTO a sink", stmt.sink));
    } else {
      err.withHint(fmt::format("CREATE SINK {} WITH (connector = ..., format = ...) first",
                               stmt.sink));
    }
    throw err;
  }
  if (!stmt.query) throw InternalError("CREATE FLOW without a query");

  Options flowOptions = toOptions(stmt.options);
  checkFlowOptions(flowOptions);
  int64_t checkpoint = 5LL * 60 * 1000 * 1000;
  if (stmt.checkpointInterval) {
    checkpoint = parseInterval(*stmt.checkpointInterval, "", stmt.checkpointIntervalPos);
    if (checkpoint < 1000 * 1000) {
      throw SqlError(sqlstate::kInvalidParameterValue,
                     "the checkpoint interval must be at least 1 second",
                     stmt.checkpointIntervalPos, "CHECKPOINT INTERVAL '30 seconds'");
    }
  }

  QueryBinder binder(ctx, Mode::Flow);
  BoundQuery bound =
      binder.bindQuery(*stmt.query, true, findLimitPos(stmt.queryText, stmt.query->pos));
  PhysicalPlan plan = cutStages(toLogical(bound), ctx);
  plan.flowName = stmt.name;
  bindSink(plan.sink, *sink, bound.outputs, stmt.query->pos);
  plan.checkpointIntervalMicros = checkpoint;
  plan.flowOptions = std::move(flowOptions);
  return plan;
}

PhysicalPlan planQuery(const ast::Query& query, const PlanContext& ctx) {
  requireCatalog(ctx);
  QueryBinder binder(ctx, Mode::Query);
  BoundQuery bound = binder.bindQuery(query, true, SqlError::npos);
  PhysicalPlan plan = cutStages(toLogical(bound), ctx);
  plan.sink.name = "client";
  plan.sink.connector = "client";
  return plan;
}

}  // namespace rtsql
