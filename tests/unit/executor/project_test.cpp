// Project: the output row from the input row, and with takeInputRows() (the
// first operator of a task, whose input rows are its own) the columns passed
// on as they are taken from the input instead of copied.
#include "executor/operators/project.h"

#include <doctest/doctest.h>

#include <string>

#include "capture_operator.h"
#include "common/expr.h"

using namespace rtsql;
using rtsql::testing::Capture;

namespace {

DataTypePtr str() { return DataType::of(TypeId::String); }

// SELECT pad, upper(name), name, n FROM (n, name, pad): pad and n are read
// once and may be taken; name is read twice and is copied.
OperatorPtr project() {
  ProjectSpec spec;
  ExprPtr n = makeColumnRef(0, DataType::of(TypeId::BigInt), "n");
  ExprPtr name = makeColumnRef(1, str(), "name");
  ExprPtr pad = makeColumnRef(2, str(), "pad");
  spec.exprs = {pad, makeCall("upper", {name}, 0), name, n};
  return makeProject(spec);
}

Row input(int64_t n, const std::string& pad) {
  return {Value::bigint(n), Value::string("ann"), Value::string(pad)};
}

}  // namespace

TEST_CASE("project: a column read once is taken from an input row the operator owns") {
  auto op = project();
  Capture out;
  op->setNext(&out);
  op->takeInputRows();
  const std::string pad(1200, 'x');
  Row row = input(1, pad);
  op->push(row, RecordContext{});
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0] == Row{Value::string(pad), Value::string("ANN"), Value::string("ann"),
                           Value::bigint(1)});
  // pad and n left the input row; the column read twice stayed.
  CHECK(!(row[2] == Value::string(pad)));
  CHECK(!(row[0] == Value::bigint(1)));
  CHECK(row[1] == Value::string("ann"));

  // The next record gets its own values, whatever the one before left behind
  // (Capture scribbles over what it was given).
  Row second = input(2, "y");
  op->push(second, RecordContext{});
  REQUIRE(out.rows.size() == 2);
  CHECK(out.rows[1] == Row{Value::string("y"), Value::string("ANN"), Value::string("ann"),
                           Value::bigint(2)});

  // An input narrower than the column taken gives NULL, as the column would.
  Row narrow{Value::bigint(3), Value::string("b")};
  op->push(narrow, RecordContext{});
  REQUIRE(out.rows.size() == 3);
  CHECK(out.rows[2][0].isNull());
  CHECK(out.rows[2][3] == Value::bigint(3));
}

TEST_CASE("project: without takeInputRows() the input row is left as it was") {
  auto op = project();
  Capture out;
  op->setNext(&out);
  const std::string pad(1200, 'x');
  Row row = input(1, pad);
  const Row before = row;
  op->push(row, RecordContext{});
  REQUIRE(out.rows.size() == 1);
  CHECK(out.rows[0][0] == Value::string(pad));
  CHECK(row == before);
}
