#include "client/completion.h"

#include <algorithm>
#include <cctype>

#include "client/backslash.h"
#include "common/schema.h"

namespace rtsql::client {

namespace {

// Keywords offered when nothing more specific fits.
const std::vector<std::string>& allKeywords() {
  // Function names are not here: they come from the server (SHOW FUNCTIONS).
  static const std::vector<std::string> words = {
      "ALL",       "AND",      "AS",       "ASC",     "BETWEEN",   "BIGINT",   "BOOLEAN", "BY",
      "CASE",      "CAST",     "CREATE",   "DESC",    "DESCRIBE",  "DISTINCT", "DOUBLE",  "DROP",
      "ELSE",      "END",      "EXISTS",   "EXPLAIN", "FALSE",     "FLOW",     "FLOWS",   "FROM",
      "GROUP",     "HAVING",   "IF",       "IN",      "INNER",     "INTERVAL", "INTO",    "IS",
      "JOIN",      "LEFT",     "LIKE",     "LIMIT",   "NOT",       "NULL",     "ON",      "OR",
      "ORDER",     "PROGRESS", "REALTIME", "SELECT",  "SET",       "SHOW",     "SINK",    "SINKS",
      "SOURCE",    "SOURCES",  "START",    "STOP",    "STRING",    "TABLE",    "TABLES",  "THEN",
      "TIMESTAMP", "TRIGGER",  "TRUE",     "UNION",   "WATERMARK", "WHEN",     "WHERE",   "WITH",
      "WITHIN",    "INT",      "RLIKE",    "REGEXP"};
  return words;
}

// ASCII case mapping, shared with the rest of rtsql.
std::string upper(std::string_view s) { return toUpper(s); }
std::string lower(std::string_view s) { return toLower(s); }

bool startsWithNoCase(std::string_view s, std::string_view prefix) {
  if (prefix.size() > s.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

// True when `word` has letters and all of them are lower case.
bool typedLower(std::string_view word) {
  bool letter = false;
  for (char ch : word) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isupper(c)) return false;
    if (std::isalpha(c)) letter = true;
  }
  return letter;
}

// The words of `before`, upper-cased, dropping quoted text and comments'
// contents only roughly: completion needs the last few keywords, not a parse.
std::vector<std::string> tokens(std::string_view before) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < before.size()) {
    const auto c = static_cast<unsigned char>(before[i]);
    if (std::isalnum(c) || c == '_' || c == '\\' || c >= 0x80) {
      size_t j = i + 1;
      while (j < before.size()) {
        const auto d = static_cast<unsigned char>(before[j]);
        if (!(std::isalnum(d) || d == '_' || d >= 0x80)) break;
        ++j;
      }
      out.push_back(upper(before.substr(i, j - i)));
      i = j;
    } else if (c == ';') {
      // A new statement starts: what came before does not matter.
      out.clear();
      ++i;
    } else if (c == '(' || c == ')' || c == ',') {
      out.emplace_back(1, static_cast<char>(c));
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

enum class Want {
  kKeywords,
  kFixed,
  kFlows,
  kSources,
  kSinks,
  kTables,
  kRelations,
  kObjects,
  kCommands
};

struct Place {
  Want want = Want::kKeywords;
  std::vector<std::string> fixed;
};

Place placeFor(std::string_view before) {
  std::vector<std::string> t = tokens(before);
  Place p;
  if (!t.empty() && !t.front().empty() && t.front().front() == '\\') {
    if (t.size() == 1 && t.front() == "\\PROGRESS") {
      p.want = Want::kFlows;
    } else if (t.size() == 1 && t.front() == "\\D") {
      p.want = Want::kObjects;
    } else {
      p.want = Want::kFixed;  // Nothing to offer after other commands.
    }
    return p;
  }
  // "DROP FLOW IF EXISTS x" completes x like "DROP FLOW x".
  if (t.size() >= 2 && t[t.size() - 2] == "IF" && t.back() == "EXISTS") t.resize(t.size() - 2);
  // "CREATE SOURCE IF NOT EXISTS" likewise needs nothing; treat as new name.
  const std::string last = t.empty() ? "" : t.back();
  const std::string prev = t.size() >= 2 ? t[t.size() - 2] : "";
  auto fixed = [&](std::vector<std::string> words) {
    p.want = Want::kFixed;
    p.fixed = std::move(words);
    return p;
  };

  if (last == "CREATE") return fixed({"SOURCE", "SINK", "TABLE", "FLOW"});
  if (last == "DROP") return fixed({"SOURCE", "SINK", "TABLE", "FLOW"});
  if (last == "SHOW") {
    return fixed({"SOURCES", "SINKS", "TABLES", "FLOWS", "PROGRESS", "FUNCTIONS"});
  }
  if (last == "STOP" || last == "START") return fixed({"FLOW"});
  if (last == "EXPLAIN") return fixed({"SELECT", "CREATE", "FLOW"});
  if (last == "FLOW" && prev == "EXPLAIN") {
    p.want = Want::kFlows;
    return p;
  }
  if (last == "TRIGGER") return fixed({"REALTIME"});
  if (last == "GROUP" || last == "ORDER") return fixed({"BY"});
  if (prev == "DROP" && (last == "SOURCE" || last == "SINK" || last == "TABLE" || last == "FLOW")) {
    return fixed({"IF"});  // Also offers names, below.
  }
  if (last == "IF") return fixed({"EXISTS", "NOT"});
  if (last == "PROGRESS" && prev == "SHOW") {
    p.want = Want::kFlows;
    return p;
  }
  if ((last == "FLOW") && (prev == "STOP" || prev == "START")) {
    p.want = Want::kFlows;
    return p;
  }
  if (last == "INTO") {
    p.want = Want::kSinks;
    return p;
  }
  if (last == "FROM" || last == "JOIN") {
    p.want = Want::kRelations;
    return p;
  }
  if (last == "DESCRIBE") {
    p.want = Want::kRelations;
    return p;
  }
  return p;
}

void addMatching(const std::vector<std::string>& from, std::string_view word,
                 std::vector<std::string>* out) {
  for (const auto& name : from) {
    if (startsWithNoCase(name, word)) out->push_back(name);
  }
}

void addKeywords(const std::vector<std::string>& from, std::string_view word,
                 std::vector<std::string>* out) {
  const bool low = typedLower(word);
  for (const auto& kw : from) {
    if (startsWithNoCase(kw, word)) out->push_back(low ? lower(kw) : upper(kw));
  }
}

}  // namespace

bool completionWantsNames(std::string_view before) {
  const Place p = placeFor(before);
  if (p.want == Want::kFixed) {
    // After "DROP FLOW" names are offered next to IF.
    const std::vector<std::string> t = tokens(before);
    return t.size() >= 2 && (t[t.size() - 2] == "DROP" || t.back() == "EXISTS");
  }
  return p.want != Want::kKeywords && p.want != Want::kCommands;
}

bool completionWantsFunctions(std::string_view before) {
  return placeFor(before).want == Want::kKeywords;
}

std::vector<std::string> completionCandidates(std::string_view before, std::string_view word,
                                              const ObjectNames& names) {
  std::vector<std::string> out;
  // A backslash command at the start of the line.
  if (!word.empty() && word.front() == '\\' && tokens(before).empty()) {
    for (const auto& name : backslashCommandNames()) {
      if (name.compare(0, word.size(), word) == 0) out.push_back(name);
    }
    return out;
  }

  std::vector<std::string> t = tokens(before);
  const bool afterIfExists = t.size() >= 2 && t[t.size() - 2] == "IF" && t.back() == "EXISTS";
  if (afterIfExists) t.resize(t.size() - 2);
  const std::string last = t.empty() ? "" : t.back();
  const std::string prev = t.size() >= 2 ? t[t.size() - 2] : "";

  const Place p = placeFor(before);
  switch (p.want) {
    case Want::kFixed:
      if (!afterIfExists) addKeywords(p.fixed, word, &out);
      break;
    case Want::kFlows:
      addMatching(names.flows, word, &out);
      break;
    case Want::kSinks:
      addMatching(names.sinks, word, &out);
      break;
    case Want::kSources:
      addMatching(names.sources, word, &out);
      break;
    case Want::kTables:
      addMatching(names.tables, word, &out);
      break;
    case Want::kRelations:
      addMatching(names.sources, word, &out);
      addMatching(names.tables, word, &out);
      if (last == "DESCRIBE") addMatching(names.sinks, word, &out);
      break;
    case Want::kObjects:
      addMatching(names.sources, word, &out);
      addMatching(names.sinks, word, &out);
      addMatching(names.tables, word, &out);
      addMatching(names.flows, word, &out);
      break;
    case Want::kKeywords:
    case Want::kCommands:
      addKeywords(allKeywords(), word, &out);
      addKeywords(names.functions, word, &out);
      break;
  }
  // DROP SOURCE|SINK|TABLE|FLOW [IF EXISTS] <name>.
  if (prev == "DROP") {
    if (last == "SOURCE") addMatching(names.sources, word, &out);
    if (last == "SINK") addMatching(names.sinks, word, &out);
    if (last == "TABLE") addMatching(names.tables, word, &out);
    if (last == "FLOW") addMatching(names.flows, word, &out);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace rtsql::client
