// The settings a session may SET and SHOW: their names, their defaults, and
// what each does to a read of a materialized view that another node of the
// cluster answers (server/views/view_forward.h, view_remote.h). A read sent
// to the holder must answer there as it would here, so every setting that
// changes an answer goes with it; the table below says so once per setting,
// and a new setting is added here, with how it travels, or not at all.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/options.h"

namespace rtsql {

// What a setting does to a read sent to another node.
enum class SettingTravel {
  // Changes nothing a read answers: a driver's (application_name, the
  // encoding of the connection, which the forwarding connection fixes at
  // UTF8), a cursor's, a dry run's (which sends no read), a flow's; and how
  // the client's text reads backslashes, since a statement's text is kept,
  // and sent, in the form that reads the same in any session
  // (parser/string_literals.h).
  Stays,
  // Changes what an expression computes or a read of a view sees
  // (ansi_mode, the time zone, rtsql.view_snapshot): set on the holder before
  // the read runs.
  Answer,
  // Bounds the client's result (rtsql.bounded_max_rows): sent as the
  // session has it when the holder's result is the client's (a whole read);
  // a read that is a part of a query this node runs is sent with no bound
  // (the setting's `unbounded` value), as a view read here is not bounded
  // by it: this node bounds the query's result, and the forwarding
  // connection the bytes of the part (kMaxForwardedBytes,
  // server/views/view_forward.h).
  ResultBound,
  // statement_timeout: the time left of the client's statement is sent.
  Deadline,
};

// The largest rtsql.bounded_max_rows a session may SET.
inline constexpr int64_t kBoundedMaxRowsLimit = int64_t{1} << 40;
// The largest rtsql.bounded_max_bytes a session may SET. A part of a query
// read from another node is bounded as what the asking node receives of it
// at most (kMaxForwardedBytes, server/views/view_forward.h).
inline constexpr int64_t kBoundedMaxBytesLimit = int64_t{1} << 40;

struct SessionSetting {
  std::string name;
  std::string byDefault;  // what SHOW answers before any SET
  SettingTravel travel;
  std::string unbounded = {};  // a ResultBound's value that bounds nothing
};

// Every setting a session may SET and SHOW.
const std::vector<SessionSetting>& sessionSettings();

// The setting `key` names (case-insensitively, Spark's names for
// spark.sql.ansi.enabled and spark.sql.parser.escapedStringLiterals too);
// null for a name that is none.
const SessionSetting* findSessionSetting(std::string_view key);

// A setting a read sent to another node sets there first.
struct CarriedSetting {
  std::string name;
  std::string value;
};

// The settings of `session` a read sent to another node carries: each
// Answer setting the session SET, and each ResultBound one, as the session
// SET it when `wholeRead` (the holder's result is the client's), else at
// its unbounded value whatever the session says. A setting left at its
// default is not sent otherwise: the holder's default is the same.
// statement_timeout is not among them: the sender sends the time left.
std::vector<CarriedSetting> settingsForRead(const Options& session, bool wholeRead);

}  // namespace rtsql
