// The current thread's PostgreSQL session (see pg_session.h).
#include "common/pg_session.h"

namespace rtsql {

namespace {
thread_local const PgSession* tCurrent = nullptr;
}  // namespace

PgSessionScope::PgSessionScope(const PgSession* session) : previous_(tCurrent) { tCurrent = session; }

PgSessionScope::~PgSessionScope() { tCurrent = previous_; }

const PgSession* currentPgSession() { return tCurrent; }

}  // namespace rtsql
