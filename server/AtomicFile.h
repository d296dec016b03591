// AtomicFile: the only way server/ changes a regular file. A write goes to a
// temporary file in the same directory, is fsync'd, renamed over the target
// and the directory is fsync'd, so a crash leaves the old or the new file,
// never half of one. A timestamped backup of the previous content is kept
// for `rollback`. Kernel pseudo-files (/proc) are not regular files and are
// written with writeProcValue() instead.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace nfsrdma::server {

// The whole file, or nullopt when it does not exist. Throws
// std::runtime_error naming the path when it exists but cannot be read.
std::optional<std::string> readFileIfExists(const std::filesystem::path& path);

// Replaces `path` with `content` atomically (temp + fsync + rename + dir
// fsync), creating parent directories. Keeps the mode of an existing file,
// else uses `mode`. A symlink is followed: the file it points to is replaced
// and the link stays; an absolute link target is read inside `root` (the
// HostPaths root), and a link leading outside it is refused. Throws
// std::runtime_error naming the path and errno text.
void writeFileAtomically(const std::filesystem::path& path, const std::string& content,
                         std::filesystem::perms mode = std::filesystem::perms(0644),
                         const std::filesystem::path& root = "/");

// `base` when nothing is there, else the first free `base.1`, `base.2`, ...:
// names made from a timestamp collide when two runs share a second, and a
// backup or retired record must never replace an older one.
std::filesystem::path firstUnusedPath(const std::filesystem::path& base);

// Copies `path` to `backupDir/<file name>.<timestamp>` (atomically; a counter
// is appended when that name is taken) and returns the backup's path;
// nullopt when `path` does not exist.
std::optional<std::filesystem::path> backupFile(const std::filesystem::path& path,
                                                const std::filesystem::path& backupDir,
                                                const std::string& timestamp);

// Writes one value to a kernel pseudo-file (no temp file: procfs has no
// rename). `append` opens with O_APPEND, which is what a listener list needs
// and what a staging tree needs to behave like procfs. Throws naming the path.
void writeProcValue(const std::filesystem::path& path, const std::string& value, bool append);

// "20261129T193000Z": UTC, sortable, safe in file names.
std::string utcTimestamp();

}  // namespace nfsrdma::server
