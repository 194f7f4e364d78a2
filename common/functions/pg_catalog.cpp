// PostgreSQL's system information functions, as psql, drivers and BI tools
// call them: the session's user, database and schema, the names behind the
// catalog's OIDs, visibility and privilege checks, and the type names. What
// they know of the session and its catalog they read from the current
// thread's PgSession (common/pg_session.h) when the call is bound.
#include "common/functions/pg_catalog.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "common/pg_session.h"
#include "common/pg_types.h"
#include "common/schema.h"

namespace rtsql::expr_internal {

namespace {

ExprPtr text(std::string s) { return makeLiteral(Value::string(std::move(s)), stringType()); }

std::string sessionUser() {
  const PgSession* s = currentPgSession();
  return s ? s->user() : std::string("rtsql");
}

// The OID argument of a catalog function: any integer, or a text that reads
// as one (psql writes '16384').
void argOid(const std::string& fn, std::vector<ExprPtr>& args, size_t i, size_t pos) {
  if (args[i]->type()->id == TypeId::String) {
    args[i] = makeCast(args[i], DataType::of(TypeId::BigInt), pos);
    return;
  }
  argBigInt(fn, args, i, pos);
}

// A map of OID -> name from one of the session's lists, looked up per row.
using NameMap = std::map<int64_t, std::string>;
NameMap nameMap(const std::vector<PgSession::Named>& named) {
  NameMap out;
  for (const auto& n : named) out.emplace(n.oid, n.name);
  return out;
}

ExprPtr buildVersion(const std::string&, std::vector<ExprPtr>&, size_t) {
  return text(pgVersionString());
}

ExprPtr buildCurrentUser(const std::string&, std::vector<ExprPtr>&, size_t) {
  return text(sessionUser());
}

ExprPtr buildCurrentDatabase(const std::string&, std::vector<ExprPtr>&, size_t) {
  const PgSession* s = currentPgSession();
  return text(s ? s->database() : std::string("rtsql"));
}

ExprPtr buildCurrentSchema(const std::string&, std::vector<ExprPtr>&, size_t) {
  return text("public");
}

// current_schemas(include_implicit): the search path, pg_catalog first when
// the implicit schemas are asked for.
ExprPtr buildCurrentSchemas(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBoolean(name, args, 0, pos);
  return fn1(name, DataType::arrayOf(stringType()), args, [](const Value& implicit) {
    ValueList path;
    if (implicit.asBool()) path.push_back(Value::string("pg_catalog"));
    path.push_back(Value::string("public"));
    return Value::array(std::move(path));
  });
}

ExprPtr buildBackendPid(const std::string&, std::vector<ExprPtr>&, size_t) {
  const PgSession* s = currentPgSession();
  return makeLiteral(Value::integer(s ? s->backendPid() : 0), DataType::of(TypeId::Int));
}

// pg_get_userbyid(oid): the role's name, or PostgreSQL's "unknown (OID=n)".
ExprPtr buildGetUserById(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argOid(name, args, 0, pos);
  const PgSession* s = currentPgSession();
  NameMap roles = s ? nameMap(s->roles()) : NameMap{};
  return fn1(name, stringType(), args, [roles = std::move(roles)](const Value& oid) {
    auto it = roles.find(oid.asInt());
    return Value::string(it != roles.end() ? it->second
                                           : fmt::format("unknown (OID={})", oid.asInt()));
  });
}

// format_type(type_oid, typmod): the type's SQL name; NULL for a NULL OID.
ExprPtr buildFormatType(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argOid(name, args, 0, pos);
  argBigInt(name, args, 1, pos);
  return fnN(name, stringType(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    Value oid = a[0]->eval(row);
    if (oid.isNull()) return Value();
    Value typmod = a[1]->eval(row);
    return Value::string(pgFormatType(
        oid.asInt(), typmod.isNull() ? std::nullopt : std::optional<int64_t>(typmod.asInt())));
  });
}

// Every object rtsql shows is in the search path, and every user may read
// the catalog: the visibility and privilege checks are true (NULL for NULL).
ExprPtr buildTrueOfArgs(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  return fnN(name, boolType(), args, true, [](const Row& row, const std::vector<ExprPtr>& a) {
    for (const auto& x : a)
      if (x->eval(row).isNull()) return Value();
    return Value::boolean(true);
  });
}

ExprPtr nullOf(const DataTypePtr& type) { return makeLiteral(Value(), type); }

// pg_table_is_visible(oid): whether the relation is found by its name alone,
// false for information_schema's (off the search path, as in PostgreSQL).
ExprPtr buildTableIsVisible(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argOid(name, args, 0, pos);
  const PgSession* s = currentPgSession();
  std::vector<int64_t> hidden = s ? s->relationsOffSearchPath() : std::vector<int64_t>{};
  std::sort(hidden.begin(), hidden.end());
  return fn1(name, boolType(), args, [hidden = std::move(hidden)](const Value& oid) {
    return Value::boolean(!std::binary_search(hidden.begin(), hidden.end(), oid.asInt()));
  });
}

// obj_description(oid [, catalog]) and col_description(table_oid, column):
// the session's pg_description.
int64_t catalogOid(std::string_view catalog) {
  if (iequals(catalog, "pg_class") || iequals(catalog, "pg_catalog.pg_class")) return 1259;
  if (iequals(catalog, "pg_proc") || iequals(catalog, "pg_catalog.pg_proc")) return 1255;
  if (iequals(catalog, "pg_namespace") || iequals(catalog, "pg_catalog.pg_namespace")) return 2615;
  if (iequals(catalog, "pg_type") || iequals(catalog, "pg_catalog.pg_type")) return 1247;
  return -1;
}

ExprPtr buildObjDescription(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argOid(name, args, 0, pos);
  const bool column = name == "col_description";
  if (column) {
    argBigInt(name, args, 1, pos);
  } else if (args.size() == 2) {
    argString(name, args, 1, pos);
  }
  const PgSession* s = currentPgSession();
  std::vector<PgSession::Description> all =
      s ? s->descriptions() : std::vector<PgSession::Description>{};
  return fnN(name, stringType(), args, true,
             [all = std::move(all), column](const Row& row, const std::vector<ExprPtr>& a) {
               Value oid = a[0]->eval(row);
               if (oid.isNull()) return Value();
               int64_t classOid = -1;
               int64_t subId = 0;
               if (a.size() == 2) {
                 Value second = a[1]->eval(row);
                 if (second.isNull()) return Value();
                 if (column) subId = second.asInt();
                 else classOid = catalogOid(second.asString());
               }
               if (column) classOid = 1259;
               for (const auto& d : all) {
                 if (d.objoid == oid.asInt() && d.objsubid == subId &&
                     (classOid < 0 || d.classoid == classOid))
                   return Value::string(d.text);
               }
               return Value();
             });
}

// Shared objects (databases, roles) carry no comment in rtsql; nor does
// anything but a materialized view have a stored expression (a default).
ExprPtr buildNullText(const std::string&, std::vector<ExprPtr>&, size_t) {
  return nullOf(stringType());
}

// pg_get_viewdef(oid [, pretty]), pg_get_indexdef(oid [, column, pretty])
// and pg_get_constraintdef(oid [, pretty]) of the session's materialized
// views (PgSession::views): the view's query; its key's index as CREATE
// UNIQUE INDEX ... USING btree (k, ...), or with a column number above 0
// that key column's name (pgjdbc's getIndexInfo asks so); its key as
// PRIMARY KEY (k, ...). NULL for any other OID, as rtsql has nothing else
// with a stored definition.
ExprPtr buildDefinition(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argOid(name, args, 0, pos);
  const bool index = name == "pg_get_indexdef";
  if (index && args.size() >= 2) argBigInt(name, args, 1, pos);
  const PgSession* s = currentPgSession();
  std::vector<PgSession::View> views = s ? s->views() : std::vector<PgSession::View>{};
  return fnN(name, stringType(), args, true,
             [views = std::move(views), name, index](const Row& row,
                                                     const std::vector<ExprPtr>& a) -> Value {
               Value oid = a[0]->eval(row);
               if (oid.isNull()) return Value();
               int64_t column = 0;
               if (index && a.size() >= 2) {
                 Value c = a[1]->eval(row);
                 if (c.isNull()) return Value();
                 column = c.asInt();
               }
               for (const PgSession::View& v : views) {
                 const std::string keys = fmt::format("{}", fmt::join(v.keyColumns, ", "));
                 if (name == "pg_get_viewdef" && v.oid == oid.asInt()) {
                   return Value::string(v.definition + ";");
                 }
                 if (index && v.indexOid == oid.asInt() && !v.keyColumns.empty()) {
                   if (column <= 0) {
                     return Value::string(
                         fmt::format("CREATE UNIQUE INDEX {}_pkey ON public.{} USING btree ({})",
                                     v.name, v.name, keys));
                   }
                   if (column > static_cast<int64_t>(v.keyColumns.size())) return Value();
                   return Value::string(v.keyColumns[static_cast<size_t>(column - 1)]);
                 }
                 if (name == "pg_get_constraintdef" && v.constraintOid == oid.asInt() &&
                     !v.keyColumns.empty()) {
                   return Value::string(fmt::format("PRIMARY KEY ({})", keys));
                 }
               }
               return Value();
             });
}

// current_setting(name [, missing_ok]): the session's setting
// (PgSession::settings), read when the call is bound; PostgreSQL's 42704 for
// a name it does not have, or NULL with missing_ok true.
ExprPtr buildCurrentSetting(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  if (args.size() == 2) argBoolean(name, args, 1, pos);
  const PgSession* s = currentPgSession();
  std::vector<std::pair<std::string, std::string>> settings =
      s ? s->settings() : std::vector<std::pair<std::string, std::string>>{};
  return fnN(name, stringType(), args, true,
             [settings = std::move(settings), pos](const Row& row,
                                                   const std::vector<ExprPtr>& a) -> Value {
               Value setting = a[0]->eval(row);
               if (setting.isNull()) return Value();
               for (const auto& [key, value] : settings)
                 if (iequals(key, setting.asString())) return Value::string(value);
               if (a.size() == 2) {
                 Value missingOk = a[1]->eval(row);
                 if (!missingOk.isNull() && missingOk.asBool()) return Value();
               }
               throw SqlError(sqlstate::kUndefinedObject,
                              fmt::format("unrecognized configuration parameter \"{}\"",
                                          setting.asString()),
                              pos);
             });
}

ExprPtr buildEncodingToChar(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argInt(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    switch (v.asInt()) {
      case 0: return Value::string("SQL_ASCII");
      case 6: return Value::string("UTF8");
      default: return Value::string("");
    }
  });
}

// pg_get_function_result(oid) and pg_get_function_arguments(oid) of the
// session's routines; NULL for another OID.
ExprPtr buildFunctionSignature(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argOid(name, args, 0, pos);
  const PgSession* s = currentPgSession();
  NameMap texts;
  if (s) {
    for (const auto& r : s->routines())
      texts.emplace(r.oid, name == "pg_get_function_result" ? r.result : r.arguments);
  }
  return fn1(name, stringType(), args, [texts = std::move(texts)](const Value& oid) {
    auto it = texts.find(oid.asInt());
    return it == texts.end() ? Value() : Value::string(it->second);
  });
}

// The reg* casts (x::regclass, x::regtype, x::regnamespace): a name becomes
// its object's OID (an error when there is none, as in PostgreSQL), an OID
// the name PostgreSQL prints for it (the number when there is none). So
// `'pg_class'::regclass` compares with oid columns and `c.oid::regclass`
// shows a name. to_regclass and to_regtype give NULL instead of the error.
struct RegKind {
  const char* what;
  const char* sqlstate;
};

NameMap regNames(const std::string& kind) {
  NameMap out;
  if (kind == "regtype") {
    for (const PgType& t : pgTypes()) out.emplace(t.oid, t.sqlName);
    return out;
  }
  const PgSession* s = currentPgSession();
  if (kind == "regclass") {
    // The catalog's own relations, and the session's.
    static const std::pair<int64_t, const char*> kSystem[] = {
        {1247, "pg_type"}, {1249, "pg_attribute"}, {1255, "pg_proc"}, {1259, "pg_class"},
        {2606, "pg_constraint"}, {2615, "pg_namespace"}, {2610, "pg_index"}, {1262, "pg_database"},
        {2609, "pg_description"}};
    for (const auto& [oid, n] : kSystem) out.emplace(oid, n);
    if (s) for (const auto& r : s->relations()) out.emplace(r.oid, r.name);
  } else if (kind == "regnamespace") {
    if (s) for (const auto& n : s->namespaces()) out.emplace(n.oid, n.name);
  } else if (kind == "regrole") {
    if (s) for (const auto& n : s->roles()) out.emplace(n.oid, n.name);
  }
  return out;
}

ExprPtr buildRegCast(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  const bool lenient = name.starts_with("to_");
  const std::string kind = lenient ? "reg" + name.substr(6) : name;
  NameMap names = regNames(kind);
  if (args[0]->type()->id == TypeId::String) {
    std::map<std::string, int64_t> oids;
    for (const auto& [oid, n] : names) oids.emplace(toLower(n), oid);
    if (kind == "regtype") {
      for (const PgType& t : pgTypes()) oids.emplace(t.name, t.oid);
    }
    const char* state = kind == "regclass" ? sqlstate::kUndefinedTable : sqlstate::kUndefinedObject;
    const char* what = kind == "regclass" ? "relation" : kind == "regtype" ? "type"
                       : kind == "regnamespace" ? "schema" : "role";
    return fn1(name, DataType::of(TypeId::BigInt), args,
               [oids = std::move(oids), lenient, state, what, kind, pos](const Value& v) {
                 std::string key = toLower(v.asString());
                 if (key.starts_with("pg_catalog.")) key = key.substr(11);
                 if (key.starts_with("public.")) key = key.substr(7);
                 if (key.size() >= 2 && key.front() == '"' && key.back() == '"')
                   key = key.substr(1, key.size() - 2);
                 auto it = oids.find(key);
                 if (it == oids.end() && kind == "regtype") {
                   if (const PgType* t = pgTypeByName(key)) return Value::bigint(t->oid);
                 }
                 if (it != oids.end()) return Value::bigint(it->second);
                 // A number in text is an OID already.
                 if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos)
                   return Value::bigint(std::stoll(key.substr(0, 12)));
                 if (lenient) return Value();
                 throw SqlError(state, fmt::format("{} \"{}\" does not exist", what, v.asString()),
                                pos);
               });
  }
  if (lenient) throwArgError(name, args, pos, "the argument is text");
  argBigInt(name, args, 0, pos);
  return fn1(name, stringType(), args, [names = std::move(names)](const Value& oid) {
    auto it = names.find(oid.asInt());
    return Value::string(it != names.end() ? it->second : std::to_string(oid.asInt()));
  });
}

// pg_table_size(oid): rtsql keeps no pages; pg_size_pretty(bytes) as
// PostgreSQL writes it.
ExprPtr buildZeroSize(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argOid(name, args, 0, pos);
  return fn1(name, DataType::of(TypeId::BigInt), args, [](const Value&) { return Value::bigint(0); });
}

ExprPtr buildSizePretty(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argBigInt(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    int64_t n = v.asInt();
    static const char* kUnits[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
    size_t unit = 0;
    while (unit + 1 < std::size(kUnits) && (n >= 10240 || n <= -10240)) {
      n = (n + (n >= 0 ? 512 : -512)) / 1024;
      ++unit;
    }
    return Value::string(fmt::format("{} {}", n, kUnits[unit]));
  });
}

// like_escape(pattern, escape): the pattern with `escape` as its escape
// character rewritten to LIKE's, the backslash; an empty `escape` turns
// escaping off. x LIKE p ESCAPE c reads as x LIKE like_escape(p, c).
ExprPtr buildLikeEscape(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  argString(name, args, 1, pos);
  return fn2(name, stringType(), args, [pos](const Value& p, const Value& e) {
    const std::string& pattern = p.asString();
    const std::string& escape = e.asString();
    if (escape.size() > 1) {
      throw SqlError(sqlstate::kInvalidParameterValue, "invalid escape string", pos,
                     "Escape string must be empty or one character.");
    }
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
      const char c = pattern[i];
      if (!escape.empty() && c == escape[0] && i + 1 < pattern.size()) {
        out += '\\';
        out += pattern[++i];
      } else if (c == '\\') {
        out += "\\\\";
      } else {
        out += c;
      }
    }
    return Value::string(std::move(out));
  });
}

// array_to_string(array, delimiter [, null_text]) is Spark's array_join;
// array_upper(array, 1) the array's size (NULL when empty, or for another
// dimension: rtsql's arrays have one).
ExprPtr buildArrayToString(const std::string&, std::vector<ExprPtr>& args, size_t pos) {
  return makeCall("array_join", args, pos);
}

ExprPtr buildArrayUpper(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args[0]->type()->id != TypeId::Array && !isNullType(args[0]->type()))
    throwArgError(name, args, pos, "the first argument must be an array");
  argInt(name, args, 1, pos);
  return fn2(name, DataType::of(TypeId::Int), args, [](const Value& a, const Value& dim) {
    const size_t n = a.asList().size();
    if (dim.asInt() != 1 || n == 0) return Value();
    return Value::integer(static_cast<int32_t>(n));
  });
}

// quote_ident(text): the text as an identifier, double-quoted unless it is
// one already (lower-case letters, digits and underscores, not starting with
// a digit); quote_literal(text): the text as a string literal, its quotes
// doubled, and as E'...' with its backslashes doubled when it has any.
// psql's \d of a foreign table (a sink) calls them over its options.
ExprPtr buildQuoteIdent(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    const std::string& id = v.asString();
    bool plain = !id.empty() && !(id[0] >= '0' && id[0] <= '9');
    for (char c : id) {
      plain = plain && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
    }
    if (plain) return Value::string(id);
    std::string out = "\"";
    for (char c : id) {
      if (c == '"') out += '"';
      out += c;
    }
    return Value::string(out + "\"");
  });
}

ExprPtr buildQuoteLiteral(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    const std::string& text = v.asString();
    std::string out = text.find('\\') == std::string::npos ? "'" : "E'";
    for (char c : text) {
      if (c == '\'' || c == '\\') out += c;
      out += c;
    }
    return Value::string(out + "'");
  });
}

// json_build_object(key, value, ...): a JSON object, as to_json(named_struct(...)) writes it.
ExprPtr buildJsonBuildObject(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  if (args.size() % 2 != 0) throwArgError(name, args, pos, "it takes keys and values in pairs");
  return makeCall("to_json", {makeCall("named_struct", args, pos)}, pos);
}

ExprPtr buildFalse(const std::string& name, std::vector<ExprPtr>& args, size_t) {
  return fnN(name, boolType(), args, true, [](const Row&, const std::vector<ExprPtr>&) {
    return Value::boolean(false);
  });
}

}  // namespace

std::string pgVersionString() {
  return "PostgreSQL 15.0 on x86_64-pc-linux-gnu, rtsql " RTSQL_VERSION;
}

void registerPgCatalogFunctions(FunctionTable& t) {
  t["current_user"] = {0, 0, buildCurrentUser, kNotDeterministic};
  t["session_user"] = {0, 0, buildCurrentUser, kNotDeterministic};
  t["current_role"] = {0, 0, buildCurrentUser, kNotDeterministic};
  t["user"] = {0, 0, buildCurrentUser, kNotDeterministic};
  t["current_database"] = {0, 0, buildCurrentDatabase, kNotDeterministic};
  t["current_catalog"] = {0, 0, buildCurrentDatabase, kNotDeterministic};
  t["current_schema"] = {0, 0, buildCurrentSchema, kNotDeterministic};
  t["current_schemas"] = {1, 1, buildCurrentSchemas, kNotDeterministic};
  t["pg_backend_pid"] = {0, 0, buildBackendPid, kNotDeterministic};
  t["version"] = {0, 0, buildVersion, kNotDeterministic};
  t["pg_get_userbyid"] = {1, 1, buildGetUserById, kNotDeterministic};
  t["format_type"] = {2, 2, buildFormatType};
  t["pg_table_is_visible"] = {1, 1, buildTableIsVisible, kNotDeterministic};
  t["pg_type_is_visible"] = {1, 1, buildTrueOfArgs};
  t["pg_function_is_visible"] = {1, 1, buildTrueOfArgs};
  t["pg_collation_is_visible"] = {1, 1, buildTrueOfArgs};
  t["has_table_privilege"] = {2, 3, buildTrueOfArgs, kNotDeterministic};
  t["has_schema_privilege"] = {2, 3, buildTrueOfArgs, kNotDeterministic};
  t["has_database_privilege"] = {2, 3, buildTrueOfArgs, kNotDeterministic};
  t["has_column_privilege"] = {3, 4, buildTrueOfArgs, kNotDeterministic};
  t["has_function_privilege"] = {2, 3, buildTrueOfArgs, kNotDeterministic};
  t["has_any_column_privilege"] = {2, 3, buildTrueOfArgs, kNotDeterministic};
  t["obj_description"] = {1, 2, buildObjDescription, kNotDeterministic};
  t["col_description"] = {2, 2, buildObjDescription, kNotDeterministic};
  t["shobj_description"] = {2, 2, buildNullText};
  t["pg_get_expr"] = {2, 3, buildNullText};
  t["pg_get_indexdef"] = {1, 3, buildDefinition, kNotDeterministic};
  t["pg_get_constraintdef"] = {1, 2, buildDefinition, kNotDeterministic};
  t["pg_get_viewdef"] = {1, 2, buildDefinition, kNotDeterministic};
  t["current_setting"] = {1, 2, buildCurrentSetting, kNotDeterministic};
  t["pg_encoding_to_char"] = {1, 1, buildEncodingToChar};
  t["quote_ident"] = {1, 1, buildQuoteIdent};
  t["quote_literal"] = {1, 1, buildQuoteLiteral};
  t["pg_get_function_result"] = {1, 1, buildFunctionSignature, kNotDeterministic};
  t["pg_get_function_arguments"] = {1, 1, buildFunctionSignature, kNotDeterministic};
  t["regclass"] = {1, 1, buildRegCast, kNotDeterministic};
  t["regtype"] = {1, 1, buildRegCast, kNotDeterministic};
  t["regnamespace"] = {1, 1, buildRegCast, kNotDeterministic};
  t["regrole"] = {1, 1, buildRegCast, kNotDeterministic};
  t["to_regclass"] = {1, 1, buildRegCast, kNotDeterministic};
  t["to_regtype"] = {1, 1, buildRegCast, kNotDeterministic};
  t["pg_table_size"] = {1, 1, buildZeroSize};
  t["pg_total_relation_size"] = {1, 1, buildZeroSize};
  t["pg_relation_size"] = {1, 1, buildZeroSize};
  t["pg_size_pretty"] = {1, 1, buildSizePretty};
  t["pg_is_in_recovery"] = {0, 0, buildFalse};
  t["like_escape"] = {2, 2, buildLikeEscape};
  t["array_to_string"] = {2, 3, buildArrayToString};
  t["array_upper"] = {2, 2, buildArrayUpper};
  t["json_build_object"] = {2, -1, buildJsonBuildObject};
  // rtsql has no sequences and no extended statistics.
  t["pg_get_serial_sequence"] = {2, 2, buildNullText};
  t["pg_get_statisticsobjdef_columns"] = {1, 1, buildNullText};
  t["pg_relation_is_publishable"] = {1, 1, buildFalse};
}

}  // namespace rtsql::expr_internal
