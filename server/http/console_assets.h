// The web console's files (server/http/console/), compiled into rtsqld by
// server/http/console/embed.cmake so that the page needs no network and no
// files beside the binary: `/` is the page, `/console/<file>` its script and
// style sheet. They are static, so they may be cached, unlike the JSON the
// page polls (which is a snapshot of live state).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "server/http/routes.h"

namespace rtsql::http {

struct EmbeddedFile {
  const char* name;  // as in server/http/console/, e.g. "console.js"
  const char* data;
  size_t size;
};

// Defined by the generated source.
extern const EmbeddedFile kConsoleFiles[];
extern const size_t kConsoleFileCount;

// The file a path names ("/" is index.html, "/console/<name>" the others);
// nullptr for any other path.
const EmbeddedFile* findConsoleFile(std::string_view path);

// The Content-Type for a file name, by its extension.
const char* contentTypeOf(std::string_view name);

// A 200 with the file, its Content-Type and a Cache-Control that lets the
// browser keep it a few minutes; nullopt when `path` names no console file.
std::optional<Reply> consoleReply(std::string_view path);

}  // namespace rtsql::http
