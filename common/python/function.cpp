// Python functions: a function's body compiled as a def, and calls of it, one
// row's or a batch's (see function.h).
//
// Python.h comes first, as CPython asks.
#include "common/python/internal.h"

#include <fmt/format.h>

#include <array>

#include "common/error.h"
#include "common/python/function.h"

namespace rtsql {

namespace {

using Gil = python_internal::GilScope;
using python_internal::pyTypeName;
using python_internal::Ref;


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

std::string functionFilename(const std::string& fn) {
  return fmt::format("<function {}>", fn);
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
  python_internal::ensureStarted();
  auto fn = std::shared_ptr<PythonFunction>(new PythonFunction());
  fn->name_ = std::move(name);
  fn->params_ = std::move(params);
  fn->returns_ = std::move(returns);
  fn->vectorized_ = vectorized;

  Gil gil;
  Ref names(PyList_New(0));
  Ref code(PyList_New(0));
  if (!names || !code) python_internal::runtimeFailure("compile");
  for (const Param& p : fn->params_) {
    Ref s(PyUnicode_FromStringAndSize(p.name.data(), static_cast<Py_ssize_t>(p.name.size())));
    if (!s || PyList_Append(names.get(), s.get()) < 0) python_internal::runtimeFailure("compile");
  }
  for (const std::string& l : lines.lines) {
    Ref s(PyUnicode_DecodeUTF8(l.data(), static_cast<Py_ssize_t>(l.size()), "replace"));
    if (!s || PyList_Append(code.get(), s.get()) < 0) python_internal::runtimeFailure("compile");
  }
  const std::string filename = functionFilename(fn->name_);
  Ref result(PyObject_CallFunction(python_internal::compileFunctionHelper(), "sOOs",
                                   fn->name_.c_str(), names.get(), code.get(), filename.c_str()));
  if (!result) python_internal::runtimeFailure("compile");
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
    stack[i] = python_internal::valueToPython(args[i], *params_[i].type);
    if (!stack[i]) {
      throw SqlError(sqlstate::kDataException,
                     fmt::format("function {} cannot take argument {} ({}) as a Python value: {}",
                                 name_, i + 1, params_[i].name,
                                 python_internal::pendingErrorText()));
    }
  }
  python_internal::CallScope scope("function", name_);
  Ref result(PyObject_Vectorcall(static_cast<PyObject*>(callable_), stack, count, nullptr));
  scope.end();
  if (!result) python_internal::raiseError(label(), functionFilename(name_), 1);
  return python_internal::valueFromPython(label(), result.get(), *returns_, "");
}

std::vector<Value> PythonFunction::callBatch(const std::vector<std::vector<Value>>& columns,
                                             size_t rows) const {
  Gil gil;
  std::vector<Ref> lists;
  lists.reserve(columns.size());
  for (size_t p = 0; p < columns.size(); ++p) {
    Ref list(PyList_New(static_cast<Py_ssize_t>(rows)));
    if (!list) python_internal::runtimeFailure("make a list");
    for (size_t i = 0; i < rows; ++i) {
      PyObject* item = python_internal::valueToPython(columns[p][i], *params_[p].type);
      if (!item) {
        throw SqlError(sqlstate::kDataException,
                       fmt::format("function {} cannot take argument {} ({}) of row {} of the "
                                   "batch as a Python value: {}",
                                   name_, p + 1, params_[p].name, i + 1,
                                   python_internal::pendingErrorText()));
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
  if (!result) python_internal::raiseError(label(), functionFilename(name_), 1);
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
      out.push_back(python_internal::valueFromPython(label(), item, *returns_, ""));
    } catch (const SqlError&) {
      // Converted again to name the element: the path costs a string per
      // row, so it is made only for the one that fails.
      python_internal::valueFromPython(label(), item, *returns_, fmt::format("result[{}]", i));
      throw;
    }
  }
  return out;
}

}  // namespace rtsql
