// Python functions (CREATE FUNCTION ... LANGUAGE PYTHON): the function as
// CPython, embedded in rtsqld, compiled it, and the expression node that calls
// it once per row. docs/udf.md describes them for users.
//
// The interpreter starts when the first Python function is compiled, never
// before: a server that never creates one does not load the standard library
// or hold a thread state. Right after it starts, the thread that started it
// gives up the GIL. From then on the GIL is taken only here: by compile(), by
// call() for the one call it makes, and by a function's destructor. Nothing
// else in rtsql takes it, so a flow that calls no Python function never waits
// for it, however busy the flows that do call one keep it.
//
// Each task thread that calls a Python function gets one CPython thread state,
// the first time, kept until the thread ends, so that a call costs taking and
// giving back the GIL, not making a thread state per call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/expr.h"
#include "common/types.h"
#include "common/value.h"

namespace rtsql {

class PythonFunction {
 public:
  struct Param {
    std::string name;
    DataTypePtr type;
    size_t pos = SqlError::npos;  // the parameter's place in the statement
  };

  // Compiles `body` as the body of `def name(params...)`: the parameters are
  // the Python parameters by name, and `return` gives the result. The body's
  // lines are taken out of the indentation they share (the first line, when
  // it follows the opening $$ on its line, on its own). `bodyPos` is the
  // offset of the body's first character in the statement: a syntax error is
  // 42P13 with Python's message at its place in the body; a parameter name
  // Python cannot take (a keyword) is 42P13 at the parameter.
  static std::shared_ptr<const PythonFunction> compile(std::string name, std::vector<Param> params,
                                                       DataTypePtr returns, const std::string& body,
                                                       size_t bodyPos);

  ~PythonFunction();
  PythonFunction(const PythonFunction&) = delete;
  PythonFunction& operator=(const PythonFunction&) = delete;

  // Calls the function with `args` (one per parameter, each NULL or of the
  // parameter's type) and returns its result as the declared type. An
  // exception raised by the function is SqlError 22000 with the exception and
  // the last frames of its traceback in the message (the whole traceback in
  // the detail); a result Python cannot give as the declared type is 22000 too
  // (22003 for an integer out of range). Safe from any thread.
  Value call(const Value* args, size_t count) const;

  const std::string& name() const { return name_; }
  const std::vector<Param>& params() const { return params_; }
  const DataTypePtr& returns() const { return returns_; }

 private:
  PythonFunction() = default;

  std::string name_;
  std::vector<Param> params_;
  DataTypePtr returns_;
  void* callable_ = nullptr;  // the PyObject* of the def; a reference is held
};

// A call of `fn` over `args`, each already of its parameter's type. Evaluated
// per row; never constant, so the planner does not fold it.
ExprPtr makePythonCall(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args);

// Whether this process has started the interpreter: false until the first
// Python function is compiled.
bool pythonStarted();

}  // namespace rtsql
