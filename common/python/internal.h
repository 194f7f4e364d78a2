// What the parts of the embedded CPython share (interpreter.cpp owns the
// interpreter; function.cpp and processor.cpp are its users): starting it,
// holding the GIL, converting values both ways (marshal.cpp) and turning a
// Python exception into a data error. Include it first in a .cpp, as CPython
// asks of Python.h.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common/types.h"
#include "common/value.h"

namespace rtsql::python_internal {

// A reference to a Python object, dropped on scope exit (the GIL is held:
// every Ref lives inside a GilScope).
struct RefDrop {
  void operator()(PyObject* o) const { Py_XDECREF(o); }
};
using Ref = std::unique_ptr<PyObject, RefDrop>;

// Starts the interpreter once per process (the first call does it).
void ensureStarted();

// The runtime's compile_function(name, params, lines, filename), which
// compiles a function's body as a def (interpreter.cpp has its source).
// Borrowed; valid once the interpreter started.
PyObject* compileFunctionHelper();

// SqlError XX000: the runtime could not do `what`, with the pending Python
// exception's text.
[[noreturn]] void runtimeFailure(const std::string& what);

// Holds the GIL for its scope; the calling thread gets its CPython thread
// state on its first use, kept until the thread ends.
class GilScope {
 public:
  GilScope();
  ~GilScope();
  GilScope(const GilScope&) = delete;
  GilScope& operator=(const GilScope&) = delete;

 private:
  int state_;
};

// One call into user code (a function's def, a processor's methods or module
// body), which the watchdog of interrupt.cpp stops when the calling
// thread's interrupt check says so (interrupt.h) or when it runs past the
// time limit. Made and ended with the GIL held, right around the call.
class CallScope {
 public:
  // `kind` and `name` name the code in errors ("function", "f"); both outlive
  // the scope.
  CallScope(const char* kind, const std::string& name);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;

  // Ends the call, right after it returned: throws Interrupted when the
  // thread's check stopped it, SqlError 57014 naming the label when the time
  // limit did (the Python exception, if any, is dropped); else nothing, and
  // the call's result or exception is the caller's to look at.
  void end();

 private:
  int finish();

  const char* kind_;
  const std::string& name_;
  void* slot_ = nullptr;  // the thread's CallSlot (interrupt.cpp)
  bool ended_ = false;
};

// Run by the interpreter's start, on its thread with the GIL: the watchdog,
// the SIGINT handler of Python (our own) and the locked signal module.
// `globals` are the runtime helpers' (CallInterrupted, consume_signals,
// lock_signals).
void installInterrupts(PyObject* globals);

// Loads the datetime module's C API for marshal.cpp, which reads and makes
// datetime objects (CPython keeps that API per translation unit); false when
// it cannot. Run by the interpreter's start, with the GIL.
bool importDateTime();

// The type name of `o`, for errors.
const char* pyTypeName(PyObject* o);

// The time limit of one call in milliseconds (0: none).
void setCallTimeLimitMs(int64_t ms);
int64_t callTimeLimitMs();

// A new reference to `v` as Python sees it (docs/udf.md has the mapping);
// null with a Python exception set when Python cannot hold it.
PyObject* valueToPython(const Value& v, const DataType& type);
// `o` as a value of `type`; SqlError 22000 naming `label` ("function f",
// "processor p") and `path` when it is not one.
Value valueFromPython(const std::string& label, PyObject* o, const DataType& type,
                      const std::string& path);
// The pending Python exception's text, cleared.
std::string pendingErrorText();
// Throws the pending Python exception as SqlError 22000 "LABEL raised ...",
// with the last frames in the message and the whole traceback in the detail.
// Lines of `filename` are counted from its line `shift` + 1.
[[noreturn]] void raiseError(const std::string& label, const std::string& filename, int shift);

}  // namespace rtsql::python_internal
