// The json decoder: one JSON object per record, columns read by name.
//
// It walks the object once with simdjson's on-demand parser, in document order,
// and converts each field that names a column straight into the row; fields that
// name no column are skipped without being materialized. The parser and a padded
// copy buffer live as long as the decoder, so a record costs no allocation beyond
// the Values it produces; a row the caller reuses is refilled in place (a string
// column's buffer is reused), and every column the record does not set is
// made NULL, so nothing of the previous record stays in it.
//
// Producers write every record with the same keys in the same order, so the
// column of the n-th key is remembered by the key's text and position: a
// record like the previous one costs one comparison per key to map.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "connectors/format/decode_util.h"
#include "connectors/format/decoders.h"

namespace rtsql::format {

namespace {

namespace od = simdjson::ondemand;

// A field's place in the record, for error messages ("field 'a.b[2]'"); built
// on the stack while descending, turned into text only when an error occurs.
struct FieldPath {
  const FieldPath* parent = nullptr;
  std::string_view name;
  int64_t index = -1;  // array element when >= 0

  std::string toString() const {
    std::string s = parent ? parent->toString() : std::string();
    if (index >= 0) return s + "[" + std::to_string(index) + "]";
    if (!s.empty()) s += '.';
    s.append(name.data(), name.size());
    return s;
  }
};

class JsonDecoder final : public RecordDecoder {
 public:
  JsonDecoder(const Schema& schema, const DecodeOptions& decode) : width_(schema.size()) {
    ignoreMissing_ = decode.jsonIgnoreMissing;
    for (size_t i = 0; i < schema.size(); ++i) {
      const Column& c = schema.columns[i];
      MetaKind kind = metaKindOf(c);
      if (kind != MetaKind::None) {
        meta_.push_back({static_cast<int>(i), kind});
      } else if (!c.hidden) {
        columns_.push_back({static_cast<int>(i), c.name, c.type});
      } else {
        unread_.push_back(static_cast<int>(i));
      }
    }
    seen_.resize(columns_.size());
  }

  // On failure the row's contents are unspecified (callers drop it).
  bool decode(const RecordView& rec, Row& row, std::string& error) override {
    if (row.size() != width_) resetRow(row, width_);
    if (rec.value == nullptr) {
      error = "null value";
      return false;
    }
    const size_t len = rec.valueLen;
    if (buffer_.size() < len + simdjson::SIMDJSON_PADDING) buffer_.resize(len + simdjson::SIMDJSON_PADDING);
    std::memcpy(buffer_.data(), rec.value, len);
    std::memset(buffer_.data() + len, 0, simdjson::SIMDJSON_PADDING);
    base_ = buffer_.data();
    len_ = len;

    od::document doc;
    if (auto err = parser_.iterate(buffer_.data(), len, buffer_.size()).get(doc)) {
      return jsonError(nullptr, err, error);
    }
    doc_ = &doc;
    od::object obj;
    od::json_type type;
    if (auto err = doc.type().get(type)) return jsonError(&doc, err, error);
    if (type != od::json_type::object) {
      error = "expected a JSON object, got " + describeType(type);
      return false;
    }
    if (auto err = doc.get_object().get(obj)) return jsonError(&doc, err, error);
    std::fill(seen_.begin(), seen_.end(), 0);
    size_t hint = 0;
    size_t ordinal = 0;
    for (auto fieldResult : obj) {
      od::field field;
      if (auto err = std::move(fieldResult).get(field)) return jsonError(&doc, err, error);
      int c = columnOf(field, ordinal++, hint, &doc, error);
      if (c == kKeyError) return false;
      if (c < 0) continue;
      hint = static_cast<size_t>(c) + 1;
      const ColumnInfo& col = columns_[static_cast<size_t>(c)];
      seen_[static_cast<size_t>(c)] = 1;
      FieldPath path{nullptr, col.name, -1};
      if (!convert(field.value(), *col.type, row[static_cast<size_t>(col.index)], path, error))
        return false;
    }
    // Anything after the closing brace is not one JSON object.
    const char* rest = nullptr;
    if (!doc.current_location().get(rest) && rest != nullptr) {
      error = "invalid JSON at byte " + std::to_string(rest - base_) + ": trailing content";
      return false;
    }
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (seen_[c]) continue;
      if (!ignoreMissing_) {
        error = "field '" + columns_[c].name + "' is missing";
        return false;
      }
      row[static_cast<size_t>(columns_[c].index)] = Value();
    }
    for (int index : unread_) row[static_cast<size_t>(index)] = Value();
    for (const auto& [index, kind] : meta_) row[static_cast<size_t>(index)] = metaValue(kind, rec);
    return true;
  }

 private:
  struct ColumnInfo {
    int index;
    std::string name;
    DataTypePtr type;
  };

  static std::string describeType(od::json_type t) {
    switch (t) {
      case od::json_type::array: return "an array";
      case od::json_type::object: return "an object";
      case od::json_type::number: return "a number";
      case od::json_type::string: return "a string";
      case od::json_type::boolean: return "a boolean";
      case od::json_type::null: return "null";
    }
    return "a value";
  }

  // Column position for a key: the column after the previous match first (JSON
  // producers usually write fields in the declared order), then an exact match,
  // then a case-insensitive one.
  int lookup(std::string_view key, size_t hint) const {
    if (hint < columns_.size() && columns_[hint].name == key) return static_cast<int>(hint);
    for (size_t i = 0; i < columns_.size(); ++i)
      if (columns_[i].name == key) return static_cast<int>(i);
    for (size_t i = 0; i < columns_.size(); ++i)
      if (iequals(columns_[i].name, key)) return static_cast<int>(i);
    return -1;
  }

  static constexpr int kKeyError = -2;

  // The column a field's key names (-1: none; kKeyError: bad JSON, `error`
  // set). The cache entry for the key's position answers when the key is
  // written exactly as the one seen there before; keys with escapes are never
  // cached, so a cached text compares byte for byte with the raw key.
  int columnOf(od::field& field, size_t ordinal, size_t hint, od::document* doc,
               std::string& error) {
    od::raw_json_string raw = field.key();
    if (ordinal < keyCache_.size()) {
      const CachedKey& k = keyCache_[ordinal];
      if (k.plain && raw.unsafe_is_equal(k.text)) return k.column;
    }
    std::string_view key;
    if (auto err = field.unescaped_key().get(key)) {
      jsonError(doc, err, error);
      return kKeyError;
    }
    int c = lookup(key, hint);
    if (ordinal < kMaxCachedKeys) {
      if (keyCache_.size() <= ordinal) keyCache_.resize(ordinal + 1);
      CachedKey& k = keyCache_[ordinal];
      k.text.assign(key.data(), key.size());
      k.column = c;
      // Unescaping never lengthens a key, so the raw text has key.size() bytes to compare.
      k.plain = std::memcmp(raw.raw(), key.data(), key.size()) == 0 && raw.raw()[key.size()] == '"';
    }
    return c;
  }

  bool jsonError(od::document* doc, simdjson::error_code err, std::string& error) {
    size_t at = len_;
    const char* loc = nullptr;
    if (doc != nullptr && !doc->current_location().get(loc) && loc != nullptr) {
      at = static_cast<size_t>(loc - base_);
    }
    if (at > len_) at = len_;
    error = "invalid JSON at byte " + std::to_string(at) + ": " + simdjson::error_message(err);
    return false;
  }

  // The raw text of a scalar token for messages: strings keep their quotes.
  static std::string_view tokenText(od::value& v) {
    std::string_view raw = v.raw_json_token();
    while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' ||
                            raw.back() == '\t'))
      raw.remove_suffix(1);
    return raw;
  }

  bool mismatch(const FieldPath& path, const DataType& type, std::string_view got,
                std::string& error) {
    error = mismatchError(path.toString(), type, quoteValues_ ? got : std::string_view());
    return false;
  }

  bool convert(od::value v, const DataType& type, Value& out, const FieldPath& path,
               std::string& error) {
    od::json_type jt;
    if (auto err = v.type().get(jt)) return jsonError(doc_, err, error);
    switch (jt) {
      case od::json_type::null:
        out = Value();
        return true;
      case od::json_type::string: {
        std::string_view raw = tokenText(v);
        std::string_view s;
        if (auto err = v.get_string().get(s)) return jsonError(doc_, err, error);
        if (type.id == TypeId::Array || type.id == TypeId::Struct || type.id == TypeId::Map)
          return mismatch(path, type, raw, error);
        if (!textToValue(s, type, out, /*binaryIsBase64=*/true)) return mismatch(path, type, raw, error);
        return true;
      }
      case od::json_type::number:
        return convertNumber(v, type, out, path, error);
      case od::json_type::boolean: {
        std::string_view raw = tokenText(v);
        bool b = false;
        if (auto err = v.get_bool().get(b)) return jsonError(doc_, err, error);
        if (type.id == TypeId::Boolean) {
          out = Value::boolean(b);
        } else if (type.id == TypeId::String) {
          out = Value::string(b ? "true" : "false");
        } else {
          return mismatch(path, type, raw, error);
        }
        return true;
      }
      case od::json_type::object: {
        od::object obj;
        if (auto err = v.get_object().get(obj)) return jsonError(doc_, err, error);
        if (type.id == TypeId::String) {
          std::string_view raw;
          if (auto err = obj.raw_json().get(raw)) return jsonError(doc_, err, error);
          out = Value::string(std::string(raw));
          return true;
        }
        if (type.id == TypeId::Map) return convertMap(obj, type, out, path, error);
        if (type.id != TypeId::Struct) return mismatch(path, type, "an object", error);
        return convertStruct(obj, type, out, path, error);
      }
      case od::json_type::array: {
        od::array arr;
        if (auto err = v.get_array().get(arr)) return jsonError(doc_, err, error);
        if (type.id == TypeId::String) {
          std::string_view raw;
          if (auto err = arr.raw_json().get(raw)) return jsonError(doc_, err, error);
          out = Value::string(std::string(raw));
          return true;
        }
        if (type.id != TypeId::Array) return mismatch(path, type, "an array", error);
        ValueList items;
        int64_t i = 0;
        for (auto elementResult : arr) {
          od::value element;
          if (auto err = std::move(elementResult).get(element)) return jsonError(doc_, err, error);
          FieldPath child{&path, {}, i++};
          items.emplace_back();
          if (!convert(element, *type.element, items.back(), child, error)) return false;
        }
        out = Value::array(std::move(items));
        return true;
      }
    }
    return mismatch(path, type, tokenText(v), error);
  }

  bool convertStruct(od::object& obj, const DataType& type, Value& out, const FieldPath& path,
                     std::string& error) {
    ValueList fields(type.fields.size());
    for (auto fieldResult : obj) {
      od::field field;
      if (auto err = std::move(fieldResult).get(field)) return jsonError(doc_, err, error);
      std::string_view key;
      if (auto err = field.unescaped_key().get(key)) return jsonError(doc_, err, error);
      int f = -1;
      for (size_t i = 0; i < type.fields.size(); ++i) {
        if (type.fields[i].name == key) {
          f = static_cast<int>(i);
          break;
        }
      }
      if (f < 0) f = type.fieldIndex(key);
      if (f < 0) continue;
      const StructField& sf = type.fields[static_cast<size_t>(f)];
      FieldPath child{&path, sf.name, -1};
      if (!convert(field.value(), *sf.type, fields[static_cast<size_t>(f)], child, error)) return false;
    }
    out = Value::structure(std::move(fields));
    return true;
  }

  // An object for a MAP column: its names are the keys, read as the key type
  // as text is; a name that is no such key, or one given twice, is a
  // mismatch of the record.
  bool convertMap(od::object& obj, const DataType& type, Value& out, const FieldPath& path,
                  std::string& error) {
    const DataType& kt = type.key ? *type.key : *DataType::of(TypeId::String);
    const DataType& vt = type.value ? *type.value : *DataType::of(TypeId::String);
    ValueList items;
    for (auto fieldResult : obj) {
      od::field field;
      if (auto err = std::move(fieldResult).get(field)) return jsonError(doc_, err, error);
      std::string_view key;
      if (auto err = field.unescaped_key().get(key)) return jsonError(doc_, err, error);
      items.emplace_back();
      if (!textToValue(key, kt, items.back(), /*binaryIsBase64=*/true) || items.back().isNull())
        return mismatch(path, type, "an object", error);
      FieldPath child{&path, key, -1};
      items.emplace_back();
      if (!convert(field.value(), vt, items.back(), child, error)) return false;
    }
    // Sorted key indices find a duplicate in n log n comparisons.
    std::vector<size_t> keys(items.size() / 2);
    for (size_t i = 0; i < keys.size(); ++i) keys[i] = 2 * i;
    std::sort(keys.begin(), keys.end(),
              [&](size_t a, size_t b) { return items[a].compare(items[b]) < 0; });
    for (size_t i = 1; i < keys.size(); ++i) {
      if (items[keys[i - 1]].compare(items[keys[i]]) == 0) {
        error = mismatchError(path.toString(), type, std::string_view()) + ": key " +
                items[keys[i]].toString() + " appears twice";
        return false;
      }
    }
    out = Value::map(std::move(items));
    return true;
  }

  // A JSON number for a DECIMAL column, from its own digits, never through a
  // double. Out of convertNumber: inlined there, its 128-bit arithmetic made
  // every number of any column pay for the registers it needs.
  [[gnu::noinline]] bool convertDecimal(std::string_view raw, const DataType& type, Value& out,
                                        const FieldPath& path, std::string& error) {
    auto d = decimal::parse(raw, {type.precision, type.scale});
    if (!d) return mismatch(path, type, raw, error);
    out = Value::decimal(*d, type.precision, type.scale);
    return true;
  }

  bool convertNumber(od::value& v, const DataType& type, Value& out, const FieldPath& path,
                     std::string& error) {
    std::string_view raw = tokenText(v);
    switch (type.id) {
      case TypeId::Int:
      case TypeId::BigInt: {
        int64_t n = 0;
        if (v.get_int64().get(n)) return mismatch(path, type, raw, error);
        if (type.id == TypeId::Int) {
          if (n < std::numeric_limits<int32_t>::min() || n > std::numeric_limits<int32_t>::max())
            return mismatch(path, type, raw, error);
          out = Value::integer(static_cast<int32_t>(n));
        } else {
          out = Value::bigint(n);
        }
        return true;
      }
      case TypeId::Double: {
        double d = 0;
        if (v.get_double().get(d)) return mismatch(path, type, raw, error);
        out = Value::float64(d);
        return true;
      }
      case TypeId::TinyInt:
      case TypeId::SmallInt: {
        int64_t n = 0;
        if (v.get_int64().get(n)) return mismatch(path, type, raw, error);
        const bool tiny = type.id == TypeId::TinyInt;
        if (n < (tiny ? INT8_MIN : INT16_MIN) || n > (tiny ? INT8_MAX : INT16_MAX))
          return mismatch(path, type, raw, error);
        out = tiny ? Value::tinyint(static_cast<int8_t>(n)) : Value::smallint(static_cast<int16_t>(n));
        return true;
      }
      case TypeId::Float: {
        double d = 0;
        if (v.get_double().get(d)) return mismatch(path, type, raw, error);
        out = Value::float32(static_cast<float>(d));
        return true;
      }
      case TypeId::Decimal:
        return convertDecimal(raw, type, out, path, error);
      case TypeId::Timestamp: {
        // A number is epoch milliseconds, as Kafka timestamps and most JSON
        // producers write them.
        int64_t ms = 0;
        if (!v.get_int64().get(ms)) {
          if (ms > INT64_MAX / 1000 || ms < INT64_MIN / 1000) return mismatch(path, type, raw, error);
          out = Value::timestamp(ms * 1000);
          return true;
        }
        double d = 0;
        if (v.get_double().get(d) || !std::isfinite(d) || std::fabs(d) > 9.2e15)
          return mismatch(path, type, raw, error);
        out = Value::timestamp(static_cast<int64_t>(std::llround(d * 1000.0)));
        return true;
      }
      case TypeId::String:
        out = Value::string(std::string(raw));
        return true;
      case TypeId::Interval: {
        int64_t n = 0;
        if (v.get_int64().get(n)) return mismatch(path, type, raw, error);
        out = Value::interval(n);
        return true;
      }
      default:
        return mismatch(path, type, raw, error);
    }
  }

  size_t width_;
  bool ignoreMissing_ = true;
  std::vector<ColumnInfo> columns_;
  std::vector<std::pair<int, MetaKind>> meta_;
  std::vector<int> unread_;  // hidden columns no record sets: always NULL
  std::vector<char> seen_;
  // Key text and column (-1 for none) by position in the object, from the
  // records before; bounded so that objects with many keys cost no memory.
  struct CachedKey {
    std::string text;
    int column = -1;
    bool plain = false;  // written without escapes
  };
  static constexpr size_t kMaxCachedKeys = 256;
  std::vector<CachedKey> keyCache_;
  od::parser parser_;
  std::string buffer_;
  const char* base_ = nullptr;
  size_t len_ = 0;
  od::document* doc_ = nullptr;
};

}  // namespace

std::unique_ptr<RecordDecoder> makeJsonDecoder(const Schema& schema, const DecodeOptions& decode) {
  return std::make_unique<JsonDecoder>(schema, decode);
}

}  // namespace rtsql::format
