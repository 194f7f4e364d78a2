// Reading an rtsqld --config file again to say what is wrong (see config_file.h).
#include "server/config_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <vector>

namespace rtsql {

namespace {

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Edits from `a` to `b`: insertions, deletions, substitutions and swaps of
// two neighbours ("prot" for "port" is one), on option names (short).
size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::string closestOptionName(const std::string& name, const std::vector<std::string>& known) {
  std::string dashed = name;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  if (dashed != name && contains(known, dashed)) return dashed;
  // Close enough: at most two edits, and fewer than a third of the name's
  // letters, so that "port" is not offered for "host".
  std::string best;
  size_t bestDistance = 3;
  for (const std::string& candidate : known) {
    const size_t d = editDistance(dashed, candidate);
    if (d < bestDistance && d * 3 < std::max(candidate.size(), dashed.size())) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

std::optional<std::string> describeConfigProblem(std::istream& in,
                                                 const std::vector<std::string>& known,
                                                 const std::vector<std::string>& commandLineOnly) {
  std::string raw;
  for (int number = 1; std::getline(in, raw); ++number) {
    // '#' starts a comment anywhere on a line, as for the option parser.
    const std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty() || line[0] == ';') continue;
    if (line.front() == '[') {
      return fmt::format("line {}: `{}`: rtsqld's options have no sections; write each as "
                         "`name = value`",
                         number, line);
    }
    const size_t eq = line.find('=');
    const std::string name = trim(line.substr(0, eq));
    if (contains(commandLineOnly, name)) {
      return fmt::format("line {}: `{}` is an option of the command line only", number, name);
    }
    if (contains(known, name)) continue;
    std::string problem =
        eq == std::string::npos && name.find_first_of(" \t") != std::string::npos
            ? fmt::format("line {}: `{}` is not `name = value`", number, line)
            : fmt::format("line {}: rtsqld has no option `{}`", number, name);
    // "port 1" meant "port = 1": offer the name before the blank.
    std::string guess = closestOptionName(name, known);
    if (guess.empty() && eq == std::string::npos) {
      const std::string first = name.substr(0, name.find_first_of(" \t"));
      if (contains(known, first)) guess = first;
    }
    if (!guess.empty()) problem += fmt::format("; did you mean `{} = ...`?", guess);
    return problem;
  }
  return std::nullopt;
}

}  // namespace rtsql
