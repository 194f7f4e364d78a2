#include "client/backslash.h"

#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace rtsql::client {

namespace {

bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Splits at blanks; a "..." word keeps its blanks so quoted flow names work.
std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isBlank(s[i])) ++i;
    if (i >= s.size()) break;
    std::string word;
    bool quoted = false;
    while (i < s.size() && (quoted || !isBlank(s[i]))) {
      if (s[i] == '"') quoted = !quoted;
      word += s[i++];
    }
    out.push_back(std::move(word));
  }
  return out;
}

BackslashCommand invalid(std::string message) {
  BackslashCommand c;
  c.kind = BackslashKind::kInvalid;
  c.error = std::move(message);
  return c;
}

// An object name as SHOW PROGRESS and DESCRIBE take it: a bare identifier or a
// "quoted" one.
// Anything else (a ';' above all) is refused rather than pasted into SQL.
bool isObjectName(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') {
    const std::string_view inner = s.substr(1, s.size() - 2);
    if (inner.empty()) return false;
    // Inside quotes, a '"' must be doubled.
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] != '"') continue;
      if (i + 1 >= inner.size() || inner[i + 1] != '"') return false;
      ++i;
    }
    return true;
  }
  if (s.empty()) return false;
  const auto c0 = static_cast<unsigned char>(s.front());
  if (!(std::isalpha(c0) || c0 == '_' || c0 >= 0x80)) return false;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (!(std::isalnum(c) || c == '_' || c >= 0x80)) return false;
  }
  return true;
}

}  // namespace

BackslashCommand parseBackslash(std::string_view line) {
  const std::vector<std::string> parts = words(line);
  if (parts.empty() || parts[0].empty() || parts[0][0] != '\\') {
    return invalid("not a backslash command");
  }
  const std::string& name = parts[0];
  const size_t args = parts.size() - 1;
  auto noArgs = [&](BackslashKind kind) {
    if (args != 0) return invalid(name + " takes no argument");
    BackslashCommand c;
    c.kind = kind;
    return c;
  };

  if (name == "\\q") return noArgs(BackslashKind::kQuit);
  if (name == "\\?") return noArgs(BackslashKind::kHelp);
  if (name == "\\r") return noArgs(BackslashKind::kReset);
  if (name == "\\flows") return noArgs(BackslashKind::kFlows);
  if (name == "\\sources") return noArgs(BackslashKind::kSources);
  if (name == "\\sinks") return noArgs(BackslashKind::kSinks);
  if (name == "\\tables") return noArgs(BackslashKind::kTables);
  if (name == "\\progress") {
    if (args != 1) return invalid("\\progress needs one flow name, e.g. \\progress my_flow");
    if (!isObjectName(parts[1])) return invalid("\\progress: not a flow name: " + parts[1]);
    BackslashCommand c;
    c.kind = BackslashKind::kProgress;
    c.argument = parts[1];
    return c;
  }
  if (name == "\\d") {
    if (args > 1) return invalid("\\d takes at most one name, e.g. \\d my_source");
    BackslashCommand c;
    c.kind = BackslashKind::kDescribe;
    if (args == 1) {
      if (!isObjectName(parts[1])) return invalid("\\d: not a name: " + parts[1]);
      c.argument = parts[1];
    }
    return c;
  }
  if (name == "\\i") {
    // The file name is the rest of the line, so names with blanks work; psql's
    // quotes around it are taken off.
    const size_t at = line.find("\\i");
    std::string_view rest = line.substr(at + 2);
    while (!rest.empty() && isBlank(rest.front())) rest.remove_prefix(1);
    while (!rest.empty() && isBlank(rest.back())) rest.remove_suffix(1);
    if (rest.size() >= 2 && rest.front() == '\'' && rest.back() == '\'') {
      rest = rest.substr(1, rest.size() - 2);
    }
    if (rest.empty()) return invalid("\\i needs a file name, e.g. \\i setup.sql");
    BackslashCommand c;
    c.kind = BackslashKind::kInclude;
    c.argument = std::string(rest);
    return c;
  }
  if (name == "\\timing") {
    if (args > 1) return invalid("\\timing takes at most one argument, on or off");
    BackslashCommand c;
    c.kind = BackslashKind::kTiming;
    if (args == 1) {
      if (parts[1] == "on") {
        c.timing = TimingMode::kOn;
      } else if (parts[1] == "off") {
        c.timing = TimingMode::kOff;
      } else {
        return invalid("\\timing: expected on or off, got " + parts[1]);
      }
    }
    return c;
  }
  if (name == "\\watch") {
    if (args > 1) return invalid("\\watch takes at most one argument, the interval in seconds");
    BackslashCommand c;
    c.kind = BackslashKind::kWatch;
    c.seconds = kWatchDefaultSeconds;
    if (args == 1) {
      const std::string& text = parts[1];
      char* end = nullptr;
      errno = 0;
      const double value = std::strtod(text.c_str(), &end);
      if (end != text.c_str() + text.size() || errno != 0 || !std::isfinite(value) ||
          value < kWatchMinSeconds || value > kWatchMaxSeconds) {
        return invalid("\\watch: the interval must be a number of seconds from 0.1 to 86400, got " +
                       text);
      }
      c.seconds = value;
    }
    return c;
  }
  return invalid("unknown command " + name + "; type \\? for help");
}

std::string backslashSql(const BackslashCommand& command) {
  switch (command.kind) {
    case BackslashKind::kFlows:
      return "SHOW FLOWS";
    case BackslashKind::kSources:
      return "SHOW SOURCES";
    case BackslashKind::kSinks:
      return "SHOW SINKS";
    case BackslashKind::kTables:
      return "SHOW TABLES";
    case BackslashKind::kProgress:
      return "SHOW PROGRESS " + command.argument;
    case BackslashKind::kDescribe:
      return command.argument.empty() ? std::string() : "DESCRIBE " + command.argument;
    default:
      return {};
  }
}

const std::vector<std::string>& backslashCommandNames() {
  static const std::vector<std::string> names = {"\\?",        "\\d",      "\\flows",  "\\i",
                                                 "\\progress", "\\q",      "\\r",      "\\sinks",
                                                 "\\sources",  "\\tables", "\\timing", "\\watch"};
  return names;
}

}  // namespace rtsql::client
