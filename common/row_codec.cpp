// Binary encodings of Values: an order-preserving key encoding for state keys
// and a compact value encoding for state values and the shuffle.
//
// Key layout, one tag byte per value and then its payload:
//   0x01 NULL (lowest tag, so NULL sorts first)
//   0x10 BOOLEAN, 0x00 or 0x01
//   0x20 INT and BIGINT (shared, so 1 and 1L encode alike; TINYINT and
//        SMALLINT too), 8 bytes big-endian with the sign bit flipped
//   0x28 DOUBLE, 8 bytes: the IEEE bits with the sign bit flipped for positive
//        numbers and every bit flipped for negative ones; -0.0 is written as 0.0
//        and every NaN as one canonical NaN, which sorts after +Infinity as
//        Value::compare orders it; a FLOAT as the DOUBLE of its value
//   0x30 STRING and 0x38 BINARY, the bytes with 0x00 escaped as 0x00 0xFF and
//        terminated by 0x00 0x01, so a string sorts before its extensions
//   0x40 TIMESTAMP and 0x48 INTERVAL, as integers
//   0x50 ARRAY and 0x58 STRUCT, the elements' encodings and a 0x00 terminator;
//        0x00 is below every tag, so a list sorts before its extensions
//   0x60 DECIMAL, the unscaled value as 16 bytes big-endian with the sign bit
//        flipped (a key column has one scale, so this orders by value); the
//        precision and scale come from the column's type when decoding
//   0x68 DATE, days as an integer
//   0x70 TIMESTAMP_NTZ, wall-clock microseconds as an integer
//   0x78 MAP, its keys and values in turn as a list (SQL compares no maps;
//        this only makes a map encodable wherever a value is)
//   0x80 YEAR-MONTH INTERVAL, its months as an integer
// The tags follow TypeId order, so values of different types order as
// Value::compare orders them, except that integers and doubles are not
// interleaved (a key column has one type, so this never matters in practice).
//
// Value layout: one byte with the TypeId (0 for NULL), then integers as zigzag
// varints, doubles as 8 little-endian bytes, booleans as one byte, strings as a
// varint length and the bytes, arrays and structs as a varint count and the
// elements (a MAP as its entry count and each key followed by its value), a
// DECIMAL as its precision and scale bytes and the unscaled value as a zigzag
// varint of up to 128 bits, a DATE, a TIMESTAMP_NTZ (TypeId 13), a TINYINT and a
// SMALLINT as integers, a FLOAT as 4 little-endian bytes, a YEAR-MONTH
// INTERVAL (TypeId 18) as its months, an integer. Writing the TypeId
// instead of a bare null flag costs nothing and
// makes a decoded value exactly the encoded one (an INT stays an INT even when
// read back as a BIGINT column).
#include "common/row_codec.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/error.h"
#include "common/functions/internal.h"

namespace rtsql {

namespace {

constexpr uint8_t kKeyListEnd = 0x00;
constexpr uint8_t kKeyNull = 0x01;
constexpr uint8_t kKeyBoolean = 0x10;
constexpr uint8_t kKeyInteger = 0x20;
constexpr uint8_t kKeyDouble = 0x28;
constexpr uint8_t kKeyString = 0x30;
constexpr uint8_t kKeyBinary = 0x38;
constexpr uint8_t kKeyTimestamp = 0x40;
constexpr uint8_t kKeyInterval = 0x48;
constexpr uint8_t kKeyArray = 0x50;
constexpr uint8_t kKeyStruct = 0x58;
constexpr uint8_t kKeyDecimal = 0x60;
constexpr uint8_t kKeyDate = 0x68;
constexpr uint8_t kKeyTimestampNtz = 0x70;
constexpr uint8_t kKeyMap = 0x78;
constexpr uint8_t kKeyYearMonthInterval = 0x80;

constexpr uint64_t kSignBit = 1ULL << 63;

[[noreturn]] void truncated() {
  throw InternalError("row codec: truncated or corrupt input");
}

void putBigEndian64(std::string& out, uint64_t v) {
  char buf[8];
  for (int i = 7; i >= 0; --i) {
    buf[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  out.append(buf, 8);
}

uint64_t getBigEndian64(std::string_view& in) {
  if (in.size() < 8) truncated();
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  in.remove_prefix(8);
  return v;
}

uint8_t getByte(std::string_view& in) {
  if (in.empty()) truncated();
  auto b = static_cast<uint8_t>(in[0]);
  in.remove_prefix(1);
  return b;
}

uint64_t doubleKeyBits(double d) {
  if (std::isnan(d)) d = std::numeric_limits<double>::quiet_NaN();
  if (d == 0.0) d = 0.0;  // folds -0.0 into 0.0, which compare() treats as equal
  auto bits = std::bit_cast<uint64_t>(d);
  if (std::isnan(d)) bits &= ~kSignBit;  // a positive NaN sorts after +Infinity
  return (bits & kSignBit) ? ~bits : (bits | kSignBit);
}

double doubleFromKeyBits(uint64_t bits) {
  bits = (bits & kSignBit) ? (bits & ~kSignBit) : ~bits;
  return std::bit_cast<double>(bits);
}

void encodeKeyString(std::string& out, const std::string& s) {
  // Finds the zero bytes with memchr: a group key may be a whole record
  // (kilobytes), which a byte-at-a-time loop made a visible share of the
  // record's cost.
  size_t start = 0;
  while (start < s.size()) {
    const void* zero = std::memchr(s.data() + start, '\0', s.size() - start);
    if (!zero) break;
    const auto i = static_cast<size_t>(static_cast<const char*>(zero) - s.data());
    out.append(s, start, i - start);
    out += '\0';
    out += '\xff';
    start = i + 1;
  }
  out.append(s, start, s.size() - start);
  out += '\0';
  out += '\x01';
}

std::string decodeKeyString(std::string_view& in) {
  std::string s;
  for (;;) {
    size_t zero = in.find('\0');
    if (zero == std::string_view::npos || zero + 1 >= in.size()) truncated();
    s.append(in.substr(0, zero));
    auto marker = static_cast<uint8_t>(in[zero + 1]);
    in.remove_prefix(zero + 2);
    if (marker == 0x01) return s;
    if (marker != 0xff) truncated();
    s += '\0';
  }
}

void putVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

uint64_t getVarint(std::string_view& in) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = getByte(in);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  truncated();
}

void putVarint128(std::string& out, UInt128 v) {
  while (v >= 0x80) {
    out += static_cast<char>((static_cast<unsigned>(v) & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(static_cast<unsigned>(v));
}

UInt128 getVarint128(std::string_view& in) {
  UInt128 v = 0;
  for (int shift = 0; shift < 128; shift += 7) {
    uint8_t b = getByte(in);
    v |= static_cast<UInt128>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  truncated();
}

// A DOUBLE read back for a column of type `type`. A DECIMAL column of state
// written when DECIMAL was an alias of DOUBLE holds doubles: they come back as
// that DECIMAL (NULL when they do not fit), so no operator meets a DOUBLE
// where its plan has a DECIMAL.
Value doubleFor(double d, const DataType& type) {
  if (type.id == TypeId::Float) return Value::float32(static_cast<float>(d));
  if (type.id != TypeId::Decimal) return Value::float64(d);
  auto v = decimal::fromDouble(d, {type.precision, type.scale});
  return v ? Value::decimal(*v, type.precision, type.scale) : Value();
}

// A TIMESTAMP read back for a column of type `type`. A DATE column of state
// written when DATE was an alias of TIMESTAMP holds timestamps at midnight:
// they come back as that DATE (their day), so no operator meets a TIMESTAMP
// where its plan has a DATE. A TIMESTAMP_NTZ column of state written when
// TIMESTAMP_NTZ was a name of TIMESTAMP comes back as the UTC wall clock of
// the instant, the text those releases showed.
Value timestampFor(int64_t micros, const DataType& type) {
  if (type.id == TypeId::TimestampNtz) return Value::timestampNtz(micros);
  if (type.id != TypeId::Date) return Value::timestamp(micros);
  return Value::date(expr_internal::floorDiv(micros, expr_internal::kMicrosPerDay));
}

// A DECIMAL's precision and scale read back from bytes that may be corrupt.
Value checkedDecimal(Int128 v, int precision, int scale) {
  if (precision < 1 || precision > decimal::kMaxPrecision || scale > precision || !decimal::fits(v, precision))
    truncated();
  return Value::decimal(v, precision, scale);
}

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

const DataType& elementType(const DataType& type) {
  return type.element ? *type.element : *DataType::of(TypeId::Null);
}

const DataType& fieldType(const DataType& type, size_t i) {
  return i < type.fields.size() && type.fields[i].type ? *type.fields[i].type
                                                       : *DataType::of(TypeId::Null);
}

const DataType& mapKeyType(const DataType& type) {
  return type.key ? *type.key : *DataType::of(TypeId::Null);
}

const DataType& mapValueType(const DataType& type) {
  return type.value ? *type.value : *DataType::of(TypeId::Null);
}

}  // namespace

void encodeKeyInt(std::string& out, int64_t v) {
  putBigEndian64(out, static_cast<uint64_t>(v) ^ kSignBit);
}

int64_t decodeKeyInt(std::string_view& in) {
  return static_cast<int64_t>(getBigEndian64(in) ^ kSignBit);
}

void encodeKey(std::string& out, const Value& v) {
  switch (v.type()) {
    case TypeId::Null:
      out += static_cast<char>(kKeyNull);
      return;
    case TypeId::Boolean:
      out += static_cast<char>(kKeyBoolean);
      out += v.asBool() ? '\x01' : '\x00';
      return;
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
      out += static_cast<char>(kKeyInteger);
      encodeKeyInt(out, v.asInt());
      return;
    case TypeId::Timestamp:
      out += static_cast<char>(kKeyTimestamp);
      encodeKeyInt(out, v.asInt());
      return;
    case TypeId::Interval:
      out += static_cast<char>(kKeyInterval);
      encodeKeyInt(out, v.asInt());
      return;
    case TypeId::Double:
    case TypeId::Float:
      out += static_cast<char>(kKeyDouble);
      putBigEndian64(out, doubleKeyBits(v.asDouble()));
      return;
    case TypeId::Decimal: {
      auto u = static_cast<UInt128>(v.asDecimal());
      out += static_cast<char>(kKeyDecimal);
      putBigEndian64(out, static_cast<uint64_t>(u >> 64) ^ kSignBit);
      putBigEndian64(out, static_cast<uint64_t>(u));
      return;
    }
    case TypeId::Date:
      out += static_cast<char>(kKeyDate);
      encodeKeyInt(out, v.asInt());
      return;
    case TypeId::TimestampNtz:
      out += static_cast<char>(kKeyTimestampNtz);
      encodeKeyInt(out, v.asInt());
      return;
    case TypeId::YearMonthInterval:
      out += static_cast<char>(kKeyYearMonthInterval);
      encodeKeyInt(out, v.asInt());
      return;
    case TypeId::String:
    case TypeId::Binary:
      out += static_cast<char>(v.type() == TypeId::String ? kKeyString : kKeyBinary);
      encodeKeyString(out, v.asString());
      return;
    case TypeId::Array:
    case TypeId::Struct:
      out += static_cast<char>(v.type() == TypeId::Array ? kKeyArray : kKeyStruct);
      for (const auto& item : v.asList()) encodeKey(out, item);
      out += static_cast<char>(kKeyListEnd);
      return;
    case TypeId::Map:
      out += static_cast<char>(kKeyMap);
      for (const auto& item : v.asList()) encodeKey(out, item);
      out += static_cast<char>(kKeyListEnd);
      return;
  }
}

// The keys of a list (an ARRAY's elements, a STRUCT's fields, a MAP's keys and
// values in turn) up to its terminator; `typeOf(i)` is the i-th item's type.
template <typename TypeOf>
ValueList decodeKeyList(std::string_view& in, TypeOf typeOf) {
  ValueList items;
  for (;;) {
    if (in.empty()) truncated();
    if (static_cast<uint8_t>(in[0]) == kKeyListEnd) {
      in.remove_prefix(1);
      return items;
    }
    items.push_back(decodeKey(in, typeOf(items.size())));
  }
}

Value decodeKey(std::string_view& in, const DataType& type) {
  uint8_t tag = getByte(in);
  switch (tag) {
    case kKeyNull:
      return Value();
    case kKeyBoolean:
      return Value::boolean(getByte(in) != 0);
    case kKeyInteger: {
      int64_t v = decodeKeyInt(in);
      switch (type.id) {
        case TypeId::Int: return Value::integer(static_cast<int32_t>(v));
        case TypeId::SmallInt: return Value::smallint(static_cast<int16_t>(v));
        case TypeId::TinyInt: return Value::tinyint(static_cast<int8_t>(v));
        default: return Value::bigint(v);
      }
    }
    case kKeyTimestamp:
      return timestampFor(decodeKeyInt(in), type);
    case kKeyInterval:
      return Value::interval(decodeKeyInt(in));
    case kKeyDouble:
      return doubleFor(doubleFromKeyBits(getBigEndian64(in)), type);
    case kKeyDecimal: {
      uint64_t hi = getBigEndian64(in) ^ kSignBit;
      uint64_t lo = getBigEndian64(in);
      auto v = static_cast<Int128>((static_cast<UInt128>(hi) << 64) | lo);
      if (type.id != TypeId::Decimal) truncated();
      return checkedDecimal(v, type.precision, type.scale);
    }
    case kKeyDate:
      return Value::date(decodeKeyInt(in));
    case kKeyTimestampNtz:
      return Value::timestampNtz(decodeKeyInt(in));
    case kKeyYearMonthInterval:
      return Value::yearMonthInterval(static_cast<int32_t>(decodeKeyInt(in)));
    case kKeyString:
      return Value::string(decodeKeyString(in));
    case kKeyBinary:
      return Value::binary(decodeKeyString(in));
    case kKeyArray:
      return Value::array(decodeKeyList(in, [&](size_t) -> const DataType& { return elementType(type); }));
    case kKeyStruct:
      return Value::structure(decodeKeyList(in, [&](size_t i) -> const DataType& { return fieldType(type, i); }));
    case kKeyMap: {
      ValueList items = decodeKeyList(
          in, [&](size_t i) -> const DataType& { return i % 2 == 0 ? mapKeyType(type) : mapValueType(type); });
      if (items.size() % 2 != 0) truncated();
      return Value::map(std::move(items));
    }
    default:
      truncated();
  }
}

void encodeValue(std::string& out, const Value& v) {
  out += static_cast<char>(v.type());
  switch (v.type()) {
    case TypeId::Null:
      return;
    case TypeId::Boolean:
      out += v.asBool() ? '\x01' : '\x00';
      return;
    case TypeId::Int:
    case TypeId::BigInt:
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::Timestamp:
    case TypeId::Interval:
    case TypeId::Date:
    case TypeId::TimestampNtz:
    case TypeId::YearMonthInterval:
      putVarint(out, zigzag(v.asInt()));
      return;
    case TypeId::Float: {
      auto bits = std::bit_cast<uint32_t>(static_cast<float>(v.asDouble()));
      char buf[4];
      for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
      out.append(buf, 4);
      return;
    }
    case TypeId::Decimal: {
      Int128 d = v.asDecimal();
      out += static_cast<char>(v.decimalPrecision());
      out += static_cast<char>(v.decimalScale());
      putVarint128(out, (static_cast<UInt128>(d) << 1) ^ static_cast<UInt128>(d >> 127));
      return;
    }
    case TypeId::Double: {
      auto bits = std::bit_cast<uint64_t>(v.asDouble());
      char buf[8];
      for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>((bits >> (8 * i)) & 0xff);
      out.append(buf, 8);
      return;
    }
    case TypeId::String:
    case TypeId::Binary:
      putVarint(out, v.asString().size());
      out += v.asString();
      return;
    case TypeId::Array:
    case TypeId::Struct:
      putVarint(out, v.asList().size());
      for (const auto& item : v.asList()) encodeValue(out, item);
      return;
    case TypeId::Map:
      putVarint(out, v.asList().size() / 2);
      for (const auto& item : v.asList()) encodeValue(out, item);
      return;
  }
}

Value decodeValue(std::string_view& in, const DataType& type) {
  auto tag = static_cast<TypeId>(getByte(in));
  switch (tag) {
    case TypeId::Null:
      return Value();
    case TypeId::Boolean:
      return Value::boolean(getByte(in) != 0);
    case TypeId::Int:
      return Value::integer(static_cast<int32_t>(unzigzag(getVarint(in))));
    case TypeId::BigInt:
      return Value::bigint(unzigzag(getVarint(in)));
    case TypeId::TinyInt:
      return Value::tinyint(static_cast<int8_t>(unzigzag(getVarint(in))));
    case TypeId::SmallInt:
      return Value::smallint(static_cast<int16_t>(unzigzag(getVarint(in))));
    case TypeId::Float: {
      if (in.size() < 4) truncated();
      uint32_t bits = 0;
      for (int i = 3; i >= 0; --i) bits = (bits << 8) | static_cast<uint8_t>(in[i]);
      in.remove_prefix(4);
      return Value::float32(std::bit_cast<float>(bits));
    }
    case TypeId::Timestamp:
      return timestampFor(unzigzag(getVarint(in)), type);
    case TypeId::Interval:
      return Value::interval(unzigzag(getVarint(in)));
    case TypeId::Date:
      return Value::date(unzigzag(getVarint(in)));
    case TypeId::TimestampNtz:
      return Value::timestampNtz(unzigzag(getVarint(in)));
    case TypeId::YearMonthInterval:
      return Value::yearMonthInterval(static_cast<int32_t>(unzigzag(getVarint(in))));
    case TypeId::Decimal: {
      int precision = getByte(in);
      int scale = getByte(in);
      UInt128 z = getVarint128(in);
      auto v = static_cast<Int128>(z >> 1) ^ -static_cast<Int128>(z & 1);
      return checkedDecimal(v, precision, scale);
    }
    case TypeId::Double: {
      if (in.size() < 8) truncated();
      uint64_t bits = 0;
      for (int i = 7; i >= 0; --i) bits = (bits << 8) | static_cast<uint8_t>(in[i]);
      in.remove_prefix(8);
      return doubleFor(std::bit_cast<double>(bits), type);
    }
    case TypeId::String:
    case TypeId::Binary: {
      uint64_t n = getVarint(in);
      if (n > in.size()) truncated();
      std::string s(in.substr(0, n));
      in.remove_prefix(n);
      return tag == TypeId::String ? Value::string(std::move(s)) : Value::binary(std::move(s));
    }
    case TypeId::Array:
    case TypeId::Struct: {
      uint64_t n = getVarint(in);
      // Every element takes at least one byte, which bounds the reservation
      // on corrupt input.
      if (n > in.size()) truncated();
      ValueList items;
      items.reserve(n);
      for (uint64_t i = 0; i < n; ++i)
        items.push_back(
            decodeValue(in, tag == TypeId::Array ? elementType(type) : fieldType(type, i)));
      return tag == TypeId::Array ? Value::array(std::move(items))
                                  : Value::structure(std::move(items));
    }
    case TypeId::Map: {
      uint64_t n = getVarint(in);
      // Every key and value takes at least one byte.
      if (n > in.size() / 2) truncated();
      ValueList items;
      items.reserve(2 * n);
      for (uint64_t i = 0; i < n; ++i) {
        items.push_back(decodeValue(in, mapKeyType(type)));
        items.push_back(decodeValue(in, mapValueType(type)));
      }
      return Value::map(std::move(items));
    }
  }
  truncated();
}

void encodeRow(std::string& out, const Row& row) {
  putVarint(out, row.size());
  for (const auto& v : row) encodeValue(out, v);
}

Row decodeRow(std::string_view in, const std::vector<DataTypePtr>& types) {
  uint64_t n = getVarint(in);
  if (n != types.size())
    throw InternalError("row codec: encoded row has " + std::to_string(n) + " columns, expected " +
                        std::to_string(types.size()));
  Row row;
  row.reserve(n);
  for (size_t i = 0; i < n; ++i)
    row.push_back(decodeValue(in, types[i] ? *types[i] : *DataType::of(TypeId::Null)));
  if (!in.empty()) truncated();
  return row;
}

}  // namespace rtsql
