// Python functions (CREATE FUNCTION ... LANGUAGE PYTHON): the function as
// CPython, embedded in rtsqld, compiled it, and the expression node that calls
// it once per row. docs/udf.md describes them for users.
//
// The embedding has a folder of its own, one file a job: the interpreter and
// the GIL (interpreter.cpp), values both ways (marshal.cpp), functions
// (function.cpp) and their call nodes (call_expr.cpp), vectorized calls over a
// batch (vectorized_call.h), processors (processor.h), and interrupting a
// call (interrupt.cpp); internal.h is what they share.
//
// A vectorized function (LANGUAGE PYTHON VECTORIZED) takes one list per
// parameter and returns a list: it is called once for a batch of rows. Its
// node reads the row's value from the results of that call, which a
// VectorizedBatch (vectorized_call.h) computes over the rows a batching
// operator has gathered (executor/operators/vectorized_batch.h); outside one,
// it calls the function over a batch of one row.
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
//
// A call that runs too long is interrupted from outside: when the calling
// thread's interrupt check says so (interrupt.h: a cancel, statement_timeout,
// a flow's stop) or past the time limit (setPythonCallTimeLimitMs), by the
// watchdog of interrupt.cpp.
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
  // `vectorized`: the parameters are lists of the rows' values, and the
  // result is a list (callBatch()).
  static std::shared_ptr<const PythonFunction> compile(std::string name, std::vector<Param> params,
                                                       DataTypePtr returns, const std::string& body,
                                                       size_t bodyPos, bool vectorized = false);

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

  // A vectorized function over `rows` rows: `columns` holds one vector per
  // parameter, each of `rows` values. The function's result must be a list
  // or tuple of `rows` values of the declared type: another length, or an
  // element of another type, is 22000 naming the function (an exception too,
  // as for call()). The GIL is taken once for the whole batch.
  std::vector<Value> callBatch(const std::vector<std::vector<Value>>& columns, size_t rows) const;

  bool vectorized() const { return vectorized_; }

  const std::string& name() const { return name_; }
  const std::vector<Param>& params() const { return params_; }
  const DataTypePtr& returns() const { return returns_; }

 private:
  PythonFunction() = default;
  // "function NAME", as errors name it.
  std::string label() const { return "function " + name_; }

  std::string name_;
  std::vector<Param> params_;
  DataTypePtr returns_;
  bool vectorized_ = false;
  void* callable_ = nullptr;  // the PyObject* of the def; a reference is held
};

// A call of `fn` over `args`, each already of its parameter's type. Evaluated
// per row; never constant, so the planner does not fold it.
// For a vectorized function, the node reads its row's result from the
// VectorizedBatch that evaluates it; `pos` is the call's place in the
// statement, where an error about where it stands points.
ExprPtr makePythonCall(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args,
                       size_t pos = SqlError::npos);

// The longest a single Python call (a function's, or a processor's over its
// rows) may run before it is interrupted and fails with 57014: rtsqld
// --python-call-timeout. 0, the default, sets no limit.
void setPythonCallTimeLimitMs(int64_t ms);

// Whether this process has started the interpreter: false until the first
// Python function is compiled.
bool pythonStarted();

}  // namespace rtsql
