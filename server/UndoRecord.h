// UndoRecord: /var/lib/nfsrdma/last-apply.yaml, the undo steps of every
// apply since the last rollback, as apply writes it and as rollback (and a
// later apply, which extends it) reads it back. Rollback writes and runs what
// the record says, so reading it checks each step against what apply could
// have recorded: the exact files, kernel values, listeners, modules and
// commands apply touches, and values of the form and range apply reads from
// the kernel or writes. A hand-edited step outside that is refused before
// anything is changed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/HostPaths.h"

namespace nfsrdma::server {

// One nfs.conf key apply changed: what it was and what apply wrote.
struct ConfKey {
  std::string section, key;
  std::optional<std::string> before;  // nullopt: no assignment before apply
  std::optional<std::string> after;   // nullopt: apply removed the assignment
};

// One write apply made to /etc/nfs.conf: digests (textDigest) of the text it
// replaced and of the text it wrote. When each write replaced what the one
// before wrote, and the file now holds what the last one wrote (or, killed
// before its rename, what it replaced), nobody else edited the file since
// the first apply.
struct ConfWrite {
  std::string replaced, wrote;
};

// A text's digest as the record keeps it: FNV-1a 64, 16 lowercase hex
// digits. Not a defence against a forged file (the record is root's, and a
// match only makes rollback restore apply's own backup whole): it tells an
// admin's edit from apply's own writes.
std::string textDigest(std::string_view text);

// What an undo step undoes; last-apply.yaml names it (undoKindName).
enum class UndoKind { File, Kernel, Listener, Module, Command, Threads };

const char* undoKindName(UndoKind kind);

// One undo step, as stored in last-apply.yaml.
struct Undo {
  UndoKind kind = UndoKind::File;
  std::string path;  // host path (file, kernel, listener)
  bool existed = false;
  std::string backup;             // host path of the backup (file)
  std::string before;             // previous value (kernel)
  std::string name;               // module name; listener "<transport> <port>"
  std::vector<std::string> argv;  // command: what undoes it; threads: nfsdctl threads <before>
  bool perKey = false;            // file /etc/nfs.conf: undo `keys`, not the whole file
  std::vector<ConfKey> keys = {};
  std::vector<ConfWrite> writes = {};  // file /etc/nfs.conf: apply's writes, in order
};

// last-apply.yaml: the undo steps of every apply since the last rollback.
struct Record {
  std::string appliedAt, config;                                  // the first of those applies
  std::vector<std::pair<std::string, std::string>> laterApplies;  // (when, config) of the others
  std::vector<Undo> steps;
};

// Reads and checks the whole record before anything is undone or added to
// it; nullopt when there is none. Throws naming the file (and line or undo
// step) and what was expected.
std::optional<Record> loadRecord(const HostPaths& paths);

// Writes the undo record (last-apply.yaml), atomically.
void writeRecord(const HostPaths& paths, const Record& record);

// "" when `u` is a step apply records; else what such a step holds.
std::string unlikeApply(const Undo& u);

}  // namespace nfsrdma::server
