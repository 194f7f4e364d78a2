// The catalog as PostgreSQL shows it (see system_catalog.h). Each relation is
// declared once below with PostgreSQL 15's columns (those tools read, in
// PostgreSQL's order) and computed by rowsOf(). Relations rtsql has nothing
// for (pg_inherits, pg_attrdef, pg_policy, ...) are there empty, so the
// queries that join them find no rows rather than no relation.
#include "server/system_catalog.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/ansi_mode.h"
#include "common/error.h"
#include "common/pg_types.h"
#include "planner/user_function.h"

namespace rtsql {

namespace {

// A column type code of the declarations below: o oid, n name, t text,
// c "char", b bool, i int4, s int2, f float, T timestamp, a text[], I int2[]
// (int2vector), O oid[] (oidvector).
DataTypePtr typeOfCode(char code) {
  switch (code) {
    case 'o': return DataType::of(TypeId::BigInt);
    case 'b': return DataType::of(TypeId::Boolean);
    case 'i':
    case 's': return DataType::of(TypeId::Int);
    case 'f': return DataType::of(TypeId::Double);
    case 'T': return DataType::of(TypeId::Timestamp);
    case 'a': return DataType::arrayOf(DataType::of(TypeId::String));
    case 'I': return DataType::arrayOf(DataType::of(TypeId::Int));
    case 'O': return DataType::arrayOf(DataType::of(TypeId::BigInt));
    default: return DataType::of(TypeId::String);
  }
}

struct RelationSpec {
  const char* schema;
  const char* name;
  int64_t oid;  // PostgreSQL's for its own catalogs; 0: hashed from the name
  char kind;    // r (a pg_catalog table) or v (a view)
  // "name:code name:code ...", codes as typeOfCode reads them.
  const char* columns;
};

// information_schema's columns are all sql_identifier, character_data or
// yes_or_no (text here) unless given a code.
const RelationSpec kRelations[] = {
    {"pg_catalog", "pg_namespace", 2615, 'r', "oid:o nspname:n nspowner:o nspacl:a"},
    {"pg_catalog", "pg_class", 1259, 'r',
     "oid:o relname:n relnamespace:o reltype:o reloftype:o relowner:o relam:o relfilenode:o "
     "reltablespace:o relpages:i reltuples:f relallvisible:i reltoastrelid:o relhasindex:b "
     "relisshared:b relpersistence:c relkind:c relnatts:s relchecks:s relhasrules:b "
     "relhastriggers:b relhassubclass:b relrowsecurity:b relforcerowsecurity:b relispopulated:b "
     "relreplident:c relispartition:b relrewrite:o relfrozenxid:o relminmxid:o relacl:a "
     "reloptions:a relpartbound:t"},
    {"pg_catalog", "pg_attribute", 1249, 'r',
     "attrelid:o attname:n atttypid:o attstattarget:i attlen:s attnum:s attndims:i "
     "attcacheoff:i atttypmod:i attbyval:b attalign:c attstorage:c attcompression:c "
     "attnotnull:b atthasdef:b atthasmissing:b attidentity:c attgenerated:c attisdropped:b "
     "attislocal:b attinhcount:i attcollation:o attacl:a attoptions:a attfdwoptions:a"},
    {"pg_catalog", "pg_type", 1247, 'r',
     "oid:o typname:n typnamespace:o typowner:o typlen:s typbyval:b typtype:c typcategory:c "
     "typispreferred:b typisdefined:b typdelim:c typrelid:o typsubscript:t typelem:o typarray:o "
     "typinput:t typoutput:t typreceive:t typsend:t typmodin:t typmodout:t typanalyze:t "
     "typalign:c typstorage:c typnotnull:b typbasetype:o typtypmod:i typndims:i typcollation:o "
     "typdefaultbin:t typdefault:t typacl:a"},
    {"pg_catalog", "pg_proc", 1255, 'r',
     "oid:o proname:n pronamespace:o proowner:o prolang:o procost:f prorows:f provariadic:o "
     "prosupport:t prokind:c prosecdef:b proleakproof:b proisstrict:b proretset:b provolatile:c "
     "proparallel:c pronargs:s pronargdefaults:s prorettype:o proargtypes:O proallargtypes:O "
     "proargmodes:a proargnames:a proargdefaults:t protrftypes:O prosrc:t probin:t prosqlbody:t "
     "proconfig:a proacl:a"},
    {"pg_catalog", "pg_database", 1262, 'r',
     "oid:o datname:n datdba:o encoding:i datlocprovider:c datistemplate:b datallowconn:b "
     "datconnlimit:i datfrozenxid:o datminmxid:o dattablespace:o datcollate:t datctype:t "
     "daticulocale:t datcollversion:t datacl:a"},
    {"pg_catalog", "pg_roles", 0, 'v',
     "rolname:n rolsuper:b rolinherit:b rolcreaterole:b rolcreatedb:b rolcanlogin:b "
     "rolreplication:b rolconnlimit:i rolpassword:t rolvaliduntil:T rolbypassrls:b rolconfig:a "
     "oid:o"},
    {"pg_catalog", "pg_user", 0, 'v',
     "usename:n usesysid:o usecreatedb:b usesuper:b userepl:b usebypassrls:b passwd:t "
     "valuntil:T useconfig:a"},
    {"pg_catalog", "pg_settings", 0, 'v',
     "name:t setting:t unit:t category:t short_desc:t extra_desc:t context:t vartype:t source:t "
     "min_val:t max_val:t enumvals:a boot_val:t reset_val:t sourcefile:t sourceline:i "
     "pending_restart:b"},
    {"pg_catalog", "pg_description", 2609, 'r', "objoid:o classoid:o objsubid:i description:t"},
    {"pg_catalog", "pg_index", 2610, 'r',
     "indexrelid:o indrelid:o indnatts:s indnkeyatts:s indisunique:b indnullsnotdistinct:b "
     "indisprimary:b indisexclusion:b indimmediate:b indisclustered:b indisvalid:b "
     "indcheckxmin:b indisready:b indislive:b indisreplident:b indkey:I indcollation:O "
     "indclass:O indoption:I indexprs:t indpred:t"},
    {"pg_catalog", "pg_am", 2601, 'r', "oid:o amname:n amhandler:t amtype:c"},
    {"pg_catalog", "pg_inherits", 2611, 'r', "inhrelid:o inhparent:o inhseqno:i inhdetachpending:b"},
    {"pg_catalog", "pg_attrdef", 2604, 'r', "oid:o adrelid:o adnum:s adbin:t"},
    {"pg_catalog", "pg_collation", 3456, 'r',
     "oid:o collname:n collnamespace:o collowner:o collprovider:c collisdeterministic:b "
     "collencoding:i collcollate:t collctype:t colliculocale:t collversion:t"},
    {"pg_catalog", "pg_constraint", 2606, 'r',
     "oid:o conname:n connamespace:o contype:c condeferrable:b condeferred:b convalidated:b "
     "conrelid:o contypid:o conindid:o conparentid:o confrelid:o confupdtype:c confdeltype:c "
     "confmatchtype:c conislocal:b coninhcount:i connoinherit:b conkey:I confkey:I "
     "conpfeqop:O conppeqop:O conffeqop:O confdelsetcols:I conexclop:O conbin:t"},
    {"pg_catalog", "pg_auth_members", 1261, 'r', "roleid:o member:o grantor:o admin_option:b"},
    {"pg_catalog", "pg_policy", 3256, 'r',
     "oid:o polname:n polrelid:o polcmd:c polpermissive:b polroles:O polqual:t polwithcheck:t"},
    {"pg_catalog", "pg_statistic_ext", 3381, 'r',
     "oid:o stxrelid:o stxname:n stxnamespace:o stxowner:o stxstattarget:i stxkeys:I "
     "stxkind:a stxexprs:t"},
    {"pg_catalog", "pg_publication", 6104, 'r',
     "oid:o pubname:n pubowner:o puballtables:b pubinsert:b pubupdate:b pubdelete:b "
     "pubtruncate:b pubviaroot:b"},
    {"pg_catalog", "pg_publication_rel", 6106, 'r', "oid:o prpubid:o prrelid:o prqual:t prattrs:I"},
    {"pg_catalog", "pg_publication_namespace", 6237, 'r', "oid:o pnpubid:o pnnspid:o"},
    {"pg_catalog", "pg_sequence", 2224, 'r',
     "seqrelid:o seqtypid:o seqstart:o seqincrement:o seqmax:o seqmin:o seqcache:o seqcycle:b"},
    {"pg_catalog", "pg_opclass", 2616, 'r',
     "oid:o opcmethod:o opcname:n opcnamespace:o opcowner:o opcfamily:o opcintype:o "
     "opcdefault:b opckeytype:o"},
    {"pg_catalog", "pg_tablespace", 1213, 'r', "oid:o spcname:n spcowner:o spcacl:a spcoptions:a"},
    {"pg_catalog", "pg_foreign_table", 3118, 'r', "ftrelid:o ftserver:o ftoptions:a"},
    {"pg_catalog", "pg_foreign_server", 1417, 'r',
     "oid:o srvname:n srvowner:o srvfdw:o srvtype:t srvversion:t srvacl:a srvoptions:a"},
    {"pg_catalog", "pg_tables", 0, 'v',
     "schemaname:n tablename:n tableowner:n tablespace:n hasindexes:b hasrules:b hastriggers:b "
     "rowsecurity:b"},
    {"pg_catalog", "pg_views", 0, 'v', "schemaname:n viewname:n viewowner:n definition:t"},
    {"pg_catalog", "pg_matviews", 0, 'v',
     "schemaname:n matviewname:n matviewowner:n tablespace:n hasindexes:b ispopulated:b "
     "definition:t"},
    {"information_schema", "schemata", 0, 'v',
     "catalog_name schema_name schema_owner default_character_set_catalog "
     "default_character_set_schema default_character_set_name sql_path"},
    {"information_schema", "tables", 0, 'v',
     "table_catalog table_schema table_name table_type self_referencing_column_name "
     "reference_generation user_defined_type_catalog user_defined_type_schema "
     "user_defined_type_name is_insertable_into is_typed commit_action"},
    {"information_schema", "columns", 0, 'v',
     "table_catalog table_schema table_name column_name ordinal_position:i column_default "
     "is_nullable data_type character_maximum_length:i character_octet_length:i "
     "numeric_precision:i numeric_precision_radix:i numeric_scale:i datetime_precision:i "
     "interval_type interval_precision:i character_set_catalog character_set_schema "
     "character_set_name collation_catalog collation_schema collation_name domain_catalog "
     "domain_schema domain_name udt_catalog udt_schema udt_name scope_catalog scope_schema "
     "scope_name maximum_cardinality:i dtd_identifier is_self_referencing is_identity "
     "identity_generation identity_start identity_increment identity_maximum identity_minimum "
     "identity_cycle is_generated generation_expression is_updatable"},
    {"information_schema", "views", 0, 'v',
     "table_catalog table_schema table_name view_definition check_option is_updatable "
     "is_insertable_into is_trigger_updatable is_trigger_deletable is_trigger_insertable_into"},
    {"information_schema", "routines", 0, 'v',
     "specific_catalog specific_schema specific_name routine_catalog routine_schema "
     "routine_name routine_type data_type type_udt_catalog type_udt_schema type_udt_name "
     "routine_body routine_definition external_name external_language parameter_style "
     "is_deterministic sql_data_access is_null_call"},
};

Schema columnsOf(const RelationSpec& spec) {
  Schema schema;
  std::string_view rest = spec.columns;
  while (!rest.empty()) {
    size_t end = rest.find(' ');
    std::string_view word = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
    size_t colon = word.find(':');
    char code = colon == std::string_view::npos ? 't' : word[colon + 1];
    schema.columns.push_back(Column{std::string(word.substr(0, colon)), typeOfCode(code), false});
  }
  return schema;
}

const RelationSpec* findSpec(std::string_view schema, std::string_view name) {
  for (const auto& spec : kRelations) {
    if (!iequals(spec.name, name)) continue;
    if (schema.empty() ? iequals(spec.schema, "pg_catalog") : iequals(spec.schema, schema))
      return &spec;
  }
  return nullptr;
}

// An OID for rtsql's object `key` that stays the same for the same object:
// FNV-1a of the key, above PostgreSQL's fixed OIDs (16384, its
// FirstNormalObjectId) and within int4, moved on past any OID `used` holds.
int64_t stableOid(const std::string& key, std::set<int64_t>& used) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  constexpr int64_t kFirst = 16384;
  constexpr int64_t kSpan = 2147483647LL - kFirst;
  int64_t oid = kFirst + static_cast<int64_t>(h % static_cast<uint64_t>(kSpan));
  while (!used.insert(oid).second) oid = oid + 1 >= kFirst + kSpan ? kFirst : oid + 1;
  return oid;
}

Value oidV(int64_t v) { return Value::bigint(v); }
Value textV(std::string s) { return Value::string(std::move(s)); }
Value charV(char c) { return c ? Value::string(std::string(1, c)) : Value::string(""); }
Value boolV(bool b) { return Value::boolean(b); }
Value intV(int64_t v) { return Value::integer(static_cast<int32_t>(v)); }
Value nullV() { return Value(); }
Value yesNo(bool b) { return Value::string(b ? "YES" : "NO"); }

std::string sqlTypeName(const DataType& t) {
  const uint32_t oid = pgTypeOidOf(t);
  return pgFormatType(oid, pgTypmodOf(t));
}

// The connector and format of a source or sink, as its description says.
std::string connectorText(const std::string& connector, const std::string& format) {
  return format.empty() ? connector : fmt::format("{}, {}", connector, format);
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& pgReadOnlySettings() {
  static const std::vector<std::pair<std::string, std::string>> kSettings = {
      {"server_version", "15.0 (rtsql " RTSQL_VERSION ")"},
      {"server_version_num", "150000"},
      {"server_encoding", "UTF8"},
      // Off: a '...' literal reads backslash escapes, as Spark's (SHOW answers
      // for the session, server/session_text.h).
      {"standard_conforming_strings", "off"},
      {"integer_datetimes", "on"},
      {"intervalstyle", "postgres"},
      {"is_superuser", "off"},
      {"lc_collate", "C"},
      {"lc_ctype", "C"},
      {"max_identifier_length", "63"},
      {"max_index_keys", "32"},
      {"block_size", "8192"},
      {"transaction_isolation", "read committed"},
      {"default_transaction_isolation", "read committed"},
      {"transaction_read_only", "off"},
      {"default_transaction_read_only", "off"},
      {"max_connections", "1000"},
      {"bytea_output", "hex"},
      {"default_table_access_method", "heap"},
  };
  return kSettings;
}

SystemCatalog::SystemCatalog(const Catalog& catalog, SessionView session)
    : session_(std::move(session)) {
  if (session_.roles.empty()) session_.roles.push_back(session_.user);
  std::set<int64_t> used;
  for (const auto& spec : kRelations)
    if (spec.oid) used.insert(spec.oid);
  // Roles: the first is PostgreSQL's bootstrap superuser's OID.
  for (size_t i = 0; i < session_.roles.size(); ++i) {
    const std::string key = toLower(session_.roles[i]);
    roleOids_.emplace(key, i == 0 ? kBootstrapRoleOid : stableOid("role:" + key, used));
  }
  // Relations in name order, so that OIDs moved past a collision move the same way each time.
  std::map<std::string, RelationEntry> byName;
  for (const auto& s : catalog.sources()) {
    RelationEntry r;
    r.name = s->name;
    r.columns = s->schema;
    r.description = fmt::format("rtsql source ({})", connectorText(s->connector, s->format));
    byName.emplace(toLower(s->name), std::move(r));
  }
  for (const auto& t : catalog.tables()) {
    RelationEntry r;
    r.name = t->name;
    r.columns = t->schema;
    r.description = "rtsql static table";
    byName.emplace(toLower(t->name), std::move(r));
  }
  std::map<std::string, std::vector<std::string>> writers;  // sink -> flows
  for (const auto& f : catalog.flows()) writers[toLower(f->sink)].push_back(f->name);
  for (const auto& k : catalog.sinks()) {
    RelationEntry r;
    r.name = k->name;
    r.kind = 'f';
    // psql's \d of a foreign table needs its server: the sink's connector.
    auto server = serverOids_.find(k->connector);
    if (server == serverOids_.end()) {
      server = serverOids_.emplace(k->connector, stableOid("server:" + k->connector, used)).first;
    }
    r.serverOid = server->second;
    if (!k->format.empty()) r.foreignOptions.push_back("format=" + k->format);
    if (k->options.has("topic")) {
      r.foreignOptions.push_back("topic=" + k->options.getString("topic"));
    }
    r.description = fmt::format("rtsql sink ({})", connectorText(k->connector, k->format));
    auto w = writers.find(toLower(k->name));
    if (w != writers.end()) {
      std::string flows;
      for (const auto& f : w->second) flows += (flows.empty() ? "" : ", ") + f;
      r.description += ", written by flow " + flows;
    }
    byName.emplace(toLower(k->name), std::move(r));
  }
  // Materialized views are relkind 'm'; their columns and key come from
  // their plans when a query reads the catalog (resolveViews).
  for (const auto& f : catalog.flows()) {
    if (!f->materializedView) continue;
    RelationEntry r;
    r.name = f->name;
    r.kind = 'm';
    r.description = "rtsql materialized view";
    r.definition = f->queryText;
    byName.emplace(toLower(f->name), std::move(r));
  }
  for (auto& [key, r] : byName) {
    r.oid = stableOid("relation:" + key, used);
    relations_.push_back(std::move(r));
  }
  // A view's key is its primary key: an index <view>_pkey and a constraint.
  const size_t objects = relations_.size();
  for (size_t i = 0; i < objects; ++i) {
    if (relations_[i].kind != 'm') continue;
    const std::string key = toLower(relations_[i].name);
    relations_[i].indexOid = stableOid("index:" + key, used);
    relations_[i].constraintOid = stableOid("constraint:" + key, used);
    RelationEntry index;
    index.oid = relations_[i].indexOid;
    index.name = relations_[i].name + "_pkey";
    index.kind = 'i';
    index.indexedOid = relations_[i].oid;
    relations_.push_back(std::move(index));
  }
  // The system relations themselves, so that \d pg_class and regclass find them.
  for (const auto& spec : kRelations) {
    RelationEntry r;
    r.name = spec.name;
    r.namespaceOid = iequals(spec.schema, "pg_catalog") ? kPgCatalogOid : kInformationSchemaOid;
    r.kind = spec.kind;
    r.columns = columnsOf(spec);
    r.oid = spec.oid ? spec.oid
                     : stableOid(fmt::format("system:{}.{}", spec.schema, spec.name), used);
    relations_.push_back(std::move(r));
  }
  for (const auto& f : catalog.functions()) {
    RoutineEntry r;
    r.oid = stableOid("function:" + toLower(f->name), used);
    r.name = f->name;
    for (const auto& p : f->params) r.params.emplace_back(p.name, p.type);
    r.returns = f->returns;
    r.language = f->language;
    r.body = f->bodyText;
    r.owner = f->owner;
    routines_.push_back(std::move(r));
  }
}

bool SystemCatalog::isSystemSchema(std::string_view schema) {
  return iequals(schema, "pg_catalog") || iequals(schema, "information_schema");
}

std::vector<std::string> SystemCatalog::relationNames() {
  std::vector<std::string> out;
  for (const auto& spec : kRelations) out.push_back(fmt::format("{}.{}", spec.schema, spec.name));
  std::sort(out.begin(), out.end());
  return out;
}

void SystemCatalog::resolveViews() const {
  std::call_once(viewsResolved_, [this] {
    if (!session_.viewLayout) return;
    std::map<int64_t, Schema> indexColumns;  // by index OID
    for (RelationEntry& r : relations_) {
      if (r.kind != 'm') continue;
      std::optional<std::pair<Schema, std::vector<int>>> layout = session_.viewLayout(r.name);
      if (!layout) continue;
      r.columns = std::move(layout->first);
      Schema& keyColumns = indexColumns[r.indexOid];
      for (int k : layout->second) {
        if (k < 0 || static_cast<size_t>(k) >= r.columns.size()) continue;
        const Column& column = r.columns.columns[static_cast<size_t>(k)];
        if (column.hidden) continue;
        // attnum: the column's place among the visible ones, from 1.
        int num = 0;
        for (int c = 0; c <= k; ++c) num += r.columns.columns[static_cast<size_t>(c)].hidden ? 0 : 1;
        r.key.push_back(num);
        keyColumns.columns.push_back(column);
      }
    }
    for (RelationEntry& r : relations_) {
      auto it = r.kind == 'i' ? indexColumns.find(r.oid) : indexColumns.end();
      if (it != indexColumns.end()) r.columns = it->second;
    }
  });
}

std::optional<SystemRelation> SystemCatalog::relation(std::string_view schema,
                                                      std::string_view name) const {
  const RelationSpec* spec = findSpec(schema, name);
  if (!spec) return std::nullopt;
  resolveViews();
  SystemRelation out;
  out.schema = spec->schema;
  out.name = spec->name;
  out.columns = columnsOf(*spec);
  auto rows = std::make_shared<std::vector<Row>>(rowsOf(fmt::format("{}.{}", spec->schema, spec->name)));
  for (const Row& r : *rows) {
    if (r.size() != out.columns.size())
      throw InternalError(fmt::format("{}.{}: a row of {} values for {} columns", spec->schema,
                                      spec->name, r.size(), out.columns.size()));
  }
  out.rows = std::move(rows);
  return out;
}

std::optional<PgSession::Relation> SystemCatalog::systemRelation(std::string_view name) const {
  const size_t dot = name.find('.');
  std::optional<SystemRelation> rel =
      dot == std::string_view::npos ? relation("", name)
      : isSystemSchema(name.substr(0, dot)) ? relation(name.substr(0, dot), name.substr(dot + 1))
                                            : std::nullopt;
  if (!rel) return std::nullopt;
  return Relation{std::move(rel->columns), std::move(rel->rows)};
}

int64_t SystemCatalog::roleOid(const std::string& name) const {
  auto it = roleOids_.find(toLower(name));
  return it != roleOids_.end() ? it->second : kBootstrapRoleOid;
}

std::optional<int64_t> SystemCatalog::relationOid(std::string_view name) const {
  for (const auto& r : relations_)
    if (r.namespaceOid == kPublicOid && iequals(r.name, name)) return r.oid;
  return std::nullopt;
}

std::vector<PgSession::Named> SystemCatalog::roles() const {
  std::vector<Named> out;
  for (const auto& name : session_.roles) out.push_back({roleOid(name), name});
  return out;
}

std::vector<PgSession::Named> SystemCatalog::relations() const {
  std::vector<Named> out;
  for (const auto& r : relations_) out.push_back({r.oid, r.name});
  return out;
}

std::vector<int64_t> SystemCatalog::relationsOffSearchPath() const {
  std::vector<int64_t> out;
  for (const auto& r : relations_)
    if (r.namespaceOid == kInformationSchemaOid) out.push_back(r.oid);
  return out;
}

std::string SystemCatalog::timeZone() const {
  for (const auto& [key, value] : session_.settings)
    if (iequals(key, "timezone")) return value;
  return "UTC";
}

bool SystemCatalog::ansiMode() const {
  for (const auto& [key, value] : session_.settings)
    if (iequals(key, kAnsiModeSetting)) return parseAnsiMode(value, key);
  return true;
}

std::vector<std::pair<std::string, std::string>> SystemCatalog::settings() const {
  std::vector<std::pair<std::string, std::string>> out = session_.settings;
  out.insert(out.end(), pgReadOnlySettings().begin(), pgReadOnlySettings().end());
  return out;
}

std::vector<PgSession::View> SystemCatalog::views() const {
  resolveViews();
  std::vector<View> out;
  for (const auto& r : relations_) {
    if (r.kind != 'm') continue;
    View v{r.oid, r.name, r.definition, r.indexOid, r.constraintOid, {}};
    for (int num : r.key) {
      int visible = 0;
      for (const Column& c : r.columns.columns) {
        if (!c.hidden && ++visible == num) v.keyColumns.push_back(c.name);
      }
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<PgSession::Named> SystemCatalog::namespaces() const {
  return {{kPgCatalogOid, "pg_catalog"}, {kPublicOid, "public"},
          {kInformationSchemaOid, "information_schema"}};
}

std::vector<PgSession::Routine> SystemCatalog::routines() const {
  std::vector<Routine> out;
  for (const auto& r : routines_) {
    std::string args;
    for (const auto& [name, type] : r.params)
      args += fmt::format("{}{} {}", args.empty() ? "" : ", ", name, sqlTypeName(*type));
    out.push_back({r.oid, sqlTypeName(*r.returns), args});
  }
  return out;
}

std::vector<PgSession::Description> SystemCatalog::descriptions() const {
  std::vector<Description> out;
  for (const auto& r : relations_)
    if (!r.description.empty()) out.push_back({r.oid, 1259, 0, r.description});
  for (const auto& r : routines_)
    out.push_back({r.oid, 1255, 0, fmt::format("rtsql {} function", r.language)});
  return out;
}

std::vector<Row> SystemCatalog::rowsOf(const std::string& key) const {
  std::vector<Row> rows;
  const int64_t owner = kBootstrapRoleOid;
  const std::string& db = session_.database;
  if (key == "pg_catalog.pg_namespace") {
    for (const auto& n : namespaces()) rows.push_back({oidV(n.oid), textV(n.name), oidV(owner), nullV()});
  } else if (key == "pg_catalog.pg_class") {
    for (const auto& r : relations_) {
      int visible = 0;
      for (const auto& c : r.columns.columns) visible += c.hidden ? 0 : 1;
      rows.push_back({oidV(r.oid), textV(r.name), oidV(r.namespaceOid), oidV(0), oidV(0),
                      oidV(owner), oidV(r.kind == 'r' || r.kind == 'm' ? 2 : r.kind == 'i' ? 403 : 0),
                      oidV(0), oidV(0), intV(0), Value::float64(-1), intV(0), oidV(0),
                      // relhasindex: a view with a key has its index
                      // (psql's \d lists a relation's indexes when it is set).
                      boolV(r.kind == 'm' && !r.key.empty()), boolV(false),
                      charV('p'), charV(r.kind), intV(visible), intV(0), boolV(false),
                      boolV(false), boolV(false), boolV(false), boolV(false), boolV(true),
                      charV('d'), boolV(false), oidV(0), oidV(0), oidV(0), nullV(), nullV(),
                      nullV()});
    }
  } else if (key == "pg_catalog.pg_attribute") {
    for (const auto& r : relations_) {
      int visible = 0;
      int hidden = 0;
      for (const auto& c : r.columns.columns) {
        const int num = c.hidden ? -(++hidden) : ++visible;
        const PgType* t = pgTypeByOid(pgTypeOidOf(*c.type));
        rows.push_back({oidV(r.oid), textV(c.name), oidV(t->oid), intV(-1), intV(t->length),
                        intV(num), intV(c.type->id == TypeId::Array ? 1 : 0), intV(-1),
                        intV(pgTypmodOf(*c.type)), boolV(t->length > 0 && t->length <= 8),
                        charV(t->length == 8 ? 'd' : 'i'), charV(t->length > 0 ? 'p' : 'x'),
                        charV(0), boolV(false), boolV(false), boolV(false), charV(0), charV(0),
                        boolV(false), boolV(true), intV(0), oidV(t->collation), nullV(), nullV(),
                        nullV()});
      }
    }
  } else if (key == "pg_catalog.pg_type") {
    for (const PgType& t : pgTypes()) {
      const bool isArray = t.element != 0 && t.category == 'A';
      rows.push_back({oidV(t.oid), textV(t.name), oidV(kPgCatalogOid), oidV(owner),
                      intV(t.length), boolV(t.length > 0 && t.length <= 8),
                      charV(t.category == 'P' ? 'p' : 'b'), charV(t.category),
                      boolV(t.oid == 25 || t.oid == 701 || t.oid == 16), boolV(true), charV(','),
                      oidV(0), textV(isArray ? "array_subscript_handler" : "-"),
                      oidV(t.element), oidV(t.array), textV(std::string(t.name) + "in"),
                      textV(std::string(t.name) + "out"), textV(std::string(t.name) + "recv"),
                      textV(std::string(t.name) + "send"), textV("-"), textV("-"), textV("-"),
                      charV(t.length == 8 ? 'd' : 'i'), charV(t.length > 0 ? 'p' : 'x'),
                      boolV(false), oidV(0), intV(-1), intV(0), oidV(t.collation), nullV(),
                      nullV(), nullV()});
    }
  } else if (key == "pg_catalog.pg_proc") {
    for (const auto& r : routines_) {
      ValueList argTypes;
      ValueList argNames;
      for (const auto& [name, type] : r.params) {
        argTypes.push_back(oidV(pgTypeOidOf(*type)));
        argNames.push_back(textV(name));
      }
      const bool sql = r.language == "sql";
      rows.push_back({oidV(r.oid), textV(r.name), oidV(kPublicOid), oidV(roleOid(r.owner)),
                      oidV(sql ? 14 : 13), Value::float64(100), Value::float64(0), oidV(0),
                      textV("-"), charV('f'), boolV(false), boolV(false), boolV(false),
                      boolV(false), charV(sql ? 'i' : 'v'), charV('u'),
                      intV(static_cast<int64_t>(r.params.size())), intV(0),
                      oidV(pgTypeOidOf(*r.returns)), Value::array(std::move(argTypes)), nullV(),
                      nullV(), Value::array(std::move(argNames)), nullV(), nullV(), textV(r.body),
                      nullV(), nullV(), nullV(), nullV()});
    }
  } else if (key == "pg_catalog.pg_database") {
    rows.push_back({oidV(kDatabaseOid), textV(db), oidV(owner), intV(6), charV('c'),
                    boolV(false), boolV(true), intV(-1), oidV(0), oidV(0), oidV(1663), textV("C"),
                    textV("C"), nullV(), nullV(), nullV()});
  } else if (key == "pg_catalog.pg_roles" || key == "pg_catalog.pg_user") {
    for (const auto& name : session_.roles) {
      const bool super =
          roleOid(name) == kBootstrapRoleOid ||
          std::any_of(session_.superusers.begin(), session_.superusers.end(),
                      [&](const std::string& s) { return iequals(s, name); });
      if (key == "pg_catalog.pg_roles") {
        rows.push_back({textV(name), boolV(super), boolV(true), boolV(super), boolV(super),
                        boolV(true), boolV(false), intV(-1), textV("********"), nullV(),
                        boolV(false), nullV(), oidV(roleOid(name))});
      } else {
        rows.push_back({textV(name), oidV(roleOid(name)), boolV(super), boolV(super),
                        boolV(false), boolV(false), textV("********"), nullV(), nullV()});
      }
    }
  } else if (key == "pg_catalog.pg_settings") {
    std::set<std::string> seen;
    auto add = [&](const std::string& name, const std::string& value, const char* context) {
      if (!seen.insert(toLower(name)).second) return;
      rows.push_back({textV(name), textV(value), nullV(), textV(""), textV(""), nullV(),
                      textV(context), textV("string"), textV("default"), nullV(), nullV(),
                      nullV(), textV(value), textV(value), nullV(), nullV(), boolV(false)});
    };
    for (const auto& [name, value] : session_.settings) add(name, value, "user");
    for (const auto& [name, value] : pgReadOnlySettings()) add(name, value, "internal");
  } else if (key == "pg_catalog.pg_description") {
    for (const auto& d : descriptions())
      rows.push_back({oidV(d.objoid), oidV(d.classoid), intV(d.objsubid), textV(d.text)});
  } else if (key == "pg_catalog.pg_am") {
    rows.push_back({oidV(2), textV("heap"), textV("heap_tableam_handler"), charV('t')});
    rows.push_back({oidV(403), textV("btree"), textV("bthandler"), charV('i')});
  } else if (key == "pg_catalog.pg_collation") {
    const std::pair<int64_t, const char*> kCollations[] = {
        {100, "default"}, {950, "C"}, {951, "POSIX"}};
    for (const auto& [oid, name] : kCollations) {
      rows.push_back({oidV(oid), textV(name), oidV(kPgCatalogOid), oidV(owner),
                      charV(oid == 100 ? 'd' : 'c'), boolV(true), intV(-1),
                      oid == 100 ? nullV() : textV(name), oid == 100 ? nullV() : textV(name),
                      nullV(), nullV()});
    }
  } else if (key == "pg_catalog.pg_foreign_server") {
    for (const auto& [connector, oid] : serverOids_) {
      rows.push_back({oidV(oid), textV(connector), oidV(owner), oidV(0), nullV(), nullV(), nullV(),
                      nullV()});
    }
  } else if (key == "pg_catalog.pg_foreign_table") {
    for (const auto& r : relations_) {
      if (r.kind != 'f') continue;
      ValueList options;
      for (const auto& o : r.foreignOptions) options.push_back(textV(o));
      rows.push_back({oidV(r.oid), oidV(r.serverOid), Value::array(std::move(options))});
    }
  } else if (key == "pg_catalog.pg_tablespace") {
    rows.push_back({oidV(1663), textV("pg_default"), oidV(owner), nullV(), nullV()});
  } else if (key == "pg_catalog.pg_tables") {
    for (const auto& r : relations_) {
      if (r.kind != 'r') continue;
      rows.push_back({textV(r.namespaceOid == kPublicOid ? "public" : "pg_catalog"), textV(r.name),
                      textV(session_.roles.front()), nullV(), boolV(false), boolV(false),
                      boolV(false), boolV(false)});
    }
  } else if (key == "information_schema.schemata") {
    for (const auto& n : namespaces()) {
      rows.push_back({textV(db), textV(n.name), textV(session_.roles.front()), nullV(), nullV(),
                      nullV(), nullV()});
    }
  } else if (key == "information_schema.tables") {
    for (const auto& r : relations_) {
      if (r.kind == 'i') continue;
      const bool system = r.namespaceOid != kPublicOid;
      std::string schema = r.namespaceOid == kPublicOid       ? "public"
                           : r.namespaceOid == kPgCatalogOid ? "pg_catalog"
                                                              : "information_schema";
      std::string type = r.kind == 'v' || r.kind == 'm' ? "VIEW"
                         : r.kind == 'f'                ? "FOREIGN"
                                                        : "BASE TABLE";
      // A source or sink is written by producers and flows, a static table by INSERT.
      const bool insertable = !system && r.kind == 'r';
      rows.push_back({textV(db), textV(schema), textV(r.name), textV(type), nullV(), nullV(),
                      nullV(), nullV(), nullV(), yesNo(insertable), textV("NO"), nullV()});
    }
  } else if (key == "information_schema.columns") {
    for (const auto& r : relations_) {
      if (r.kind == 'i') continue;
      std::string schema = r.namespaceOid == kPublicOid       ? "public"
                           : r.namespaceOid == kPgCatalogOid ? "pg_catalog"
                                                              : "information_schema";
      int position = 0;
      for (const auto& c : r.columns.columns) {
        if (c.hidden) continue;
        ++position;
        const DataType& t = *c.type;
        const PgType* pg = pgTypeByOid(pgTypeOidOf(t));
        const bool decimalType = t.id == TypeId::Decimal;
        Value precision = nullV(), radix = nullV(), scale = nullV();
        if (t.isIntegral() || t.isFloating()) {
          // Bits, as PostgreSQL counts them: a TINYINT is an int2 there.
          precision = intV(t.id == TypeId::Int        ? 32
                           : t.id == TypeId::BigInt   ? 64
                           : t.id == TypeId::Double   ? 53
                           : t.id == TypeId::Float    ? 24
                                                      : 16);
          radix = intV(2);
          scale = t.isFloating() ? nullV() : intV(0);
        } else if (decimalType) {
          precision = intV(t.precision);
          radix = intV(10);
          scale = intV(t.scale);
        }
        std::string dataType = t.id == TypeId::Array ? "ARRAY"
                               : decimalType         ? "numeric"
                                                     : std::string(pg->sqlName);
        rows.push_back({textV(db), textV(schema), textV(r.name), textV(c.name), intV(position),
                        nullV(), yesNo(true), textV(dataType), nullV(),
                        t.id == TypeId::String ? intV(1073741824) : nullV(), precision, radix,
                        scale, t.id == TypeId::Timestamp || t.id == TypeId::TimestampNtz ? intV(6) : nullV(), nullV(), nullV(),
                        nullV(), nullV(), nullV(), nullV(), nullV(), nullV(), nullV(), nullV(),
                        nullV(), textV(db), textV("pg_catalog"), textV(pg->name), nullV(),
                        nullV(), nullV(), nullV(), textV(std::to_string(position)), textV("NO"),
                        textV("NO"), nullV(), nullV(), nullV(), nullV(), nullV(), textV("NO"),
                        textV("NEVER"), nullV(), yesNo(r.kind == 'r' && r.namespaceOid == kPublicOid)});
      }
    }
  } else if (key == "information_schema.routines") {
    for (const auto& r : routines_) {
      const std::string specific = fmt::format("{}_{}", r.name, r.oid);
      const bool sql = r.language == "sql";
      const PgType* ret = pgTypeByOid(pgTypeOidOf(*r.returns));
      rows.push_back({textV(db), textV("public"), textV(specific), textV(db), textV("public"),
                      textV(r.name), textV("FUNCTION"), textV(ret->sqlName), textV(db),
                      textV("pg_catalog"), textV(ret->name), textV(sql ? "SQL" : "EXTERNAL"),
                      textV(r.body), nullV(), textV(sql ? "SQL" : "PYTHON"),
                      sql ? nullV() : textV("GENERAL"), yesNo(sql), textV("NO SQL"),
                      textV("YES")});
    }
  } else if (key == "pg_catalog.pg_index" || key == "pg_catalog.pg_constraint") {
    // A materialized view's key: a unique, primary index and its constraint.
    for (const auto& r : relations_) {
      if (r.kind != 'm' || r.key.empty()) continue;
      ValueList keys, zeros, options;
      for (int num : r.key) {
        keys.push_back(intV(num));
        zeros.push_back(oidV(0));
        options.push_back(intV(0));
      }
      const int64_t n = static_cast<int64_t>(r.key.size());
      if (key == "pg_catalog.pg_index") {
        rows.push_back({oidV(r.indexOid), oidV(r.oid), intV(n), intV(n), boolV(true),
                        boolV(false), boolV(true), boolV(false), boolV(true), boolV(false),
                        boolV(true), boolV(false), boolV(true), boolV(true), boolV(false),
                        Value::array(std::move(keys)), Value::array(zeros),
                        Value::array(zeros), Value::array(std::move(options)), nullV(),
                        nullV()});
      } else {
        rows.push_back({oidV(r.constraintOid), textV(r.name + "_pkey"), oidV(r.namespaceOid),
                        charV('p'), boolV(false), boolV(false), boolV(true), oidV(r.oid),
                        oidV(0), oidV(r.indexOid), oidV(0), oidV(0), charV(' '), charV(' '),
                        charV(' '), boolV(true), intV(0), boolV(true),
                        Value::array(std::move(keys)), nullV(), nullV(), nullV(), nullV(),
                        nullV(), nullV(), nullV()});
      }
    }
  } else if (key == "pg_catalog.pg_matviews") {
    for (const auto& r : relations_) {
      if (r.kind != 'm') continue;
      rows.push_back({textV("public"), textV(r.name), textV(session_.roles.front()), nullV(),
                      boolV(!r.key.empty()), boolV(true), textV(r.definition)});
    }
  }
  // pg_inherits, pg_attrdef, pg_auth_members, pg_policy, pg_statistic_ext,
  // pg_publication*, pg_sequence, pg_opclass, pg_views and
  // information_schema.views have no rows: rtsql has none of those objects.
  return rows;
}

}  // namespace rtsql
