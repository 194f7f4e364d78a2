// A small streaming JSON writer for the progress document: keys and values are
// appended in order, commas are placed automatically. No DOM, no allocation
// beyond the output string.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace rtsql {

class JsonWriter {
 public:
  JsonWriter& beginObject() { return open('{'); }
  JsonWriter& endObject() { return close('}'); }
  JsonWriter& beginArray() { return open('['); }
  JsonWriter& endArray() { return close(']'); }

  JsonWriter& key(std::string_view k) {
    comma();
    appendJsonString(out_, k);
    out_ += ':';
    afterKey_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) {
    comma();
    appendJsonString(out_, s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(int64_t v) {
    comma();
    fmt::format_to(std::back_inserter(out_), "{}", v);
    return *this;
  }
  JsonWriter& value(uint64_t v) {
    comma();
    fmt::format_to(std::back_inserter(out_), "{}", v);
    return *this;
  }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v) {
    comma();
    if (std::isfinite(v)) {
      fmt::format_to(std::back_inserter(out_), "{}", v);
    } else {
      out_ += "null";
    }
    return *this;
  }
  JsonWriter& value(bool b) {
    comma();
    out_ += b ? "true" : "false";
    return *this;
  }
  JsonWriter& null() {
    comma();
    out_ += "null";
    return *this;
  }
  // Inserts an already-serialized JSON value.
  JsonWriter& raw(std::string_view json) {
    comma();
    out_ += json;
    return *this;
  }

  const std::string& str() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  JsonWriter& open(char c) {
    comma();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    out_ += c;
    first_.pop_back();
    return *this;
  }
  void comma() {
    if (afterKey_) {
      afterKey_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
  }

  std::string out_;
  std::vector<bool> first_;
  bool afterKey_ = false;
};

}  // namespace rtsql
