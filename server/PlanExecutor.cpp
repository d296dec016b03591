// PlanExecutor: apply, with the undo record written as it goes, and its
// own undo (Rollback.h) when a change fails half way.
#include "server/PlanExecutor.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>

#include "server/HostFiles.h"
#include "server/HostState.h"
#include "server/NfsConf.h"
#include "server/Rollback.h"
#include "server/RunLock.h"
#include "server/UndoRecord.h"

namespace nfsrdma::server {
namespace {

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

}  // namespace nfsrdma::server
