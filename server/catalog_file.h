// The catalog on disk: what a restarted rtsqld needs to bring back every
// function, source, sink, table and flow.
//
// The file (<data-dir>/catalog) holds the statements that built the catalog,
// in an order that replays: functions in the order they were created,
// sources, sinks, tables each followed by the INSERTs into it, then flows
// with the session settings they were planned with and whether they should
// run. It is rewritten whole by every CREATE,
// DROP, INSERT, STOP and START before the statement changes the server's
// catalog (a statement it cannot record changes nothing): written to a temporary
// file, fsync'ed, renamed over the old one, and the directory fsync'ed, so a
// crash leaves the old catalog or the new one, never a mix. A record's owner
// is kept among its settings under the name `rtsql.owner` (which SET refuses),
// so that the file's format is unchanged: a file of an earlier rtsqld loads
// with no owners, and an earlier rtsqld loads this one (a cluster's nodes may
// be upgraded one at a time). Each record also says, as the setting
// `rtsql.string_literals`, that its text reads backslash escapes in string
// literals; a record of an rtsqld that kept backslashes as written has its
// text converted when it is read (parser/string_literals.h). A length and a
// CRC-32 in the header detect a damaged file; rtsqld then refuses to start
// rather than come back with flows missing.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rtsql {

struct CatalogRecord {
  std::string kind;  // function | source | sink | table | insert | flow
  std::string name;  // the object's name (insert: the table's)
  std::string sql;   // the statement
  bool running = true;  // flows: whether the flow should run
  std::vector<std::pair<std::string, std::string>> settings;  // flows: session SET values
  // Functions, processors and flows: the user who created the object; empty
  // when the record was written before owners were recorded (the object is
  // then the superusers', server/privileges.h).
  std::string owner;
};

std::string formatCatalogFile(const std::vector<CatalogRecord>& records);
// Throws SqlError 58030 when `text` is not an intact catalog file.
std::vector<CatalogRecord> parseCatalogFile(const std::string& text);

// Atomic replace of `path` (see above). Throws SqlError 58030.
void writeCatalogFile(const std::string& path, const std::vector<CatalogRecord>& records);
// The records of `path`; none when the file does not exist. Throws SqlError
// 58030 (naming the path) when it is damaged.
std::vector<CatalogRecord> readCatalogFile(const std::string& path);

}  // namespace rtsql
