// The embedded interpreter: its start, the GIL and each thread's thread state,
// the runtime's Python helpers, and a Python exception made a data error
// (see internal.h; function.h says when the interpreter starts and who takes
// the GIL).
//
// Python.h comes first, as CPython asks: it sets feature macros that the
// standard headers read.
#include "common/python/internal.h"

#include <fmt/format.h>

#include <atomic>
#include <mutex>

#include "common/error.h"
#include "common/python/function.h"

namespace rtsql {

namespace {

using python_internal::Ref;


// The Python side of compiling a function and of describing its exceptions;
// run once when the interpreter starts. A function is a def in a module of its
// own, compiled under the file name "<function NAME>"; its source is put in
// linecache so that tracebacks show its lines. Line 1 of that source is the
// def line, so the body's line N is the source's line N + 1.
constexpr const char* kRuntimeSource = R"PY(
import keyword, linecache, traceback

def compile_function(name, params, lines, filename):
    for i, p in enumerate(params):
        if not p.isidentifier():
            return ("param", i, 0, "parameter name %r is not a Python name" % p)
        if keyword.iskeyword(p):
            return ("param", i, 0, "parameter name %r is a Python keyword" % p)
    pyname = name if name.isidentifier() and not keyword.iskeyword(name) else "function"
    source = "def %s(%s):\n" % (pyname, ", ".join(params))
    source += "".join("    " + line + "\n" for line in lines)
    try:
        code = compile(source, filename, "exec")
    except (SyntaxError, ValueError) as e:
        lineno = getattr(e, "lineno", None) or 0
        offset = getattr(e, "offset", None) or 0
        message = e.msg if isinstance(e, SyntaxError) else str(e)
        return ("syntax", lineno, offset, "%s: %s" % (type(e).__name__, message))
    namespace = {"__name__": pyname}
    exec(code, namespace)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    return namespace[pyname]

def describe_error(exc, filename, shift):
    # rtsql's own helpers (the processor runtime) are not the user's code.
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<rtsql ")]
    def line_of(f):
        return f.lineno - shift if f.filename == filename else f.lineno
    def where(f):
        if f.filename == filename:
            return "line %d in %s" % (line_of(f), f.name)
        return '"%s", line %d in %s' % (f.filename, line_of(f), f.name)
    head = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    short = " ".join(head.split("\n"))
    if frames:
        short += " (at " + "; ".join(where(f) for f in frames[-3:]) + ")"
    detail = ["Traceback (most recent call last):"]
    for f in frames:
        name = "the body" if f.filename == filename else '"%s"' % f.filename
        detail.append("  %s, line %d, in %s" % (name, line_of(f), f.name))
        if f.line:
            detail.append("    " + f.line.strip())
    detail.append(head)
    return (short, "\n".join(detail))

class CallInterrupted(BaseException):
    """rtsqld stops this call (interrupt.cpp): not an error of the code."""

def consume_signals():
    pass

def lock_signals():
    # Signal handling is rtsqld's: SIGTERM and SIGINT stop the server, and
    # a signal a timer sends could end it. Code run by rtsqld may not change
    # handlers, masks or timers.
    import _signal, faulthandler, signal
    def refuse(*args, **kwargs):
        raise RuntimeError("signal handling belongs to rtsqld: Python code it runs cannot "
                           "change signal handlers, masks or timers")
    names = ("signal", "siginterrupt", "set_wakeup_fd", "pthread_sigmask", "alarm",
             "setitimer", "raise_signal", "pthread_kill")
    for module in (_signal, signal):
        for name in names:
            if hasattr(module, name):
                setattr(module, name, refuse)
    faulthandler.register = refuse
    faulthandler.enable = refuse
)PY";


std::once_flag gStartOnce;
std::atomic<bool> gStarted{false};
PyObject* gCompile = nullptr;   // compile_function, held for the process's life
PyObject* gDescribe = nullptr;  // describe_error

// The pending Python exception as text, cleared.
std::string takeErrorText() {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  Ref t(type), v(value), b(tb);
  if (!v) return t ? std::string(reinterpret_cast<PyTypeObject*>(t.get())->tp_name) : "";
  Ref s(PyObject_Str(v.get()));
  if (!s) {
    PyErr_Clear();
    return "unknown error";
  }
  const char* text = PyUnicode_AsUTF8(s.get());
  if (!text) {
    PyErr_Clear();
    return "unknown error";
  }
  return text;
}

// Starts the interpreter on the calling thread and gives up the GIL. Isolated
// configuration: PYTHON* environment variables and the user's site directory
// are ignored, and CPython installs no signal handlers (SIGINT and SIGTERM stay
// rtsqld's; installInterrupts() keeps them so).
void startInterpreter() {
  PyConfig config;
  PyConfig_InitIsolatedConfig(&config);
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  PyStatus status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) {
    throw SqlError(sqlstate::kInternalError,
                   fmt::format("the Python runtime could not start: {}",
                               status.err_msg ? status.err_msg : "unknown error"));
  }
  if (!python_internal::importDateTime()) python_internal::runtimeFailure("load datetime");
  PyObject* globals = PyDict_New();  // kept: the helpers' module globals
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  Ref ran(PyRun_String(kRuntimeSource, Py_file_input, globals, globals));
  if (!ran) python_internal::runtimeFailure("load its helpers");
  gCompile = PyDict_GetItemString(globals, "compile_function");
  gDescribe = PyDict_GetItemString(globals, "describe_error");
  Py_XINCREF(gCompile);
  Py_XINCREF(gDescribe);
  python_internal::installInterrupts(globals);
  gStarted = true;
  PyEval_SaveThread();
}

// The calling thread's CPython thread state, made on its first Python call and
// kept (without the GIL) until the thread ends.
struct ThreadStateKeeper {
  PyGILState_STATE held;
  PyThreadState* state;
  ThreadStateKeeper() : held(PyGILState_Ensure()), state(PyEval_SaveThread()) {}
  ~ThreadStateKeeper() {
    PyEval_RestoreThread(state);
    PyGILState_Release(held);
  }
};


[[noreturn]] void raisePythonError(const std::string& label, const std::string& filename,
                                   int shift) {
  PyObject *type = nullptr, *value = nullptr, *tb = nullptr;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  Ref t(type), v(value), b(tb);
  Ref described(v ? PyObject_CallFunction(gDescribe, "Osi", v.get(), filename.c_str(), shift)
                  : nullptr);
  std::string message = "an exception";
  std::string detail;
  if (described && PyTuple_Check(described.get())) {
    const char* m = PyUnicode_AsUTF8(PyTuple_GET_ITEM(described.get(), 0));
    const char* d = PyUnicode_AsUTF8(PyTuple_GET_ITEM(described.get(), 1));
    if (m) message = m;
    if (d) detail = d;
  }
  PyErr_Clear();
  throw SqlError(sqlstate::kDataException, fmt::format("{} raised {}", label, message))
      .withDetail(std::move(detail));
}

}  // namespace

bool pythonStarted() {
  return gStarted.load();
}

void setPythonCallTimeLimitMs(int64_t ms) {
  python_internal::setCallTimeLimitMs(ms);
}

namespace python_internal {

void ensureStarted() {
  std::call_once(gStartOnce, startInterpreter);
}

PyObject* compileFunctionHelper() {
  return gCompile;
}

void runtimeFailure(const std::string& what) {
  throw SqlError(sqlstate::kInternalError,
                 fmt::format("the Python runtime could not {}: {}", what, takeErrorText()));
}

GilScope::GilScope() {
  static thread_local ThreadStateKeeper keeper;
  state_ = static_cast<int>(PyGILState_Ensure());
}

GilScope::~GilScope() {
  PyGILState_Release(static_cast<PyGILState_STATE>(state_));
}

std::string pendingErrorText() {
  return takeErrorText();
}

void raiseError(const std::string& label, const std::string& filename, int shift) {
  raisePythonError(label, filename, shift);
}

}  // namespace python_internal

}  // namespace rtsql
