// The abstract syntax tree: a plain description of what the user wrote, built
// from the ANTLR parse tree by parser/ast_builder.cpp. Nothing here is resolved:
// names are strings, types are type names. Every node keeps `pos`, the 0-based
// byte offset of its first character in the text given to parseStatements(), so
// later errors can point at it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rtsql::ast {

// ---------------------------------------------------------------- types

struct TypeName {
  // Declared here and defaulted below the class: with an implicit one, clang
  // instantiates std::pair<std::string, TypeName> (in `fields`) while TypeName
  // is still incomplete, which libstdc++'s pair rejects.
  TypeName();

  std::string name;                                   // upper case: STRING, ARRAY, STRUCT, ...
  std::vector<TypeName> params;                       // ARRAY<T>: one; MAP<K,V>: two
  std::vector<std::pair<std::string, TypeName>> fields;  // STRUCT<a T, b U>
  std::vector<int64_t> modifiers;                     // DECIMAL(10, 2), VARCHAR(20)
  size_t pos = 0;
};
inline TypeName::TypeName() = default;

// ---------------------------------------------------------------- expressions

enum class ExprKind {
  Literal,    // literal
  Column,     // parts: a, c.a, c.a.b (binder decides which part is the table)
  Star,       // * or c.*  (parts holds the qualifier)
  Unary,      // op: "-", "+", "NOT"; args[0]
  Binary,     // op: + - * / % = <> < <= > >= || AND OR; args[0], args[1]
  Call,       // name (lower case), args; star for count(*); distinct
  Case,       // args[0] is the operand when hasOperand; whens; elseExpr
  Cast,       // args[0], castType
  In,         // args[0] IN (args[1..]); negated
  Between,    // args[0] BETWEEN args[1] AND args[2]; negated
  Like,       // args[0] LIKE args[1]; negated
  IsNull,     // args[0] IS [NOT] NULL; negated
  Field,      // args[0].name  (only after a non-name expression, e.g. f(x).a)
  Subscript,  // args[0][args[1]]

  // A query inside an expression: the binder plans it only in WHERE.
  Subquery,    // (SELECT ...) as a value; subquery
  InSubquery,  // args[0] [NOT] IN (SELECT ...); negated; subquery
  Exists,      // EXISTS (SELECT ...); subquery (NOT EXISTS is a Unary NOT over it)
};

enum class LiteralKind { Null, Boolean, Integer, Decimal, String, Interval, Timestamp, Binary, Date, TimestampNtz };

struct Literal {
  LiteralKind kind = LiteralKind::Null;
  std::string text;  // Integer/Decimal digits, String contents (unescaped), Binary bytes,
                     // Interval value text ('10', '10 seconds'), Timestamp or Date text
  std::string unit;  // Interval unit in upper case (SECOND, MINUTE, ...) or empty
  bool boolean = false;
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;
struct Over;
struct Query;

struct Expr {
  ExprKind kind = ExprKind::Literal;
  size_t pos = 0;
  Literal literal;                 // Literal
  std::vector<std::string> parts;  // Column / Star qualifier (identifiers as written, unquoted)
  std::string op;                  // Unary / Binary
  std::string name;                // Call (lower case) / Field
  std::vector<ExprPtr> args;
  bool negated = false;
  bool star = false;      // count(*)
  bool distinct = false;  // count(DISTINCT x)
  bool hasOperand = false;
  std::vector<std::pair<ExprPtr, ExprPtr>> whens;  // Case
  ExprPtr elseExpr;                                // Case, may be null
  TypeName castType;                               // Cast
  ExprPtr filter;                                  // Call: FILTER (WHERE filter), may be null
  size_t filterPos = 0;                            // Call: where FILTER is written
  std::shared_ptr<Over> over;                      // Call: OVER (...), may be null
  std::shared_ptr<Query> subquery;                 // Subquery / InSubquery / Exists
  size_t endPos = 0;  // offset just past the last character (for default column names)
};

// ---------------------------------------------------------------- queries

struct Query;

struct Hint {
  std::string name;               // upper case: BROADCAST
  std::vector<std::string> args;  // table names or aliases
  size_t pos = 0;
};

struct SelectItem {
  ExprPtr expr;       // may be a Star
  std::string alias;  // empty when none
  std::string text;   // the item's source text, for default column names
};

enum class JoinType { Inner, Left, Right, Full, Cross };

struct TableRef;
using TableRefPtr = std::unique_ptr<TableRef>;

struct Option {
  std::string key;    // as written, unquoted (e.g. kafka.bootstrap.servers)
  std::string value;  // string value, unquoted
  size_t keyPos = 0;
  size_t valuePos = 0;
};

struct TableRef {
  enum class Kind { Named, Subquery, Join, Transform } kind = Kind::Named;
  size_t pos = 0;
  std::string name;                 // Named
  std::string alias;                // Named / Subquery
  std::unique_ptr<Query> subquery;  // Subquery
  JoinType joinType = JoinType::Inner;
  TableRefPtr left, right;  // Join
  ExprPtr on;               // Join (null for CROSS)
  // Transform: TRANSFORM(input PARTITION BY keys USING PROCESSOR processor
  // WITH (options)) [alias]; `input` is in `left`.
  std::vector<ExprPtr> partitionBy;
  std::string processor;
  size_t processorPos = 0;
  std::vector<Option> options;
  // Named: FOR OFFSETS BETWEEN 'from' AND 'to' (a bounded read of a source).
  bool offsetRange = false;
  std::string fromOffsets, toOffsets;
  size_t offsetRangePos = 0, fromOffsetsPos = 0, toOffsetsPos = 0;
};

struct Select {
  size_t pos = 0;
  std::vector<Hint> hints;
  bool distinct = false;             // SELECT DISTINCT
  std::vector<ExprPtr> distinctOn;   // DISTINCT ON (...)
  bool withinWatermark = false;      // DISTINCT ON (...) WITHIN WATERMARK
  std::vector<SelectItem> items;
  TableRefPtr from;  // may be null (SELECT 1+1)
  ExprPtr where;
  std::vector<ExprPtr> groupBy;
  ExprPtr having;
  bool emitOnWindowClose = false;
};

struct OrderItem {
  ExprPtr expr;
  bool descending = false;
  // NULLS FIRST (true) or NULLS LAST (false) as written; unset: the order's
  // default (a bounded query's: PostgreSQL's, NULL last ascending).
  std::optional<bool> nullsFirst;
};

// A call's OVER (PARTITION BY ... ORDER BY ... [ROWS ...]) clause.
struct Over {
  size_t pos = 0;
  std::vector<ExprPtr> partitionBy;
  std::vector<OrderItem> orderBy;
  // ROWS BETWEEN n PRECEDING AND CURRENT ROW: n rows before the current one.
  // -1 without a frame or with UNBOUNDED PRECEDING; 0 for CURRENT ROW.
  int64_t precedingRows = -1;
  bool hasFrame = false;
  size_t framePos = 0;
  // The frame as written, which a bounded query computes whatever it is
  // (planner/analytic_window_binder.cpp). `flowFrame` is set for the frames a
  // flow's OVER aggregate takes (ROWS from a bound to CURRENT ROW), which
  // precedingRows describes.
  enum class Bound { UnboundedPreceding, Preceding, CurrentRow, Following, UnboundedFollowing };
  bool rangeFrame = false;  // RANGE rather than ROWS
  Bound lower = Bound::UnboundedPreceding;
  Bound upper = Bound::CurrentRow;
  int64_t lowerOffset = 0;  // n of `n PRECEDING | FOLLOWING`
  int64_t upperOffset = 0;
  bool flowFrame = true;
  // f(x) IGNORE NULLS OVER (...) (Spark's null treatment); RESPECT NULLS is
  // the default.
  bool ignoreNulls = false;
  size_t nullsPos = 0;  // where IGNORE NULLS is written, 0 when it is not
};

struct Query {
  size_t pos = 0;
  std::vector<Select> terms;  // more than one: UNION ALL of the terms
  std::vector<OrderItem> orderBy;
  std::optional<int64_t> limit;
  std::optional<int64_t> offset;  // OFFSET n (bounded queries)
  size_t offsetPos = 0;
};

// ---------------------------------------------------------------- statements

struct ColumnDef {
  std::string name;
  TypeName type;
  bool notNull = false;
  size_t pos = 0;
};

struct Watermark {
  std::string column;
  ExprPtr expr;  // e.g. ts - INTERVAL '10' SECOND
  size_t pos = 0;
};

enum class StatementKind {
  CreateSource,
  CreateTable,
  CreateSink,
  CreateFlow,
  CreateFunction,
  CreateProcessor,
  Insert,
  Drop,
  StopFlow,
  StartFlow,
  Show,
  Describe,
  Explain,
  Set,
  Select,
  User,  // CREATE / ALTER / DROP USER, SHOW USERS
  ShowCreate,
  Alter,
  Savepoint,  // STOP FLOW f WITH SAVEPOINT s, START ... FROM SAVEPOINT, SHOW / DROP SAVEPOINT(S)
  Block,  // BEGIN, COMMIT, ROLLBACK, SAVEPOINT, DECLARE / FETCH / CLOSE, ...
};

enum class ObjectKind { Source, Sink, Table, Flow, Function, Processor };

// Functions: every function a query can call; UserFunctions: those made by
// CREATE FUNCTION only.
enum class ShowKind {
  Sources,
  Sinks,
  Tables,
  Flows,
  Progress,
  Variable,
  Functions,
  UserFunctions,
  Processors,
  MaterializedViews
};

struct Statement {
  StatementKind kind;
  size_t pos = 0;    // offset of the first token in the whole text
  std::string text;  // the statement's own text, without the trailing ';'
  explicit Statement(StatementKind k) : kind(k) {}
  virtual ~Statement() = default;
};
using StatementPtr = std::unique_ptr<Statement>;

struct CreateSource : Statement {
  CreateSource() : Statement(StatementKind::CreateSource) {}
  std::string name;
  size_t namePos = 0;
  bool ifNotExists = false;
  bool hasColumnList = false;
  std::vector<ColumnDef> columns;
  std::optional<Watermark> watermark;
  std::vector<Option> options;
};

struct CreateTable : Statement {
  CreateTable() : Statement(StatementKind::CreateTable) {}
  std::string name;
  size_t namePos = 0;
  bool ifNotExists = false;
  std::vector<ColumnDef> columns;
  std::vector<Option> options;
};

struct CreateSink : Statement {
  CreateSink() : Statement(StatementKind::CreateSink) {}
  std::string name;
  size_t namePos = 0;
  bool ifNotExists = false;
  std::vector<Option> options;
};

struct CreateFlow : Statement {
  CreateFlow() : Statement(StatementKind::CreateFlow) {}
  std::string name;
  size_t namePos = 0;
  bool ifNotExists = false;
  bool triggerRealtime = false;  // TRIGGER REALTIME was written
  std::string sink;
  size_t sinkPos = 0;
  std::optional<std::string> checkpointInterval;  // text of CHECKPOINT INTERVAL '...'
  size_t checkpointIntervalPos = 0;
  std::vector<Option> options;
  std::unique_ptr<Query> query;
  std::string queryText;  // the SELECT's own text
  size_t queryPos = 0;    // where the SELECT starts
  // CREATE OR REPLACE FLOW: the flow's new definition, its state carried over
  // (server/flow_replace.h). RESET STATE starts all of it empty, or with
  // resetOperators, the state of the operators of those ids only.
  bool orReplace = false;
  bool resetState = false;
  std::vector<int> resetOperators;
  size_t resetPos = 0;
  // CREATE MATERIALIZED VIEW: a flow whose sink is the view's own keyed
  // table (sink is then the view's name; server/views/view_reads.h).
  bool materializedView = false;
  // CREATE OR REPLACE FLOW ... FROM SAVEPOINT s: the new plan starts from
  // the savepoint's state and offsets (server/flow_replace.cpp).
  std::string fromSavepoint;
  size_t fromSavepointPos = 0;
};

// CREATE [OR REPLACE] FUNCTION name(a TYPE, ...) RETURNS TYPE [LANGUAGE l] [VECTORIZED]
// AS expr | AS $$code$$. The body is shared so that the catalog's definition
// can keep it after the statement is gone.
struct FunctionParam {
  std::string name;
  TypeName type;
  size_t pos = 0;
};

struct CreateFunction : Statement {
  CreateFunction() : Statement(StatementKind::CreateFunction) {}
  std::string name;
  size_t namePos = 0;
  bool orReplace = false;
  bool ifNotExists = false;
  std::vector<FunctionParam> params;
  TypeName returns;
  // LANGUAGE, lower-cased: "sql" (also when not written) or what was written.
  std::string language = "sql";
  size_t languagePos = 0;
  // VECTORIZED: the function takes lists and is called once per batch of rows
  // (docs/udf.md); its position, 0 when not written.
  bool vectorized = false;
  size_t vectorizedPos = 0;
  std::shared_ptr<const Expr> body;  // a SQL body (AS expr); else null
  std::string bodyText;              // the body as written
  // AS $$code$$: the text between the $$ (then bodyText is that text too), and
  // the offset of its first character.
  bool dollarQuoted = false;
  size_t codePos = 0;
};

// CREATE [OR REPLACE] PROCESSOR [IF NOT EXISTS] name RETURNS (col TYPE, ...)
// LANGUAGE l AS $$code$$.
struct CreateProcessor : Statement {
  CreateProcessor() : Statement(StatementKind::CreateProcessor) {}
  std::string name;
  size_t namePos = 0;
  bool orReplace = false;
  bool ifNotExists = false;
  std::vector<ColumnDef> returns;
  std::string language;  // lower-cased
  size_t languagePos = 0;
  std::string code;  // the text between the $$
  size_t codePos = 0;
};

struct Insert : Statement {
  Insert() : Statement(StatementKind::Insert) {}
  std::string table;
  size_t tablePos = 0;
  std::vector<std::string> columns;  // empty: all, in order
  std::vector<std::vector<ExprPtr>> rows;  // VALUES (empty with `query`)
  std::unique_ptr<Query> query;            // INSERT ... SELECT, null with VALUES
};

struct Drop : Statement {
  Drop() : Statement(StatementKind::Drop) {}
  ObjectKind object = ObjectKind::Source;
  std::string name;
  size_t namePos = 0;
  bool ifExists = false;
  bool materializedView = false;  // DROP MATERIALIZED VIEW: object is Flow
};

struct FlowCommand : Statement {  // STOP FLOW f / START FLOW f [RESET STATE]
  explicit FlowCommand(StatementKind k) : Statement(k) {}
  std::string name;
  size_t namePos = 0;
  bool resetState = false;  // START only: discard state, read from startingOffsets
};

// A flow's savepoints (server/savepoints.cpp).
enum class SavepointAction { Stop, Start, Show, Drop };

struct SavepointStatement : Statement {
  SavepointStatement() : Statement(StatementKind::Savepoint) {}
  SavepointAction action = SavepointAction::Show;
  std::string flow;  // empty: SHOW / DROP without FOR
  size_t flowPos = 0;
  std::string savepoint;  // empty for Show
  size_t savepointPos = 0;
};

struct Show : Statement {
  Show() : Statement(StatementKind::Show) {}
  ShowKind what = ShowKind::Sources;
  std::string name;  // Progress: flow name; Variable: variable name
  size_t namePos = 0;
};

struct Describe : Statement {
  Describe() : Statement(StatementKind::Describe) {}
  bool function = false;  // DESCRIBE FUNCTION f
  std::string name;
  size_t namePos = 0;
};

struct Explain : Statement {
  Explain() : Statement(StatementKind::Explain) {}
  StatementPtr inner;  // CreateFlow or Select; null for EXPLAIN FLOW name
  // EXPLAIN FLOW name: the plan the named flow runs.
  std::string flowName;
  size_t flowNamePos = 0;
  bool materializedView = false;  // EXPLAIN MATERIALIZED VIEW name (in flowName)
};

struct Set : Statement {
  Set() : Statement(StatementKind::Set) {}
  std::string key;
  std::string value;
  size_t keyPos = 0;
  // SET LOCAL: until the end of the transaction block (SET SESSION is SET).
  bool local = false;
};

// The users of the --users-file. For Create and Alter, `password` holds the
// password as written; nothing may print it, so `text` of this statement
// (which other statements keep for SHOW and logs) is left empty.
enum class UserAction { Create, Alter, Drop, Show };

struct UserStatement : Statement {
  UserStatement() : Statement(StatementKind::User) {}
  UserAction action = UserAction::Show;
  std::string name;  // empty for Show
  size_t namePos = 0;
  bool ifNotExists = false;  // CREATE USER IF NOT EXISTS
  bool ifExists = false;     // DROP USER IF EXISTS
  std::string password;      // Create / Alter
  size_t passwordPos = 0;
};

// SHOW CREATE SOURCE | SINK | TABLE | FLOW | FUNCTION | PROCESSOR name.
struct ShowCreate : Statement {
  ShowCreate() : Statement(StatementKind::ShowCreate) {}
  ObjectKind object = ObjectKind::Source;
  std::string name;
  size_t namePos = 0;
  bool materializedView = false;  // SHOW CREATE MATERIALIZED VIEW: object is Flow
};

// ALTER SOURCE | SINK | FLOW name SET (options) | RESET (keys). The grammar
// takes any object kind, so that the others get a clear refusal.
struct Alter : Statement {
  Alter() : Statement(StatementKind::Alter) {}
  ObjectKind object = ObjectKind::Source;
  size_t objectPos = 0;
  std::string name;
  size_t namePos = 0;
  bool reset = false;
  std::vector<Option> options;  // SET: keys and values; RESET: keys (values empty)
  bool materializedView = false;  // ALTER MATERIALIZED VIEW: object is Flow
};

// A transaction-block or cursor statement as its words: the server reads them
// (server/transaction.h). A word is a keyword (upper-cased) or a name (as
// written, unquoted); a number keeps its sign.
struct BlockWord {
  std::string text;
  size_t pos = 0;
  bool quoted = false;  // a quoted name: never a keyword
  bool number = false;
};

struct BlockStatement : Statement {
  BlockStatement() : Statement(StatementKind::Block) {}
  std::vector<BlockWord> words;  // the first is the statement's keyword
  // DECLARE ... FOR query: the cursor's query.
  std::unique_ptr<Query> query;
  std::string queryText;
  size_t queryPos = 0;
};

struct SelectStatement : Statement {
  SelectStatement() : Statement(StatementKind::Select) {}
  std::unique_ptr<Query> query;
};

}  // namespace rtsql::ast
