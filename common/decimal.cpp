// DECIMAL arithmetic on 128-bit unscaled values. A product or a scaled-up
// dividend can need up to 77 digits before it is rounded back to 38, so those
// two go through a small 256-bit form (four 64-bit limbs) when the 128-bit
// fast path would overflow.
#include "common/decimal.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

namespace rtsql::decimal {

namespace {

constexpr std::array<Int128, kMaxPrecision + 1> makePowers() {
  std::array<Int128, kMaxPrecision + 1> p{};
  Int128 v = 1;
  for (int i = 0; i <= kMaxPrecision; ++i) {
    p[static_cast<size_t>(i)] = v;
    if (i < kMaxPrecision) v *= 10;
  }
  return p;
}
constexpr auto kPow10 = makePowers();

UInt128 absU(Int128 v) { return v < 0 ? UInt128(0) - static_cast<UInt128>(v) : static_cast<UInt128>(v); }

// The largest magnitude an Int128 result may have (|INT128_MIN| is not used).
constexpr UInt128 kMaxMagnitude = (UInt128(1) << 127) - 1;

std::optional<Int128> signedOf(UInt128 mag, bool negative) {
  if (mag > kMaxMagnitude) return std::nullopt;
  auto v = static_cast<Int128>(mag);
  return negative ? -v : v;
}

// An unsigned 256-bit number, least significant limb first.
struct U256 {
  std::array<uint64_t, 4> limb{};
};

U256 mul128(UInt128 a, UInt128 b) {
  uint64_t x[2] = {static_cast<uint64_t>(a), static_cast<uint64_t>(a >> 64)};
  uint64_t y[2] = {static_cast<uint64_t>(b), static_cast<uint64_t>(b >> 64)};
  U256 r;
  for (int i = 0; i < 2; ++i) {
    UInt128 carry = 0;
    for (int j = 0; j < 2; ++j) {
      UInt128 cur = static_cast<UInt128>(x[i]) * y[j] + r.limb[static_cast<size_t>(i + j)] + carry;
      r.limb[static_cast<size_t>(i + j)] = static_cast<uint64_t>(cur);
      carry = cur >> 64;
    }
    r.limb[static_cast<size_t>(i + 2)] = static_cast<uint64_t>(carry);
  }
  return r;
}

// n / d for a 64-bit d, in place; returns the remainder.
uint64_t divSmall(U256& n, uint64_t d) {
  UInt128 rem = 0;
  for (int i = 3; i >= 0; --i) {
    UInt128 cur = (rem << 64) | n.limb[static_cast<size_t>(i)];
    n.limb[static_cast<size_t>(i)] = static_cast<uint64_t>(cur / d);
    rem = cur % d;
  }
  return static_cast<uint64_t>(rem);
}

// n / 10^k truncated, in place.
void divPow10(U256& n, int k) {
  while (k > 0) {
    int step = std::min(k, 19);
    divSmall(n, static_cast<uint64_t>(kPow10[static_cast<size_t>(step)]));
    k -= step;
  }
}

bool high128Zero(const U256& n) { return n.limb[2] == 0 && n.limb[3] == 0; }
UInt128 low128(const U256& n) { return (static_cast<UInt128>(n.limb[1]) << 64) | n.limb[0]; }

// n / 10^k rounded HALF_UP (n non-negative), nullopt when it leaves 128 bits.
std::optional<UInt128> divPow10HalfUp(U256 n, int k) {
  if (k <= 0) return high128Zero(n) ? std::optional<UInt128>(low128(n)) : std::nullopt;
  divPow10(n, k - 1);
  uint64_t last = divSmall(n, 10);
  if (!high128Zero(n)) return std::nullopt;
  UInt128 q = low128(n);
  if (last >= 5) {
    if (q == ~UInt128(0)) return std::nullopt;
    ++q;
  }
  return q;
}

// n / d rounded HALF_UP for a 256-bit n and a nonzero d < 2^127, by binary long
// division: the slow path of a division whose scaled dividend is too wide.
std::optional<UInt128> divWideHalfUp(const U256& n, UInt128 d) {
  UInt128 rem = 0;
  U256 q;
  for (int bit = 255; bit >= 0; --bit) {
    rem = (rem << 1) | ((n.limb[static_cast<size_t>(bit / 64)] >> (bit % 64)) & 1);
    if (rem >= d) {
      rem -= d;
      q.limb[static_cast<size_t>(bit / 64)] |= uint64_t(1) << (bit % 64);
    }
  }
  if (!high128Zero(q)) return std::nullopt;
  UInt128 out = low128(q);
  if (rem >= d - rem) {
    if (out == ~UInt128(0)) return std::nullopt;
    ++out;
  }
  return out;
}

int cmp3(Int128 a, Int128 b) { return a < b ? -1 : (a > b ? 1 : 0); }

}  // namespace

Int128 pow10(int n) { return kPow10[static_cast<size_t>(std::clamp(n, 0, kMaxPrecision))]; }

bool fits(Int128 v, int precision) {
  if (precision >= kMaxPrecision) return absU(v) < static_cast<UInt128>(kPow10[kMaxPrecision]);
  return absU(v) < static_cast<UInt128>(pow10(precision));
}

Type adjust(int precision, int scale) {
  if (precision <= kMaxPrecision) return {precision, scale};
  int intDigits = precision - scale;
  int minScale = std::min(scale, kMinAdjustedScale);
  return {kMaxPrecision, std::max(kMaxPrecision - intDigits, minScale)};
}

Type addType(Type a, Type b) {
  int scale = std::max(a.scale, b.scale);
  return adjust(std::max(a.precision - a.scale, b.precision - b.scale) + scale + 1, scale);
}

Type mulType(Type a, Type b) { return adjust(a.precision + b.precision + 1, a.scale + b.scale); }

Type divType(Type a, Type b) {
  int scale = std::max(kMinAdjustedScale, a.scale + b.precision + 1);
  return adjust(a.precision - a.scale + b.scale + scale, scale);
}

Type modType(Type a, Type b) {
  int scale = std::max(a.scale, b.scale);
  return adjust(std::min(a.precision - a.scale, b.precision - b.scale) + scale, scale);
}

Type widerType(Type a, Type b) {
  int scale = std::max(a.scale, b.scale);
  int range = std::max(a.precision - a.scale, b.precision - b.scale);
  return {std::min(range + scale, kMaxPrecision), std::min(scale, kMaxPrecision)};
}

Type sumType(Type a) { return {std::min(a.precision + 10, kMaxPrecision), a.scale}; }

Type avgType(Type a) {
  return {std::min(a.precision + 4, kMaxPrecision), std::min(a.scale + 4, kMaxPrecision)};
}

std::optional<Int128> rescale(Int128 v, int from, int to) {
  if (to == from) return v;
  if (to > from) {
    int k = to - from;
    if (v == 0) return Int128(0);
    if (k > kMaxPrecision) return std::nullopt;
    Int128 r;
    if (__builtin_mul_overflow(v, kPow10[static_cast<size_t>(k)], &r)) return std::nullopt;
    return r;
  }
  int k = from - to;
  if (k > kMaxPrecision) return Int128(0);
  UInt128 mag = absU(v);
  UInt128 p = static_cast<UInt128>(kPow10[static_cast<size_t>(k)]);
  UInt128 q = mag / p, r = mag % p;
  if (r >= p - r) ++q;  // HALF_UP: a remainder of at least half rounds away from zero
  return signedOf(q, v < 0);
}

std::optional<Int128> toType(Int128 v, int from, Type to) {
  auto r = rescale(v, from, to.scale);
  if (!r || !fits(*r, to.precision)) return std::nullopt;
  return r;
}

std::optional<Int128> add(Int128 a, int sa, Int128 b, int sb, Type to) {
  int s = std::max(sa, sb);
  auto x = rescale(a, sa, s), y = rescale(b, sb, s);
  Int128 r;
  if (!x || !y || __builtin_add_overflow(*x, *y, &r)) return std::nullopt;
  return toType(r, s, to);
}

std::optional<Int128> sub(Int128 a, int sa, Int128 b, int sb, Type to) {
  int s = std::max(sa, sb);
  auto x = rescale(a, sa, s), y = rescale(b, sb, s);
  Int128 r;
  if (!x || !y || __builtin_sub_overflow(*x, *y, &r)) return std::nullopt;
  return toType(r, s, to);
}

std::optional<Int128> mul(Int128 a, int sa, Int128 b, int sb, Type to) {
  Int128 r;
  if (!__builtin_mul_overflow(a, b, &r)) return toType(r, sa + sb, to);
  // The exact product is wider than 128 bits: round it down to the result's
  // scale in 256 bits.
  bool negative = (a < 0) != (b < 0);
  int drop = sa + sb - to.scale;
  if (drop <= 0) return std::nullopt;
  auto q = divPow10HalfUp(mul128(absU(a), absU(b)), drop);
  if (!q) return std::nullopt;
  auto v = signedOf(*q, negative);
  if (!v || !fits(*v, to.precision)) return std::nullopt;
  return v;
}

std::optional<Int128> div(Int128 a, int sa, Int128 b, int sb, Type to) {
  if (b == 0) return std::nullopt;
  // a / b at scale to.scale is (a * 10^e) / b with e = to.scale - sa + sb.
  int e = to.scale - sa + sb;
  if (e < 0) {
    auto scaled = rescale(b, 0, -e);
    if (!scaled) return Int128(0);
    b = *scaled;
    e = 0;
  }
  bool negative = (a < 0) != (b < 0);
  UInt128 d = absU(b);
  if (d > kMaxMagnitude) return std::nullopt;
  Int128 n;
  if (e <= kMaxPrecision && !__builtin_mul_overflow(a, kPow10[static_cast<size_t>(e)], &n)) {
    UInt128 mag = absU(n);
    UInt128 q = mag / d, r = mag % d;
    if (r >= d - r) ++q;
    auto v = signedOf(q, negative);
    if (!v || !fits(*v, to.precision)) return std::nullopt;
    return v;
  }
  if (e > 2 * kMaxPrecision) return std::nullopt;
  U256 wide = mul128(absU(a), static_cast<UInt128>(pow10(std::min(e, kMaxPrecision))));
  if (e > kMaxPrecision) {
    if (wide.limb[3] != 0 || wide.limb[2] != 0) return std::nullopt;
    wide = mul128(low128(wide), static_cast<UInt128>(pow10(e - kMaxPrecision)));
  }
  auto q = divWideHalfUp(wide, d);
  if (!q) return std::nullopt;
  auto v = signedOf(*q, negative);
  if (!v || !fits(*v, to.precision)) return std::nullopt;
  return v;
}

std::optional<Int128> mod(Int128 a, int sa, Int128 b, int sb, Type to) {
  if (b == 0) return std::nullopt;
  int s = std::max(sa, sb);
  auto x = rescale(a, sa, s), y = rescale(b, sb, s);
  if (!x || !y) return std::nullopt;
  return toType(*x % *y, s, to);  // the sign of the dividend, as Java's remainder
}

int compare(Int128 a, int sa, Int128 b, int sb) {
  if (sa == sb) return cmp3(a, b);
  if ((a < 0) != (b < 0) || a == 0 || b == 0) return cmp3(a, b);
  if (sa < sb) {
    auto x = rescale(a, sa, sb);
    if (!x) return a < 0 ? -1 : 1;  // |a| scaled up is wider than anything b can be
    return cmp3(*x, b);
  }
  auto y = rescale(b, sb, sa);
  if (!y) return b < 0 ? 1 : -1;
  return cmp3(a, *y);
}

void append(std::string& out, Int128 v, int scale) {
  char buf[48];
  char* end = buf + sizeof buf;
  char* p = end;
  UInt128 mag = absU(v);
  do {
    *--p = static_cast<char>('0' + static_cast<int>(mag % 10));
    mag /= 10;
  } while (mag != 0);
  auto digits = static_cast<int>(end - p);
  if (v < 0) out += '-';
  if (scale <= 0) {
    out.append(p, end);
    return;
  }
  if (digits <= scale) {
    out += "0.";
    out.append(static_cast<size_t>(scale - digits), '0');
    out.append(p, end);
    return;
  }
  out.append(p, end - scale);
  out += '.';
  out.append(end - scale, end);
}

std::string toString(Int128 v, int scale) {
  std::string s;
  append(s, v, scale);
  return s;
}

namespace {

// Decimal text split into its significant digits and a power of ten:
// value = sign * digits * 10^exponent.
struct Parsed {
  bool negative = false;
  std::string digits;  // no leading zeros; empty for zero
  int64_t exponent = 0;
  bool hasExponent = false;
  int fracDigits = 0;  // digits written after the point
  int intDigits = 0;   // significant digits written before the point
};

std::optional<Parsed> split(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  Parsed p;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) p.negative = s[i++] == '-';
  bool anyDigit = false, point = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      anyDigit = true;
      if (point) ++p.fracDigits;
      if (p.digits.empty() && c == '0') continue;
      p.digits += c;
      if (!point) ++p.intDigits;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!anyDigit) return std::nullopt;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i >= s.size()) return std::nullopt;
    int64_t e = 0;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) e = std::min<int64_t>(e * 10 + (s[i] - '0'), 1000000);
    p.exponent = neg ? -e : e;
    p.hasExponent = true;
  }
  if (i != s.size()) return std::nullopt;
  p.exponent -= p.fracDigits;
  return p;
}

// The value of `p` at scale `scale`, HALF_UP, or nullopt over `precision` digits.
std::optional<Int128> valueAt(const Parsed& p, int scale, int precision) {
  if (p.digits.empty()) return Int128(0);
  int64_t shift = p.exponent + scale;  // digits * 10^shift is the unscaled value
  std::string_view digits = p.digits;
  bool roundUp = false;
  if (shift < 0) {
    auto drop = static_cast<size_t>(-shift);
    if (drop > digits.size()) return Int128(0);
    roundUp = digits[digits.size() - drop] >= '5';
    digits = digits.substr(0, digits.size() - drop);
    shift = 0;
  }
  // Digits has no leading zero, so more digits than the precision never fit.
  if (static_cast<int64_t>(digits.size()) + shift > precision) return std::nullopt;
  Int128 v = 0;
  for (char c : digits) v = v * 10 + (c - '0');
  if (shift > 0) v *= pow10(static_cast<int>(shift));
  if (roundUp) ++v;
  if (!fits(v, precision)) return std::nullopt;
  return p.negative ? -v : v;
}

}  // namespace

std::optional<Int128> parse(std::string_view text, Type to) {
  auto p = split(text);
  if (!p) return std::nullopt;
  return valueAt(*p, to.scale, to.precision);
}

std::optional<std::pair<Int128, Type>> parseLiteral(std::string_view text) {
  auto p = split(text);
  if (!p || p->hasExponent) return std::nullopt;
  int scale = p->fracDigits;
  // Java's BigDecimal precision: the digits from the first nonzero one (1 for zero).
  int precision = std::max<int>(static_cast<int>(p->digits.size()), 1);
  precision = std::max(precision, scale);
  if (precision > kMaxPrecision) return std::nullopt;
  auto v = valueAt(*p, scale, precision);
  if (!v) return std::nullopt;
  return std::make_pair(*v, Type{precision, scale});
}

double toDouble(Int128 v, int scale) {
  if (scale == 0 && fits(v, 15)) return static_cast<double>(v);
  std::string s = toString(v, scale);
  double d = 0;
  std::from_chars(s.data(), s.data() + s.size(), d);
  return d;
}

std::optional<Int128> fromDouble(double d, Type to) {
  if (!std::isfinite(d)) return std::nullopt;
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return parse(std::string_view(buf, static_cast<size_t>(r.ptr - buf)), to);
}

int64_t toLongWrapped(Int128 v, int scale) {
  Int128 whole = scale > 0 ? v / pow10(scale) : v;
  return static_cast<int64_t>(static_cast<uint64_t>(static_cast<UInt128>(whole)));
}

std::string toBigEndianBytes(Int128 v) {
  std::string b;
  auto u = static_cast<UInt128>(v);
  for (int i = 15; i >= 0; --i) b += static_cast<char>(static_cast<uint8_t>(u >> (8 * i)));
  size_t skip = 0;
  while (skip + 1 < b.size()) {
    auto first = static_cast<uint8_t>(b[skip]), next = static_cast<uint8_t>(b[skip + 1]);
    if (!((first == 0x00 && !(next & 0x80)) || (first == 0xff && (next & 0x80)))) break;
    ++skip;
  }
  return b.substr(skip);
}

Int128 round(Int128 v, int scale, int newScale, Rounding mode) {
  if (newScale >= scale) return v;
  // In 64 bits: newScale may be as low as INT_MIN.
  const int64_t k = int64_t{scale} - newScale;
  if (k > kMaxPrecision) {
    // Every digit goes: the result is zero, or one unit of 10^-newScale for
    // ceil/floor (10^38 past that, which fits no DECIMAL).
    bool up = (mode == Rounding::Ceiling && v > 0) || (mode == Rounding::Floor && v < 0);
    int unit = newScale < -kMaxPrecision ? kMaxPrecision : std::max(0, -newScale);
    return up ? (v > 0 ? 1 : -1) * pow10(unit) : 0;
  }
  UInt128 p = static_cast<UInt128>(pow10(static_cast<int>(k)));
  UInt128 mag = absU(v);
  UInt128 q = mag / p, r = mag % p;
  bool negative = v < 0;
  bool up = false;
  switch (mode) {
    case Rounding::HalfUp: up = r >= p - r; break;
    case Rounding::HalfEven: up = r > p - r || (r == p - r && (q & 1)); break;
    case Rounding::Ceiling: up = r != 0 && !negative; break;
    case Rounding::Floor: up = r != 0 && negative; break;
  }
  if (up) ++q;
  auto out = static_cast<Int128>(q);
  if (negative) out = -out;
  if (newScale < 0) out *= pow10(-newScale);
  return out;
}

}  // namespace rtsql::decimal
