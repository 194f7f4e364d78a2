// The current thread's PostgreSQL session (see pg_session.h).
#include "common/pg_session.h"

namespace rtsql {

namespace {
// Per thread on purpose: built-in functions read the session from deep inside
// binding and evaluation, where no caller could pass it (pg_session.h).
thread_local const PgSession* tCurrent = nullptr;
}  // namespace

PgSessionScope::PgSessionScope(const PgSession* session) : previous_(tCurrent) { tCurrent = session; }

PgSessionScope::~PgSessionScope() { tCurrent = previous_; }

const PgSession* currentPgSession() { return tCurrent; }

}  // namespace rtsql
