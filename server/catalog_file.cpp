#include "server/catalog_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <vector>

#include "common/crc32.h"
#include "common/error.h"
#include "parser/string_literals.h"

namespace fs = std::filesystem;

namespace rtsql {

namespace {

constexpr const char* kMagic = "rtsql-catalog";
constexpr int kVersion = 1;
// The setting a record's owner is written as (see the header).
constexpr const char* kOwnerSetting = "rtsql.owner";
// Written with every record: its text reads backslash escapes in string
// literals, as Spark's. A record without it was written when a backslash was
// kept as written, and its text is converted when it is read
// (parser/string_literals.h), so that a restart means what it meant.
constexpr const char* kStringLiteralsSetting = "rtsql.string_literals";
constexpr const char* kSparkStringLiterals = "spark";

[[noreturn]] void damaged(const std::string& why) {
  throw SqlError(sqlstate::kIoError, fmt::format("the catalog file is damaged: {}", why),
                 SqlError::npos,
                 "restore it from a backup, or move it away to start with an empty catalog");
}

// Fields are length-prefixed ("5:hello"), so statements may hold any bytes.
void putField(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out.append(s.data(), s.size());
}

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  bool atEnd() const { return pos_ >= text_.size(); }
  std::string field() {
    size_t colon = text_.find(':', pos_);
    if (colon == std::string_view::npos || colon == pos_ || colon - pos_ > 12) damaged("bad field");
    size_t n = 0;
    for (size_t i = pos_; i < colon; ++i) {
      if (text_[i] < '0' || text_[i] > '9') damaged("bad field length");
      n = n * 10 + static_cast<size_t>(text_[i] - '0');
    }
    if (colon + 1 + n > text_.size()) damaged("field runs past the end");
    std::string out(text_.substr(colon + 1, n));
    pos_ = colon + 1 + n;
    return out;
  }
  void expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) damaged("bad record separator");
    ++pos_;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

void syncFd(const std::string& path, int flags) {
  int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  }
  int rc = ::fsync(fd);
  int err = errno;
  ::close(fd);
  if (rc != 0) {
    throw SqlError(sqlstate::kIoError, fmt::format("cannot fsync '{}': {}", path, std::strerror(err)));
  }
}

}  // namespace

std::string formatCatalogFile(const std::vector<CatalogRecord>& records) {
  std::string body;
  for (const auto& r : records) {
    putField(body, r.kind);
    putField(body, r.name);
    putField(body, r.sql);
    putField(body, r.running ? "1" : "0");
    std::vector<std::pair<std::string_view, std::string_view>> settings;
    for (const auto& [k, v] : r.settings) {
      if (k != kOwnerSetting && k != kStringLiteralsSetting) settings.emplace_back(k, v);
    }
    if (!r.owner.empty()) settings.emplace_back(kOwnerSetting, r.owner);
    settings.emplace_back(kStringLiteralsSetting, kSparkStringLiterals);
    putField(body, std::to_string(settings.size()));
    for (const auto& [k, v] : settings) {
      putField(body, k);
      putField(body, v);
    }
    body += '\n';
  }
  return fmt::format("{} {} {} {:08x}\n", kMagic, kVersion, body.size(),
                     crc32(body.data(), body.size())) +
         body;
}

std::vector<CatalogRecord> parseCatalogFile(const std::string& text) {
  size_t nl = text.find('\n');
  if (nl == std::string::npos) damaged("no header");
  char magic[32] = {0};
  int version = 0;
  size_t length = 0;
  unsigned crc = 0;
  std::string header = text.substr(0, nl);
  if (std::sscanf(header.c_str(), "%31s %d %zu %x", magic, &version, &length, &crc) != 4 ||
      std::string(magic) != kMagic) {
    damaged("not a catalog file");
  }
  if (version != kVersion) damaged(fmt::format("unknown version {}", version));
  std::string_view body(text.data() + nl + 1, text.size() - nl - 1);
  if (body.size() != length) damaged(fmt::format("{} bytes of {}", body.size(), length));
  if (crc32(body.data(), body.size()) != crc) damaged("checksum mismatch");

  std::vector<CatalogRecord> out;
  Reader in(body);
  while (!in.atEnd()) {
    CatalogRecord r;
    r.kind = in.field();
    r.name = in.field();
    r.sql = in.field();
    r.running = in.field() == "1";
    std::string count = in.field();
    size_t n = 0;
    try {
      n = std::stoul(count);
    } catch (...) {
      damaged("bad settings count");
    }
    bool sparkLiterals = false;
    for (size_t i = 0; i < n; ++i) {
      std::string k = in.field();
      std::string v = in.field();
      if (k == kOwnerSetting) {
        r.owner = std::move(v);
      } else if (k == kStringLiteralsSetting) {
        sparkLiterals = v == kSparkStringLiterals;
      } else {
        r.settings.emplace_back(std::move(k), std::move(v));
      }
    }
    in.expect('\n');
    if (!sparkLiterals) r.sql = keepBackslashesAsWritten(r.sql);
    out.push_back(std::move(r));
  }
  return out;
}

void writeCatalogFile(const std::string& path, const std::vector<CatalogRecord>& records) {
  std::string text = formatCatalogFile(records);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      throw SqlError(sqlstate::kIoError, fmt::format("cannot write '{}'", tmp), SqlError::npos,
                     "check the data directory's free space and permissions");
    }
  }
  syncFd(tmp, O_RDONLY);
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    throw SqlError(sqlstate::kIoError, fmt::format("cannot rename '{}': {}", tmp, ec.message()));
  }
  fs::path dir = fs::path(path).parent_path();
  syncFd(dir.empty() ? "." : dir.string(), O_RDONLY | O_DIRECTORY);
}

std::vector<CatalogRecord> readCatalogFile(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  // A directory opens as a stream and fails only on the first read, with a
  // message that names no file.
  if (!fs::is_regular_file(path, ec)) {
    throw SqlError(sqlstate::kIoError,
                   fmt::format("cannot read the catalog '{}': it is not a regular file", path),
                   SqlError::npos, "move it away; rtsqld writes its catalog there");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SqlError(sqlstate::kIoError, fmt::format("cannot read '{}'", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    return parseCatalogFile(text);
  } catch (SqlError& e) {
    throw SqlError(sqlstate::kIoError, fmt::format("{}: {}", path, e.message()), SqlError::npos,
                   e.hint());
  }
}

}  // namespace rtsql
