// The function registry says which functions are deterministic
// (isDeterministicFunction, common/function_determinism.h): what a node may send another to
// evaluate (server/views/view_remote.h) asks it, rather than keeping its own
// list of names.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "common/expr.h"
#include "common/function_determinism.h"

using namespace rtsql;

TEST_CASE("function registry: every function of chance, clock or session is not deterministic") {
  // The names a filter sent to a view's holder once had to avoid (a list of
  // its own in server/views/view_remote.cpp), each flagged by the registry;
  // the last three are Spark's that rtsql has not, and a name the registry
  // does not know is not deterministic either.
  for (const char* name : {"rand", "random", "randn", "uuid", "shuffle", "current_timestamp", "now",
                           "current_date", "curdate", "localtimestamp", "unix_timestamp",
                           "current_timezone", "current_user", "monotonically_increasing_id",
                           "spark_partition_id", "input_file_name"}) {
    INFO(name);
    CHECK_FALSE(isDeterministicFunction(name));
  }
  CHECK_FALSE(isDeterministicFunction("NOW"));
  CHECK_FALSE(isDeterministicFunction("my_udf"));
}

TEST_CASE("function registry: a function of its arguments alone is deterministic") {
  for (const char* name : {"abs", "upper", "hour", "date_trunc", "to_unix_timestamp", "coalesce",
                           "regexp_replace", "aes_decrypt", "pg_size_pretty", "count", "sum",
                           "from_utc_timestamp"}) {
    INFO(name);
    CHECK(isDeterministicFunction(name));
  }
  CHECK(isDeterministicFunction("Upper"));
}

TEST_CASE("function registry: the functions that are not deterministic, all of them") {
  // The whole list, so that flagging one more (or one less) is a choice this
  // test records.
  std::set<std::string> flagged;
  for (const std::string& name : functionNames()) {
    if (!isDeterministicFunction(name)) flagged.insert(name);
  }
  const std::set<std::string> expected = {
      // chance
      "aes_encrypt", "rand", "randn", "random", "shuffle", "uuid",
      // the clock
      "curdate", "current_date", "current_timestamp", "localtimestamp", "now", "unix_timestamp",
      // who, where and in which session the statement runs
      "col_description", "current_catalog", "current_database", "current_role", "current_schema",
      "current_schemas", "current_setting", "current_timezone", "current_user",
      "has_any_column_privilege", "has_column_privilege", "has_database_privilege",
      "has_function_privilege", "has_schema_privilege", "has_table_privilege", "obj_description",
      "pg_backend_pid", "pg_get_constraintdef", "pg_get_function_arguments",
      "pg_get_function_result", "pg_get_indexdef", "pg_get_userbyid", "pg_get_viewdef",
      "pg_table_is_visible", "regclass", "regnamespace", "regrole", "regtype", "session_user",
      "to_regclass", "to_regtype", "user", "version"};
  CHECK(flagged == expected);
}

TEST_CASE("function registry: flagged not deterministic are the ones it knows so, no other") {
  // What decides that a query over a view held elsewhere is not sent whole
  // (server/views/view_forward.h): a name the registry does not know (a
  // user's function, a window function) is not flagged, though not
  // deterministic either.
  for (const char* name : {"now", "CURRENT_USER", "pg_backend_pid", "current_setting", "rand"}) {
    INFO(name);
    CHECK(isFlaggedNotDeterministic(name));
  }
  for (const char* name : {"abs", "hour", "count", "row_number", "my_udf"}) {
    INFO(name);
    CHECK_FALSE(isFlaggedNotDeterministic(name));
  }
}
