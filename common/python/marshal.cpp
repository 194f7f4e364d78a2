// Values between rtsql and Python, both ways: an argument as the Python
// object a function or processor is given, a result as the value of its
// declared type (docs/udf.md has the mapping; see internal.h).
//
// Python.h comes first, as CPython asks.
#include "common/python/internal.h"

#include <datetime.h>

#include <fmt/format.h>

#include "common/decimal.h"
#include "common/error.h"
#include "common/functions/internal.h"
#include "common/functions/map_funcs.h"

namespace rtsql {

namespace {

using expr_internal::civilFromDays;
using expr_internal::daysFromCivil;
using expr_internal::floorDiv;
using expr_internal::kMicrosPerDay;
using expr_internal::kMicrosPerSecond;
using python_internal::pyTypeName;
using python_internal::Ref;

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
    case TypeId::TinyInt:
    case TypeId::SmallInt:
    case TypeId::YearMonthInterval:  // its months: Python has no such interval
      return PyLong_FromLongLong(v.asInt());
    case TypeId::Double:
    case TypeId::Float:
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
    case TypeId::Timestamp:
    case TypeId::TimestampNtz: {  // a TIMESTAMP_NTZ is a naive datetime
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
          us, v.type() == TypeId::TimestampNtz ? Py_None : PyDateTime_TimeZone_UTC,
          PyDateTimeAPI->DateTimeType);
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
    case TypeId::Map: {
      // A dict of the entries, as PySpark hands a map to a function.
      const ValueList& items = v.asList();
      Ref dict(PyDict_New());
      if (!dict) return nullptr;
      for (size_t i = 0; i + 1 < items.size(); i += 2) {
        Ref key(toPython(items[i], type.key ? *type.key : *DataType::of(TypeId::Null)));
        Ref item(toPython(items[i + 1], type.value ? *type.value : *DataType::of(TypeId::Null)));
        if (!key || !item || PyDict_SetItem(dict.get(), key.get(), item.get()) < 0) return nullptr;
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
                    (type.id == TypeId::BigInt ||
                     ((type.id == TypeId::Int || type.id == TypeId::YearMonthInterval) && n >= INT32_MIN &&
                      n <= INT32_MAX) ||
                     (type.id == TypeId::SmallInt && n >= INT16_MIN && n <= INT16_MAX) ||
                     (type.id == TypeId::TinyInt && n >= INT8_MIN && n <= INT8_MAX));
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
    case TypeId::YearMonthInterval:  // an int: its months
      if (PyLong_Check(o) && !PyBool_Check(o))
        return Value::yearMonthInterval(static_cast<int32_t>(integerResult(fn, o, type, path)));
      break;
    case TypeId::TinyInt:
      if (PyLong_Check(o) && !PyBool_Check(o))
        return Value::tinyint(static_cast<int8_t>(integerResult(fn, o, type, path)));
      break;
    case TypeId::SmallInt:
      if (PyLong_Check(o) && !PyBool_Check(o))
        return Value::smallint(static_cast<int16_t>(integerResult(fn, o, type, path)));
      break;
    case TypeId::Float:
      if (PyFloat_Check(o) || (PyLong_Check(o) && !PyBool_Check(o))) {
        Value d = fromPython(fn, o, *DataType::of(TypeId::Double), path);
        return Value::float32(static_cast<float>(d.asDouble()));
      }
      break;
    case TypeId::Decimal:
      // An int, a float or a decimal.Decimal, by its text; NULL-free: a value
      // that does not fit the declared precision is 22003.
      if (!PyUnicode_Check(o) && !PyBool_Check(o) &&
          (PyLong_Check(o) || PyFloat_Check(o) ||
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
        return Value::date(daysFromCivil(PyDateTime_GET_YEAR(o), PyDateTime_GET_MONTH(o),
                                         PyDateTime_GET_DAY(o)));
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
    case TypeId::TimestampNtz:
      // A datetime's wall clock, whatever its tzinfo says.
      if (PyDateTime_Check(o))
        return Value::timestampNtz(
            (daysFromCivil(PyDateTime_GET_YEAR(o), PyDateTime_GET_MONTH(o), PyDateTime_GET_DAY(o)) *
                 86400 +
             PyDateTime_DATE_GET_HOUR(o) * 3600 + PyDateTime_DATE_GET_MINUTE(o) * 60 +
             PyDateTime_DATE_GET_SECOND(o)) *
                kMicrosPerSecond +
            PyDateTime_DATE_GET_MICROSECOND(o));
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
                                       fn, path.empty() ? "" : " at " + path,
                                       python_internal::pendingErrorText()));
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
    case TypeId::Map:
      if (PyDict_Check(o)) {
        ValueList items;
        PyObject* key = nullptr;
        PyObject* item = nullptr;
        Py_ssize_t at = 0;
        std::string where = path.empty() ? "result" : path;
        while (PyDict_Next(o, &at, &key, &item)) {  // borrowed references
          items.push_back(fromPython(fn, key, *type.key, where + " key"));
          items.push_back(fromPython(fn, item, *type.value, where + " value"));
        }
        return expr_internal::makeMapValue(std::move(items), fn.c_str());
      }
      break;
  }
  wrongResult(fn, type, o, path);
}

}  // namespace

namespace python_internal {

bool importDateTime() {
  PyDateTime_IMPORT;
  return PyDateTimeAPI != nullptr;
}

const char* pyTypeName(PyObject* o) {
  return Py_TYPE(o)->tp_name;
}

PyObject* valueToPython(const Value& v, const DataType& type) {
  return toPython(v, type);
}

Value valueFromPython(const std::string& label, PyObject* o, const DataType& type,
                      const std::string& path) {
  return fromPython(label, o, type, path);
}

}  // namespace python_internal

}  // namespace rtsql
