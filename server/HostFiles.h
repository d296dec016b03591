// HostFiles: the confined host file system, the only way server/ reads,
// writes or removes a host file. Every operation takes a host path
// ("/etc/nfs.conf") and a HostPaths, and reaches the file from the root one
// directory at a time (openat with O_NOFOLLOW per component, or openat2
// RESOLVE_IN_ROOT for read-only probes), so nothing can resolve above the
// root, and a symlink where the tool keeps its own files is refused, never
// followed: see Links in HostPaths.h for which paths may be links. A write
// goes to a temporary file in the same directory, is fsync'd, renamed over
// the target and the directory is fsync'd, so a crash leaves the old or the
// new file, never half of one. Kernel pseudo-files (/proc) are written with
// writeProcValue().
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "server/HostPaths.h"
#include "util/UniqueFd.h"

namespace nfsrdma::server {

// A path of the wrong kind: a symlink where none may be, a file where a
// directory belongs, a link leading above the root. Readers that treat an
// unreadable file as absent (HostState) pass this one on.
class PathRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Confinement under a --root other than "/" needs openat2 (Linux 5.6 or
// later), and a seccomp filter may refuse it (EPERM): an error of the host,
// never read as "the file is absent".
class ConfinementUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kind of file as messages name it: "regular file", "FIFO", "character device", ...
const char* fileKindName(std::filesystem::file_type type);

// The whole host file, or nullopt when it (or a directory on the way) does
// not exist. Throws PathRefused for a refused link or a non-regular file,
// std::runtime_error (with errno text) when it cannot be read.
std::optional<std::string> readHostFile(const HostPaths& paths,
                                        const std::filesystem::path& hostPath);

// The names in a host directory, sorted; empty when it does not exist.
std::vector<std::string> listHostDir(const HostPaths& paths, const std::filesystem::path& hostPath);

// What is at the host path (its type and mode bits), nullopt when nothing
// is: a probe path (Links::InRoot) after its links, resolved inside the root;
// any other path not following its last component (a link is reported as
// one), except /etc/nfs.conf, which is looked at where its links end.
std::optional<std::filesystem::file_status> hostPathStatus(const HostPaths& paths,
                                                           const std::filesystem::path& hostPath);

// Whether something (of any kind) is at the host path.
bool hostPathExists(const HostPaths& paths, const std::filesystem::path& hostPath);

// For readers that treat a host file they cannot read as absent; call it in
// a catch block. Rethrows what must stop them instead: ConfinementUnavailable,
// and PathRefused except on a probe path (Links::InRoot), where it only means
// "not a regular file". Returns for every other std::exception.
void rethrowUnlessAbsence(const std::filesystem::path& hostPath);

// `read()`, or `{}` (absent) when it throws what rethrowUnlessAbsence lets pass.
template <typename Read>
auto orAbsent(const std::filesystem::path& hostPath, Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const std::exception&) {
    rethrowUnlessAbsence(hostPath);
    return {};
  }
}

// A probe's reads: the file, or the sorted names of a directory, read as
// readHostFile and listHostDir read them, with a file or directory that
// cannot be read taken as absent (unused sysfs GID slots answer EINVAL, and
// nfs-utils skips an unreadable nfs.conf.d file too), but not a refused link
// where the tool keeps its files or openat2 missing (orAbsent).
std::optional<std::string> readHostFileOrAbsent(const HostPaths& paths,
                                                const std::filesystem::path& hostPath);
std::vector<std::string> listHostDirOrAbsent(const HostPaths& paths,
                                             const std::filesystem::path& hostPath);

// The host directory, opened (O_RDONLY); `create` makes it and missing
// parents (0755); without it an absent directory gives an empty UniqueFd.
UniqueFd openHostDir(const HostPaths& paths, const std::filesystem::path& hostPath, bool create);

// Replaces the host file with `content` atomically, creating missing parent
// directories. Refuses a path under /proc (procfs has no rename; see
// writeProcValue). Keeps the mode of an existing file, else uses `mode`. For
// /etc/nfs.conf behind a symlink, the file the link ends at is replaced next
// to itself and the link stays (renaming over it would turn it into a copy).
void writeHostFile(const HostPaths& paths, const std::filesystem::path& hostPath,
                   const std::string& content,
                   std::filesystem::perms mode = std::filesystem::perms(0644));

// The host path writeHostFile replaces for `hostPath`: itself, or for
// /etc/nfs.conf behind a symlink, the file the link ends at.
std::filesystem::path hostFileTarget(const HostPaths& paths, const std::filesystem::path& hostPath);

// writeHostFile writes a copy beside the file it replaces and renames it
// over the file; a run killed in between leaves the copy. Its name is "."
// + the file's name + ".nfsrdma-" + 16 lowercase hex digits: for such a
// name, the file's name; nullopt for any other.
std::optional<std::string> temporaryTarget(const std::string& name);

// Removes (unless `dryRun`) the copies writeHostFile left in the host
// directory `dir` (reached as our own directories are, no link followed)
// for the files whose names `owns` accepts: regular files of this user
// named exactly as temporaryTarget reads them; anything else by such a name
// (a link, a directory, another user's file) stays. Returns their host
// paths; none when `dir` does not exist.
std::vector<std::filesystem::path> removeLeftTemporaries(
    const HostPaths& paths, const std::filesystem::path& dir,
    const std::function<bool(const std::string&)>& owns, bool dryRun);

// Removes a host file; nothing when it is absent. Refuses a link or a directory.
void removeHostFile(const HostPaths& paths, const std::filesystem::path& hostPath);

// Renames a host file within its directory (`to` must be a sibling of `from`).
void renameHostFile(const HostPaths& paths, const std::filesystem::path& from,
                    const std::filesystem::path& to);

// `base` when nothing is there, else the first free `base.1`, `base.2`, ...:
// names made from a timestamp collide when two runs share a second, and a
// backup or retired record must never replace an older one.
std::filesystem::path firstUnusedHostPath(const HostPaths& paths,
                                          const std::filesystem::path& base);

// Copies the host file to /var/lib/nfsrdma/backups/<file name>.<timestamp>
// (a counter is appended when that name is taken) and returns the backup's
// host path; nullopt when the file does not exist.
std::optional<std::filesystem::path> backupHostFile(const HostPaths& paths,
                                                    const std::filesystem::path& hostPath,
                                                    const std::string& timestamp);

// Writes one value to an existing kernel pseudo-file (no temp file: procfs
// has no rename). `append` opens with O_APPEND, which is what a listener list
// needs and what a staging tree needs to behave like procfs.
void writeProcValue(const HostPaths& paths, const std::filesystem::path& hostPath,
                    const std::string& value, bool append);

// Pre-flight checks: they change nothing and throw PathRefused (or
// std::runtime_error for a read-only or unwritable directory, or too little
// space) naming the path and what was expected. A host file writeHostFile can
// replace: every directory on the way is a real one or can be created, the
// file is a regular file or absent, and the deepest existing directory on the
// way is writable, on a file system not mounted read-only, with `bytes` free.
void checkHostFileWritable(const HostPaths& paths, const std::filesystem::path& hostPath,
                           std::uintmax_t bytes);
// A host path reached through real directories (or ones that can be
// created) with nothing, or a directory (`directory`) or regular file, at its
// end: our state and backup directories, which must be writable (the
// directory itself, or the deepest existing one on the way), and the
// kernel's /proc files, which a module may bring with it and which are
// written in place (only a read-only mount is refused there: procfs
// directories refuse write access even to root).
void checkHostPathKind(const HostPaths& paths, const std::filesystem::path& hostPath,
                       bool directory);

// No symlink on the way to the host path or at its end (for /etc/nfs.conf:
// after its link is followed): what rollback checks before it changes
// anything. `directory` words the error for a directory.
void checkNoLinkOnTheWay(const HostPaths& paths, const std::filesystem::path& hostPath,
                         bool directory);

// "20261129T193000Z": UTC, sortable, safe in file names.
std::string utcTimestamp();

}  // namespace nfsrdma::server
