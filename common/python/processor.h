// Python stateful processors (CREATE PROCESSOR ... LANGUAGE PYTHON, used by
// TRANSFORM(... USING PROCESSOR p) in FROM): the class as CPython compiled it,
// and one instance of it per task, which the Transform operator
// (executor/operators/transform.cpp) calls for each input row. docs/udf.md
// describes the API for users.
//
// The operator owns the state: for each call it reads the entries of the
// row's partition key from its state table and hands them over as bytes; the
// instance's handle gives the user's code value, list and map states over
// them, unpickling on first use, and returns the entries the call changed
// (pickled, with the processing time of the change for TTL), which the
// operator writes back. Python never touches the state store, so state is
// checkpointed with the operator's table like any other operator's.
//
// The GIL is taken here only: by compile(), by an instance's construction,
// by each call(), and by the destructors. A flow without TRANSFORM never
// takes it on its record path.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/schema.h"
#include "common/value.h"

namespace rtsql {

class PythonProcessor {
 public:
  // Compiles `body` as a module and finds its processor class: the one class
  // it defines with a handle_input_rows method. A syntax error, a module that
  // raises while it runs, no class, or no handle_input_rows are 42P13 with
  // Python's message; the position points into the body (`bodyPos` is the
  // offset of its first character in the statement).
  static std::shared_ptr<const PythonProcessor> compile(std::string name, Schema returns,
                                                        const std::string& body, size_t bodyPos);
  ~PythonProcessor();
  PythonProcessor(const PythonProcessor&) = delete;
  PythonProcessor& operator=(const PythonProcessor&) = delete;

  const std::string& name() const { return name_; }
  const std::string& className() const { return className_; }
  // The RETURNS columns.
  const Schema& returns() const { return returns_; }
  void* pythonClass() const { return class_; }
  // The class's `time_mode`: "event" (timers fire when the watermark passes
  // them) or "processing" (the default: they fire on the clock).
  bool eventTimeTimers() const { return eventTimeTimers_; }

 private:
  PythonProcessor() = default;
  std::string name_;
  std::string className_;
  Schema returns_;
  void* class_ = nullptr;  // the PyObject* of the class; a reference is held
  bool eventTimeTimers_ = false;
};

// A state entry of one partition key: the state's name and its stored bytes
// (a change with no bytes erases the entry), and the TTL the state was made
// with, which the operator turns into the entry's expiry time.
using ProcessorStateEntry = std::pair<std::string, std::string>;
struct ProcessorStateChange {
  std::string name;
  std::optional<std::string> bytes;  // none: the entry is erased
  std::optional<int64_t> ttlMs;      // the state's ttl_ms, when it has one
};

// One processor object and its handle, for one task of a flow. Used by one
// thread at a time.
class ProcessorInstance {
 public:
  // Makes the object and calls its init(handle) with `options` (WITH (...)).
  // An exception there is SqlError 22000 with the traceback.
  ProcessorInstance(std::shared_ptr<const PythonProcessor> processor,
                    const std::vector<std::pair<std::string, std::string>>& options);
  ~ProcessorInstance();
  ProcessorInstance(const ProcessorInstance&) = delete;
  ProcessorInstance& operator=(const ProcessorInstance&) = delete;

  struct Result {
    std::vector<Row> rows;  // each of the RETURNS columns
    std::vector<ProcessorStateChange> changes;
    // Timers registered (true) or deleted (false) by the call, in order.
    std::vector<std::pair<int64_t, bool>> timerChanges;
  };

  // handle_input_rows(key, rows, timer_values) for the input `rows` of one
  // partition key `key` (a tuple of `keyTypes`), each row a dict of the
  // `inputSchema` column names. `state` holds the key's stored entries and
  // `timers` its registered timers (list_timers()). `nowMs` is the processing
  // time, `watermarkMs` the watermark (none before the first). With
  // `expiryMs`, the call is handle_expired_timer(key, timer_values, expired)
  // for the key's timer at that time instead (`rows` unused). An exception in the user's code, or
  // an output row that does not match RETURNS, is SqlError 22000 naming the processor (the
  // traceback in the detail); the state changes of a failed call are dropped.
  void handleInputRows(const Row& key, const std::vector<DataTypePtr>& keyTypes,
                       const std::vector<Row>& rows, const Schema& inputSchema,
                       const std::vector<ProcessorStateEntry>& state,
                       const std::vector<int64_t>& timers, int64_t nowMs,
                       std::optional<int64_t> watermarkMs, std::optional<int64_t> expiryMs,
                       Result& out);

 private:
  std::shared_ptr<const PythonProcessor> processor_;
  void* object_ = nullptr;    // the instance
  void* handle_ = nullptr;    // its handle
  std::vector<void*> names_;  // interned input column names
};

}  // namespace rtsql
