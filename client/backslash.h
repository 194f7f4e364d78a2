// The shell's backslash commands (\flows, \progress f, \watch 5, ...): parsing a
// command line into what to do, and the SQL the listing commands stand for.
// Pure functions, so the command syntax is tested without a terminal or server.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rtsql::client {

enum class BackslashKind {
  kQuit,      // \q
  kHelp,      // \?
  kReset,     // \r
  kFlows,     // \flows
  kSources,   // \sources
  kSinks,     // \sinks
  kTables,    // \tables
  kProgress,  // \progress FLOW
  kDescribe,  // \d [NAME]
  kInclude,   // \i FILE
  kTiming,    // \timing [on|off]
  kWatch,     // \watch [SECONDS]
  kInvalid,   // unknown command or bad argument; `error` says which
};

// What \timing asks for: flip the setting, or set it.
enum class TimingMode { kToggle, kOn, kOff };

struct BackslashCommand {
  BackslashKind kind = BackslashKind::kInvalid;
  // The flow name of \progress or the object name of \d, as typed (a quoted
  // name keeps its quotes; empty for \d alone), or the file of \i (its quotes
  // taken off).
  std::string argument;
  TimingMode timing = TimingMode::kToggle;
  // The interval of \watch.
  double seconds = 2.0;
  // Why the line is not a valid command (kInvalid only).
  std::string error;
};

// The default and the bounds of the \watch interval, in seconds.
inline constexpr double kWatchDefaultSeconds = 2.0;
inline constexpr double kWatchMinSeconds = 0.1;
inline constexpr double kWatchMaxSeconds = 86400.0;

// Parses one line that starts with '\' (surrounding blanks allowed).
BackslashCommand parseBackslash(std::string_view line);

// The statement a listing command runs (\flows -> "SHOW FLOWS", \d NAME ->
// "DESCRIBE NAME"), or "" for commands that are not one statement (\d alone
// lists every kind of object; see script.h).
std::string backslashSql(const BackslashCommand& command);

// The names of all backslash commands, with their leading '\', for completion.
const std::vector<std::string>& backslashCommandNames();

}  // namespace rtsql::client
