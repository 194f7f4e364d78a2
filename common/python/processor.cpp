// Python stateful processors: compiling the class, the handle and state
// objects the user's code sees, and the per-call protocol with the Transform
// operator (see processor.h).
#include "common/python/processor.h"

#include <fmt/format.h>

#include <mutex>

#include "common/error.h"
#include "common/python/internal.h"

namespace rtsql {

namespace {

using python_internal::GilScope;
using python_internal::Ref;

// The Python side of processors, loaded once with the GIL held. A state's
// stored bytes are pickle.dumps((updated_ms, value)): updated_ms is the
// processing time of the last change, which TTL reads. A state object reads
// the entry on first use within a call and marks it changed when written;
// the call returns the changed entries, (name, bytes, ttl_ms) or (name, None,
// ttl_ms) for an erased one (ttl_ms None for a state without TTL).
constexpr const char* kProcessorSource = R"PY(
import linecache, pickle, textwrap

def compile_processor(name, body, filename):
    source = textwrap.dedent(body.lstrip("\n"))
    try:
        code = compile(source, filename, "exec")
    except (SyntaxError, ValueError) as e:
        lineno = getattr(e, "lineno", None) or 0
        message = e.msg if isinstance(e, SyntaxError) else str(e)
        return ("syntax", lineno, "%s: %s" % (type(e).__name__, message))
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = "processor_" + name
    namespace = {"__name__": module}
    try:
        exec(code, namespace)
    except Exception as e:
        return ("run", 0, "%s: %s" % (type(e).__name__, e))
    classes = [v for v in namespace.values()
               if isinstance(v, type) and v.__module__ == module]
    if not classes:
        return ("class", 0, "the body defines no class")
    found = [c for c in classes if callable(getattr(c, "handle_input_rows", None))]
    if not found:
        return ("class", 0, "class %s has no handle_input_rows method" % classes[0].__name__)
    if len(found) > 1:
        return ("class", 0, "classes %s all have a handle_input_rows method" %
                ", ".join(c.__name__ for c in found))
    mode = getattr(found[0], "time_mode", "processing")
    if mode not in ("processing", "event"):
        return ("class", 0, "class %s has time_mode %r; it is 'processing' or 'event'" %
                (found[0].__name__, mode))
    return found[0]

_KINDS = ("value", "list", "map")

class Handle:
    def __init__(self, options):
        self.options = dict(options)
        self._kinds = {}
        self._ttl = {}
        self._stored = {}
        self._cache = {}
        self._changed = set()
        self._now = 0
        self._watermark = None
        self._timers = []
        self._timer_changes = []

    def register_timer(self, ts_ms):
        if isinstance(ts_ms, bool) or not isinstance(ts_ms, int):
            raise ValueError("a timer's time is an int of milliseconds")
        if ts_ms not in self._timers:
            self._timers.append(ts_ms)
            self._timer_changes.append((ts_ms, True))

    def delete_timer(self, ts_ms):
        if ts_ms in self._timers:
            self._timers.remove(ts_ms)
            self._timer_changes.append((ts_ms, False))

    def list_timers(self):
        return sorted(self._timers)

    def _declare(self, name, kind, ttl_ms):
        if not isinstance(name, str) or not name:
            raise ValueError("a state's name is a non-empty str")
        if ttl_ms is not None and (isinstance(ttl_ms, bool) or not isinstance(ttl_ms, int)
                                   or ttl_ms <= 0):
            raise ValueError("ttl_ms is a positive int of milliseconds, or None")
        known = self._kinds.get(name)
        if known is not None and known != kind:
            raise ValueError("state %r is a %s state already" % (name, known))
        self._kinds[name] = kind
        self._ttl[name] = ttl_ms

    def value_state(self, name, ttl_ms=None):
        self._declare(name, "value", ttl_ms)
        return ValueState(self, name)

    def list_state(self, name, ttl_ms=None):
        self._declare(name, "list", ttl_ms)
        return ListState(self, name)

    def map_state(self, name, ttl_ms=None):
        self._declare(name, "map", ttl_ms)
        return MapState(self, name)

    def current_processing_time_ms(self):
        return self._now

    def current_watermark_ms(self):
        return self._watermark

    def _read(self, name):
        if name in self._cache:
            return self._cache[name]
        raw = self._stored.get(name)
        value = None
        if raw is not None:
            updated, value = pickle.loads(raw)
            ttl = self._ttl.get(name)
            if ttl is not None and self._now - updated >= ttl:
                value = None
                self._changed.add(name)
        self._cache[name] = value
        return value

    def _write(self, name, value):
        self._cache[name] = value
        self._changed.add(name)

    def _begin(self, stored, timers, now, watermark):
        self._timers = list(timers)
        self._timer_changes = []
        self._stored = stored
        self._cache = {}
        self._changed = set()
        self._now = now
        self._watermark = watermark

    def _end(self):
        out = []
        for name in self._changed:
            value = self._cache.get(name)
            out.append((name, None if value is None
                        else pickle.dumps((self._now, value), protocol=4),
                        self._ttl.get(name)))
        self._stored = {}
        self._cache = {}
        self._changed = set()
        timers, self._timer_changes = self._timer_changes, []
        return (out, timers)

class ValueState:
    def __init__(self, handle, name):
        self._h, self._name = handle, name
    def get(self):
        return self._h._read(self._name)
    def exists(self):
        return self._h._read(self._name) is not None
    def update(self, value):
        self._h._write(self._name, value)
    def clear(self):
        self._h._write(self._name, None)

class ListState:
    def __init__(self, handle, name):
        self._h, self._name = handle, name
    def get(self):
        return list(self._h._read(self._name) or [])
    def exists(self):
        return bool(self._h._read(self._name))
    def append(self, value):
        items = self._h._read(self._name) or []
        items.append(value)
        self._h._write(self._name, items)
    def put(self, values):
        items = list(values)
        self._h._write(self._name, items or None)
    def clear(self):
        self._h._write(self._name, None)

class MapState:
    def __init__(self, handle, name):
        self._h, self._name = handle, name
    def _map(self):
        return self._h._read(self._name) or {}
    def get(self, key, default=None):
        return self._map().get(key, default)
    def contains(self, key):
        return key in self._map()
    def put(self, key, value):
        items = self._h._read(self._name) or {}
        items[key] = value
        self._h._write(self._name, items)
    def remove(self, key):
        items = self._h._read(self._name)
        if items and key in items:
            del items[key]
            self._h._write(self._name, items or None)
    def keys(self):
        return list(self._map().keys())
    def values(self):
        return list(self._map().values())
    def items(self):
        return list(self._map().items())
    def exists(self):
        return bool(self._map())
    def clear(self):
        self._h._write(self._name, None)

class ExpiredTimerInfo:
    def __init__(self, expiry):
        self.expiry_time_ms = expiry
    def get_expiry_time_in_ms(self):
        return self.expiry_time_ms

class TimerValues:
    def __init__(self, now, watermark):
        self._now, self._watermark = now, watermark
    def current_processing_time_ms(self):
        return self._now
    def current_watermark_ms(self):
        return self._watermark

def make_instance(cls, options):
    handle = Handle(options)
    obj = cls()
    init = getattr(obj, "init", None)
    if callable(init):
        init(handle)
    return (obj, handle)

def call_rows(obj, handle, key, rows, stored, timers, now, watermark, expiry):
    handle._begin(stored, timers, now, watermark)
    try:
        values = TimerValues(now, watermark)
        if expiry is None:
            result = obj.handle_input_rows(key, iter(rows), values)
        else:
            fire = getattr(obj, "handle_expired_timer", None)
            result = None if fire is None else fire(key, values, ExpiredTimerInfo(expiry))
        out = [] if result is None else list(result)
    except BaseException:
        handle._end()
        raise
    changes, timer_changes = handle._end()
    return (out, changes, timer_changes)
)PY";

PyObject* gProcessorGlobals = nullptr;  // the helpers' module globals, kept

// The helper `name`, borrowed; loads the helpers on first use (GIL held).
PyObject* helper(const char* name) {
  if (!gProcessorGlobals) {
    PyObject* globals = PyDict_New();
    PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
    // A file name of its own, which tracebacks leave out.
    Ref code(Py_CompileString(kProcessorSource, "<rtsql processor runtime>", Py_file_input));
    Ref ran(code ? PyEval_EvalCode(code.get(), globals, globals) : nullptr);
    if (!ran) {
      throw SqlError(sqlstate::kInternalError,
                     fmt::format("the Python runtime could not load its processor helpers: {}",
                                 python_internal::pendingErrorText()));
    }
    gProcessorGlobals = globals;
  }
  return PyDict_GetItemString(gProcessorGlobals, name);
}

std::string processorFilename(const std::string& name) {
  return fmt::format("<processor {}>", name);
}

// The offset in `body` of the first character of line `line` (1-based) of the
// source compile_processor made: the body without its leading newlines.
size_t lineStart(const std::string& body, long line) {
  size_t at = body.find_first_not_of('\n');
  if (at == std::string::npos) return 0;
  at = body.rfind('\n', at);
  at = at == std::string::npos ? 0 : at + 1;
  for (long l = 1; l < line; ++l) {
    const size_t nl = body.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return at;
}

PyObject* str(const std::string& s) {
  return PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
}

}  // namespace

std::shared_ptr<const PythonProcessor> PythonProcessor::compile(std::string name, Schema returns,
                                                                const std::string& body,
                                                                size_t bodyPos) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw SqlError(sqlstate::kInvalidFunctionDefinition,
                   fmt::format("processor {} has an empty body", name), bodyPos,
                   "write a class with a handle_input_rows(self, key, rows, timer_values) method "
                   "between the $$");
  }
  python_internal::ensureStarted();
  auto p = std::shared_ptr<PythonProcessor>(new PythonProcessor());
  p->name_ = std::move(name);
  p->returns_ = std::move(returns);
  GilScope gil;
  Ref text(str(body));
  const std::string filename = processorFilename(p->name_);
  // The module's body runs: it is user code like the methods.
  python_internal::CallScope scope("processor", p->name_);
  Ref result(PyObject_CallFunction(helper("compile_processor"), "sOs", p->name_.c_str(), text.get(),
                                   filename.c_str()));
  scope.end();
  if (!result) {
    throw SqlError(sqlstate::kInternalError,
                   fmt::format("the Python runtime could not compile processor {}: {}", p->name_,
                               python_internal::pendingErrorText()));
  }
  if (PyTuple_Check(result.get())) {
    // ("syntax" | "run" | "class", line, message)
    const std::string kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(result.get(), 0));
    const long line = PyLong_AsLong(PyTuple_GET_ITEM(result.get(), 1));
    const std::string message = PyUnicode_AsUTF8(PyTuple_GET_ITEM(result.get(), 2));
    if (kind == "syntax") {
      throw SqlError(sqlstate::kInvalidFunctionDefinition,
                     fmt::format("processor {} does not compile: {} (line {} of the body)",
                                 p->name_, message, line),
                     bodyPos + lineStart(body, line),
                     "the body is a Python module that defines the processor's class");
    }
    if (kind == "run") {
      throw SqlError(sqlstate::kInvalidFunctionDefinition,
                     fmt::format("processor {} raised {} while its body ran", p->name_, message),
                     bodyPos, "the body should only define the class (and what it imports)");
    }
    throw SqlError(sqlstate::kInvalidFunctionDefinition,
                   fmt::format("processor {}: {}", p->name_, message), bodyPos,
                   "define one class with a handle_input_rows(self, key, rows, timer_values) "
                   "method (docs/udf.md, \"Stateful processors\")");
  }
  Ref clsName(PyObject_GetAttrString(result.get(), "__name__"));
  if (clsName && PyUnicode_Check(clsName.get())) p->className_ = PyUnicode_AsUTF8(clsName.get());
  PyErr_Clear();
  Ref mode(PyObject_GetAttrString(result.get(), "time_mode"));
  p->eventTimeTimers_ =
      mode && PyUnicode_Check(mode.get()) && std::string(PyUnicode_AsUTF8(mode.get())) == "event";
  PyErr_Clear();
  p->class_ = result.release();
  return p;
}

PythonProcessor::~PythonProcessor() {
  if (!class_) return;
  GilScope gil;
  Py_DECREF(static_cast<PyObject*>(class_));
}

ProcessorInstance::ProcessorInstance(
    std::shared_ptr<const PythonProcessor> processor,
    const std::vector<std::pair<std::string, std::string>>& options)
    : processor_(std::move(processor)) {
  GilScope gil;
  Ref opts(PyDict_New());
  for (const auto& [k, v] : options) {
    Ref key(str(k)), value(str(v));
    PyDict_SetItem(opts.get(), key.get(), value.get());
  }
  python_internal::CallScope scope("processor", processor_->name());
  Ref made(PyObject_CallFunction(helper("make_instance"), "OO",
                                 static_cast<PyObject*>(processor_->pythonClass()), opts.get()));
  scope.end();
  if (!made) {
    python_internal::raiseError("processor " + processor_->name(), processorFilename(processor_->name()),
                                0);
  }
  PyObject* obj = PyTuple_GET_ITEM(made.get(), 0);
  PyObject* handle = PyTuple_GET_ITEM(made.get(), 1);
  Py_INCREF(obj);
  Py_INCREF(handle);
  object_ = obj;
  handle_ = handle;
}

ProcessorInstance::~ProcessorInstance() {
  if (!object_ && names_.empty()) return;
  GilScope gil;
  Py_XDECREF(static_cast<PyObject*>(object_));
  Py_XDECREF(static_cast<PyObject*>(handle_));
  for (void* n : names_) Py_XDECREF(static_cast<PyObject*>(n));
}

void ProcessorInstance::handleInputRows(const Row& key, const std::vector<DataTypePtr>& keyTypes,
                                        const std::vector<Row>& rows, const Schema& inputSchema,
                                        const std::vector<ProcessorStateEntry>& state,
                                        const std::vector<int64_t>& timers, int64_t nowMs,
                                        std::optional<int64_t> watermarkMs,
                                        std::optional<int64_t> expiryMs, Result& out) {
  const std::string label = "processor " + processor_->name();
  GilScope gil;
  if (names_.empty()) {
    for (const Column& c : inputSchema.columns) {
      PyObject* n = str(c.name);
      if (n) PyUnicode_InternInPlace(&n);
      names_.push_back(n);
    }
  }
  auto conversionFailed = [&](const std::string& what) {
    throw SqlError(sqlstate::kDataException,
                   fmt::format("{} cannot take {} as a Python value: {}", label, what,
                               python_internal::pendingErrorText()));
  };
  Ref keyTuple(PyTuple_New(static_cast<Py_ssize_t>(key.size())));
  for (size_t i = 0; i < key.size(); ++i) {
    PyObject* v = python_internal::valueToPython(key[i], *keyTypes[i]);
    if (!v) conversionFailed("its partition key");
    PyTuple_SET_ITEM(keyTuple.get(), static_cast<Py_ssize_t>(i), v);
  }
  Ref rowList(PyList_New(static_cast<Py_ssize_t>(rows.size())));
  for (size_t r = 0; r < rows.size(); ++r) {
    Ref dict(PyDict_New());
    for (size_t c = 0; c < inputSchema.columns.size() && c < rows[r].size(); ++c) {
      Ref v(python_internal::valueToPython(rows[r][c], *inputSchema.columns[c].type));
      if (!v) conversionFailed("column " + inputSchema.columns[c].name);
      PyDict_SetItem(dict.get(), static_cast<PyObject*>(names_[c]), v.get());
    }
    PyList_SET_ITEM(rowList.get(), static_cast<Py_ssize_t>(r), dict.release());
  }
  Ref stored(PyDict_New());
  for (const auto& [name, bytes] : state) {
    Ref k(str(name));
    Ref b(PyBytes_FromStringAndSize(bytes.data(), static_cast<Py_ssize_t>(bytes.size())));
    PyDict_SetItem(stored.get(), k.get(), b.get());
  }
  Ref now(PyLong_FromLongLong(nowMs));
  Ref watermark(watermarkMs ? PyLong_FromLongLong(*watermarkMs) : Py_NewRef(Py_None));
  Ref timerList(PyList_New(static_cast<Py_ssize_t>(timers.size())));
  for (size_t i = 0; i < timers.size(); ++i) {
    PyList_SET_ITEM(timerList.get(), static_cast<Py_ssize_t>(i), PyLong_FromLongLong(timers[i]));
  }
  Ref expiry(expiryMs ? PyLong_FromLongLong(*expiryMs) : Py_NewRef(Py_None));
  python_internal::CallScope scope("processor", processor_->name());
  Ref result(PyObject_CallFunction(helper("call_rows"), "OOOOOOOOO",
                                   static_cast<PyObject*>(object_), static_cast<PyObject*>(handle_),
                                   keyTuple.get(), rowList.get(), stored.get(), timerList.get(),
                                   now.get(), watermark.get(), expiry.get()));
  scope.end();
  if (!result) python_internal::raiseError(label, processorFilename(processor_->name()), 0);

  const Schema& returns = processor_->returns();
  const size_t width = returns.columns.size();
  PyObject* produced = PyTuple_GET_ITEM(result.get(), 0);
  PyObject* changes = PyTuple_GET_ITEM(result.get(), 1);
  const Py_ssize_t n = PyList_GET_SIZE(produced);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(produced, i);
    Row row(width);
    if (PyDict_Check(item)) {
      for (size_t c = 0; c < width; ++c) {
        PyObject* v = PyDict_GetItemString(item, returns.columns[c].name.c_str());  // borrowed
        if (v) {
          row[c] = python_internal::valueFromPython(label, v, *returns.columns[c].type,
                                                    "column " + returns.columns[c].name);
        }
      }
    } else if (PyTuple_Check(item) || PyList_Check(item)) {
      const size_t got = static_cast<size_t>(PySequence_Fast_GET_SIZE(item));
      if (got != width) {
        throw SqlError(sqlstate::kDataException,
                       fmt::format("{} yielded a row of {} value{}, but it RETURNS {} column{}",
                                   label, got, got == 1 ? "" : "s", width, width == 1 ? "" : "s"),
                       SqlError::npos,
                       "yield a tuple with one value per RETURNS column, or a dict by their names");
      }
      for (size_t c = 0; c < width; ++c) {
        row[c] = python_internal::valueFromPython(
            label, PySequence_Fast_GET_ITEM(item, static_cast<Py_ssize_t>(c)),
            *returns.columns[c].type, "column " + returns.columns[c].name);
      }
    } else {
      throw SqlError(sqlstate::kDataException,
                     fmt::format("{} yielded {}, not a row", label, Py_TYPE(item)->tp_name),
                     SqlError::npos,
                     "yield a tuple with one value per RETURNS column, or a dict by their names");
    }
    out.rows.push_back(std::move(row));
  }
  const Py_ssize_t m = PyList_GET_SIZE(changes);
  for (Py_ssize_t i = 0; i < m; ++i) {
    PyObject* change = PyList_GET_ITEM(changes, i);
    ProcessorStateChange c;
    c.name = PyUnicode_AsUTF8(PyTuple_GET_ITEM(change, 0));
    PyObject* bytes = PyTuple_GET_ITEM(change, 1);
    if (bytes != Py_None) {
      c.bytes = std::string(PyBytes_AS_STRING(bytes), static_cast<size_t>(PyBytes_GET_SIZE(bytes)));
    }
    PyObject* ttl = PyTuple_GET_ITEM(change, 2);
    if (ttl != Py_None) {
      // A TTL past what 64 bits hold never ends: as none.
      int overflow = 0;
      const long long ms = PyLong_AsLongLongAndOverflow(ttl, &overflow);
      if (overflow == 0) c.ttlMs = ms;
    }
    out.changes.push_back(std::move(c));
  }
  PyObject* timerChanges = PyTuple_GET_ITEM(result.get(), 2);
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(timerChanges); ++i) {
    PyObject* change = PyList_GET_ITEM(timerChanges, i);
    out.timerChanges.emplace_back(PyLong_AsLongLong(PyTuple_GET_ITEM(change, 0)),
                                  PyTuple_GET_ITEM(change, 1) == Py_True);
  }
}

}  // namespace rtsql
