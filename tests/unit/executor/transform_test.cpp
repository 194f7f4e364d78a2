// Transform (TRANSFORM ... USING PROCESSOR): a Python processor called per
// row with its partition key and the key's value, list and map states; the
// output is the key then the processor's rows; the state is kept in the
// operator's table under the layout documented in transform.h and restored
// by a new operator on the same table; TTL makes an old entry read as absent
// and deletes it; an exception is a data error with the traceback.
#include "executor/operators/transform.h"

#include <doctest/doctest.h>

#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "capture_operator.h"
#include "common/expr.h"
#include "common/python/processor.h"
#include "common/row_codec.h"
#include "state_test_util.h"

using namespace rtsql;

namespace {

using testing::Capture;
using testing::MemBackend;
using RocksBackend = testing::RocksBackend<4>;

DataTypePtr bigint() {
  return DataType::of(TypeId::BigInt);
}
DataTypePtr str() {
  return DataType::of(TypeId::String);
}

// Input rows are (user STRING, amount BIGINT) then the key (user again).
constexpr const char* kTotals = R"PY(
class Totals:
    def init(self, handle):
        self.scale = int(handle.options.get("scale", "1"))
        self.total = handle.value_state("total")
        self.amounts = handle.list_state("amounts")
        self.seen = handle.map_state("seen")

    def handle_input_rows(self, key, rows, timer_values):
        assert isinstance(key, tuple)
        for row in rows:
            self.total.update((self.total.get() or 0) + row["amount"] * self.scale)
            self.amounts.append(row["amount"])
            self.seen.put(row["amount"], True)
            yield (self.total.get(), len(self.amounts.get()), len(self.seen.keys()))
)PY";

TransformSpec spec(const char* body, const char* name = "totals",
                   std::vector<std::pair<std::string, std::string>> options = {}) {
  Schema returns;
  returns.columns = {{"total", bigint()}, {"n", bigint()}, {"distinct_amounts", bigint()}};
  TransformSpec s;
  s.id = 4;
  s.processor = PythonProcessor::compile(name, returns, body, 0);
  s.inputColumns = 2;
  s.inputSchema.columns = {{"user", str()}, {"amount", bigint()}};
  s.partitionKeys = {makeColumnRef(2, str(), "user")};
  s.output.columns = {{"user", str()}};
  for (const Column& c : returns.columns) s.output.columns.push_back(c);
  s.options = std::move(options);
  return s;
}

Row input(const char* user, int64_t amount) {
  return {Value::string(user), Value::bigint(amount), Value::string(user)};
}

Row output(const char* user, int64_t total, int64_t n, int64_t distinct) {
  return {Value::string(user), Value::bigint(total), Value::bigint(n), Value::bigint(distinct)};
}

template <typename Backend>
struct Fixture {
  explicit Fixture(TransformSpec s) : op(makeTransform(s, backend.table())) { op->setNext(&out); }
  void push(Row r) { op->push(r, RecordContext{}); }
  Backend backend;
  OperatorPtr op;
  Capture out;
};

}  // namespace

#define BACKENDS MemBackend, RocksBackend

TEST_CASE_TEMPLATE("transform keeps value, list and map state per partition key", B, BACKENDS) {
  Fixture<B> f(spec(kTotals, "totals", {{"scale", "10"}}));
  CHECK(f.op->stateful());
  f.push(input("a", 1));
  f.push(input("b", 5));
  f.push(input("a", 2));
  f.push(input("a", 2));
  REQUIRE(f.out.rows.size() == 4);
  CHECK(f.out.rows[0] == output("a", 10, 1, 1));
  CHECK(f.out.rows[1] == output("b", 50, 1, 1));
  CHECK(f.out.rows[2] == output("a", 30, 2, 2));
  CHECK(f.out.rows[3] == output("a", 50, 3, 2));
  CHECK(f.op->stats().numRowsTotal.load() == 6);  // three states for each of two keys
}

TEST_CASE(
    "state layout: transform keeps 'S' + key + time 0 + state name -> 0x01 + expiry + pickle") {
  MemBackend backend;
  {
    Capture out;
    auto op = makeTransform(spec(kTotals), backend.table());
    op->setNext(&out);
    Row r = input("a", 3);
    op->push(r, RecordContext{});
    op->onEpochEnd();
  }
  std::string key = "S";
  encodeKey(key, Value::string("a"));
  encodeKeyInt(key, 0);
  // The layout byte, then no expiry (no TTL), then the pickle (protocol 4).
  std::string noExpiry = "\x01";
  encodeKeyInt(noExpiry, std::numeric_limits<int64_t>::max());
  std::vector<std::string> keys;
  for (const auto& [k, v] : backend.storage->data) {
    keys.push_back(k);
    CHECK(v.substr(0, 9) == noExpiry);
    CHECK(v.substr(9, 2) == std::string("\x80\x04", 2));
  }
  CHECK(keys == std::vector<std::string>{key + "amounts", key + "seen", key + "total"});

  // A new operator on the same table goes on from the restored state.
  Capture out;
  auto op = makeTransform(spec(kTotals), backend.table());
  op->setNext(&out);
  Row r = input("a", 4);
  op->push(r, RecordContext{});
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0] == output("a", 7, 2, 2));
}

namespace {

int64_t wallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Waits (bounded) until the wall clock reaches `ms`.
void waitForClock(int64_t ms) {
  for (int i = 0; i < 10000 && wallMillis() < ms; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(wallMillis() >= ms);
}

// The entries of `tag` in `backend`, key (after the tag) to value.
std::map<std::string, std::string> family(const MemBackend& backend, char tag) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : backend.storage->data) {
    if (!k.empty() && k[0] == tag) out.emplace(k.substr(1), v);
  }
  return out;
}

}  // namespace

TEST_CASE("transform: an entry older than its TTL reads as absent and is deleted") {
  Fixture<MemBackend> f(spec(R"PY(
class Ttl:
    def init(self, handle):
        self.short = handle.value_state("short", ttl_ms=1)
        self.long = handle.value_state("long", ttl_ms=3600000)
    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            if row["amount"] == 0:
                yield (int(self.short.exists()), int(self.long.exists()), None)
            else:
                self.short.update(row["amount"])
                self.long.update(row["amount"])
                yield (row["amount"], None, None)
)PY",
                             "ttl"));
  f.push(input("a", 5));
  CHECK(family(f.backend, 'S').size() == 2);
  CHECK(family(f.backend, 'E').size() == 2);
  // Processing time moves on past the short TTL (1 ms).
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  f.push(input("a", 0));
  REQUIRE(f.out.rows.size() == 2);
  CHECK(f.out.rows[1] == Row{Value::string("a"), Value::bigint(0), Value::bigint(1), Value()});
  f.op->onEpochEnd();
  CHECK(family(f.backend, 'S').size() == 1);  // the expired entry was deleted
  CHECK(family(f.backend, 'E').size() == 1);  // with its expiry
}

namespace {

// A value state "v" with a TTL of `amount` ms (none for 0) set to the
// amount; an amount of -1 reads it (1 when present), -2 clears it.
constexpr const char* kTtl = R"PY(
class Ttl:
    def init(self, handle):
        self.handle = handle
    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            a = row["amount"]
            v = self.handle.value_state("v", ttl_ms=None if a <= 0 else a)
            if a == -1:
                yield (int(v.exists()), None, None)
            elif a == -2:
                v.clear()
            else:
                v.update(a)
)PY";

}  // namespace

TEST_CASE("state layout: a state with a TTL keeps 'E' + expiry + key + name -> name") {
  Fixture<MemBackend> f(spec(kTtl, "ttl"));
  const int64_t before = wallMillis();
  f.push(input("a", 3600000));
  const int64_t after = wallMillis();
  auto states = family(f.backend, 'S');
  auto expiries = family(f.backend, 'E');
  REQUIRE(states.size() == 1);
  REQUIRE(expiries.size() == 1);
  std::string key;
  encodeKey(key, Value::string("a"));
  const std::string& eKey = expiries.begin()->first;
  std::string_view t = std::string_view(eKey).substr(0, 8);
  const int64_t expiry = decodeKeyInt(t);
  CHECK(expiry >= before + 3600000);
  CHECK(expiry <= after + 3600000);
  CHECK(eKey.substr(8) == key + "v");
  CHECK(expiries.begin()->second == "v");
  // The 'S' value carries the same expiry.
  std::string sKey = key;
  encodeKeyInt(sKey, 0);
  REQUIRE(states.count(sKey + "v") == 1);
  std::string prefix = "\x01";
  encodeKeyInt(prefix, expiry);
  CHECK(states[sKey + "v"].substr(0, 9) == prefix);
  // The processor reports the expiry as the time to be woken at.
  CHECK(f.op->wakeAtMillis() <= expiry);

  // A write with a later expiry moves the 'E' entry; one without TTL and a
  // clear drop it.
  f.push(input("a", 7200000));
  expiries = family(f.backend, 'E');
  REQUIRE(expiries.size() == 1);
  t = std::string_view(expiries.begin()->first).substr(0, 8);
  CHECK(decodeKeyInt(t) >= before + 7200000);
  f.push(input("a", 0));
  CHECK(family(f.backend, 'E').empty());
  CHECK(family(f.backend, 'S').size() == 1);
  f.push(input("a", 3600000));
  CHECK(family(f.backend, 'E').size() == 1);
  f.push(input("a", -2));
  CHECK(family(f.backend, 'E').empty());
  CHECK(family(f.backend, 'S').empty());
}

TEST_CASE_TEMPLATE("transform: an expired entry is deleted on the clock, never read again", B,
                   BACKENDS) {
  Fixture<B> f(spec(kTtl, "ttl"));
  f.push(input("a", 30));       // expires in 30 ms, and is never read again
  f.push(input("b", 3600000));  // in an hour
  f.push(input("c", 0));        // never
  f.op->onEpochEnd();
  CHECK(f.op->stats().numRowsTotal.load() == 5);  // three states, two expiries
  // What the task does with no input: wait until the time the operator asks
  // for, end a batch. The first asks for now (the operator has not looked at
  // its state yet), the next for a's expiry, which deletes a's entries.
  int wakeups = 0;
  while (f.op->stats().numRowsTotal.load() != 3 && wakeups < 10) {
    waitForClock(f.op->wakeAtMillis());
    f.op->onBatchEnd();
    ++wakeups;
  }
  CHECK(wakeups <= 2);
  CHECK(f.op->stats().numRowsTotal.load() == 3);          // a's state and expiry are gone
  CHECK(f.op->wakeAtMillis() >= wallMillis() + 3000000);  // b's is next
  f.push(input("a", -1));
  f.push(input("b", -1));
  f.push(input("c", -1));
  REQUIRE(f.out.rows.size() == 3);
  CHECK(f.out.rows[0][1] == Value::bigint(0));
  CHECK(f.out.rows[1][1] == Value::bigint(1));
  CHECK(f.out.rows[2][1] == Value::bigint(1));
}

TEST_CASE("transform: expiries are restored with the state and swept after a restart") {
  MemBackend backend;
  {
    Capture out;
    auto op = makeTransform(spec(kTtl, "ttl"), backend.table());
    op->setNext(&out);
    Row r = input("a", 30);
    op->push(r, RecordContext{});
    op->onEpochEnd();
  }
  REQUIRE(family(backend, 'E').size() == 1);
  Capture out;
  auto op = makeTransform(spec(kTtl, "ttl"), backend.table());
  op->setNext(&out);
  // A restored operator has not looked at its state: it asks to be woken now.
  CHECK(op->wakeAtMillis() <= wallMillis());
  op->onBatchEnd();
  // Unless the entry expired already, the operator now knows when it will.
  const int64_t due = op->wakeAtMillis();
  if (due != Operator::kNoWakeup) {
    waitForClock(due);
    op->onBatchEnd();
  }
  op->onEpochEnd();
  CHECK(backend.storage->data.empty());
  CHECK(op->wakeAtMillis() == Operator::kNoWakeup);
}

TEST_CASE("transform: a state written before expiry times were kept reads as it was") {
  MemBackend backend;
  {
    Capture out;
    auto op = makeTransform(spec(kTotals), backend.table());
    op->setNext(&out);
    Row r = input("a", 3);
    op->push(r, RecordContext{});
    op->onEpochEnd();
  }
  // The previous layout: the pickle alone.
  for (auto& [k, v] : backend.storage->data) v = v.substr(9);
  Capture out;
  auto op = makeTransform(spec(kTotals), backend.table());
  op->setNext(&out);
  Row r = input("a", 4);
  op->push(r, RecordContext{});
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0] == output("a", 7, 2, 2));
  op->onEpochEnd();
  for (const auto& [k, v] : backend.storage->data) CHECK(v[0] == '\x01');  // written anew

  // A value of neither layout is an error, never a misreading.
  for (auto& [k, v] : backend.storage->data) v = "\x02" + v.substr(1);
  Row again = input("a", 5);
  CHECK_THROWS_AS(op->push(again, RecordContext{}), InternalError);
  CHECK(out.rows.size() == 1);
}

TEST_CASE("transform: an exception in the processor is a data error with the traceback") {
  Fixture<MemBackend> f(spec(R"PY(
class Boom:
    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            yield (10 // row["amount"], None, None)
)PY",
                             "boom"));
  f.push(input("a", 5));
  CHECK(f.out.rows.size() == 1);
  try {
    f.push(input("a", 0));
    FAIL("no error");
  } catch (const SqlError& e) {
    CHECK(e.sqlstate() == std::string("22000"));
    CHECK(std::string(e.message()).find("processor boom raised ZeroDivisionError") !=
          std::string::npos);
    CHECK(std::string(e.message()).find("line 4 in handle_input_rows") != std::string::npos);
    CHECK(e.detail().find("Traceback") != std::string::npos);
  }
}

TEST_CASE("transform: a processor that does not compile or has no class is refused") {
  Schema returns;
  returns.columns = {{"n", bigint()}};
  auto refused = [&](const char* body) -> std::string {
    try {
      PythonProcessor::compile("p", returns, body, 0);
    } catch (const SqlError& e) {
      CHECK(e.sqlstate() == std::string("42P13"));
      return e.message();
    }
    return "";
  };
  CHECK(
      refused("class P:\n  def handle_input_rows(self, k, r, t)\n    pass\n").find("SyntaxError") !=
      std::string::npos);
  CHECK(refused("x = 1\n").find("defines no class") != std::string::npos);
  CHECK(refused("class P:\n  pass\n").find("no handle_input_rows") != std::string::npos);
}

namespace {

// Event-time timers at amount * 1000 ms; a timer that fires yields its time,
// the key's timers left and the key's count of rows.
constexpr const char* kEventTimers = R"PY(
class Timers:
    time_mode = "event"
    def init(self, handle):
        self.handle = handle
        self.rows = handle.value_state("rows")
    def handle_input_rows(self, key, rows, timer_values):
        for row in rows:
            self.rows.update((self.rows.get() or 0) + 1)
            if row["amount"] < 0:
                self.handle.delete_timer(-row["amount"] * 1000)
            else:
                self.handle.register_timer(row["amount"] * 1000)
        return []
    def handle_expired_timer(self, key, timer_values, expired):
        assert timer_values.current_watermark_ms() >= expired.expiry_time_ms
        yield (expired.expiry_time_ms, len(self.handle.list_timers()), self.rows.get())
)PY";

constexpr int64_t kMicrosPerMs = 1000;

}  // namespace

TEST_CASE_TEMPLATE("transform: event-time timers fire as the watermark passes them", B, BACKENDS) {
  Fixture<B> f(spec(kEventTimers, "timers"));
  f.push(input("a", 5));
  f.push(input("a", 9));
  f.push(input("b", 7));
  f.push(input("b", 8));
  f.push(input("b", -8));  // deleted again
  CHECK(f.out.rows.empty());
  f.op->onWatermark(4999 * kMicrosPerMs);
  CHECK(f.out.rows.empty());
  f.op->onWatermark(7000 * kMicrosPerMs);
  REQUIRE(f.out.rows.size() == 2);
  CHECK(f.out.rows[0] == output("a", 5000, 1, 2));
  CHECK(f.out.rows[1] == output("b", 7000, 0, 3));
  f.op->onWatermark(20000 * kMicrosPerMs);
  REQUIRE(f.out.rows.size() == 3);  // b's timer at 8000 was deleted
  CHECK(f.out.rows[2] == output("a", 9000, 0, 2));
}

TEST_CASE("transform: timers are restored with the state and fire after a restart") {
  MemBackend backend;
  {
    Capture out;
    auto op = makeTransform(spec(kEventTimers, "timers"), backend.table());
    op->setNext(&out);
    Row r = input("a", 3);
    op->push(r, RecordContext{});
    op->onEpochEnd();
  }
  Capture out;
  auto op = makeTransform(spec(kEventTimers, "timers"), backend.table());
  op->setNext(&out);
  op->onWatermark(3000 * kMicrosPerMs);
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0] == output("a", 3000, 0, 1));
  op->onEpochEnd();
  CHECK(backend.storage->data.size() == 1);  // the timer's entries are gone, the count stays
}

TEST_CASE("transform: processing-time timers fire on the clock as the task goes on") {
  Fixture<MemBackend> f(spec(R"PY(
class Clock:
    def init(self, handle):
        self.handle = handle
    def handle_input_rows(self, key, rows, timer_values):
        now = timer_values.current_processing_time_ms()
        for row in rows:
            self.handle.register_timer(now + row["amount"])
        return []
    def handle_expired_timer(self, key, timer_values, expired):
        assert timer_values.current_processing_time_ms() >= expired.expiry_time_ms
        yield (1, None, None)
)PY",
                             "clock"));
  f.push(input("a", 0));
  f.push(input("b", 3600 * 1000));  // an hour from now
  f.op->onBatchEnd();
  REQUIRE(f.out.rows.size() == 1);
  CHECK(f.out.rows[0][0] == Value::string("a"));
  f.op->onBatchEnd();
  CHECK(f.out.rows.size() == 1);
  // The task is asked to wake the operator for b's timer, and no earlier
  // once the operator looked.
  CHECK(f.op->wakeAtMillis() >= wallMillis() + 3000 * 1000);
  CHECK(f.op->wakeAtMillis() <= wallMillis() + 3600 * 1000);
  f.push(input("c", 30));
  const int64_t due = f.op->wakeAtMillis();
  CHECK(due <= wallMillis() + 30);
  waitForClock(due);
  f.op->onBatchEnd();  // with no input: what the task does at that time
  REQUIRE(f.out.rows.size() == 2);
  CHECK(f.out.rows[1][0] == Value::string("c"));
}

TEST_CASE("transform: a processor asks to be woken only for processing-time work") {
  SUBCASE("event-time timers wait for the watermark") {
    Fixture<MemBackend> f(spec(kEventTimers, "timers"));
    f.op->onBatchEnd();
    CHECK(f.op->wakeAtMillis() == Operator::kNoWakeup);
    f.push(input("a", 5));  // a timer at 5000 ms event time
    f.op->onBatchEnd();
    CHECK(f.op->wakeAtMillis() == Operator::kNoWakeup);
  }
  SUBCASE("no timer and no TTL: never") {
    Fixture<MemBackend> f(spec(kTotals));
    f.push(input("a", 1));
    f.op->onBatchEnd();
    CHECK(f.op->wakeAtMillis() == Operator::kNoWakeup);
  }
}
