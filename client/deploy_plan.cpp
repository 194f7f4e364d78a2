#include "client/deploy_plan.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "client/script.h"
#include "common/sql_text.h"

namespace rtsql::client {

namespace {

// The statement's words up to its name: CREATE [OR REPLACE] KIND [IF NOT
// EXISTS] name. Comments before it are skipped; a quoted name is unquoted.
struct CreateHead {
  bool create = false;
  bool orReplace = false;
  bool ifNotExists = false;
  std::string kind;  // "flow", "source", ... lower-cased
  std::string name;  // lower-cased unless quoted
};

std::vector<std::string> leadingWords(std::string_view text, size_t count) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size() && words.size() < count) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const size_t end = text.find("*/", i + 2);
      i = end == std::string_view::npos ? text.size() : end + 2;
    } else if (c == '"') {
      const size_t end = text.find('"', i + 1);
      const size_t stop = end == std::string_view::npos ? text.size() : end;
      words.push_back("\"" + std::string(text.substr(i + 1, stop - i - 1)));
      i = stop + 1;
    } else {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      if (j == i) ++j;
      words.emplace_back(text.substr(i, j - i));
      i = j;
    }
  }
  return words;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

CreateHead headOf(std::string_view text) {
  CreateHead h;
  std::vector<std::string> w = leadingWords(text, 8);
  size_t i = 0;
  auto is = [&](const char* word) { return i < w.size() && lower(w[i]) == word; };
  if (!is("create")) return h;
  ++i;
  if (is("or")) {
    ++i;
    if (!is("replace")) return h;
    ++i;
    h.orReplace = true;
  }
  if (i >= w.size()) return h;
  h.kind = lower(w[i++]);
  if (is("if")) {
    i += 3;
    h.ifNotExists = true;
  }
  if (i >= w.size()) return h;
  h.name = w[i][0] == '"' ? w[i].substr(1) : lower(w[i]);
  h.create = true;
  return h;
}

// The first column of a SHOW's rows, lower-cased.
std::set<std::string> namesOf(Connection& conn, const char* show) {
  std::set<std::string> names;
  Outcome o = conn.execute(show);
  for (const auto& r : o.results) {
    for (const auto& row : r.rows) {
      if (!row.empty() && row[0]) names.insert(lower(*row[0]));
    }
  }
  return names;
}

std::string firstLine(const std::string& text) {
  std::string s = text.substr(0, text.find('\n'));
  return s.size() > 72 ? s.substr(0, 69) + "..." : s;
}

}  // namespace

int planDeployment(Connection& conn, std::string_view script, std::string_view sourceName,
                   std::ostream& out, std::ostream& err) {
  // What runs now, before the dry run's own catalog sees the script.
  std::map<std::string, std::set<std::string>> running = {
      {"flow", namesOf(conn, "SHOW FLOWS")},
      {"source", namesOf(conn, "SHOW SOURCES")},
      {"sink", namesOf(conn, "SHOW SINKS")},
      {"table", namesOf(conn, "SHOW TABLES")},
  };
  Outcome on = conn.execute("SET rtsql.dry_run = 'on'");
  if (on.error || on.connectionLost) {
    err << "rtsql: the server refused the dry run: "
        << (on.error ? on.error->message : conn.lastError()) << '\n';
    return on.connectionLost ? kExitConnection : kExitSqlError;
  }
  std::map<std::string, std::set<std::string>> mentioned;
  int creates = 0, replaces = 0, unchanged = 0, refused = 0;
  for (const StatementText& st : splitStatements(script)) {
    const auto [line, column] = lineAndColumn(script, st.offset);
    (void)column;
    const CreateHead h = headOf(st.text);
    if (h.create) mentioned[h.kind].insert(h.name);
    const bool exists = h.create && running[h.kind].count(h.name) > 0;
    if (h.create && h.kind == "flow" && h.orReplace && exists) {
      Outcome explain = conn.execute("EXPLAIN " + st.text);
      if (explain.connectionLost) return kExitConnection;
      if (explain.error) {
        ++refused;
        out << "refused   flow " << h.name << " (" << sourceName << ":" << line
            << "): " << explain.error->message << '\n';
        continue;
      }
      std::vector<std::string> lines;
      for (const auto& r : explain.results)
        for (const auto& row : r.rows)
          if (!row.empty() && row[0]) lines.push_back(*row[0]);
      if (!lines.empty() && lines[0].rfind("unchanged", 0) == 0) {
        ++unchanged;
        out << "unchanged flow " << h.name << '\n';
        continue;
      }
      const bool ok = lines.empty() || lines.back().find("refused") == std::string::npos;
      if (ok) {
        ++replaces;
        out << "replace   flow " << h.name << '\n';
      } else {
        ++refused;
        out << "refused   flow " << h.name << " (" << sourceName << ":" << line
            << "): its state cannot be kept; add RESET STATE to start it empty\n";
      }
      for (const auto& l : lines) out << "    " << l << '\n';
      continue;
    }
    if (h.create && exists && (h.ifNotExists || h.orReplace)) {
      ++unchanged;
      out << "unchanged " << h.kind << " " << h.name
          << (h.ifNotExists ? " (exists; IF NOT EXISTS leaves it as it is)" : "") << '\n';
      continue;
    }
    // Run in the dry run, so that later statements see what it makes.
    Outcome o = conn.execute(st.text);
    if (o.connectionLost) return kExitConnection;
    if (o.error) {
      ++refused;
      out << "error     " << (h.create ? h.kind + " " + h.name : firstLine(st.text)) << " ("
          << sourceName << ":" << line << "): " << o.error->message << '\n';
      continue;
    }
    if (h.create) {
      ++creates;
      out << "create    " << h.kind << " " << h.name << '\n';
    } else {
      out << "run       " << firstLine(st.text) << '\n';
    }
  }
  int notInScript = 0;
  for (const auto& [kind, names] : running) {
    for (const auto& name : names) {
      if (mentioned[kind].count(name)) continue;
      ++notInScript;
      out << "not in the script: " << kind << " " << name << " (left as it is)\n";
    }
  }
  conn.execute("SET rtsql.dry_run = 'off'");
  out << "plan: " << creates << " to create, " << replaces << " to replace, " << unchanged
      << " unchanged, " << refused << " refused, " << notInScript << " not in the script\n";
  return refused > 0 ? kExitSqlError : kExitOk;
}

}  // namespace rtsql::client
