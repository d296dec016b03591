// PlanExecutor: apply with an undo record, and rollback from it.
#include "server/PlanExecutor.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>

#include "server/HostFiles.h"
#include "server/HostState.h"
#include "server/NfsConf.h"
#include "server/UndoRecord.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

// The order rollback undoes steps in, whatever order they were recorded in:
// nfsd is stopped first (the kernel answers EBUSY to versions, lease/grace
// and listener changes while threads run), then listeners, lease/grace,
// versions, tuning, files, and the re-export last so the kernel sees the
// restored exports. Modules are only reported.
int undoRank(UndoKind kind, const std::string& path) {
  using K = UndoKind;
  if (kind == K::Threads || (kind == K::Kernel && path == HostPaths::kThreads)) return 0;
  if (kind == K::Listener) return 1;
  if (kind == K::Kernel && (path == HostPaths::kLeaseTime || path == HostPaths::kGraceTime))
    return 2;
  if (kind == K::Kernel && path == HostPaths::kVersions) return 3;
  if (kind == K::Kernel) return 4;
  if (kind == K::File) return 5;
  if (kind == K::Command) return 6;
  return 7;
}

// "+tcp::2049" (an `nfsdctl listener` argument) -> "tcp 2049", the port list's spelling.
std::string listenerName(const std::string& arg) {
  const auto sep = arg.find(':');
  const auto last = arg.rfind(':');
  if (arg.size() < 2 || arg[0] != '+' || sep == std::string::npos || sep == 1 ||
      last + 1 == arg.size()) {
    throw std::runtime_error("nfsdctl listener argument '" + arg +
                             "': expected +<transport>:<address>:<port>");
  }
  return arg.substr(1, sep - 1) + " " + arg.substr(last + 1);
}

// Both steps undo the same thing (the same file, kernel value, listener, ...).
bool sameItem(const Undo& a, const Undo& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == UndoKind::File || a.kind == UndoKind::Kernel) return a.path == b.path;
  if (a.kind == UndoKind::Listener || a.kind == UndoKind::Module) return a.name == b.name;
  if (a.kind == UndoKind::Command) return a.argv == b.argv;
  return true;  // threads: there is one thread count
}

// Apply records only steps rollback accepts (unlikeApply), and checks each
// before its change is made: a value rollback would refuse (a kernel that
// reports what it would not take back) stops apply there, with nothing of
// that step done, rather than the rollback later.
void requireRecordable(const Undo& u) {
  if (const std::string expected = unlikeApply(u); !expected.empty()) {
    throw std::runtime_error(std::string("its undo step (") + undoKindName(u.kind) + " " +
                             (u.path.empty() ? u.name : u.path) +
                             ") would not be one rollback accepts: expected " + expected);
  }
}

// The record apply writes as it goes. An apply after an apply that was not
// rolled back (a retry after a failure, or a second config) extends that
// record: each item keeps its earliest before-value and backup, so rollback
// returns to the state before the first of them.
class UndoLog {
 public:
  UndoLog(const HostPaths& paths, std::optional<Record> earlier, const std::string& timestamp,
          const std::string& config)
      : paths_(paths) {
    if (earlier) {
      record_ = std::move(*earlier);
      record_.laterApplies.push_back({timestamp, config});
    } else {
      record_.appliedAt = timestamp;
      record_.config = config;
    }
  }
  const Record& record() const { return record_; }
  // The steps of this apply alone, with its own before-values: what undoes it.
  const std::vector<Undo>& thisRun() const { return thisRun_; }
  void add(Undo u) {
    requireRecordable(u);
    thisRun_.push_back(u);
    auto same = std::find_if(record_.steps.begin(), record_.steps.end(),
                             [&u](const Undo& s) { return sameItem(s, u); });
    if (same == record_.steps.end()) {
      record_.steps.push_back(std::move(u));
    } else if (same->perKey && u.perKey) {
      same->writes.insert(same->writes.end(), u.writes.begin(), u.writes.end());
      // The earliest before-value of each key stays; what apply wrote last is what counts.
      for (auto& k : u.keys) {
        auto old = std::find_if(same->keys.begin(), same->keys.end(), [&k](const ConfKey& o) {
          return o.section == k.section && o.key == k.key;
        });
        if (old == same->keys.end()) {
          same->keys.push_back(std::move(k));
        } else {
          old->after = k.after;
        }
      }
    }
    save();
  }
  void save() const { writeRecord(paths_, record_); }

 private:
  const HostPaths& paths_;
  Record record_;
  std::vector<Undo> thisRun_;
};

// The owned nfs.conf keys whose value differs between two texts.
std::vector<ConfKey> changedKeys(const std::string& before, const std::string& after) {
  const NfsConf b(before), a(after);
  std::vector<ConfKey> out;
  for (const auto& key : ownedNfsConfKeys()) {
    auto was = b.get(kNfsConfSection, key);
    auto now = a.get(kNfsConfSection, key);
    if (now != was) out.push_back({kNfsConfSection, key, was, now});
  }
  return out;
}

void runOrThrow(CommandRunner& runner, const std::vector<std::string>& argv) {
  CommandResult r = runner.run(argv);
  if (r.exitStatus != 0) {
    throw std::runtime_error("`" + shellJoin(argv) + "` failed (exit " +
                             std::to_string(r.exitStatus) + "): " + trimmed(r.output));
  }
}

// What undoes a RunCommand change: exportfs -ra again, closing the listener
// it opened, the thread count from before; nullopt for a command with none.
std::optional<Undo> undoOfCommand(const Change& c) {
  Undo u;
  if (c.stage == Stage::Exports) {
    u.kind = UndoKind::Command;
    u.argv = c.argv;
  } else if (c.stage == Stage::Ports) {
    u.kind = UndoKind::Listener;
    u.path = c.target;
    u.name = listenerName(c.argv.back());
    u.argv = {c.argv[0]};
  } else if (c.stage == Stage::Threads) {
    u.kind = UndoKind::Threads;
    u.argv = {c.argv[0], "threads", trimmed(c.before.value_or("0"))};
  } else {
    return std::nullopt;
  }
  return u;
}

void execute(const Change& c, const HostPaths& paths, CommandRunner& runner, UndoLog& undo,
             const std::string& ts, std::ostream& out) {
  switch (c.kind) {
    case ChangeKind::LoadModule: {
      const Undo u{UndoKind::Module, "", false, "", "", c.target, {}};
      requireRecordable(u);
      runOrThrow(runner, c.argv);
      undo.add(u);
      break;
    }
    case ChangeKind::WriteFile: {
      requireUnchangedSincePlan(c, paths);
      Undo u{UndoKind::File, c.target, false, "", "", "", {}};
      if (c.target == HostPaths::kNfsConf) {
        u.perKey = true;
        u.keys = changedKeys(c.before.value_or(""), c.after);
        u.writes = {{textDigest(c.before.value_or("")), textDigest(c.after)}};
      }
      if (auto b = backupHostFile(paths, c.target, ts)) {
        u.existed = true;
        u.backup = b->string();
      }
      undo.add(u);  // recorded before the write: a failed write is still undone
      writeHostFile(paths, c.target, c.after);
      break;
    }
    case ChangeKind::KernelValue:
      if (c.append) {
        undo.add({UndoKind::Listener, c.target, false, "", "", trimmed(c.after), {}});
      } else {
        // The versions as read imply 4.0; written back they must say it.
        const std::string before = c.before.value_or("");
        undo.add({UndoKind::Kernel,
                  c.target,
                  false,
                  "",
                  c.target == HostPaths::kVersions ? explicitVersions(before) : before,
                  "",
                  {}});
      }
      writeProcValue(paths, c.target, c.after, c.append);
      break;
    case ChangeKind::RunCommand: {
      // The undo step is worked out first, so nothing runs that could not be recorded.
      const std::optional<Undo> u = undoOfCommand(c);
      if (u) requireRecordable(*u);
      runOrThrow(runner, c.argv);
      if (u) undo.add(*u);
      break;
    }
  }
  out << "done: [" << stageName(c.stage) << "] "
      << (c.kind == ChangeKind::WriteFile     ? "wrote " + c.target
          : c.kind == ChangeKind::KernelValue ? c.target + " <- " + trimmed(c.after)
                                              : shellJoin(c.argv))
      << "\n";
}

// The file as it was before apply: its backup, or nullopt when it did not
// exist. Throws when the backup is missing.
std::optional<std::string> fileBeforeApply(const Undo& u, const HostPaths& paths) {
  if (!u.existed) return std::nullopt;
  auto b = readHostFile(paths, u.backup);
  if (!b) throw std::runtime_error("backup " + u.backup + " is missing");
  return b;
}

// Whether the file holds what it held before apply (absent then and now
// included): a killed apply may have recorded its step and died before the
// write, and then there is nothing to undo, nor anything edited since.
bool unchangedSinceBeforeApply(const Undo& u, const std::optional<std::string>& before,
                               const std::optional<std::string>& current, std::ostream& out) {
  if (current != before) return false;
  out << "  " << u.path
      << (before ? " holds what it held before apply" : " is absent, as it was before apply")
      << ": nothing to undo\n";
  return true;
}

// Puts a file back as it was before apply: its backup, byte for byte, or no
// file. What it holds now is backed up first.
void restoreWholeFile(const Undo& u, const HostPaths& paths, bool dryRun, const std::string& ts,
                      std::ostream& out) {
  const std::optional<std::string> before = fileBeforeApply(u, paths);
  if (unchangedSinceBeforeApply(u, before, readHostFile(paths, u.path), out)) return;
  if (dryRun) {
    out << "  would "
        << (u.existed ? "restore " + u.path + " from " + u.backup
                      : "remove " + u.path + " (it did not exist before)")
        << "\n";
    return;
  }
  backupHostFile(paths, u.path, ts + ".before-rollback");
  if (before) {
    writeHostFile(paths, u.path, *before);
    out << "  restored " << u.path << " from " << u.backup << "\n";
  } else {
    removeHostFile(paths, u.path);
    out << "  removed " << u.path << " (it did not exist before)\n";
  }
}

// In `conf` (nfs.conf as rollback found it), each of apply's keys that
// still holds what apply wrote gets its value from before apply (or goes);
// a key changed since is kept. Says what it does (`would`: "would ").
void undoEachKey(const Undo& u, NfsConf& conf, const std::string& would, std::ostream& out) {
  for (const auto& k : u.keys) {
    const auto now = conf.get(k.section, k.key);
    const std::string name = "[" + k.section + "] " + k.key;
    if (now != k.after) {
      out << "    kept " << name << (now ? " = " + *now : " (removed)") << ": changed since apply "
          << (k.after ? "wrote " + *k.after : std::string("removed it"))
          << " (before apply: " << k.before.value_or("absent") << ")\n";
    } else if (k.before) {
      conf.set(k.section, k.key, *k.before);
      out << "    " << would << "set " << name << " = " << *k.before << " (as before apply)\n";
    } else {
      conf.remove(k.section, k.key);
      out << "    " << would << "remove " << name << " (absent before apply)\n";
    }
  }
}

// Whether nobody but apply changed nfs.conf since the first apply: each
// recorded write replaced what the one before it wrote (the first: the
// file before apply), and the file holds what the last wrote, or what it
// replaced (killed before its rename). A record without writes (made before
// they were recorded) is judged by setting apply's keys in the file before
// apply, which misses a key a later apply removed and added again.
bool onlyApplyWrote(const Undo& u, const std::string& before, const std::string& current) {
  if (u.writes.empty()) {
    NfsConf asApplied(before);
    for (const auto& k : u.keys) {
      if (k.after) {
        asApplied.set(k.section, k.key, *k.after);
      } else {
        asApplied.remove(k.section, k.key);
      }
    }
    return asApplied.text() == current;
  }
  std::string expected = textDigest(before);
  for (const ConfWrite& w : u.writes) {
    if (w.replaced != expected) return false;  // edited between two applies
    expected = w.wrote;
  }
  const std::string now = textDigest(current);
  return now == u.writes.back().wrote || now == u.writes.back().replaced;
}

// nfs.conf belongs to the admin; apply set only the recorded keys. While the
// file is exactly as apply left it, it goes back whole. Once it was edited
// since, only apply's keys are undone, each only where it still holds what
// apply wrote; every other line stays, and a key changed since is kept and
// reported. The backup from before apply is kept either way.
void undoConfKeys(const Undo& u, const HostPaths& paths, bool dryRun, const std::string& ts,
                  std::ostream& out) {
  const std::optional<std::string> before = fileBeforeApply(u, paths);
  const auto current = readHostFile(paths, u.path);
  if (unchangedSinceBeforeApply(u, before, current, out)) return;
  if (!current) {
    out << "  kept: " << u.path << " was removed after apply; none of apply's keys are left to undo"
        << (u.existed ? " (the file from before apply is " + u.backup + ")" : "") << "\n";
    return;
  }
  if (onlyApplyWrote(u, before.value_or(""), *current)) {
    restoreWholeFile(u, paths, dryRun, ts, out);
    return;
  }
  const std::string would = dryRun ? "would " : "";
  out << "  " << u.path << " was edited after apply: " << would << "undo only apply's keys"
      << (u.existed ? "; the whole file from before apply stays in " + u.backup
                    : " (apply created the file; it stays, with the other settings)")
      << "\n";
  NfsConf conf(*current);
  undoEachKey(u, conf, would, out);
  if (dryRun) return;
  backupHostFile(paths, u.path, ts + ".before-rollback");
  writeHostFile(paths, u.path, conf.text());
}

// Undoes one recorded step (or, for a dry run, says what it would do).
// Throws naming what could not be undone.
void undoStep(const Undo& u, const HostPaths& paths, CommandRunner& runner, bool dryRun,
              const std::string& ts, std::ostream& out) {
  auto require = [](const std::string& value, const char* field) {
    if (value.empty()) throw std::runtime_error("the record has no '" + std::string(field) + "'");
  };
  if (u.kind == UndoKind::File) {
    require(u.path, "path");
    if (u.existed) require(u.backup, "backup");
    if (u.perKey) {
      undoConfKeys(u, paths, dryRun, ts, out);
    } else {
      restoreWholeFile(u, paths, dryRun, ts, out);
    }
  } else if (u.kind == UndoKind::Kernel) {
    require(u.path, "path");
    if (dryRun) {
      out << "  would write '" << trimmed(u.before) << "' to " << u.path << "\n";
      return;
    }
    writeProcValue(paths, u.path, u.before, false);
    out << "  " << u.path << " <- " << trimmed(u.before) << "\n";
  } else if (u.kind == UndoKind::Listener) {
    const auto space = u.name.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == u.name.size()) {
      throw std::runtime_error("listener '" + u.name + "': expected '<transport> <port>'");
    }
    const std::string nfsdctl = findHostTool(paths, "nfsdctl");
    if (nfsdctl.empty()) {
      out << "  kept: the '" << u.name << "' listener stays open until nfsd restarts "
          << "(systemctl restart nfs-server; nfs.conf no longer asks for it)\n";
      return;
    }
    const std::vector<std::string> argv = {
        nfsdctl, "listener", "-" + u.name.substr(0, space) + "::" + u.name.substr(space + 1)};
    if (dryRun) {
      out << "  would run: " << shellJoin(argv) << "\n";
      return;
    }
    runOrThrow(runner, argv);
    out << "  ran: " << shellJoin(argv) << "\n";
  } else if (u.kind == UndoKind::Module) {
    require(u.name, "name");
    out << "  kept: module " << u.name
        << " stays loaded (unloading it under a running server is unsafe; `modprobe -r " << u.name
        << "` once nfsd is stopped)\n";
  } else {  // command, threads
    if (u.argv.empty()) throw std::runtime_error("the record has no 'argv'");
    if (dryRun) {
      out << "  would run: " << shellJoin(u.argv) << "\n";
      return;
    }
    runOrThrow(runner, u.argv);
    out << "  ran: " << shellJoin(u.argv) << "\n";
  }
}

// One apply or rollback at a time: each reads the undo record and the files
// it changes, then replaces them, so two at once would lose each other's
// undo steps or back up each other's output as the state before. The lock
// is the state directory itself, so taking it writes nothing but, with
// `create`, the directory. Without `create` and without the directory
// (never applied) it is not held.
class RunLock {
 public:
  RunLock(const HostPaths& paths, bool create)
      : fd_(openHostDir(paths, HostPaths::kStateDir, create)) {
    if (!fd_) return;
    if (::flock(fd_.get(), LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string dir = paths.display(HostPaths::kStateDir);
      if (err == EWOULDBLOCK) {
        throw std::runtime_error(
            "another nfsrdma-server apply or rollback is running: it holds a lock on " + dir +
            "; run this one when it has finished");
      }
      throw std::runtime_error("flock " + dir + ": " + std::strerror(err));
    }
  }
  bool held() const { return static_cast<bool>(fd_); }  // closing the fd releases the lock

 private:
  UniqueFd fd_;
};

std::string describe(const Change& c) {
  return std::string(stageName(c.stage)) + " " + (c.target.empty() ? shellJoin(c.argv) : c.target);
}

// Everything apply can check before its first change, so a host it could
// not finish on is refused unchanged: the state and backup directories are
// directories (or can be made), each file to write is a regular file (or
// absent) reached through real directories with room for it, the record and
// the backups fit, and each kernel file is a regular file (or not there yet:
// a module brings it). Throws naming the path and what was expected.
void preflight(const ServerPlan& plan, const HostPaths& paths) {
  for (const char* dir : {HostPaths::kStateDir, HostPaths::kBackupDir}) {
    checkHostPathKind(paths, dir, true);
  }
  std::uintmax_t stateBytes = 64 * 1024;  // the record, with room to grow
  for (const auto& c : plan.changes) {
    if (c.kind == ChangeKind::WriteFile) {
      checkHostFileWritable(paths, c.target, c.after.size());
      stateBytes += c.before.value_or("").size();  // its backup
    } else if (c.kind == ChangeKind::KernelValue) {
      checkHostPathKind(paths, c.target, false);
    }
  }
  checkHostFileWritable(paths, HostPaths::kLastApply, stateBytes);
}

// Undoes `steps` in rollback's order (undoRank; later steps of one rank
// first, the reverse of the order they were made in), going on past a step
// that fails (printed). Returns the steps that failed.
std::vector<Undo> undoSteps(const std::vector<Undo>& steps, const HostPaths& paths,
                            CommandRunner& runner, bool dryRun, const std::string& ts,
                            std::ostream& out) {
  std::vector<std::size_t> order(steps.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = order.size() - 1 - k;
  std::stable_sort(order.begin(), order.end(), [&steps](std::size_t a, std::size_t b) {
    return undoRank(steps[a].kind, steps[a].path) < undoRank(steps[b].kind, steps[b].path);
  });
  std::vector<Undo> failed;
  for (std::size_t k : order) {
    const Undo& u = steps[k];
    try {
      undoStep(u, paths, runner, dryRun, ts, out);
    } catch (const std::exception& e) {
      failed.push_back(u);
      out << "  FAILED to undo " << undoKindName(u.kind) << " "
          << (u.path.empty() ? u.name : u.path) << ": " << e.what() << "\n";
    }
  }
  return failed;
}

// Renames last-apply.yaml to last-apply.yaml.rolled-back.<ts> (or the next
// free .1, .2, ...: a record retired earlier in that second keeps its name).
void retireRecord(const HostPaths& paths, const std::string& ts) {
  const std::string base = std::string(HostPaths::kLastApply) + ".rolled-back." + ts;
  renameHostFile(paths, HostPaths::kLastApply, firstUnusedHostPath(paths, base));
}

// After this apply failed half way: undoes its own steps and puts the record
// back as it was before it (none: retired). Returns what the error adds.
// A step that cannot be undone leaves the record extended by this apply, so
// `rollback` finishes the job once the cause is fixed.
std::string undoFailedApply(const UndoLog& undo, const std::optional<Record>& earlier,
                            const HostPaths& paths, CommandRunner& runner, const std::string& ts,
                            std::ostream& out) {
  const std::size_t n = undo.thisRun().size();
  if (n == 0) return "nothing had been changed";
  out << "Apply failed; undoing the " << n << " change(s) it made:\n";
  const std::vector<Undo> failed = undoSteps(undo.thisRun(), paths, runner, false, ts, out);
  if (!failed.empty()) {
    return std::to_string(failed.size()) + " of the " + std::to_string(n) +
           " change(s) it made could not be undone (printed above); they are recorded in " +
           paths.display(HostPaths::kLastApply) +
           ": fix what they name and run `nfsrdma-server rollback`";
  }
  const std::string undone =
      "the " + std::to_string(n) + " change(s) it made were undone (modules stay loaded)";
  try {
    if (earlier) {
      writeRecord(paths, *earlier);
    } else {
      retireRecord(paths, ts);
    }
  } catch (const std::exception& e) {
    // Caught here: thrown on, it would replace the error that stopped apply.
    return undone + ", but " + paths.display(HostPaths::kLastApply) +
           " could not be put back as it was before this apply (" + e.what() +
           "); it still lists this apply's changes, which `nfsrdma-server rollback` would undo "
           "again (harmless: they hold their values from before it)";
  }
  return undone;
}

// Runs the plan's changes: modules first, then (re-planned, since modules
// bring control files and sysctls) the rest. Returns how many were made and
// the notes of the plan that ran; throws naming the change that failed.
std::size_t executePlan(ApplyOutcome& outcome, const ServerConfig& config, const HostPaths& paths,
                        CommandRunner& runner, UndoLog& undo, const std::string& ts,
                        std::ostream& out) {
  std::size_t done = 0;
  std::string current = "start";  // a copy: the re-planned changes die with the try block
  try {
    bool loadedModules = false;
    for (const auto& c : outcome.plan.changes) {
      if (c.kind != ChangeKind::LoadModule) continue;
      current = describe(c);
      execute(c, paths, runner, undo, ts, out);
      ++done;
      loadedModules = true;
    }
    ServerPlan rest = outcome.plan;
    if (loadedModules) {
      current = "planning again after loading modules";
      rest = computePlan(config, paths, HostState::probe(paths));
      preflight(rest, paths);
    }
    for (const auto& c : rest.changes) {
      if (c.kind == ChangeKind::LoadModule) continue;
      current = describe(c);
      execute(c, paths, runner, undo, ts, out);
      ++done;
    }
    outcome.plan.notes = rest.notes;
  } catch (const std::exception& e) {
    throw std::runtime_error("apply stopped at [" + current + "]: " + e.what());
  }
  return done;
}

}  // namespace

void requireUnchangedSincePlan(const Change& c, const HostPaths& paths) {
  // The new content was made from the file as the plan read it: an edit
  // made since (an admin, another program) would be overwritten unseen.
  if (readHostFile(paths, c.target) != c.before) {
    throw std::runtime_error(paths.display(c.target) +
                             " changed after the plan read it (something else wrote it), so it "
                             "was not written; run apply again to plan from its new content");
  }
}

std::vector<std::string> applyRefusals(const ServerPlan& plan, const HostPaths& paths) {
  std::vector<std::string> out;
  if (plan.empty()) return out;  // apply has nothing to do: it says "No change" and checks nothing
  const std::function<void()> checks[] = {[&] { preflight(plan, paths); },
                                          [&] { loadRecord(paths); }};
  for (const auto& check : checks) {
    try {
      check();
    } catch (const ConfinementUnavailable&) {
      throw;  // the host cannot be read at all: an error, not a refusal
    } catch (const std::exception& e) {
      // A broken state directory stops both checks, with one message.
      if (std::find(out.begin(), out.end(), e.what()) == out.end()) out.push_back(e.what());
    }
  }
  return out;
}

ApplyOutcome applyConfig(const ServerConfig& config, const HostPaths& paths, CommandRunner& runner,
                         bool dryRun, std::ostream& out) {
  ApplyOutcome outcome;
  // Taken before the probe, so the plan starts from what another run left;
  // on a host without a state directory (never applied) only once there is
  // something to change, so a refused first apply writes nothing.
  std::optional<RunLock> lock;
  if (!dryRun) lock.emplace(paths, false);
  outcome.plan = computePlan(config, paths, HostState::probe(paths));
  if (outcome.plan.empty()) {
    out << "No change: the host already matches " << config.source << ".\n";
    out << outcome.plan.renderNotes();
    return outcome;
  }
  preflight(outcome.plan, paths);
  if (dryRun) {
    loadRecord(paths);  // one apply cannot read or extend stops it: say so here too
    out << outcome.plan.render() << "Dry run: nothing was changed.\n";
    return outcome;
  }
  // A file changed after this plan read it is refused when its turn comes (execute()).
  if (!lock->held()) lock.emplace(paths, true);
  const std::string ts = utcTimestamp();
  const std::optional<Record> earlier = loadRecord(paths);
  UndoLog undo(paths, earlier, ts, config.source);
  if (earlier) {
    out << "The apply of " << earlier->appliedAt
        << " is not rolled back: its undo record is extended, so `nfsrdma-server rollback` "
           "returns to the state before that apply.\n";
  }
  undo.save();
  std::size_t done = 0;
  try {
    done = executePlan(outcome, config, paths, runner, undo, ts, out);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + "; " +
                             undoFailedApply(undo, earlier, paths, runner, ts, out));
  }
  outcome.changed = true;
  out << "Applied " << done << " change(s); `nfsrdma-server rollback` restores the state before "
      << (undo.record().laterApplies.empty() ? "it" : "the apply of " + undo.record().appliedAt)
      << ".\n";
  for (const auto& n : outcome.plan.notes) out << "  note: " << n << "\n";
  return outcome;
}

namespace {

// Before rollback changes anything: no symlink on the way to a file or
// kernel value it restores, to a backup it reads, or to the backups
// directory, so a link put there since apply is refused, not written
// through. Other failures stop only their own step.
void preflightRollback(const Record& rec, const HostPaths& paths) {
  checkNoLinkOnTheWay(paths, HostPaths::kBackupDir, true);
  for (const auto& u : rec.steps) {
    if (u.kind == UndoKind::File || u.kind == UndoKind::Kernel)
      checkNoLinkOnTheWay(paths, u.path, false);
    if (u.kind == UndoKind::File && u.existed && !u.backup.empty()) {
      checkNoLinkOnTheWay(paths, u.backup, false);
    }
  }
}

// Retires the record; the steps that failed stay recorded, so a rollback
// after their cause is fixed finishes the job instead of finding nothing to
// do. Returns false (printed) when the record could not be retired.
bool retireRecordKeeping(const Record& rec, const std::vector<Undo>& failed, const HostPaths& paths,
                         const std::string& ts, std::ostream& out) {
  try {
    retireRecord(paths, ts);
  } catch (const std::exception& e) {
    out << "  FAILED to retire " << paths.display(HostPaths::kLastApply) << ": " << e.what()
        << "\n";
    return false;
  }
  if (!failed.empty()) {
    Record rest = rec;
    rest.steps = failed;
    writeRecord(paths, rest);
    out << "  the " << failed.size() << " step(s) that failed stay recorded in "
        << paths.display(HostPaths::kLastApply) << ": fix what they name and run rollback again\n";
  }
  return true;
}

// The copies a killed apply or rollback left beside a file it writes
// (writeHostFile's temporaries, see removeLeftTemporaries): beside our
// exports file, /etc/nfs.conf (where its links end), the record, and the
// backups. Removes them (a dry run lists them), each printed. Returns false
// (printed) when one could not be removed.
bool removeKilledRunsCopies(const HostPaths& paths, bool dryRun, std::ostream& out) {
  using Owns = std::function<bool(const std::string&)>;
  auto named = [](fs::path host) -> std::pair<fs::path, Owns> {
    return {host.parent_path(),
            [n = host.filename().string()](const std::string& t) { return t == n; }};
  };
  // Backups are named after the file they keep (backupHostFile): <name>.<time>...
  const Owns backup = [](const std::string& t) {
    for (const char* f : {HostPaths::kOwnExports, HostPaths::kNfsConf}) {
      if (t.rfind(fs::path(f).filename().string() + ".", 0) == 0) return true;
    }
    return false;
  };
  bool ok = true;
  const std::function<std::pair<fs::path, Owns>()> places[] = {
      [&] { return named(HostPaths::kOwnExports); },
      [&] { return named(hostFileTarget(paths, HostPaths::kNfsConf)); },
      [&] { return named(HostPaths::kLastApply); },
      [&] {
        return std::pair<fs::path, Owns>{HostPaths::kBackupDir, backup};
      }};
  for (const auto& place : places) {
    try {
      const auto [dir, owns] = place();
      for (const fs::path& p : removeLeftTemporaries(paths, dir, owns, dryRun)) {
        out << "  " << (dryRun ? "would remove " : "removed ") << p.string()
            << " (the copy a killed apply or rollback was writing)\n";
      }
    } catch (const std::exception& e) {
      ok = false;
      out << "  FAILED to remove the copies a killed run left: " << e.what() << "\n";
    }
  }
  return ok;
}

}  // namespace

bool rollbackLastApply(const HostPaths& paths, CommandRunner& runner, bool dryRun,
                       std::ostream& out) {
  std::optional<RunLock> lock;  // without a state directory there is no record to roll back
  if (!dryRun) lock.emplace(paths, false);
  // Copies are removed only under the lock, so none is another run's in the middle of a write.
  const bool sweep = dryRun || lock->held();
  const std::optional<Record> rec = loadRecord(paths);
  if (!rec) {
    out << "Nothing to roll back: no apply is recorded in " << paths.display(HostPaths::kLastApply)
        << ".\n";
    return !sweep || removeKilledRunsCopies(paths, dryRun, out);
  }
  preflightRollback(*rec, paths);
  const std::string ts = utcTimestamp();
  out << (dryRun ? "Would roll back" : "Rolling back") << " the apply of " << rec->appliedAt;
  for (std::size_t k = 0; k < rec->laterApplies.size(); ++k) {
    out << (k == 0 ? " and the later apply of " : ", ") << rec->laterApplies[k].first;
  }
  out << ":\n";
  const std::vector<Undo> failed = undoSteps(rec->steps, paths, runner, dryRun, ts, out);
  bool ok = failed.empty();
  if (sweep && !removeKilledRunsCopies(paths, dryRun, out)) ok = false;
  if (!dryRun && !retireRecordKeeping(*rec, failed, paths, ts, out)) ok = false;
  out << (ok ? "Rollback complete.\n" : "Rollback finished with failures (above).\n");
  return ok;
}

}  // namespace nfsrdma::server
