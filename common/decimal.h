// DECIMAL(p, s) arithmetic as Spark SQL does it: a value is an unscaled
// integer of at most 38 digits and a scale; results are rounded HALF_UP to the
// result type's scale, and a result that does not fit its precision is NULL
// (Spark's non-ANSI mode). The result types of + - * / % follow Spark's
// DecimalPrecision rules with precision loss allowed (the default): a result
// wider than 38 digits keeps its integer digits and gives up scale, down to 6.
//
// Values of precision up to 18 fit an int64, which is what Value stores for
// them; wider ones use the 128-bit form. Every function here works on the
// 128-bit form; callers on a hot path check `fits64` first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace rtsql {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

namespace decimal {

inline constexpr int kMaxPrecision = 38;
// The precision up to which an unscaled value always fits an int64.
inline constexpr int kMaxInt64Precision = 18;
// Spark's DecimalType.MINIMUM_ADJUSTED_SCALE.
inline constexpr int kMinAdjustedScale = 6;

struct Type {
  int precision = 10;
  int scale = 0;
};

// 10^n for n in [0, 38].
Int128 pow10(int n);
// Whether |v| < 10^precision.
bool fits(Int128 v, int precision);

// Spark's DecimalType.adjustPrecisionScale: a precision over 38 is cut to 38,
// keeping the integer digits and at least min(scale, 6) of the scale.
Type adjust(int precision, int scale);
// Result types of the operators (Spark's DecimalPrecision).
Type addType(Type a, Type b);  // + and -
Type mulType(Type a, Type b);
Type divType(Type a, Type b);
Type modType(Type a, Type b);
// The type both sides of a comparison, CASE or UNION widen to (Spark's
// widerDecimalType, bounded at 38 digits).
Type widerType(Type a, Type b);
// The DECIMAL an integer type converts to: INT is DECIMAL(10, 0), BIGINT DECIMAL(20, 0).
inline Type ofInt() { return {10, 0}; }
inline Type ofBigInt() { return {20, 0}; }
// sum() and avg() of DECIMAL(p, s), as Spark types them.
Type sumType(Type a);
Type avgType(Type a);

// Changes the scale of `v` from `from` to `to`, rounding HALF_UP when digits
// are dropped; nullopt when the result leaves 128 bits.
std::optional<Int128> rescale(Int128 v, int from, int to);
// `v` (scale `from`) as a value of type `to`, or nullopt when it does not fit.
std::optional<Int128> toType(Int128 v, int from, Type to);

// Operations on unscaled values of scales sa and sb giving a value of type
// `to`, or nullopt on overflow or a zero divisor.
std::optional<Int128> add(Int128 a, int sa, Int128 b, int sb, Type to);
std::optional<Int128> sub(Int128 a, int sa, Int128 b, int sb, Type to);
std::optional<Int128> mul(Int128 a, int sa, Int128 b, int sb, Type to);
std::optional<Int128> div(Int128 a, int sa, Int128 b, int sb, Type to);
std::optional<Int128> mod(Int128 a, int sa, Int128 b, int sb, Type to);
// Compares two decimals of any scales exactly.
int compare(Int128 a, int sa, Int128 b, int sb);

// Plain text of an unscaled value at `scale`: "-12.50", "0.001", "7".
std::string toString(Int128 v, int scale);
void append(std::string& out, Int128 v, int scale);
// Parses decimal text ("12.5", "-1e3", " 7 ") rounding HALF_UP to `to`'s
// scale; nullopt when it is not a number or does not fit `to`.
std::optional<Int128> parse(std::string_view text, Type to);
// The precision and scale a literal's text needs (Spark: 1.50 is DECIMAL(3, 2),
// 0.05 DECIMAL(2, 2)), and its unscaled value; nullopt when it has more than 38
// digits or is not plain decimal text.
std::optional<std::pair<Int128, Type>> parseLiteral(std::string_view text);
// The nearest double (correctly rounded, through the decimal text).
double toDouble(Int128 v, int scale);
// A double as a DECIMAL of type `to`, through its shortest decimal text as
// Spark does (0.1 is 0.1, not 0.1000000000000000055...); nullopt for NaN,
// infinities and values that do not fit.
std::optional<Int128> fromDouble(double d, Type to);
// The integer part, truncated toward zero, wrapped to 64 bits as Java's
// BigDecimal.longValue() does.
int64_t toLongWrapped(Int128 v, int scale);

// The unscaled value as Java's BigInteger.toByteArray() writes it: big-endian
// two's complement in the fewest bytes that keep the sign. Spark hashes a wide
// DECIMAL's bytes, and Avro's decimal logical type stores them.
std::string toBigEndianBytes(Int128 v);

// Rounds to `newScale` digits after the point (negative: to tens, hundreds...)
// HALF_UP, HALF_EVEN, toward +inf (ceil) or toward -inf (floor); the result
// keeps the scale max(newScale, 0) and may need one more integer digit.
enum class Rounding { HalfUp, HalfEven, Ceiling, Floor };
Int128 round(Int128 v, int scale, int newScale, Rounding mode);

}  // namespace decimal
}  // namespace rtsql
