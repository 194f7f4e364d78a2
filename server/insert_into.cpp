#include "server/insert_into.h"

#include <fmt/format.h>
#include <librdkafka/rdkafka.h>

#include <atomic>
#include <chrono>
#include <optional>

#include "common/error.h"
#include "common/expr.h"
#include "common/interrupt.h"
#include "connectors/format/changes.h"
#include "connectors/format/codec.h"
#include "connectors/kafka/client.h"
#include "planner/physical_plan.h"
#include "planner/planner.h"
#include "planner/user_function.h"

namespace rtsql {

namespace {

// How long the broker may take to acknowledge the statement's records.
constexpr int kAcknowledgeTimeoutMs = 30'000;
// The slice of that wait between two looks at a cancel.
constexpr int kPollSliceMs = 100;

// Where each part of a record comes from: indexes into the source's schema
// (-1: not written).
struct RecordColumns {
  int key = -1;
  int headers = -1;
  int partition = -1;
  int timestamp = -1;
  int value = -1;  // raw only: the message value
};

bool isRaw(const SourceDef& source) { return iequals(source.format, "raw"); }

RecordColumns recordColumns(const SourceDef& source) {
  RecordColumns rc;
  const Schema& s = source.schema;
  if (isRaw(source)) {
    rc.key = s.find("key");
    rc.value = s.find("value");
    rc.partition = s.find("partition");
    rc.timestamp = s.find("timestamp");
    rc.headers = s.find("headers");
  } else {
    auto hidden = [&](const char* name) {
      int i = s.find(name);
      return i >= 0 && s.columns[i].hidden ? i : -1;
    };
    rc.key = hidden("_key");
    rc.headers = hidden("_headers");
    rc.partition = hidden("_partition");
    rc.timestamp = hidden("_timestamp");
  }
  return rc;
}

// The columns an INSERT may name: a raw source's key, value, partition,
// timestamp and headers; any other format's declared columns and the
// metadata columns that say where and how the record is written. Topic and
// offset are the broker's to give.
bool writable(const SourceDef& source, const RecordColumns& rc, int index) {
  if (isRaw(source)) {
    return index == rc.key || index == rc.value || index == rc.partition ||
           index == rc.timestamp || index == rc.headers;
  }
  if (!source.schema.columns[index].hidden) return true;
  return index == rc.key || index == rc.headers || index == rc.partition || index == rc.timestamp;
}

std::vector<int> targetColumns(const SourceDef& source, const RecordColumns& rc,
                               const ast::Insert& stmt) {
  const Schema& schema = source.schema;
  std::vector<int> targets;
  if (stmt.columns.empty()) {
    // All columns, in order: the declared ones; a raw source's key and value.
    if (isRaw(source)) return {rc.key, rc.value};
    for (size_t i = 0; i < schema.size(); ++i) {
      if (!schema.columns[i].hidden) targets.push_back(static_cast<int>(i));
    }
    return targets;
  }
  for (const auto& name : stmt.columns) {
    const int idx = schema.find(name);
    if (idx < 0) {
      throw SqlError(sqlstate::kUndefinedColumn,
                     fmt::format("column \"{}\" of source \"{}\" does not exist", name, source.name),
                     stmt.tablePos);
    }
    if (!writable(source, rc, idx)) {
      throw SqlError(sqlstate::kFeatureNotSupported,
                     fmt::format("column \"{}\" of source \"{}\" is the broker's to set", name,
                                 source.name),
                     stmt.tablePos,
                     isRaw(source) ? "a raw source takes key, value, partition, timestamp and "
                                     "headers"
                                   : "besides the declared columns, an INSERT may set _key, "
                                     "_headers, _partition and _timestamp");
    }
    targets.push_back(idx);
  }
  return targets;
}

// ------------------------------------------------------------------ rows

SqlError unbounded(size_t pos) {
  return SqlError(sqlstate::kFeatureNotSupported,
                  "INSERT INTO a source takes VALUES or a SELECT over static tables", pos,
                  "a SELECT that reads a source never ends; to copy a stream into a topic, "
                  "CREATE SINK on that topic and CREATE FLOW ... INTO it");
}

// The rows of one bounded SELECT term: without FROM one row, over a static
// table each of its rows that passes WHERE.
void selectTermRows(const ast::Select& sel, const Catalog& catalog, std::vector<Row>& out) {
  if (!sel.groupBy.empty() || sel.having || sel.distinct || !sel.distinctOn.empty()) {
    throw unbounded(sel.pos).withHint(
        "INSERT ... SELECT filters and projects rows; aggregate in a flow instead");
  }
  Schema schema;
  std::shared_ptr<const std::vector<Row>> rows;
  if (sel.from) {
    const ast::TableRef& from = *sel.from;
    if (from.kind != ast::TableRef::Kind::Named) throw unbounded(from.pos);
    Catalog::TablePtr table = catalog.findTable(from.name);
    if (!table) {
      if (catalog.findSource(from.name)) throw unbounded(from.pos);
      throw SqlError(sqlstate::kUndefinedTable,
                     fmt::format("relation \"{}\" does not exist", from.name), from.pos);
    }
    schema = table->schema;
    rows = table->rows;
  }
  std::vector<ExprPtr> items;
  for (const auto& item : sel.items) {
    if (item.expr->kind == ast::ExprKind::Star) {
      for (size_t i = 0; i < schema.size(); ++i) {
        ast::Expr column;
        column.kind = ast::ExprKind::Column;
        column.pos = item.expr->pos;
        column.parts = {schema.columns[i].name};
        items.push_back(bindExpression(column, schema, &catalog));
      }
      continue;
    }
    items.push_back(bindExpression(*item.expr, schema, &catalog));
  }
  ExprPtr where = sel.where ? bindExpression(*sel.where, schema, &catalog) : nullptr;
  auto emit = [&](const Row& in) {
    if (where) {
      const Value w = where->eval(in);
      if (w.isNull() || !w.asBool()) return;
    }
    Row row;
    row.reserve(items.size());
    for (const auto& e : items) row.push_back(e->eval(in));
    out.push_back(std::move(row));
  };
  if (!rows) {
    emit(Row{});
    return;
  }
  for (const Row& r : *rows) {
    throwIfInterrupted();
    emit(r);
  }
}

// The rows of the statement, each with one value per target column, cast to
// that column's type.
std::vector<Row> insertedRows(const InsertIntoSource& target, const ast::Insert& stmt,
                              const std::vector<int>& targets) {
  const Schema& schema = target.source.schema;
  std::vector<Row> rows;
  auto arity = [&](size_t got, size_t pos) {
    if (got != targets.size()) {
      throw SqlError(sqlstate::kSyntaxError,
                     fmt::format("INSERT has {} values but {} target columns", got, targets.size()),
                     pos);
    }
  };
  if (!stmt.query) {
    for (const auto& values : stmt.rows) {
      arity(values.size(), values.empty() ? stmt.pos : values.front()->pos);
      Row row;
      for (size_t i = 0; i < values.size(); ++i) {
        row.push_back(evalConstant(*values[i], schema.columns[targets[i]].type));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }
  const ast::Query& q = *stmt.query;
  std::vector<Row> selected;
  std::optional<std::vector<Row>> bounded;
  if (target.boundedRows) bounded = target.boundedRows(q);
  if (bounded) {
    // Written in the query's order: ORDER BY orders the records.
    selected = std::move(*bounded);
  } else {
    if (!q.orderBy.empty()) {
      throw SqlError(sqlstate::kFeatureNotSupported, "INSERT ... SELECT takes no ORDER BY",
                     q.orderBy.front().expr->pos, "records are written in the order they are read");
    }
    for (const auto& term : q.terms) selectTermRows(term, target.catalog, selected);
    if (q.limit && static_cast<int64_t>(selected.size()) > *q.limit) selected.resize(*q.limit);
  }
  for (Row& r : selected) {
    arity(r.size(), q.pos);
    for (size_t i = 0; i < r.size(); ++i) {
      const DataTypePtr& type = schema.columns[targets[i]].type;
      if (r[i].isNull() || r[i].type() == type->id) continue;
      try {
        r[i] = castValue(r[i], *type);
      } catch (const SqlError& e) {
        throw SqlError(sqlstate::kDatatypeMismatch,
                       fmt::format("column \"{}\" is of type {}: {}",
                                   schema.columns[targets[i]].name, type->toString(), e.message()),
                       q.pos);
      }
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

// ------------------------------------------------------------------ records

// One record, ready to produce.
struct Outgoing {
  EncodedRecord record;
  int32_t partition = RD_KAFKA_PARTITION_UA;
  int64_t timestampMs = 0;  // 0: the producer's clock
};

// The source as a sink of its format on `topic` would see it: its declared
// columns (a schema registry's subject is named after the topic).
SinkSpec valueSpec(const SourceDef& source, const std::string& topic) {
  SinkSpec spec;
  spec.name = source.name;
  spec.connector = "kafka";
  spec.format = toLower(source.format);
  spec.options = source.options;
  spec.options.set("topic", topic);
  // What the Kafka sink reads: the topic, and the source's framing as CREATE
  // SOURCE read it.
  SinkOptions parsed;
  parsed.topic = topic;
  parsed.protobufConfluent = source.parsed && source.parsed->decode.protobufConfluent;
  spec.parsed = std::make_shared<const SinkOptions>(std::move(parsed));
  for (const Column& c : source.schema.columns) {
    if (!c.hidden) spec.input.columns.push_back(c);
  }
  return spec;
}

void setMetadata(const Row& full, const RecordColumns& rc, Outgoing& out, size_t pos) {
  EncodedRecord& rec = out.record;
  if (rc.key >= 0 && !full[rc.key].isNull()) {
    rec.hasKey = true;
    rec.key = full[rc.key].asString();
  } else if (rc.key >= 0) {
    rec.hasKey = false;
  }
  if (rc.headers >= 0 && !full[rc.headers].isNull()) {
    rec.headers.clear();
    for (const Value& h : full[rc.headers].asList()) {
      if (h.isNull()) continue;
      const ValueList& kv = h.asList();
      if (kv.size() < 2 || kv[0].isNull()) {
        throw SqlError(sqlstate::kInvalidParameterValue, "a header needs a key", pos,
                       "named_struct('key', 'k', 'value', CAST('v' AS BINARY))");
      }
      rec.headers.emplace_back(kv[0].asString(), kv[1].isNull() ? std::string() : kv[1].asString());
    }
  }
  if (rc.partition >= 0 && !full[rc.partition].isNull()) {
    const int64_t p = full[rc.partition].asInt();
    if (p < 0 || p > INT32_MAX) {
      throw SqlError(sqlstate::kNumericOutOfRange,
                     fmt::format("partition {} is out of range", p), pos);
    }
    out.partition = static_cast<int32_t>(p);
  }
  if (rc.timestamp >= 0 && !full[rc.timestamp].isNull()) {
    out.timestampMs = full[rc.timestamp].asInt() / 1000;
  }
}

std::vector<Outgoing> encodeRecords(const SourceDef& source, const std::string& topic,
                                    const RecordColumns& rc, const std::vector<int>& targets,
                                    const std::vector<Row>& rows, size_t pos) {
  std::vector<Outgoing> out;
  out.reserve(rows.size());
  const SinkSpec spec = valueSpec(source, topic);
  std::unique_ptr<ChangeEncoder> changes;
  std::unique_ptr<RecordEncoder> encoder;
  if (iequals(source.format, "debezium-json")) {
    changes = ChangeEncoder::make(spec);
  } else if (!isRaw(source)) {
    encoder = makeEncoder(spec);
  }
  std::vector<int> visible;  // schema index of each of spec.input's columns
  for (size_t i = 0; i < source.schema.size(); ++i) {
    if (!source.schema.columns[i].hidden) visible.push_back(static_cast<int>(i));
  }
  for (const Row& r : rows) {
    Row full(source.schema.size());
    for (size_t i = 0; i < targets.size(); ++i) full[targets[i]] = r[i];
    Outgoing o;
    if (isRaw(source)) {
      const Value& v = full[rc.value];
      o.record.hasValue = !v.isNull();
      if (o.record.hasValue) o.record.value = v.asString();
    } else {
      Row value;
      value.reserve(visible.size());
      for (int i : visible) value.push_back(full[i]);
      if (changes) {
        changes->add(value, RowKind::Insert, [&](const EncodedRecord& rec) { o.record = rec; });
      } else {
        encoder->encode(value, o.record);
      }
    }
    setMetadata(full, rc, o, pos);
    out.push_back(std::move(o));
  }
  return out;
}

// ------------------------------------------------------------------ producing

struct Tally {
  std::atomic<int64_t> acknowledged{0};
  std::atomic<int64_t> failed{0};
  std::string firstError;  // written on the client's poll, read after it
};

void onDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* /*conf opaque*/) {
  auto* tally = static_cast<Tally*>(m->_private);
  if (m->err) {
    if (tally->failed.fetch_add(1) == 0) tally->firstError = rd_kafka_err2str(m->err);
  } else {
    tally->acknowledged.fetch_add(1);
  }
}

void produceAll(const SourceDef& source, const std::string& bootstrap, const std::string& topic,
                std::vector<Outgoing>& records, ResultWriter& out) {
  Tally tally;
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    kafka::installLogging(conf);
    rd_kafka_conf_set_dr_msg_cb(conf, &onDelivery);
    // Records go out at once, each acknowledged by every in-sync replica.
    kafka::setProperty(conf, "linger.ms", "0", SqlError::npos);
    kafka::setProperty(conf, "acks", "all", SqlError::npos);
    kafka::setProperty(conf, "message.timeout.ms", std::to_string(kAcknowledgeTimeoutMs),
                       SqlError::npos);
    kafka::applyUserProperties(conf, source.options, false);
    kafka::setProperty(conf, "bootstrap.servers", bootstrap, SqlError::npos);
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  kafka::HandlePtr rk = kafka::newHandle(RD_KAFKA_PRODUCER, conf);
  // Each record's delivery report reaches `tally` through its opaque.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kAcknowledgeTimeoutMs);
  auto expired = [&] { return std::chrono::steady_clock::now() >= deadline; };
  for (Outgoing& o : records) {
    rd_kafka_headers_t* headers = nullptr;
    if (!o.record.headers.empty()) {
      headers = rd_kafka_headers_new(o.record.headers.size());
      for (const auto& [k, v] : o.record.headers) {
        rd_kafka_header_add(headers, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                            static_cast<ssize_t>(v.size()));
      }
    }
    rd_kafka_vu_t vus[8];
    size_t n = 0;
    vus[n].vtype = RD_KAFKA_VTYPE_TOPIC;
    vus[n++].u.cstr = topic.c_str();
    vus[n].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    vus[n++].u.i = RD_KAFKA_MSG_F_COPY;
    vus[n].vtype = RD_KAFKA_VTYPE_PARTITION;
    vus[n++].u.i32 = o.partition;
    vus[n].vtype = RD_KAFKA_VTYPE_VALUE;
    vus[n].u.mem.ptr = o.record.hasValue ? o.record.value.data() : nullptr;
    vus[n++].u.mem.size = o.record.hasValue ? o.record.value.size() : 0;
    if (o.record.hasKey) {
      vus[n].vtype = RD_KAFKA_VTYPE_KEY;
      vus[n].u.mem.ptr = o.record.key.data();
      vus[n++].u.mem.size = o.record.key.size();
    }
    if (o.timestampMs > 0) {
      vus[n].vtype = RD_KAFKA_VTYPE_TIMESTAMP;
      vus[n++].u.i64 = o.timestampMs;
    }
    vus[n].vtype = RD_KAFKA_VTYPE_OPAQUE;
    vus[n++].u.ptr = &tally;
    if (headers) {
      vus[n].vtype = RD_KAFKA_VTYPE_HEADERS;
      vus[n++].u.headers = headers;
    }
    for (;;) {
      rd_kafka_error_t* error = rd_kafka_produceva(rk.get(), vus, n);
      if (!error) break;  // the headers now belong to the message
      const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
      const std::string reason = rd_kafka_error_string(error);
      rd_kafka_error_destroy(error);
      if (code == RD_KAFKA_RESP_ERR__QUEUE_FULL && !expired() && !out.cancelled()) {
        rd_kafka_poll(rk.get(), kPollSliceMs);
        continue;
      }
      if (headers) rd_kafka_headers_destroy(headers);
      rd_kafka_poll(rk.get(), 0);
      if (out.cancelled()) throw Interrupted();
      throw SqlError(sqlstate::kInvalidParameterValue,
                     fmt::format("cannot write to topic '{}' of source \"{}\": {}", topic,
                                 source.name, reason));
    }
    rd_kafka_poll(rk.get(), 0);
  }
  const auto total = static_cast<int64_t>(records.size());
  while (tally.acknowledged + tally.failed < total) {
    if (out.cancelled()) {
      rd_kafka_purge(rk.get(), RD_KAFKA_PURGE_F_QUEUE);
      throw Interrupted();
    }
    if (std::optional<std::string> refused = kafka::authenticationFailure(rk.get())) {
      throw kafka::authenticationError(rk.get(), bootstrap, *refused);
    }
    if (expired()) {
      throw SqlError(sqlstate::kConnectionFailure,
                     fmt::format("the broker at {} acknowledged {} of {} records to topic '{}' "
                                 "within {} s",
                                 bootstrap, tally.acknowledged.load(), total, topic,
                                 kAcknowledgeTimeoutMs / 1000),
                     SqlError::npos, "the rest may or may not be written");
    }
    rd_kafka_flush(rk.get(), kPollSliceMs);
    rd_kafka_poll(rk.get(), 0);
  }
  if (tally.failed > 0) {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("the broker refused {} of {} records to topic '{}' ({} written): {}",
                               tally.failed.load(), total, topic, tally.acknowledged.load(),
                               tally.firstError));
  }
}

}  // namespace

void insertIntoSource(const InsertIntoSource& target, const ast::Insert& stmt, ResultWriter& out) {
  const SourceDef& source = target.source;
  if (!iequals(source.connector, "kafka")) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("cannot INSERT into source \"{}\": its connector '{}' makes its own "
                               "records",
                               source.name, source.connector),
                   stmt.tablePos, "INSERT INTO writes records to a Kafka source's topic");
  }
  // The topics CREATE SOURCE read (SourceOptions::topics).
  const std::vector<std::string> topics =
      source.parsed ? source.parsed->topics : std::vector<std::string>{};
  if (topics.size() != 1) {
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("cannot INSERT into source \"{}\": it reads {} topics", source.name,
                               topics.size()),
                   stmt.tablePos,
                   "declare a source on the one topic to write to, and INSERT into that");
  }
  const std::string format = toLower(source.format);
  if (format != "json" && format != "csv" && format != "raw" && format != "debezium-json") {
    // A sink of these formats writes its own schema, which need not be the
    // one the source reads with.
    throw SqlError(sqlstate::kFeatureNotSupported,
                   fmt::format("cannot INSERT into source \"{}\": INSERT writes json, csv, raw and "
                               "debezium-json records, not {}",
                               source.name, format),
                   stmt.tablePos,
                   "declare a raw source on the same topic and INSERT the encoded bytes into its "
                   "value");
  }
  const RecordColumns rc = recordColumns(source);
  const std::vector<int> targets = targetColumns(source, rc, stmt);
  const std::vector<Row> rows = insertedRows(target, stmt, targets);
  if (isRaw(source) && rc.value < 0) throw InternalError("raw source without a value column");
  std::vector<Outgoing> records = encodeRecords(source, topics.front(), rc, targets, rows, stmt.tablePos);
  const std::string bootstrap = kafka::resolveBootstrap(source.options, target.embeddedBootstrap);
  if (!target.dryRun && !records.empty()) {
    kafka::ensureEmbeddedTopics(bootstrap, topics);
    produceAll(source, bootstrap, topics.front(), records, out);
  }
  out.complete(fmt::format("INSERT 0 {}", records.size()));
}

}  // namespace rtsql
