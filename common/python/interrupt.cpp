// Interrupting Python calls (internal.h, CallScope): a watchdog thread
// looks at every call in progress a few times a second and stops the ones
// whose thread's interrupt check says so (a cancel request, statement_timeout,
// STOP FLOW, shutdown) or that ran past the time limit; and the signal module
// is made unable to take rtsqld's signals.
//
// How a call is stopped. A thread running Python code can be stopped only
// from inside: the interpreter looks at its "signals" between bytecodes, and
// C code that loops long (the `re` matcher backtracking, for one) calls
// PyErr_CheckSignals every few thousand steps. Both run the Python handler
// of a signal the interpreter was told about, but only on the interpreter's
// main thread. So the watchdog, without the GIL (the stuck call holds it),
// makes the thread of the call to stop the main thread, and simulates a
// SIGINT with PyErr_SetInterruptEx (no signal is sent: rtsqld's own SIGINT
// handler stays in place). The Python handler of SIGINT is ours: it raises
// CallInterrupted, a BaseException, on the thread whose call is to stop, and
// does nothing anywhere else. A system call the function waits in (a sleep, a
// read) is woken by a real SIGURG sent to that thread alone, whose handler
// does nothing: the system call fails with EINTR and CPython checks its
// signals. The watchdog does it again every tick until the call has ended, so
// a function that catches the exception is stopped again; whatever it
// returns, the call's result is the interruption.
//
// CPython keeps its main thread in _PyRuntime, which no public API sets: the
// field is found once, at start, as the one word of _PyRuntime that holds the
// starting thread's id (checked to be the only one). Where it is not found,
// only calls on the thread that started the interpreter can be stopped, and
// a line in the log says so.
//
// What cannot be stopped: C code that loops without ever returning to the
// interpreter or checking signals (docs/udf.md): its call ends when the loop
// does. The time limit still marks it, and it fails as soon as it returns.
#include "common/python/internal.h"

#include <fmt/format.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "common/interrupt.h"
#include "common/log.h"

extern "C" {
// CPython's runtime state: exported, but declared only in its internal headers.
extern unsigned char _PyRuntime[];
}

namespace rtsql::python_internal {

namespace {

// How often the watchdog looks at the calls in progress, and so how long at
// most a cancel waits before a call is told to stop.
constexpr auto kTick = std::chrono::milliseconds(50);

enum class StopReason : int { None = 0, Interrupted = 1, TimeLimit = 2 };

// One thread's state as the watchdog sees it; made on the thread's first call.
//
// A call costs as little as it can (a scalar function is called per row): its
// start takes no lock. It writes `check`, `context` and `startTick`, then
// sets `inCall`; the watchdog reads them only while it sees `inCall` and holds
// `mu`, and the call's end clears `inCall` under `mu`, so they do not change
// under the watchdog, and the check's context outlives its last use.
struct CallSlot {
  unsigned long ident = 0;  // CPython's id of the thread
  pthread_t thread{};
  int depth = 0;  // nested calls on this thread; only the thread touches it
  std::mutex mu;
  std::atomic<bool> inCall{false};
  std::atomic<InterruptScope::Check> check{nullptr};
  std::atomic<const void*> context{nullptr};
  std::atomic<uint64_t> startTick{0};
  std::atomic<int> stop{0};          // a StopReason, set by the watchdog under `mu`
  std::atomic<bool> tripped{false};  // the watchdog simulated a signal for it, under `mu`
};

// Every thread's slot, leaked: the watchdog is never joined.
std::mutex& slotsMu() {
  static auto* mu = new std::mutex;
  return *mu;
}
std::vector<CallSlot*>& slots() {
  static auto* all = new std::vector<CallSlot*>;
  return *all;
}

struct SlotOwner {
  CallSlot* slot = new CallSlot;
  SlotOwner() {
    slot->ident = PyThread_get_thread_ident();
    slot->thread = pthread_self();
    std::lock_guard lock(slotsMu());
    slots().push_back(slot);
  }
  ~SlotOwner() {
    {
      std::lock_guard lock(slotsMu());
      slots().erase(std::find(slots().begin(), slots().end(), slot));
    }
    delete slot;
  }
};

CallSlot& mySlot() {
  static thread_local SlotOwner owner;
  return *owner.slot;
}

std::atomic<int64_t> gTimeLimitMs{0};
std::atomic<uint64_t> gTicks{0};  // the watchdog's ticks so far: the calls' clock
unsigned long* gMainThread = nullptr;  // _PyRuntime's main thread, when found
PyObject* gInterruptType = nullptr;    // CallInterrupted
PyObject* gConsume = nullptr;          // a Python no-op that lets signals be handled

void setMainThread(unsigned long ident) {
  if (gMainThread) __atomic_store_n(gMainThread, ident, __ATOMIC_SEQ_CST);
}

// The Python handler of SIGINT: raises CallInterrupted on a thread whose call
// the watchdog stops, else nothing (the call it was meant for has ended).
PyObject* interruptHandler(PyObject*, PyObject*) {
  CallSlot& slot = mySlot();
  const int stop = slot.stop.load();
  if (slot.depth > 0 && stop != 0) {
    PyErr_SetString(gInterruptType, stop == static_cast<int>(StopReason::TimeLimit)
                                        ? "the call ran past rtsqld's Python call time limit"
                                        : "the statement or flow running the call is stopping");
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef gHandlerDef = {"rtsql_interrupt", interruptHandler, METH_VARARGS,
                           "Stops a Python call rtsqld is interrupting."};

// Tells `slot`'s thread to stop its call (see the header comment).
void trip(const CallSlot& slot) {
  setMainThread(PyThread_get_thread_ident());  // so that the eval loops are told
  PyErr_SetInterruptEx(SIGINT);
  setMainThread(slot.ident);
  pthread_kill(slot.thread, SIGURG);
}

void watch() {
  pthread_setname_np(pthread_self(), "python-watch");
  size_t turn = 0;
  std::vector<CallSlot*> stopping;
  for (;;) {
    std::this_thread::sleep_for(kTick);
    const uint64_t now = ++gTicks;
    const int64_t limitMs = gTimeLimitMs.load();
    std::lock_guard lock(slotsMu());
    stopping.clear();
    for (CallSlot* s : slots()) {
      std::lock_guard slotLock(s->mu);
      if (!s->inCall.load(std::memory_order_acquire)) continue;
      if (s->stop.load() == 0) {
        // Whole ticks since the call began (it began during the first).
        const uint64_t start = s->startTick.load(std::memory_order_relaxed);
        const int64_t ranMs = static_cast<int64_t>(now - start - 1) * kTick.count();
        // The check reads atomics and the clock (interrupt.h): safe here.
        const InterruptScope::Check check = s->check.load(std::memory_order_relaxed);
        if (check && check(s->context.load(std::memory_order_relaxed))) {
          s->stop = static_cast<int>(StopReason::Interrupted);
        } else if (limitMs > 0 && now > start && ranMs >= limitMs) {
          s->stop = static_cast<int>(StopReason::TimeLimit);
        }
      }
      if (s->stop.load() != 0) stopping.push_back(s);
    }
    if (stopping.empty()) continue;
    // One main thread at a time: the calls to stop take turns, one a tick.
    CallSlot* s = stopping[turn++ % stopping.size()];
    std::lock_guard slotLock(s->mu);
    if (!s->inCall.load()) continue;
    s->tripped = true;
    trip(*s);
  }
}

void doNothing(int) {}

}  // namespace

void installInterrupts(PyObject* globals) {
  // The main thread's word in _PyRuntime: the one that holds this thread's id.
  const unsigned long me = PyThread_get_thread_ident();
  constexpr size_t kSearched = 4096;
  int found = 0;
  for (size_t off = 0; off + sizeof(unsigned long) <= kSearched; off += alignof(unsigned long)) {
    unsigned long word = 0;
    std::memcpy(&word, _PyRuntime + off, sizeof word);
    if (word == me) {
      ++found;
      gMainThread = reinterpret_cast<unsigned long*>(_PyRuntime + off);
    }
  }
  if (found != 1) {
    gMainThread = nullptr;
    logLine(
        "cannot find CPython's main thread: only the Python calls of the thread that started "
        "the interpreter can be interrupted");
  }

  gInterruptType = PyDict_GetItemString(globals, "CallInterrupted");
  gConsume = PyDict_GetItemString(globals, "consume_signals");
  Py_XINCREF(gInterruptType);
  Py_XINCREF(gConsume);

  // Our handler becomes the Python handler of SIGINT; the process's own
  // handler (rtsqld's, or the default before rtsqld sets its own) is put
  // back at once, so a real SIGINT still stops rtsqld.
  struct sigaction before {};
  sigaction(SIGINT, nullptr, &before);
  PyObject* signalModule = PyImport_ImportModule("_signal");
  PyObject* handler = PyCFunction_New(&gHandlerDef, nullptr);
  PyObject* previous = signalModule && handler ? PyObject_CallMethod(signalModule, "signal", "iO",
                                                                     SIGINT, handler)
                                               : nullptr;
  if (!previous) PyErr_Clear();
  Py_XDECREF(previous);
  Py_XDECREF(handler);
  Py_XDECREF(signalModule);
  sigaction(SIGINT, &before, nullptr);

  // SIGURG, ignored by default, wakes a function out of a system call. No
  // SA_RESTART: the system call fails with EINTR and CPython looks at its
  // signals.
  struct sigaction urg {};
  sigaction(SIGURG, nullptr, &urg);
  if (urg.sa_handler == SIG_DFL || urg.sa_handler == SIG_IGN) {
    struct sigaction wake {};
    wake.sa_handler = doNothing;
    sigemptyset(&wake.sa_mask);
    sigaction(SIGURG, &wake, nullptr);
  }

  // From now on, Python code cannot change signal handling.
  PyObject* lock = PyDict_GetItemString(globals, "lock_signals");
  PyObject* locked = lock ? PyObject_CallNoArgs(lock) : nullptr;
  if (!locked) PyErr_Clear();
  Py_XDECREF(locked);

  std::thread(watch).detach();
}

void setCallTimeLimitMs(int64_t ms) {
  gTimeLimitMs = std::max<int64_t>(ms, 0);
}

int64_t callTimeLimitMs() {
  return gTimeLimitMs.load();
}

CallScope::CallScope(const char* kind, const std::string& name) : kind_(kind), name_(name) {
  CallSlot& slot = mySlot();
  slot_ = &slot;
  if (slot.depth++ > 0) return;  // the outermost call is the one watched
  const InterruptCheck check = currentInterruptCheck();
  slot.check.store(check.check, std::memory_order_relaxed);
  slot.context.store(check.context, std::memory_order_relaxed);
  slot.startTick.store(gTicks.load(std::memory_order_relaxed), std::memory_order_relaxed);
  slot.inCall.store(true, std::memory_order_release);
}

CallScope::~CallScope() {
  if (!ended_) finish();
}

int CallScope::finish() {
  ended_ = true;
  CallSlot& slot = *static_cast<CallSlot*>(slot_);
  if (--slot.depth > 0) return 0;
  int stop = 0;
  bool tripped = false;
  {
    std::lock_guard lock(slot.mu);
    slot.inCall.store(false, std::memory_order_relaxed);
    stop = slot.stop.load(std::memory_order_relaxed);
    tripped = slot.tripped.load(std::memory_order_relaxed);
    if (stop != 0) slot.stop.store(0, std::memory_order_relaxed);
    if (tripped) slot.tripped.store(false, std::memory_order_relaxed);
  }
  if (tripped && gConsume) {
    // The simulated signal may still be pending: handled here (the handler
    // does nothing now), so that no eval loop keeps stopping to look at it.
    PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
    PyErr_Fetch(&type, &value, &tb);
    setMainThread(slot.ident);
    PyObject* r = PyObject_CallNoArgs(gConsume);
    Py_XDECREF(r);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
  }
  return stop;
}

void CallScope::end() {
  const int stop = finish();
  if (stop == 0) return;
  PyErr_Clear();
  if (stop == static_cast<int>(StopReason::TimeLimit)) {
    throw SqlError(sqlstate::kQueryCanceled,
                   fmt::format("{} {} ran longer than the Python call time limit of {} ms and "
                               "was interrupted",
                               kind_, name_, gTimeLimitMs.load()),
                   SqlError::npos,
                   "rtsqld --python-call-timeout sets the limit (docs/udf.md); a function that "
                   "loops for ever on some input fails this way instead of holding the GIL");
  }
  throw Interrupted();
}

}  // namespace rtsql::python_internal
