// Looks up the embedded console files and answers them.
#include "server/http/console_assets.h"

#include <string>

namespace rtsql::http {

namespace {

bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

const EmbeddedFile* findConsoleFile(std::string_view path) {
  constexpr std::string_view kPrefix = "/console/";
  std::string_view name;
  if (path == "/" || path == "/index.html") {
    name = "index.html";
  } else if (path == "/favicon.ico") {
    // Browsers ask for it whatever the page says; an SVG answers them all.
    name = "favicon.svg";
  } else if (path.substr(0, kPrefix.size()) == kPrefix) {
    name = path.substr(kPrefix.size());
  } else {
    return nullptr;
  }
  for (size_t i = 0; i < kConsoleFileCount; ++i) {
    if (name == kConsoleFiles[i].name) return &kConsoleFiles[i];
  }
  return nullptr;
}

const char* contentTypeOf(std::string_view name) {
  if (endsWith(name, ".html")) return "text/html; charset=utf-8";
  if (endsWith(name, ".js")) return "text/javascript; charset=utf-8";
  if (endsWith(name, ".css")) return "text/css; charset=utf-8";
  if (endsWith(name, ".svg")) return "image/svg+xml";
  if (endsWith(name, ".png")) return "image/png";
  return "application/octet-stream";
}

std::optional<Reply> consoleReply(std::string_view path) {
  const EmbeddedFile* f = findConsoleFile(path);
  if (!f) return std::nullopt;
  Reply r;
  r.contentType = contentTypeOf(f->name);
  r.body.assign(f->data, f->size);
  // The files change only with the binary: a few minutes in the browser's
  // cache spares the reloads, and a restarted rtsqld is picked up soon after.
  // "private": with a users file they were served to one user.
  r.headers.emplace_back("Cache-Control", "private, max-age=300");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

}  // namespace rtsql::http
