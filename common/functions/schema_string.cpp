// The schema strings of from_json and from_csv, read into a DataType.
#include "common/functions/schema_string.h"

#include <fmt/format.h>

#include <cctype>

#include "common/error.h"
#include "common/schema.h"
#include "common/year_month_interval.h"

namespace rtsql::expr_internal {

namespace {

class SchemaReader {
 public:
  SchemaReader(std::string_view text, std::string fn) : s_(text), fn_(std::move(fn)) {}

  DataTypePtr read() {
    skip();
    size_t save = i_;
    std::string first = word();
    skip();
    bool single = (iequals(first, "STRUCT") || iequals(first, "ARRAY") || iequals(first, "MAP")) &&
                  i_ < s_.size() && s_[i_] == '<';
    i_ = save;
    DataTypePtr t = single ? type() : fields(true);
    skip();
    if (i_ != s_.size()) fail("unexpected text");
    return t;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    throw SqlError(
        sqlstate::kInvalidParameterValue,
        fmt::format("{}: cannot read the schema '{}': {} at character {}", fn_, s_, what, i_ + 1),
        SqlError::npos,
        "write the schema as 'a INT, b STRING', 'STRUCT<a: INT>' or 'ARRAY<STRING>'");
  }
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::string word() {
    skip();
    if (i_ < s_.size() && s_[i_] == '`') {
      size_t j = s_.find('`', i_ + 1);
      if (j == std::string_view::npos) fail("unclosed `");
      std::string w(s_.substr(i_ + 1, j - i_ - 1));
      i_ = j + 1;
      return w;
    }
    size_t b = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
      ++i_;
    if (b == i_) fail("expected a name");
    return std::string(s_.substr(b, i_ - b));
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("expected '{}'", c));
  }
  // name [:] type, ... up to the end (top level) or '>'.
  DataTypePtr fields(bool topLevel) {
    std::vector<StructField> fs;
    skip();
    if (!topLevel && i_ < s_.size() && s_[i_] == '>') return DataType::structOf({});
    do {
      std::string n = word();
      eat(':');
      fs.push_back({n, type()});
      skip();
      // NOT NULL and COMMENT '...' are accepted and ignored.
      size_t save = i_;
      if (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) {
        std::string w = word();
        if (iequals(w, "NOT")) {
          if (!iequals(word(), "NULL")) fail("expected NULL");
        } else if (iequals(w, "COMMENT")) {
          skip();
          if (i_ >= s_.size() || s_[i_] != '\'') fail("expected a quoted comment");
          size_t j = s_.find('\'', i_ + 1);
          if (j == std::string_view::npos) fail("unclosed comment");
          i_ = j + 1;
        } else {
          i_ = save;
        }
      }
    } while (eat(','));
    return DataType::structOf(std::move(fs));
  }
  DataTypePtr type() {
    std::string w = word();
    if (iequals(w, "ARRAY")) {
      expect('<');
      DataTypePtr e = type();
      expect('>');
      return DataType::arrayOf(e);
    }
    if (iequals(w, "STRUCT")) {
      expect('<');
      DataTypePtr t = fields(false);
      expect('>');
      return t;
    }
    if (iequals(w, "MAP")) {
      expect('<');
      DataTypePtr k = type();
      expect(',');
      DataTypePtr v = type();
      expect('>');
      return DataType::mapOf(k, v);
    }
    if (iequals(w, "INTERVAL")) {
      // INTERVAL YEAR TO MONTH, INTERVAL MONTH, INTERVAL DAY TO SECOND; a bare
      // INTERVAL is the day-time one.
      skip();
      size_t save = i_;
      if (i_ >= s_.size() || !std::isalpha(static_cast<unsigned char>(s_[i_]))) return DataType::of(TypeId::Interval);
      std::string from = word();
      if (!ym::intervalType(from, "")) {
        i_ = save;  // a word that is no unit: the next field's name
        return DataType::of(TypeId::Interval);
      }
      std::string to;
      save = i_;
      skip();
      if (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_])) && iequals(word(), "TO"))
        to = word();
      else
        i_ = save;
      DataTypePtr t = ym::intervalType(toUpper(from), toUpper(to));
      if (!t) fail(fmt::format("INTERVAL {} TO {} is not an interval type", from, to));
      return t;
    }
    auto id = scalarTypeFromName(w);
    if (!id) fail(fmt::format("unknown type {}", w));
    if (eat('(')) {  // DECIMAL(10, 2), VARCHAR(20): the arguments are ignored
      while (i_ < s_.size() && s_[i_] != ')') ++i_;
      expect(')');
    }
    return DataType::of(*id);
  }

  std::string_view s_;
  std::string fn_;
  size_t i_ = 0;
};

}  // namespace

DataTypePtr readSchemaString(std::string_view text, const std::string& fn) {
  return SchemaReader(text, fn).read();
}

}  // namespace rtsql::expr_internal
