// Tab completion for the shell: which words fit where the cursor is. Keywords
// come from the SQL surface; object names (sources, sinks, tables, flows) and
// function names are supplied by the caller, which fetches them from the server
// (SHOW FUNCTIONS), so only functions the server has are offered. Pure
// functions, so completion is tested without libedit or a server.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rtsql::client {

// The objects the server knows, as SHOW SOURCES/SINKS/TABLES/FLOWS list them.
struct ObjectNames {
  std::vector<std::string> sources;
  std::vector<std::string> sinks;
  std::vector<std::string> tables;
  std::vector<std::string> flows;
  // As SHOW FUNCTIONS lists them.
  std::vector<std::string> functions;
};

// True when completing at this place may offer object names, so the caller
// only asks the server when names could be used.
bool completionWantsNames(std::string_view before);

// True when completing at this place may offer function names (where an
// expression may start), so the caller asks the server for them only then.
bool completionWantsFunctions(std::string_view before);

// The words that complete `word` (the partial word under the cursor), given
// `before`, everything typed ahead of it in the statement. Keywords match
// regardless of case and come back in upper case, or in lower case when `word`
// is typed in lower case; function names likewise; object names match
// regardless of case and come back as the server spells them. Sorted, without
// duplicates.
std::vector<std::string> completionCandidates(std::string_view before, std::string_view word,
                                              const ObjectNames& names);

}  // namespace rtsql::client
