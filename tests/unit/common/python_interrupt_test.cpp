// Interrupting Python calls: a call stuck in the `re` matcher's backtracking,
// in a Python loop (one that catches the interruption, too) or in a sleep ends
// with Interrupted once its thread's interrupt check says so, on a thread
// that did not start the interpreter; the time limit ends one with 57014
// naming the function; the next call runs; and the signal module cannot take
// rtsqld's signals.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "../sql_error_of.h"
#include "common/python/function.h"
#include "common/interrupt.h"

using namespace rtsql;
using rtsql::testing::sqlErrorOf;

namespace {

using Clock = std::chrono::steady_clock;

// Far above what an interrupt takes (a tick of 50 ms, then the matcher's
// next look at its signals), far below "for ever".
constexpr auto kBound = std::chrono::seconds(20);

std::shared_ptr<const PythonFunction> compile(const std::string& name, const std::string& body) {
  return PythonFunction::compile(name, {{"s", DataType::of(TypeId::String)}},
                                 DataType::of(TypeId::BigInt), body, 100);
}

// Backtracks for ever (2^n steps) on 'aaa...ab'.
constexpr const char* kBacktracking =
    "import re\n"
    "return 1 if re.match(r'(a+)+$', s) else 0\n";
const Value kBadInput = Value::string(std::string(64, 'a') + "b");

struct Flag {
  std::atomic<bool> set{false};
  static bool check(const void* p) { return static_cast<const Flag*>(p)->set.load(); }
};

// What `fn` over `arg` throws on a new thread whose check is a flag, set once
// the call has run for a while; and how long the call took after that.
struct Outcome {
  std::string sqlstate;
  std::string message;
  Clock::duration afterSet{};
};

Outcome interruptedCall(const std::shared_ptr<const PythonFunction>& fn, const Value& arg) {
  Flag flag;
  Outcome out;
  std::thread caller([&] {
    InterruptScope scope(Flag::check, &flag, Flag::check);
    try {
      fn->call(&arg, 1);
      out.sqlstate = "none";
    } catch (const SqlError& e) {
      out.sqlstate = e.sqlstate();
      out.message = e.message();
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto setAt = Clock::now();
  flag.set = true;
  caller.join();
  out.afterSet = Clock::now() - setAt;
  return out;
}

}  // namespace

TEST_CASE("a Python call stuck in the re matcher ends when its thread's check says so") {
  auto fn = compile("backtracks", kBacktracking);
  const Outcome out = interruptedCall(fn, kBadInput);
  CHECK(out.sqlstate == "57014");
  CHECK(out.afterSet < kBound);
  // The interpreter is free again: the next call, on this thread, runs.
  const Value fine = Value::string("aaa");
  CHECK(fn->call(&fine, 1) == Value::bigint(1));
}

TEST_CASE("a Python loop that catches the interruption and a sleep are interrupted too") {
  // Caught once, the interruption comes again.
  auto stubborn = compile("stubborn",
                          "\n"
                          "try:\n"
                          "    while True:\n"
                          "        pass\n"
                          "except BaseException:\n"
                          "    pass\n"
                          "while True:\n"
                          "    pass\n");
  Outcome out = interruptedCall(stubborn, Value::string("x"));
  CHECK(out.sqlstate == "57014");
  CHECK(out.afterSet < kBound);

  auto sleeper = compile("sleeper", "import time\ntime.sleep(3600)\nreturn 1\n");
  out = interruptedCall(sleeper, Value::string("x"));
  CHECK(out.sqlstate == "57014");
  CHECK(out.afterSet < kBound);
}

TEST_CASE("the Python call time limit ends a call with 57014 naming the function") {
  auto fn = compile("limited", kBacktracking);
  setPythonCallTimeLimitMs(500);
  const auto start = Clock::now();
  const SqlError e = sqlErrorOf([&] { fn->call(&kBadInput, 1); });
  setPythonCallTimeLimitMs(0);
  CHECK(e.sqlstate() == "57014");
  CHECK(e.message() ==
        "function limited ran longer than the Python call time limit of 500 ms and was "
        "interrupted");
  CHECK(Clock::now() - start < kBound);
  // Without the limit, a short call is not affected.
  const Value fine = Value::string("ab");
  CHECK(fn->call(&fine, 1) == Value::bigint(0));
}

TEST_CASE("a Python function cannot change signal handling") {
  struct sigaction before {};
  sigaction(SIGTERM, nullptr, &before);
  auto fn = compile("handlers",
                    "import signal\n"
                    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                    "return 1\n");
  const SqlError e = sqlErrorOf([&] {
    const Value arg = Value::string("x");
    fn->call(&arg, 1);
  });
  CHECK(e.sqlstate() == "22000");
  CHECK(e.message().find("signal handling belongs to rtsqld") != std::string::npos);
  struct sigaction now {};
  sigaction(SIGTERM, nullptr, &now);
  const bool untouched = now.sa_handler == before.sa_handler;
  CHECK(untouched);
  for (const char* call : {"signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM])",
                           "signal.alarm(1)", "signal.setitimer(signal.ITIMER_REAL, 1)",
                           "import _signal; _signal.signal(signal.SIGINT, signal.SIG_IGN)"}) {
    auto other = compile("other", std::string("import signal\n") + call + "\nreturn 1\n");
    CAPTURE(call);
    const Value arg = Value::string("x");
    CHECK(sqlErrorOf([&] { other->call(&arg, 1); }).message().find(
              "signal handling belongs to rtsqld") != std::string::npos);
  }
}
