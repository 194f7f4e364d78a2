// Which functions are deterministic, as the function registry knows them
// (common/functions/internal.h: each function registers itself with its
// flag). Its own header, beside common/expr.h's other questions to the
// registry, so that what asks it is all that depends on it.
#pragma once

#include <string>

namespace rtsql {

// Whether the function `name` (any case) is deterministic: the same
// arguments give the same value at every call, in every statement, on every
// node of a cluster. It may read the session's time zone and ANSI mode to
// compute it (hour(ts), a cast), which a read sent to another node carries
// (server/session_settings.h). Not deterministic: the functions of chance
// (rand, uuid, shuffle, aes_encrypt), of the clock (now, current_date,
// unix_timestamp), and those that answer who, where and in which session a
// statement runs (current_user, current_timezone, version, pg_backend_pid,
// the catalog's OIDs and names), as each registers itself
// (common/functions/internal.h). A name the registry does not know (a
// user's function, whose body it cannot vouch for) is not deterministic
// either; aggregates are.
bool isDeterministicFunction(const std::string& name);

// Whether the registry knows the function `name` (any case) and flags it not
// deterministic: one of chance, of the clock, or of who, where and in which
// session a statement runs. Unlike !isDeterministicFunction(), false for a
// name the registry does not know (a user's function, a window function).
bool isFlaggedNotDeterministic(const std::string& name);

}  // namespace rtsql
