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
