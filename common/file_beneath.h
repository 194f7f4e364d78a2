// The one place where rtsqld opens a file that a statement named: a file
// sink's or a file table's 'path', an http sink's 'http.ca', a protobuf
// descriptor.
//
// With --files-dir, such a path was checked when the statement named it
// (server/privileges.h), but the file is opened later, and again at every
// restart of the flow: a symbolic link swapped in between, at the file or at a
// directory on its way, would make the open land outside the directory. So
// every open happens below an open descriptor of the allowed directory, and
// refuses any symbolic link and any '..' on the way: openat2(2) with
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS where the kernel has it (Linux 5.6),
// else one openat(2) per path component with O_NOFOLLOW.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtsql {

// Opens `relative` below the directory `dirFd`, following no symbolic link
// and no '..' (an absolute path or a '..' component is refused as well).
// `flags` are open(2)'s; O_CLOEXEC and O_NOFOLLOW are added. Returns the
// descriptor, or -1 with errno: ELOOP for a symbolic link on the way, EXDEV
// for a '..' or an absolute path, else open(2)'s own.
int openBeneath(int dirFd, std::string_view relative, int flags, mode_t mode = 0);

// openBeneath() without openat2(2): one openat(2) per component, each with
// O_NOFOLLOW. What openBeneath() falls back to when the kernel answers ENOSYS;
// public so that tests cover it on kernels that have openat2.
int openBeneathStepwise(int dirFd, std::string_view relative, int flags, mode_t mode = 0);

// The directories statements may name files in (rtsqld --files-dir, already
// resolved); empty (the default) when any file may be named. One list per
// process, as there is one rtsqld: the engine sets it at start.
void setServerFileRoots(std::vector<std::string> roots);
std::vector<std::string> serverFileRoots();

// `path` as the operating system will reach it: made absolute against the
// working directory, its links followed and its '..' taken out
// (std::filesystem::weakly_canonical). nullopt when that cannot be told, and
// when the path goes through a link that points nowhere (the file created
// through it would not be where it seems).
std::optional<std::string> resolveServerPath(const std::string& path);
// True when the resolved `path` is `dir` or lies below it.
bool pathInside(const std::string& path, const std::string& dir);

// Opens a file a statement named. Without server file roots, open(2) of the
// path as it is. With them, the path is resolved, must lie inside one of the
// roots, and is opened there with openBeneath(). Returns the descriptor, or -1
// with `why` saying why in a sentence fit for an error message ("it is outside
// the directories rtsqld allows", strerror(3) of a failed open).
int openServerFile(const std::string& path, int flags, mode_t mode, std::string& why);

// Reads the whole of a regular file a statement named (opened as
// openServerFile() does), refusing anything else (a FIFO, a device) and a file
// of more than `maxBytes`. Returns false with `why` set.
bool readServerFile(const std::string& path, size_t maxBytes, std::string& out, std::string& why);

}  // namespace rtsql
