// What the embedded CPython's users in rtsql share (python_function.cpp owns
// the interpreter; python_processor.cpp is its other user): starting it,
// holding the GIL, converting values both ways and turning a Python exception
// into a data error. Include it first in a .cpp, as CPython asks of Python.h.
#pragma once

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <string>

#include "common/types.h"
#include "common/value.h"

namespace rtsql::python_internal {

// Starts the interpreter once per process (the first call does it).
void ensureStarted();

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
