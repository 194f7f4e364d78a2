// Python functions: starting the embedded interpreter, compiling a function's
// body, converting values between rtsql and Python, and the per-row call node
// (see python_function.h).
//
// Python.h comes first, as CPython asks: it sets feature macros that the
// standard headers read.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <mutex>

#include "common/functions/internal.h"
#include "common/functions/python_function.h"
#include "common/functions/python_internal.h"

namespace rtsql {

namespace {

using expr_internal::civilFromDays;
using expr_internal::daysFromCivil;
using expr_internal::floorDiv;
using expr_internal::kMicrosPerDay;
using expr_internal::kMicrosPerSecond;

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
    """rtsqld stops this call (python_interrupt.cpp): not an error of the code."""

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

// A reference to a Python object, dropped on scope exit (the GIL is held:
// every Ref lives inside a Gil's scope).
struct RefDrop {
  void operator()(PyObject* o) const { Py_XDECREF(o); }
};
using Ref = std::unique_ptr<PyObject, RefDrop>;

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

[[noreturn]] void runtimeFailure(const std::string& what) {
  throw SqlError(sqlstate::kInternalError,
                 fmt::format("the Python runtime could not {}: {}", what, takeErrorText()));
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
  PyDateTime_IMPORT;
  if (!PyDateTimeAPI) runtimeFailure("load datetime");
  PyObject* globals = PyDict_New();  // kept: the helpers' module globals
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  Ref ran(PyRun_String(kRuntimeSource, Py_file_input, globals, globals));
  if (!ran) runtimeFailure("load its helpers");
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

using Gil = python_internal::GilScope;

// ---- values -------------------------------------------------------------

const char* pyTypeName(PyObject* o) {
  return Py_TYPE(o)->tp_name;
}

[[noreturn]] void wrongResult(const std::string& fn, const DataType& type, PyObject* got,
                              const std::string& path) {
  throw SqlError(sqlstate::kDataException,
                 fmt::format("{} returned {}{}, which is not {}", fn, pyTypeName(got),
                             path.empty() ? "" : " at " + path, type.toString()),
                 SqlError::npos,
                 "return None or a value of the declared type (docs/udf.md has the mapping)");
}

// A new reference to `v` (of type `type`) as Python sees it; null when Python
// cannot hold it (a timestamp outside datetime's years 1 to 9999), with a
// Python exception set.
PyObject* toPython(const Value& v, const DataType& type) {
  switch (v.type()) {
    case TypeId::Null:
      Py_RETURN_NONE;
    case TypeId::Boolean:
      return PyBool_FromLong(v.asBool() ? 1 : 0);
    case TypeId::Int:
    case TypeId::BigInt:
      return PyLong_FromLongLong(v.asInt());
    case TypeId::Double:
      return PyFloat_FromDouble(v.asDouble());
    case TypeId::Decimal: {
      // decimal.Decimal of the exact digits.
      Ref module(PyImport_ImportModule("decimal"));
      if (!module) return nullptr;
      return PyObject_CallMethod(module.get(), "Decimal", "s", v.toString().c_str());
    }
    case TypeId::Date: {
      int64_t y = 0;
      unsigned m = 0, d = 0;
      civilFromDays(v.asInt(), &y, &m, &d);
      if (y < 1 || y > 9999) {
        PyErr_SetString(PyExc_OverflowError, "date outside Python's years 1 to 9999");
        return nullptr;
      }
      return PyDate_FromDate(static_cast<int>(y), static_cast<int>(m), static_cast<int>(d));
    }
    case TypeId::String: {
      const std::string& s = v.asString();
      return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
    }
    case TypeId::Binary: {
      const std::string& s = v.asString();
      return PyBytes_FromStringAndSize(s.data(), static_cast<Py_ssize_t>(s.size()));
    }
    case TypeId::Timestamp: {
      const int64_t micros = v.asInt();
      const int64_t days = floorDiv(micros, kMicrosPerDay);
      int64_t rem = micros - days * kMicrosPerDay;
      int64_t y = 0;
      unsigned m = 0, d = 0;
      civilFromDays(days, &y, &m, &d);
      if (y < 1 || y > 9999) {
        PyErr_SetString(PyExc_OverflowError, "timestamp outside Python's years 1 to 9999");
        return nullptr;
      }
      const int us = static_cast<int>(rem % kMicrosPerSecond);
      rem /= kMicrosPerSecond;
      return PyDateTimeAPI->DateTime_FromDateAndTime(
          static_cast<int>(y), static_cast<int>(m), static_cast<int>(d),
          static_cast<int>(rem / 3600), static_cast<int>(rem / 60 % 60), static_cast<int>(rem % 60),
          us, PyDateTime_TimeZone_UTC, PyDateTimeAPI->DateTimeType);
    }
    case TypeId::Interval: {
      const int64_t micros = v.asInt();
      const int64_t days = floorDiv(micros, kMicrosPerDay);
      const int64_t rem = micros - days * kMicrosPerDay;
      return PyDelta_FromDSU(static_cast<int>(days), static_cast<int>(rem / kMicrosPerSecond),
                             static_cast<int>(rem % kMicrosPerSecond));
    }
    case TypeId::Array: {
      const ValueList& items = v.asList();
      Ref list(PyList_New(static_cast<Py_ssize_t>(items.size())));
      if (!list) return nullptr;
      for (size_t i = 0; i < items.size(); ++i) {
        PyObject* item = toPython(items[i], *type.element);
        if (!item) return nullptr;
        PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), item);  // steals item
      }
      return list.release();
    }
    case TypeId::Struct: {
      const ValueList& fields = v.asList();
      Ref dict(PyDict_New());
      if (!dict) return nullptr;
      for (size_t i = 0; i < fields.size() && i < type.fields.size(); ++i) {
        Ref item(toPython(fields[i], *type.fields[i].type));
        if (!item || PyDict_SetItemString(dict.get(), type.fields[i].name.c_str(), item.get()) < 0)
          return nullptr;
      }
      return dict.release();
    }
  }
  Py_RETURN_NONE;
}

int64_t integerResult(const std::string& fn, PyObject* o, const DataType& type,
                      const std::string& path) {
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(o, &overflow);
  const bool fits = overflow == 0 && !(n == -1 && PyErr_Occurred()) &&
                    (type.id == TypeId::BigInt || (n >= INT32_MIN && n <= INT32_MAX));
  if (!fits) {
    PyErr_Clear();
    throw SqlError(sqlstate::kNumericOutOfRange,
                   fmt::format("{} returned an integer{} out of the range of {}", fn,
                               path.empty() ? "" : " at " + path, type.toString()));
  }
  return n;
}

// `o` as a value of `type`; 22000 naming the function when it is not one.
Value fromPython(const std::string& fn, PyObject* o, const DataType& type,
                 const std::string& path) {
  if (o == Py_None) return Value();
  switch (type.id) {
    case TypeId::Null:
      break;
    case TypeId::Boolean:
      if (PyBool_Check(o)) return Value::boolean(o == Py_True);
      break;
    case TypeId::Int:
      if (PyLong_Check(o) && !PyBool_Check(o))
        return Value::integer(static_cast<int32_t>(integerResult(fn, o, type, path)));
      break;
    case TypeId::BigInt:
      if (PyLong_Check(o) && !PyBool_Check(o))
        return Value::bigint(integerResult(fn, o, type, path));
      break;
    case TypeId::Decimal:
      // An int, a float or a decimal.Decimal, by its text; NULL-free: a value
      // that does not fit the declared precision is 22003.
      if (!PyUnicode_Check(o) && !PyBool_Check(o) && (PyLong_Check(o) || PyFloat_Check(o) ||
                                                       std::string_view(Py_TYPE(o)->tp_name) == "decimal.Decimal")) {
        Ref text(PyObject_Str(o));
        const char* s = text ? PyUnicode_AsUTF8(text.get()) : nullptr;
        if (!s) {
          PyErr_Clear();
          break;
        }
        auto r = decimal::parse(s, {type.precision, type.scale});
        if (!r) {
          throw SqlError(sqlstate::kNumericOutOfRange,
                         fmt::format("{} returned {}{}, which does not fit {}", fn, s,
                                     path.empty() ? "" : " at " + path, type.toString()));
        }
        return Value::decimal(*r, type.precision, type.scale);
      }
      break;
    case TypeId::Date:
      if (PyDate_Check(o) && !PyDateTime_Check(o))
        return Value::date(daysFromCivil(PyDateTime_GET_YEAR(o), PyDateTime_GET_MONTH(o), PyDateTime_GET_DAY(o)));
      break;
    case TypeId::Double:
      if (PyFloat_Check(o)) return Value::float64(PyFloat_AS_DOUBLE(o));
      if (PyLong_Check(o) && !PyBool_Check(o)) {
        const double d = PyLong_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) {
          PyErr_Clear();
          throw SqlError(sqlstate::kNumericOutOfRange,
                         fmt::format("{} returned an integer{} out of the range of "
                                     "DOUBLE",
                                     fn, path.empty() ? "" : " at " + path));
        }
        return Value::float64(d);
      }
      break;
    case TypeId::String:
      if (PyUnicode_Check(o)) {
        Py_ssize_t size = 0;
        const char* text = PyUnicode_AsUTF8AndSize(o, &size);
        if (!text) {
          PyErr_Clear();
          throw SqlError(sqlstate::kCharacterNotInRepertoire,
                         fmt::format("{} returned a str{} that is not valid UTF-8", fn,
                                     path.empty() ? "" : " at " + path));
        }
        return Value::string(std::string(text, static_cast<size_t>(size)));
      }
      break;
    case TypeId::Binary:
      if (PyBytes_Check(o)) {
        return Value::binary(
            std::string(PyBytes_AS_STRING(o), static_cast<size_t>(PyBytes_GET_SIZE(o))));
      }
      if (PyByteArray_Check(o)) {
        return Value::binary(
            std::string(PyByteArray_AS_STRING(o), static_cast<size_t>(PyByteArray_GET_SIZE(o))));
      }
      break;
    case TypeId::Timestamp:
      if (PyDateTime_Check(o)) {
        int64_t micros =
            (daysFromCivil(PyDateTime_GET_YEAR(o), PyDateTime_GET_MONTH(o), PyDateTime_GET_DAY(o)) *
                 86400 +
             PyDateTime_DATE_GET_HOUR(o) * 3600 + PyDateTime_DATE_GET_MINUTE(o) * 60 +
             PyDateTime_DATE_GET_SECOND(o)) *
                kMicrosPerSecond +
            PyDateTime_DATE_GET_MICROSECOND(o);
        if (PyDateTime_DATE_GET_TZINFO(o) != Py_None) {
          // An aware datetime: its UTC instant. A naive one is read as UTC.
          Ref offset(PyObject_CallMethod(o, "utcoffset", nullptr));
          if (!offset) {
            throw SqlError(sqlstate::kDataException,
                           fmt::format("{} returned a datetime{} whose utcoffset() "
                                       "failed: {}",
                                       fn, path.empty() ? "" : " at " + path, takeErrorText()));
          }
          if (PyDelta_Check(offset.get())) {
            micros -= (static_cast<int64_t>(PyDateTime_DELTA_GET_DAYS(offset.get())) * 86400 +
                       PyDateTime_DELTA_GET_SECONDS(offset.get())) *
                          kMicrosPerSecond +
                      PyDateTime_DELTA_GET_MICROSECONDS(offset.get());
          }
        }
        return Value::timestamp(micros);
      }
      if (PyDate_Check(o)) {
        return Value::timestamp(
            daysFromCivil(PyDateTime_GET_YEAR(o), PyDateTime_GET_MONTH(o), PyDateTime_GET_DAY(o)) *
            kMicrosPerDay);
      }
      break;
    case TypeId::Interval:
      if (PyDelta_Check(o)) {
        // A timedelta reaches 999,999,999 days, an INTERVAL about 106 million:
        // a longer one is out of range rather than wrapped.
        int64_t micros = 0;
        if (__builtin_mul_overflow(static_cast<int64_t>(PyDateTime_DELTA_GET_DAYS(o)),
                                   kMicrosPerDay, &micros) ||
            __builtin_add_overflow(
                micros,
                static_cast<int64_t>(PyDateTime_DELTA_GET_SECONDS(o)) * kMicrosPerSecond +
                    PyDateTime_DELTA_GET_MICROSECONDS(o),
                &micros)) {
          throw SqlError(sqlstate::kNumericOutOfRange,
                         fmt::format("{} returned a timedelta{} out of the range of "
                                     "INTERVAL",
                                     fn, path.empty() ? "" : " at " + path));
        }
        return Value::interval(micros);
      }
      break;
    case TypeId::Array:
      if (PyList_Check(o) || PyTuple_Check(o)) {
        const Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
        ValueList items;
        items.reserve(static_cast<size_t>(n));
        for (Py_ssize_t i = 0; i < n; ++i) {
          items.push_back(fromPython(fn, PySequence_Fast_GET_ITEM(o, i), *type.element,
                                     fmt::format("{}[{}]", path.empty() ? "result" : path, i)));
        }
        return Value::array(std::move(items));
      }
      break;
    case TypeId::Struct:
      if (PyDict_Check(o)) {
        ValueList fields;
        fields.reserve(type.fields.size());
        for (const StructField& f : type.fields) {
          PyObject* item = PyDict_GetItemString(o, f.name.c_str());  // borrowed
          fields.push_back(
              item ? fromPython(fn, item, *f.type,
                                fmt::format("{}['{}']", path.empty() ? "result" : path, f.name))
                   : Value());
        }
        return Value::structure(std::move(fields));
      }
      break;
  }
  wrongResult(fn, type, o, path);
}

// The body's lines without the indentation they share, and where each kept
// line starts in the body (for syntax error positions).
struct BodyLines {
  std::vector<std::string> lines;
  std::vector<size_t> starts;
};

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\r\f\v") == std::string_view::npos;
}

size_t indentOf(std::string_view s) {
  size_t n = s.find_first_not_of(" \t");
  return n == std::string_view::npos ? s.size() : n;
}

BodyLines splitBody(const std::string& body) {
  std::vector<std::pair<size_t, std::string_view>> raw;  // start, text
  size_t at = 0;
  while (at <= body.size()) {
    size_t end = body.find('\n', at);
    if (end == std::string::npos) end = body.size();
    std::string_view line(body.data() + at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    raw.emplace_back(at, line);
    at = end + 1;
  }
  while (!raw.empty() && blank(raw.back().second)) raw.pop_back();
  BodyLines out;
  size_t first = 0;
  // A first line on the $$ line is taken out of its indentation by itself.
  if (!raw.empty() && !blank(raw[0].second)) {
    const size_t indent = indentOf(raw[0].second);
    out.lines.emplace_back(raw[0].second.substr(indent));
    out.starts.push_back(raw[0].first + indent);
    first = 1;
  }
  size_t common = std::string::npos;
  for (size_t i = first; i < raw.size(); ++i) {
    if (!blank(raw[i].second)) common = std::min(common, indentOf(raw[i].second));
  }
  for (size_t i = first; i < raw.size(); ++i) {
    if (out.lines.empty() && blank(raw[i].second)) continue;  // blank lines before the code
    const std::string_view line = raw[i].second;
    const size_t cut = blank(line) ? line.size() : common;
    out.lines.emplace_back(line.substr(cut));
    out.starts.push_back(raw[i].first + cut);
  }
  return out;
}

std::string filenameOf(const std::string& fn) {
  return fmt::format("<function {}>", fn);
}

class PythonCallExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    for (const ExprPtr& a : args_) fn(*a);
  }
  PythonCallExpr(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args)
      : Expr(fn->returns()), fn_(std::move(fn)), args_(std::move(args)) {}

  Value eval(const Row& row) const override {
    // The arguments are computed before the GIL is taken: they are rtsql's
    // own work and need no Python.
    constexpr size_t kInline = 8;
    if (args_.size() <= kInline) {
      std::array<Value, kInline> values;
      for (size_t i = 0; i < args_.size(); ++i) args_[i]->evalInto(row, values[i]);
      return fn_->call(values.data(), args_.size());
    }
    std::vector<Value> values(args_.size());
    for (size_t i = 0; i < args_.size(); ++i) args_[i]->evalInto(row, values[i]);
    return fn_->call(values.data(), values.size());
  }

  std::string toString() const override {
    std::string out = fn_->name() + "(";
    for (size_t i = 0; i < args_.size(); ++i) {
      if (i) out += ", ";
      out += args_[i]->toString();
    }
    return out + ")";
  }

 private:
  std::shared_ptr<const PythonFunction> fn_;
  std::vector<ExprPtr> args_;
};

// The innermost VectorizedBatch::RowScope of this thread.
thread_local const VectorizedBatch::RowScope* tScope = nullptr;

class PythonVectorizedCallExpr final : public Expr {
 public:
  void forEachChild(const std::function<void(const Expr&)>& fn) const override {
    for (const ExprPtr& a : args_) fn(*a);
  }
  PythonVectorizedCallExpr(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args,
                           size_t pos)
      : Expr(fn->returns()), fn_(std::move(fn)), args_(std::move(args)), pos_(pos) {}

  Value eval(const Row& row) const override {
    if (const Value* v = VectorizedBatch::RowScope::find(this)) return *v;
    // Outside a batching operator (a SELECT without a flow): a batch of one.
    std::vector<std::vector<Value>> columns(args_.size());
    for (size_t i = 0; i < args_.size(); ++i) columns[i].push_back(args_[i]->eval(row));
    return std::move(fn_->callBatch(columns, 1).front());
  }

  std::string toString() const override {
    std::string out = fn_->name() + "(";
    for (size_t i = 0; i < args_.size(); ++i) {
      if (i) out += ", ";
      out += args_[i]->toString();
    }
    return out + ")";
  }

  const PythonFunction& function() const { return *fn_; }
  const std::vector<ExprPtr>& args() const { return args_; }
  size_t pos() const { return pos_; }

 private:
  std::shared_ptr<const PythonFunction> fn_;
  std::vector<ExprPtr> args_;
  size_t pos_;
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

std::shared_ptr<const PythonFunction> PythonFunction::compile(std::string name,
                                                              std::vector<Param> params,
                                                              DataTypePtr returns,
                                                              const std::string& body,
                                                              size_t bodyPos, bool vectorized) {
  const BodyLines lines = splitBody(body);
  if (lines.lines.empty()) {
    throw SqlError(sqlstate::kInvalidFunctionDefinition,
                   fmt::format("Python function {} has an empty body", name), bodyPos,
                   "write the body of a def between the $$, e.g. AS $$ return x + 1 $$");
  }
  std::call_once(gStartOnce, startInterpreter);
  auto fn = std::shared_ptr<PythonFunction>(new PythonFunction());
  fn->name_ = std::move(name);
  fn->params_ = std::move(params);
  fn->returns_ = std::move(returns);
  fn->vectorized_ = vectorized;

  Gil gil;
  Ref names(PyList_New(0));
  Ref code(PyList_New(0));
  if (!names || !code) runtimeFailure("compile");
  for (const Param& p : fn->params_) {
    Ref s(PyUnicode_FromStringAndSize(p.name.data(), static_cast<Py_ssize_t>(p.name.size())));
    if (!s || PyList_Append(names.get(), s.get()) < 0) runtimeFailure("compile");
  }
  for (const std::string& l : lines.lines) {
    Ref s(PyUnicode_DecodeUTF8(l.data(), static_cast<Py_ssize_t>(l.size()), "replace"));
    if (!s || PyList_Append(code.get(), s.get()) < 0) runtimeFailure("compile");
  }
  const std::string filename = filenameOf(fn->name_);
  Ref result(PyObject_CallFunction(gCompile, "sOOs", fn->name_.c_str(), names.get(), code.get(),
                                   filename.c_str()));
  if (!result) runtimeFailure("compile");
  if (PyTuple_Check(result.get())) {
    // ("param" | "syntax", line or parameter index, column, message)
    const std::string kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(result.get(), 0));
    const long where = PyLong_AsLong(PyTuple_GET_ITEM(result.get(), 1));
    const long column = PyLong_AsLong(PyTuple_GET_ITEM(result.get(), 2));
    const std::string message = PyUnicode_AsUTF8(PyTuple_GET_ITEM(result.get(), 3));
    if (kind == "param") {
      throw SqlError(sqlstate::kInvalidFunctionDefinition, message,
                     fn->params_[static_cast<size_t>(where)].pos,
                     "a Python function's parameters are Python names; rename it");
    }
    size_t pos = bodyPos;
    std::string place = "its parameter list";
    if (where >= 2 && static_cast<size_t>(where - 2) < lines.starts.size()) {
      const size_t line = static_cast<size_t>(where - 2);
      // Python counts columns from 1 in the indented line it compiled.
      const size_t col = column > 5 ? static_cast<size_t>(column - 5) : 0;
      pos = bodyPos + lines.starts[line] + std::min(col, lines.lines[line].size());
      place = fmt::format("line {} of the body", line + 1);
    } else if (where >= 2) {
      pos = bodyPos + body.size();
      place = "the end of the body";
    }
    throw SqlError(
        sqlstate::kInvalidFunctionDefinition,
        fmt::format("Python function {} does not compile: {} ({})", fn->name_, message, place), pos,
        "the body is the body of a def: its parameters are Python names and "
        "`return` gives the result");
  }
  fn->callable_ = result.release();
  return fn;
}

PythonFunction::~PythonFunction() {
  if (!callable_) return;
  Gil gil;
  Py_DECREF(static_cast<PyObject*>(callable_));
}

Value PythonFunction::call(const Value* args, size_t count) const {
  Gil gil;
  constexpr size_t kInline = 8;
  std::array<PyObject*, kInline> inlineArgs{};
  std::vector<PyObject*> manyArgs;
  PyObject** stack = inlineArgs.data();
  if (count > kInline) {
    manyArgs.assign(count, nullptr);
    stack = manyArgs.data();
  }
  struct Drop {
    PyObject** stack;
    size_t count;
    ~Drop() {
      for (size_t i = 0; i < count; ++i) Py_XDECREF(stack[i]);
    }
  } drop{stack, count};
  for (size_t i = 0; i < count; ++i) {
    stack[i] = toPython(args[i], *params_[i].type);
    if (!stack[i]) {
      throw SqlError(sqlstate::kDataException,
                     fmt::format("function {} cannot take argument {} ({}) as a Python value: {}",
                                 name_, i + 1, params_[i].name, takeErrorText()));
    }
  }
  python_internal::CallScope scope("function", name_);
  Ref result(PyObject_Vectorcall(static_cast<PyObject*>(callable_), stack, count, nullptr));
  scope.end();
  if (!result) raisePythonError(label(), filenameOf(name_), 1);
  return fromPython(label(), result.get(), *returns_, "");
}

std::vector<Value> PythonFunction::callBatch(const std::vector<std::vector<Value>>& columns,
                                             size_t rows) const {
  Gil gil;
  std::vector<Ref> lists;
  lists.reserve(columns.size());
  for (size_t p = 0; p < columns.size(); ++p) {
    Ref list(PyList_New(static_cast<Py_ssize_t>(rows)));
    if (!list) runtimeFailure("make a list");
    for (size_t i = 0; i < rows; ++i) {
      PyObject* item = toPython(columns[p][i], *params_[p].type);
      if (!item) {
        throw SqlError(sqlstate::kDataException,
                       fmt::format("function {} cannot take argument {} ({}) of row {} of the "
                                   "batch as a Python value: {}",
                                   name_, p + 1, params_[p].name, i + 1, takeErrorText()));
      }
      PyList_SET_ITEM(list.get(), static_cast<Py_ssize_t>(i), item);  // steals item
    }
    lists.push_back(std::move(list));
  }
  std::vector<PyObject*> stack;
  stack.reserve(lists.size());
  for (const Ref& l : lists) stack.push_back(l.get());
  python_internal::CallScope scope("function", name_);
  Ref result(
      PyObject_Vectorcall(static_cast<PyObject*>(callable_), stack.data(), stack.size(), nullptr));
  scope.end();
  if (!result) raisePythonError(label(), filenameOf(name_), 1);
  PyObject* r = result.get();
  if (!PyList_Check(r) && !PyTuple_Check(r)) {
    throw SqlError(sqlstate::kDataException,
                   fmt::format("vectorized function {} returned {}, not a list of {} values of "
                               "type {}",
                               name_, pyTypeName(r), rows, returns_->toString()),
                   SqlError::npos,
                   "a vectorized function returns a list (or tuple) with one value per row, in "
                   "the rows' order");
  }
  const size_t got = static_cast<size_t>(PySequence_Fast_GET_SIZE(r));
  if (got != rows) {
    throw SqlError(
        sqlstate::kDataException,
        fmt::format("vectorized function {} returned {} value{} for a batch of {} "
                    "row{}: expected {}, got {}",
                    name_, got, got == 1 ? "" : "s", rows, rows == 1 ? "" : "s", rows, got),
        SqlError::npos,
        "a vectorized function returns a list with one value per row of its argument "
        "lists, in the rows' order");
  }
  std::vector<Value> out;
  out.reserve(rows);
  for (size_t i = 0; i < rows; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(r, static_cast<Py_ssize_t>(i));
    try {
      out.push_back(fromPython(label(), item, *returns_, ""));
    } catch (const SqlError&) {
      // Converted again to name the element: the path costs a string per
      // row, so it is made only for the one that fails.
      fromPython(label(), item, *returns_, fmt::format("result[{}]", i));
      throw;
    }
  }
  return out;
}

ExprPtr makePythonCall(std::shared_ptr<const PythonFunction> fn, std::vector<ExprPtr> args,
                       size_t pos) {
  if (fn->vectorized()) {
    return std::make_shared<PythonVectorizedCallExpr>(std::move(fn), std::move(args), pos);
  }
  return std::make_shared<PythonCallExpr>(std::move(fn), std::move(args));
}

namespace {

// Depth first, children before their parent: a call inside another's arguments
// is computed, and so listed, first. A node shared by two parents is listed once.
void collectVectorizedCalls(const Expr& expr, std::vector<VectorizedCall>& out) {
  expr.forEachChild([&out](const Expr& child) { collectVectorizedCalls(child, out); });
  const auto* call = dynamic_cast<const PythonVectorizedCallExpr*>(&expr);
  if (!call) return;
  for (const VectorizedCall& c : out) {
    if (c.node == call) return;
  }
  out.push_back(VectorizedCall{call, call->function().name(), call->pos()});
}

}  // namespace

std::vector<VectorizedCall> vectorizedCallsIn(const Expr& expr) {
  std::vector<VectorizedCall> out;
  collectVectorizedCalls(expr, out);
  return out;
}

std::vector<VectorizedCall> vectorizedCallsIn(const std::vector<ExprPtr>& exprs) {
  std::vector<VectorizedCall> calls;
  for (const ExprPtr& e : exprs) {
    if (!e) continue;
    for (VectorizedCall& c : vectorizedCallsIn(*e)) {
      bool seen = false;
      for (const VectorizedCall& k : calls) seen = seen || k.node == c.node;
      if (!seen) calls.push_back(std::move(c));
    }
  }
  return calls;
}

void VectorizedBatch::evaluate(const std::vector<Row>& rows, size_t count) {
  results_.assign(calls_.size(), {});
  for (size_t k = 0; k < calls_.size(); ++k) {
    const auto& call = static_cast<const PythonVectorizedCallExpr&>(*calls_[k].node);
    // The arguments are computed before the GIL is taken, with rtsql's own
    // code; a call inside them reads the results computed before it.
    std::vector<std::vector<Value>> columns(call.args().size());
    for (auto& c : columns) c.resize(count);
    for (size_t i = 0; i < count; ++i) {
      RowScope scope(*this, i, k);
      for (size_t p = 0; p < call.args().size(); ++p) {
        call.args()[p]->evalInto(rows[i], columns[p][i]);
      }
    }
    results_[k] = call.function().callBatch(columns, count);
  }
}

VectorizedBatch::RowScope::RowScope(const VectorizedBatch& batch, size_t index, size_t known)
    : batch_(batch), index_(index), known_(known), outer_(tScope) {
  tScope = this;
}

VectorizedBatch::RowScope::~RowScope() {
  tScope = outer_;
}

const Value* VectorizedBatch::RowScope::find(const Expr* node) {
  for (const RowScope* s = tScope; s; s = s->outer_) {
    for (size_t k = 0; k < s->known_; ++k) {
      if (s->batch_.calls_[k].node == node) return &s->batch_.results_[k][s->index_];
    }
  }
  return nullptr;
}

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

GilScope::GilScope() {
  static thread_local ThreadStateKeeper keeper;
  state_ = static_cast<int>(PyGILState_Ensure());
}

GilScope::~GilScope() {
  PyGILState_Release(static_cast<PyGILState_STATE>(state_));
}

PyObject* valueToPython(const Value& v, const DataType& type) {
  return toPython(v, type);
}

Value valueFromPython(const std::string& label, PyObject* o, const DataType& type,
                      const std::string& path) {
  return fromPython(label, o, type, path);
}

std::string pendingErrorText() {
  return takeErrorText();
}

void raiseError(const std::string& label, const std::string& filename, int shift) {
  raisePythonError(label, filename, shift);
}

}  // namespace python_internal

}  // namespace rtsql
