// Spark's plan-time type checks that rtsql's builders would let through:
// where Spark refuses a call with DATATYPE_MISMATCH (an untyped NULL where an
// array belongs, a TIMESTAMP where only a DATE is taken, ...), rtsql refuses
// it too, with 42804 at the call's position, instead of answering NULL. The
// checks wrap the builders of the functions they concern, so each function's
// own file keeps only its own coercions.
#include <fmt/format.h>

#include <string_view>

#include "common/functions/internal.h"
#include "common/map_order.h"

namespace rtsql::expr_internal {

namespace {

// What a check refuses, as Spark names it (the subclass of
// DATATYPE_MISMATCH), and the hint that goes with it.
enum class Rule {
  NullArray,        // an untyped NULL as the array argument
  NullAnyArgument,  // an untyped NULL as any argument
  NullArgument1,    // an untyped NULL as the second argument
  NullConstant,     // an argument that is a constant NULL
  DateOnly,         // a TIMESTAMP where Spark takes only a DATE
  SameAsFirst,      // the second argument of another type than a BINARY first
  MapValues,        // an argument that is or holds a MAP, where the function
                    // orders, compares or hashes the values
  MapUnlessLambda,  // the same, unless a comparator (a second argument) orders them
};

struct Check {
  std::string_view function;
  Rule rule;
  std::string_view reason;  // Spark's DATATYPE_MISMATCH subclass
};

constexpr Check kChecks[] = {
    {"array_union", Rule::NullAnyArgument, "BINARY_ARRAY_DIFF_TYPES"},
    {"array_intersect", Rule::NullAnyArgument, "BINARY_ARRAY_DIFF_TYPES"},
    {"array_except", Rule::NullAnyArgument, "BINARY_ARRAY_DIFF_TYPES"},
    {"arrays_overlap", Rule::NullAnyArgument, "BINARY_ARRAY_DIFF_TYPES"},
    {"array_contains", Rule::NullAnyArgument, "NULL_TYPE"},
    {"array_position", Rule::NullAnyArgument, "NULL_TYPE"},
    {"array_insert", Rule::NullArray, "ARRAY_FUNCTION_DIFF_TYPES"},
    {"array_insert", Rule::NullArgument1, "UNEXPECTED_INPUT_TYPE"},
    {"array_remove", Rule::NullArray, "ARRAY_FUNCTION_DIFF_TYPES"},
    {"array_append", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"array_prepend", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"array_sort", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"flatten", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"element_at", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"get", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"try_element_at", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"bitmap_count", Rule::NullArray, "UNEXPECTED_INPUT_TYPE"},
    {"schema_of_json", Rule::NullConstant, "UNEXPECTED_NULL"},
    {"schema_of_csv", Rule::NullConstant, "UNEXPECTED_NULL"},
    {"unix_date", Rule::DateOnly, "UNEXPECTED_INPUT_TYPE"},
    {"overlay", Rule::SameAsFirst, "DATA_DIFF_TYPES"},
    {"array_distinct", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_sort", Rule::MapUnlessLambda, "INVALID_ORDERING_TYPE"},
    {"sort_array", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_max", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_min", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_contains", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_position", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_remove", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_union", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_intersect", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"array_except", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"arrays_overlap", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"greatest", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"least", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"nullif", Rule::MapValues, "INVALID_ORDERING_TYPE"},
    {"hash", Rule::MapValues, "HASH_MAP_TYPE"},
    {"xxhash64", Rule::MapValues, "HASH_MAP_TYPE"},
};

const char* ordinalName(size_t i) {
  static const char* kNames[] = {"first", "second", "third", "fourth"};
  return i < 4 ? kNames[i] : "an";
}

[[noreturn]] void refuse(const std::string& name, const std::vector<ExprPtr>& args, size_t pos,
                         const Check& c, size_t i, std::string_view what, std::string hint) {
  throwArgError(name, args, pos,
                fmt::format("[DATATYPE_MISMATCH.{}] the {} argument {}", c.reason, ordinalName(i), what),
                std::move(hint));
}

void apply(const Check& c, const std::string& name, const std::vector<ExprPtr>& args, size_t pos) {
  switch (c.rule) {
    case Rule::NullArray:
      if (!args.empty() && isNullType(args[0]->type()))
        refuse(name, args, pos, c, 0, "is an untyped NULL, not an array",
               "write CAST(NULL AS ARRAY<type>) for a NULL array");
      return;
    case Rule::NullAnyArgument:
      for (size_t i = 0; i < args.size(); ++i)
        if (isNullType(args[i]->type()))
          refuse(name, args, pos, c, i, "is an untyped NULL",
                 "CAST the NULL to the type the function takes there");
      return;
    case Rule::NullArgument1:
      if (args.size() > 1 && isNullType(args[1]->type()))
        refuse(name, args, pos, c, 1, "is an untyped NULL, not an INT", "write CAST(NULL AS INT)");
      return;
    case Rule::NullConstant:
      for (size_t i = 0; i < args.size(); ++i) {
        auto v = constantValue(args[i]);
        if (v && v->isNull())
          refuse(name, args, pos, c, i, "is NULL, where a constant text is needed",
                 "pass the sample text as a literal");
      }
      return;
    case Rule::DateOnly:
      if (!args.empty() && args[0]->type()->id == TypeId::Timestamp)
        refuse(name, args, pos, c, 0, "is a TIMESTAMP, where a DATE is needed",
               "use CAST(... AS DATE) or to_date(...)");
      return;
    case Rule::SameAsFirst:
      if (args.size() > 1 && args[0]->type()->id == TypeId::Binary && args[1]->type()->id != TypeId::Binary)
        refuse(name, args, pos, c, 1, fmt::format("is {}, not BINARY as the first", args[1]->type()->toString()),
               "CAST both to BINARY, or both to STRING");
      return;
    case Rule::MapUnlessLambda:
      if (args.size() > 1) return;  // the comparator orders the maps, as Spark lets it
      [[fallthrough]];
    case Rule::MapValues:
      for (const ExprPtr& a : args) refuseMapValues(*a->type(), name + "()", pos, kMapArgumentHint);
      return;
  }
}

// The builders the checks stand in front of, by function name; filled once,
// while the function table is built.
std::unordered_map<std::string, Builder>& checkedBuilders() {
  static std::unordered_map<std::string, Builder> builders;
  return builders;
}

ExprPtr buildChecked(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (const Check& c : kChecks)
    if (c.function == name) apply(c, name, args, pos);
  return checkedBuilders().at(name)(name, args, pos);
}

}  // namespace

void registerSparkTypeChecks(FunctionTable& t) {
  for (const Check& c : kChecks) {
    auto it = t.find(std::string(c.function));
    if (it == t.end() || it->second.build == buildChecked) continue;
    checkedBuilders()[it->first] = it->second.build;
    it->second.build = buildChecked;
  }
}

}  // namespace rtsql::expr_internal
