// Rollback: the recorded undo steps run in rollback's order, each file put
// back as apply found it (our exports file whole; nfs.conf whole while only
// apply wrote it, else key by key), and the copies a killed run left swept.
#include "server/Rollback.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>

#include "server/HostFiles.h"
#include "server/HostState.h"
#include "server/NfsConf.h"
#include "server/RunLock.h"

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

// Ranked by undoRank; within a rank the stable sort keeps the reverse of the
// order the steps were made in.
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

void retireRecord(const HostPaths& paths, const std::string& ts) {
  const std::string base = std::string(HostPaths::kLastApply) + ".rolled-back." + ts;
  renameHostFile(paths, HostPaths::kLastApply, firstUnusedHostPath(paths, base));
}

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
