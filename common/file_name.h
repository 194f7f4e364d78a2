// The one place where a name that a client chose becomes a file name.
//
// Catalog names are identifiers, and a quoted identifier may hold any bytes:
// "..", "/etc", a NUL, ten thousand characters. Whatever rtsqld keeps on disk
// for a named object (a flow's state and checkpoints) lives in a directory
// whose name is fileNameOf(name), so that no name can leave the directory it
// is kept in, and no two names share a file.
#pragma once

#include <string>
#include <string_view>

namespace rtsql {

// One path component for `name`, injective over all byte strings:
//   - the bytes [a-z0-9_-] stand for themselves, so plain lower-case names
//     keep the names they always had on disk;
//   - every other byte, upper-case letters included, is written as '%'
//     followed by two upper-case hex digits ("a.b" -> "a%2Eb", "A" -> "%41"),
//     so that names differing only in case stay apart on a file system that
//     ignores case, and no component is ever "", "." or ".." or holds a '/';
//   - an encoding longer than kMaxFileNameBytes keeps its first part and
//     replaces the rest by '~' and the SHA-256 of the whole encoding (128 bits
//     of it in hex); '~' appears in no other encoding, so a short name never
//     meets a long one.
// The empty name maps to "%".
std::string fileNameOf(std::string_view name);

// Longest component fileNameOf returns: well under the 255 bytes every common
// file system allows, leaving room for suffixes such as ".tmp".
inline constexpr size_t kMaxFileNameBytes = 200;

// `dir` / `component`, after checking that the result is a direct child of
// `dir` (the component is one non-empty path element, neither "." nor "..").
// Throws InternalError otherwise: callers pass fileNameOf() results, so a
// failure is a bug, never a user's doing.
std::string childPath(const std::string& dir, std::string_view component);

}  // namespace rtsql
