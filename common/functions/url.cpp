// URL functions: parse_url, url_encode, url_decode, with Java's rules
// (java.net.URI for parse_url, URLEncoder/URLDecoder's form encoding).
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "common/ansi_mode.h"
#include "common/functions/internal.h"
#include "common/hex.h"
#include "common/schema.h"

namespace rtsql::expr_internal {

namespace {

struct UrlParts {
  std::optional<std::string> scheme, authority, userInfo, host, path, query, ref;
};

// Splits a URI as java.net.URI does for the forms people write:
// scheme://userinfo@host:port/path?query#ref; false for text URI refuses
// (spaces, quotes, angle brackets and the like).
bool splitUrl(std::string_view u, UrlParts* p) {
  for (char c : u) {
    auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b == 0x7F || std::string_view("\"<>\\^`{|}").find(c) != std::string_view::npos)
      return false;
  }
  if (u.empty()) return false;
  if (size_t h = u.find('#'); h != std::string_view::npos) {
    p->ref = std::string(u.substr(h + 1));
    u = u.substr(0, h);
  }
  size_t colon = u.find(':');
  size_t firstDelim = u.find_first_of("/?");
  if (colon != std::string_view::npos && colon > 0 &&
      (firstDelim == std::string_view::npos || colon < firstDelim)) {
    p->scheme = std::string(u.substr(0, colon));
    u = u.substr(colon + 1);
  }
  if (size_t q = u.find('?'); q != std::string_view::npos) {
    p->query = std::string(u.substr(q + 1));
    u = u.substr(0, q);
  }
  if (u.substr(0, 2) == "//") {
    u = u.substr(2);
    size_t slash = u.find('/');
    std::string_view auth = u.substr(0, slash);
    u = slash == std::string_view::npos ? std::string_view() : u.substr(slash);
    if (!auth.empty()) {
      p->authority = std::string(auth);
      std::string_view hostPort = auth;
      if (size_t at = auth.rfind('@'); at != std::string_view::npos) {
        p->userInfo = std::string(auth.substr(0, at));
        hostPort = auth.substr(at + 1);
      }
      size_t portColon = hostPort.rfind(':');
      if (portColon != std::string_view::npos &&
          hostPort.find(']', portColon) == std::string_view::npos)
        hostPort = hostPort.substr(0, portColon);
      if (!hostPort.empty()) p->host = std::string(hostPort);
    }
  }
  p->path = std::string(u);
  return true;
}

// Whether java.net.URI, which Spark's parse_url parses with, takes the text:
// no spaces, controls or "<>\\^`{|}, a '%' only before two hex digits, one
// '#' at most, '[' and ']' only around an authority's host, a scheme that is a
// letter then letters, digits, '+', '-' or '.', and something after it.
bool javaUriValid(std::string_view u) {
  for (size_t i = 0; i < u.size(); ++i) {
    auto b = static_cast<unsigned char>(u[i]);
    if (b <= 0x20 || b == 0x7F ||
        std::string_view("\"<>\\^`{|}").find(u[i]) != std::string_view::npos)
      return false;
    if (u[i] == '%' && (i + 2 >= u.size() || hexDigitValue(u[i + 1]) < 0 ||
                        hexDigitValue(u[i + 2]) < 0))
      return false;
    // C1 controls (U+0080..U+009F) and U+00A0 in UTF-8; Java refuses them.
    if (b == 0xC2 && i + 1 < u.size() && static_cast<unsigned char>(u[i + 1]) <= 0xA0) return false;
  }
  if (std::count(u.begin(), u.end(), '#') > 1) return false;
  size_t colon = u.find_first_of(":/?#");
  std::string_view rest = u;
  if (colon != std::string_view::npos && u[colon] == ':') {
    std::string_view scheme = u.substr(0, colon);
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    if (scheme.empty() || !alpha(scheme[0])) return false;
    for (char c : scheme)
      if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return false;
    rest = u.substr(colon + 1);
    if (rest.empty() || rest[0] == '#') return false;  // no scheme-specific part
  }
  // The authority after "//" runs to the next '/', '?' or '#'; brackets are
  // only there, and an empty one needs a path after it.
  std::string_view authority;
  if (rest.substr(0, 2) == "//") {
    authority = rest.substr(2, rest.find_first_of("/?#", 2) - 2);
    if (authority.empty() && rest.size() == 2) return false;
    rest = rest.substr(2 + authority.size());
  }
  return rest.find_first_of("[]") == std::string_view::npos;
}

// The value of `key` in a query string, as Spark finds it: the first
// `key=value` at the start or after '&'.
std::optional<std::string> queryValue(const std::string& query, const std::string& key) {
  size_t i = 0;
  while (i <= query.size()) {
    size_t amp = query.find('&', i);
    std::string_view pair =
        std::string_view(query).substr(i, amp == std::string::npos ? std::string::npos : amp - i);
    if (pair.size() > key.size() && pair.substr(0, key.size()) == key && pair[key.size()] == '=')
      return std::string(pair.substr(key.size() + 1));
    if (amp == std::string::npos) break;
    i = amp + 1;
  }
  return std::nullopt;
}

Value parseUrl(const std::string& url, const std::string& part, const std::string* key,
               bool ansi) {
  // With a key only the QUERY part is looked at, and the URL parsed for it.
  if (key && part != "QUERY") return {};
  if (ansi && !javaUriValid(url)) [[unlikely]]
    ansi::raise(ansi::kInvalidUrl,
                fmt::format("parse_url: '{}' is not a valid URL", url.substr(0, 256)),
                "try_parse_url");
  UrlParts p;
  if (!splitUrl(url, &p)) return {};
  auto v = [](const std::optional<std::string>& s) { return s ? Value::string(*s) : Value(); };
  if (key) {
    if (!p.query) return {};
    return v(queryValue(*p.query, *key));
  }
  if (part == "HOST") return v(p.host);
  if (part == "PATH") return v(p.path);
  if (part == "QUERY") return v(p.query);
  if (part == "REF") return v(p.ref);
  if (part == "PROTOCOL") return v(p.scheme);
  if (part == "AUTHORITY") return v(p.authority);
  if (part == "USERINFO") return v(p.userInfo);
  if (part == "FILE")
    return p.query ? Value::string(p.path.value_or("") + "?" + *p.query) : v(p.path);
  return {};
}

// parse_url(url, part[, key]): part is HOST, PATH, QUERY, REF, PROTOCOL,
// FILE, AUTHORITY or USERINFO (case-sensitive, as in Spark); NULL for a part
// the URL lacks. A URL that does not parse is INVALID_URL in ANSI mode and
// NULL in the legacy mode and for try_parse_url.
ExprPtr buildParseUrl(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  for (size_t i = 0; i < args.size(); ++i) argString(name, args, i, pos);
  const bool ansi = ansiMode();
  if (args.size() == 2)
    return fn2(name, stringType(), args, [ansi](const Value& u, const Value& part) {
      return parseUrl(u.asString(), part.asString(), nullptr, ansi);
    });
  return fn3(name, stringType(), args, [ansi](const Value& u, const Value& part, const Value& key) {
    return parseUrl(u.asString(), part.asString(), &key.asString(), ansi);
  });
}

// url_encode: application/x-www-form-urlencoded over UTF-8, as Java's
// URLEncoder: letters, digits and .-*_ stay, a space becomes '+'.
ExprPtr buildUrlEncode(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const std::string& s = v.asString();
    checkValueSize("url_encode", s.size() * 3);
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
      auto b = static_cast<unsigned char>(c);
      if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || c == '.' ||
          c == '-' || c == '*' || c == '_') {
        out += c;
      } else if (c == ' ') {
        out += '+';
      } else {
        out += '%';
        out += kHex[b >> 4];
        out += kHex[b & 15];
      }
    }
    return Value::string(std::move(out));
  });
}

// url_decode: '+' is a space and %XX a byte; a malformed escape is 22023, as
// Spark reports it.
ExprPtr buildUrlDecode(const std::string& name, std::vector<ExprPtr>& args, size_t pos) {
  argString(name, args, 0, pos);
  return fn1(name, stringType(), args, [](const Value& v) {
    const std::string& s = v.asString();
    std::string out;
    out.reserve(s.size());
    auto digit = [](char c) {
      return c >= '0' && c <= '9'   ? c - '0'
             : c >= 'a' && c <= 'f' ? c - 'a' + 10
             : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                    : -1;
    };
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '+') {
        out += ' ';
      } else if (s[i] == '%') {
        // Both hex digits must be there: s[i + 1] and s[i + 2].
        int hi = i + 2 < s.size() ? digit(s[i + 1]) : -1;
        int lo = i + 2 < s.size() ? digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0)
          throw SqlError(
              sqlstate::kInvalidParameterValue,
              fmt::format("url_decode: malformed escape at character {} of '{}'", i + 1, s),
              SqlError::npos, "escape a byte as %XX with two hex digits");
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
      } else {
        out += s[i];
      }
    }
    return Value::string(std::move(out));
  });
}

}  // namespace

void registerUrlFunctions(FunctionTable& t) {
  t["parse_url"] = {2, 3, buildParseUrl};
  t["try_parse_url"] = {2, 3, buildParseUrl};
  t["url_encode"] = {1, 1, buildUrlEncode};
  t["url_decode"] = {1, 1, buildUrlDecode};
}

}  // namespace rtsql::expr_internal
