// What /proc tells about this process's threads, for tests of which threads a
// component starts, at what priority and what CPU time they use.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <thread>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rtsql::testing {

// The fields of /proc/self/task/<tid>/stat of each thread of this process
// whose name starts with `prefix`, from field 3 (the state) on: field N of
// stat(5) is element N - 3.
inline std::vector<std::vector<std::string>> threadStats(const std::string& prefix) {
  std::vector<std::vector<std::string>> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string name;
    if (!std::getline(comm, name) || name.rfind(prefix, 0) != 0) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // After "pid (comm) ", whose name may hold spaces.
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::vector<std::string> fields;
    for (std::string field; rest >> field;) fields.push_back(field);
    out.push_back(std::move(fields));
  }
  return out;
}

// The threads of this process whose name starts with `prefix`, as their nice
// values (field 19 of /proc/self/task/<tid>/stat).
inline std::vector<int> threadNices(const std::string& prefix) {
  std::vector<int> out;
  for (const auto& fields : threadStats(prefix)) {
    if (fields.size() > 19 - 3) out.push_back(std::stoi(fields[19 - 3]));
  }
  return out;
}

// How many threads of this process are named exactly `name`.
inline int threadsNamed(const std::string& name) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string s;
    if (std::getline(comm, s) && s == name) ++n;
  }
  return n;
}

// threadsNamed(name) once it equals `expected`, or after `timeout` as it is
// then. A thread started by a named thread carries that name until it names
// itself (librdkafka's threads do so as they start), so a count taken at
// once may include threads that are about to take their own names.
inline int threadsNamedSettled(const std::string& name, int expected,
                               std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  int n = threadsNamed(name);
  while (n != expected && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = threadsNamed(name);
  }
  return n;
}

// The CPU time (user + system, in clock ticks of sysconf(_SC_CLK_TCK)) that
// the threads of this process whose name starts with `prefix` have used so far
// (fields 14 and 15 of /proc/self/task/<tid>/stat).
inline int64_t threadCpuTicks(const std::string& prefix) {
  int64_t ticks = 0;
  for (const auto& fields : threadStats(prefix)) {
    if (fields.size() > 15 - 3) ticks += std::stoll(fields[14 - 3]) + std::stoll(fields[15 - 3]);
  }
  return ticks;
}

// The voluntary context switches (sleeps) so far of the threads of this
// process named exactly `name`, summed: how often they woke.
inline long voluntarySwitches(const std::string& name) {
  long n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(entry.path() / "comm");
    std::string s;
    if (!std::getline(comm, s) || s != name) continue;
    std::ifstream status(entry.path() / "status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0) n += std::stol(line.substr(24));
    }
  }
  return n;
}

}  // namespace rtsql::testing
