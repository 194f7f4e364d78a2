// The csv decoder: one record is one line, its fields in the order of the
// declared (visible) columns. Quoting follows RFC 4180: a field may be wrapped
// in double quotes, inside which the delimiter and line breaks are literal and
// "" is one quote. An empty unquoted field is NULL; a quoted empty field is the
// empty string for STRING/BINARY columns and NULL for the others.
#include <fmt/format.h>

#include "connectors/format/decode_util.h"
#include "connectors/format/decoders.h"

namespace rtsql::format {

char csvDelimiter(const Options& options) {
  const OptionEntry* e = options.find("csv.delimiter");
  if (e == nullptr) return ',';
  if (e->value == "\\t") return '\t';
  if (e->value.size() != 1 || e->value[0] == '"' || e->value[0] == '\n' || e->value[0] == '\r') {
    throw SqlError(sqlstate::kInvalidParameterValue,
                   fmt::format("invalid value for option 'csv.delimiter': '{}'", e->value),
                   e->valuePos, "Use a single character other than a quote, e.g. ',' or ';' or '\\t'.");
  }
  return e->value[0];
}

namespace {

class CsvDecoder final : public RecordDecoder {
 public:
  CsvDecoder(const Schema& schema, const DecodeOptions& decode)
      : width_(schema.size()), delimiter_(decode.csvDelimiter) {
    for (size_t i = 0; i < schema.size(); ++i) {
      const Column& c = schema.columns[i];
      MetaKind kind = metaKindOf(c);
      if (kind != MetaKind::None) {
        meta_.push_back({static_cast<int>(i), kind});
      } else if (!c.hidden) {
        columns_.push_back(static_cast<int>(i));
        names_.push_back(c.name);
        types_.push_back(c.type);
      }
    }
  }

  bool decode(const RecordView& rec, Row& row, std::string& error) override {
    resetRow(row, width_);
    if (rec.value == nullptr) {
      error = "null value";
      return false;
    }
    std::string_view line(rec.value, rec.valueLen);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
    if (!split(line, error)) return false;
    if (fieldCount_ != columns_.size()) {
      error = fmt::format("expected {} fields, got {}", columns_.size(), fieldCount_);
      return false;
    }
    for (size_t f = 0; f < fieldCount_; ++f) {
      const Field& field = fields_[f];
      const DataType& type = *types_[f];
      Value& out = row[static_cast<size_t>(columns_[f])];
      if (field.text.empty()) {
        if (field.quoted && (type.id == TypeId::String || type.id == TypeId::Binary)) {
          out = type.id == TypeId::String ? Value::string({}) : Value::binary({});
        }
        continue;  // NULL
      }
      if (type.id == TypeId::Array || type.id == TypeId::Struct || type.id == TypeId::Map) {
        error = fmt::format("field '{}': {} is not supported in csv", names_[f], type.toString());
        return false;
      }
      if (!textToValue(field.text, type, out, /*binaryIsBase64=*/false)) {
        error = mismatchError(names_[f], type,
                              quoteValues_ ? "\"" + field.text + "\"" : std::string());
        return false;
      }
    }
    for (const auto& [index, kind] : meta_) row[static_cast<size_t>(index)] = metaValue(kind, rec);
    return true;
  }

 private:
  struct Field {
    std::string text;
    bool quoted = false;
  };

  Field& nextField() {
    if (fieldCount_ == fields_.size()) fields_.emplace_back();
    Field& f = fields_[fieldCount_++];
    f.text.clear();
    f.quoted = false;
    return f;
  }

  // Splits `line` into fields_ (reused between records to keep their buffers).
  bool split(std::string_view line, std::string& error) {
    fieldCount_ = 0;
    size_t i = 0;
    const size_t n = line.size();
    while (true) {
      Field& f = nextField();
      if (i < n && line[i] == '"') {
        f.quoted = true;
        size_t open = i++;
        bool closed = false;
        while (i < n) {
          char c = line[i++];
          if (c == '"') {
            if (i < n && line[i] == '"') {
              f.text.push_back('"');
              ++i;
            } else {
              closed = true;
              break;
            }
          } else {
            f.text.push_back(c);
          }
        }
        if (!closed) {
          error = fmt::format("unterminated quoted field starting at byte {}", open);
          return false;
        }
        if (i < n && line[i] != delimiter_) {
          error = fmt::format("unexpected character after closing quote at byte {}", i);
          return false;
        }
      } else {
        size_t start = i;
        while (i < n && line[i] != delimiter_) ++i;
        f.text.assign(line.data() + start, i - start);
      }
      if (i >= n) break;
      ++i;  // the delimiter
    }
    return true;
  }

  size_t width_;
  char delimiter_;
  std::vector<int> columns_;
  std::vector<std::string> names_;
  std::vector<DataTypePtr> types_;
  std::vector<std::pair<int, MetaKind>> meta_;
  std::vector<Field> fields_;
  size_t fieldCount_ = 0;
};

}  // namespace

std::unique_ptr<RecordDecoder> makeCsvDecoder(const Schema& schema, const DecodeOptions& decode) {
  return std::make_unique<CsvDecoder>(schema, decode);
}

}  // namespace rtsql::format
