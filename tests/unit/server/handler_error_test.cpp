// Tests for the one way an exception escaping a QueryHandler call becomes the
// error a client sees (server/handler_error.h): each kind of exception, as a
// SqlError and as the ErrorResponse the wire carries.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "server/handler_error.h"
#include "server/pgwire/codec.h"
#include "server_test_util.h"

using namespace rtsql;

namespace {

template <typename E>
SqlError errorOf(E thrown) {
  try {
    throw thrown;
  } catch (...) {
    return handlerError(std::current_exception());
  }
}

// The ErrorResponse for `err`, read back as a client reads it.
testing::RawMessage onTheWire(const SqlError& err, std::string_view sql = {}) {
  std::string out;
  pgwire::appendErrorResponse(out, err, sql);
  REQUIRE(out.size() >= 5);
  return testing::RawMessage{out[0], out.substr(5)};
}

}  // namespace

TEST_CASE("handler errors: a SqlError reaches the client as it is") {
  SqlError user(sqlstate::kUndefinedTable, "relation \"t\" does not exist", 14,
                "Create it with CREATE TABLE.");
  user.withDetail("No such name in the catalog.");
  const SqlError got = errorOf(user);
  CHECK(got.sqlstate() == "42P01");
  CHECK(got.message() == "relation \"t\" does not exist");
  CHECK(got.position() == 14);
  CHECK(got.hint() == "Create it with CREATE TABLE.");
  CHECK(got.detail() == "No such name in the catalog.");

  const auto msg = onTheWire(got, "select * from t");
  CHECK(msg.type == 'E');
  CHECK(msg.errorField('S') == "ERROR");
  CHECK(msg.errorField('C') == "42P01");
  CHECK(msg.errorField('M') == "relation \"t\" does not exist");
  CHECK(msg.errorField('H') == "Create it with CREATE TABLE.");
  CHECK(msg.errorField('D') == "No such name in the catalog.");
  CHECK(msg.errorField('P') == "15");
}

TEST_CASE("handler errors: an InternalError is XX000 with its message") {
  const SqlError got = errorOf(InternalError("operator state is corrupt"));
  CHECK(got.sqlstate() == "XX000");
  CHECK(got.message() == "operator state is corrupt");
  CHECK_FALSE(got.hasPosition());
  CHECK(got.hint().empty());

  const auto msg = onTheWire(got, "select 1");
  CHECK(msg.errorField('S') == "ERROR");
  CHECK(msg.errorField('C') == "XX000");
  CHECK(msg.errorField('M') == "operator state is corrupt");
  CHECK(msg.errorField('P').empty());
}

TEST_CASE("handler errors: any other std::exception is XX000 with its message") {
  const SqlError got = errorOf(std::runtime_error("boom"));
  CHECK(got.sqlstate() == "XX000");
  CHECK(got.message() == "boom");
  CHECK_FALSE(got.hasPosition());
  const auto msg = onTheWire(got);
  CHECK(msg.errorField('C') == "XX000");
  CHECK(msg.errorField('M') == "boom");
}

TEST_CASE("handler errors: an exception of no known type is XX000, unknown internal error") {
  const SqlError got = errorOf(42);
  CHECK(got.sqlstate() == "XX000");
  CHECK(got.message() == "unknown internal error");
  const auto msg = onTheWire(got);
  CHECK(msg.errorField('C') == "XX000");
  CHECK(msg.errorField('M') == "unknown internal error");
}

TEST_CASE("handler errors: callHandler returns the error, or nothing when the call returns") {
  int calls = 0;
  CHECK_FALSE(callHandler([&] { ++calls; }).has_value());
  CHECK(calls == 1);
  const auto err = callHandler([] { throw std::logic_error("broken invariant"); });
  REQUIRE(err.has_value());
  CHECK(err->sqlstate() == "XX000");
  CHECK(err->message() == "broken invariant");
  const auto user = callHandler([] { throw SqlError(sqlstate::kSyntaxError, "bad", 3); });
  REQUIRE(user.has_value());
  CHECK(user->sqlstate() == "42601");
  CHECK(user->position() == 3);
}
