// PlanExecutor: apply with an undo record, and rollback from it.
#include "server/PlanExecutor.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "server/AtomicFile.h"
#include "server/HostState.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

// One undo step, as stored in last-apply.yaml.
struct Undo {
  std::string kind;  // file, kernel, listener, module, command, threads
  std::string path;  // host path (file, kernel, listener)
  bool existed = false;
  std::string backup;  // host path of the backup (file)
  std::string before;  // previous value (kernel)
  std::string name;    // module name; listener "<transport> <port>"
  std::vector<std::string> argv;  // command: what undoes it; threads: nfsdctl threads <before>
};

// The order rollback undoes steps in, whatever order they were recorded in:
// nfsd is stopped first (the kernel answers EBUSY to versions, lease/grace
// and listener changes while threads run), then listeners, lease/grace,
// versions, tuning, files, and the re-export last so the kernel sees the
// restored exports. Modules are only reported.
int undoRank(const std::string& kind, const std::string& path) {
  if (kind == "threads" || (kind == "kernel" && path == HostPaths::kThreads)) return 0;
  if (kind == "listener") return 1;
  if (kind == "kernel" && (path == HostPaths::kLeaseTime || path == HostPaths::kGraceTime))
    return 2;
  if (kind == "kernel" && path == HostPaths::kVersions) return 3;
  if (kind == "kernel") return 4;
  if (kind == "file") return 5;
  if (kind == "command") return 6;
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

class UndoLog {
 public:
  UndoLog(const HostPaths& paths, std::string timestamp, std::string config)
      : paths_(paths), timestamp_(std::move(timestamp)), config_(std::move(config)) {}
  void add(Undo u) {
    steps_.push_back(std::move(u));
    save();
  }
  void save() const {
    YAML::Emitter e;
    e << YAML::BeginMap << YAML::Key << "applied_at" << YAML::Value << timestamp_ << YAML::Key
      << "config" << YAML::Value << config_ << YAML::Key << "undo" << YAML::Value << YAML::BeginSeq;
    for (const auto& u : steps_) {
      e << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << u.kind;
      if (!u.path.empty()) e << YAML::Key << "path" << YAML::Value << u.path;
      if (u.kind == "file") {
        e << YAML::Key << "existed" << YAML::Value << u.existed;
        if (u.existed) e << YAML::Key << "backup" << YAML::Value << u.backup;
      }
      if (u.kind == "kernel")
        e << YAML::Key << "before" << YAML::Value << YAML::DoubleQuoted << u.before;
      if (!u.name.empty()) e << YAML::Key << "name" << YAML::Value << u.name;
      if (!u.argv.empty()) {
        e << YAML::Key << "argv" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const auto& a : u.argv) e << a;
        e << YAML::EndSeq;
      }
      e << YAML::EndMap;
    }
    e << YAML::EndSeq << YAML::EndMap;
    writeFileAtomically(paths_.resolve(HostPaths::kLastApply), std::string(e.c_str()) + "\n",
                        fs::perms(0600));
  }

 private:
  const HostPaths& paths_;
  std::string timestamp_, config_;
  std::vector<Undo> steps_;
};

void runOrThrow(CommandRunner& runner, const std::vector<std::string>& argv) {
  CommandResult r = runner.run(argv);
  if (r.exitStatus != 0) {
    throw std::runtime_error("`" + shellJoin(argv) + "` failed (exit " +
                             std::to_string(r.exitStatus) + "): " + trimmed(r.output));
  }
}

void execute(const Change& c, const HostPaths& paths, CommandRunner& runner, UndoLog& undo,
             const std::string& ts, std::ostream& out) {
  switch (c.kind) {
    case ChangeKind::LoadModule:
      runOrThrow(runner, c.argv);
      undo.add({"module", "", false, "", "", c.target, {}});
      break;
    case ChangeKind::WriteFile: {
      const fs::path real = paths.resolve(c.target);
      Undo u{"file", c.target, false, "", "", "", {}};
      if (auto b = backupFile(real, paths.resolve(HostPaths::kBackupDir), ts)) {
        u.existed = true;
        u.backup = (fs::path(HostPaths::kBackupDir) / b->filename()).string();
      }
      undo.add(u);  // recorded before the write: a failed write is still undone
      writeFileAtomically(real, c.after);
      break;
    }
    case ChangeKind::KernelValue:
      if (c.append) {
        undo.add({"listener", c.target, false, "", "", trimmed(c.after), {}});
      } else {
        undo.add({"kernel", c.target, false, "", c.before.value_or(""), "", {}});
      }
      writeProcValue(paths.resolve(c.target), c.after, c.append);
      break;
    case ChangeKind::RunCommand: {
      // The undo step is worked out first, so nothing runs that could not be recorded.
      std::optional<Undo> u;
      if (c.stage == Stage::Exports) {
        u = Undo{"command", "", false, "", "", "", c.argv};
      } else if (c.stage == Stage::Ports) {
        u = Undo{"listener", c.target, false, "", "", listenerName(c.argv.back()), {c.argv[0]}};
      } else if (c.stage == Stage::Threads) {
        u = Undo{"threads", "", false, "", "", "",
                 {c.argv[0], "threads", trimmed(c.before.value_or("0"))}};
      }
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

}  // namespace

ApplyOutcome applyConfig(const ServerConfig& config, const HostPaths& paths, CommandRunner& runner,
                         bool dryRun, std::ostream& out) {
  ApplyOutcome outcome;
  HostState state = HostState::probe(paths);
  outcome.plan = computePlan(config, paths, state);
  if (outcome.plan.empty()) {
    out << "No change: the host already matches " << config.source << ".\n";
    out << outcome.plan.renderNotes();
    return outcome;
  }
  if (dryRun) {
    out << outcome.plan.render() << "Dry run: nothing was changed.\n";
    outcome.changed = false;
    return outcome;
  }
  const std::string ts = utcTimestamp();
  UndoLog undo(paths, ts, config.source);
  undo.save();
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
      // Modules bring control files and sysctls with them: plan the rest again.
      state = HostState::probe(paths);
      rest = computePlan(config, paths, state);
    }
    for (const auto& c : rest.changes) {
      if (c.kind == ChangeKind::LoadModule) continue;
      current = describe(c);
      execute(c, paths, runner, undo, ts, out);
      ++done;
    }
    outcome.plan.notes = rest.notes;
  } catch (const std::exception& e) {
    throw std::runtime_error(
        "apply stopped at [" + current + "]: " + e.what() + "; " + std::to_string(done) +
        " change(s) were made before it and are recorded in " +
        paths.resolve(HostPaths::kLastApply).string() + " (`nfsrdma-server rollback` undoes them)");
  }
  outcome.changed = true;
  out << "Applied " << done
      << " change(s); `nfsrdma-server rollback` restores the previous state.\n";
  for (const auto& n : outcome.plan.notes) out << "  note: " << n << "\n";
  return outcome;
}

bool rollbackLastApply(const HostPaths& paths, CommandRunner& runner, bool dryRun,
                       std::ostream& out) {
  const fs::path record = paths.resolve(HostPaths::kLastApply);
  auto text = readFileIfExists(record);
  if (!text) {
    out << "Nothing to roll back: no apply is recorded (" << record.string() << ").\n";
    return true;
  }
  YAML::Node doc;
  try {
    doc = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(record.string() + ":" + std::to_string(e.mark.line + 1) + ":" +
                             std::to_string(e.mark.column + 1) +
                             ": unreadable apply record: " + e.msg);
  }
  if (!doc.IsMap() || !doc["undo"] || !doc["undo"].IsSequence()) {
    throw std::runtime_error(record.string() + ": not an apply record (no 'undo' list)");
  }
  const std::string ts = utcTimestamp();
  const std::string appliedAt = doc["applied_at"] ? doc["applied_at"].as<std::string>() : "?";
  out << (dryRun ? "Would roll back" : "Rolling back") << " the apply of " << appliedAt << ":\n";
  bool ok = true;
  const YAML::Node steps = doc["undo"];
  // Later steps of the same rank first: the reverse of the order they were made in.
  std::vector<std::size_t> order(steps.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = order.size() - 1 - k;
  auto rankOf = [&steps](std::size_t k) {
    const YAML::Node s = steps[k];
    return undoRank(s["kind"] ? s["kind"].as<std::string>() : "",
                    s["path"] ? s["path"].as<std::string>() : "");
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rankOf(a) < rankOf(b); });
  for (std::size_t k : order) {
    const YAML::Node s = steps[k];
    const std::string kind = s["kind"] ? s["kind"].as<std::string>() : "";
    const std::string path = s["path"] ? s["path"].as<std::string>() : "";
    try {
      if (kind == "file") {
        const fs::path real = paths.resolve(path);
        const bool existed = s["existed"] && s["existed"].as<bool>();
        if (dryRun) {
          out << "  would "
              << (existed ? "restore " + path + " from " + s["backup"].as<std::string>()
                          : "remove " + path + " (it did not exist before)")
              << "\n";
          continue;
        }
        backupFile(real, paths.resolve(HostPaths::kBackupDir), ts + ".before-rollback");
        if (existed) {
          const std::string backup = s["backup"].as<std::string>();
          auto content = readFileIfExists(paths.resolve(backup));
          if (!content) throw std::runtime_error("backup " + backup + " is missing");
          writeFileAtomically(real, *content);
          out << "  restored " << path << " from " << backup << "\n";
        } else {
          std::error_code ec;
          fs::remove(real, ec);
          if (ec) throw std::runtime_error("cannot remove " + path + ": " + ec.message());
          out << "  removed " << path << " (it did not exist before)\n";
        }
      } else if (kind == "kernel") {
        const std::string before = s["before"].as<std::string>();
        if (dryRun) {
          out << "  would write '" << trimmed(before) << "' to " << path << "\n";
          continue;
        }
        writeProcValue(paths.resolve(path), before, false);
        out << "  " << path << " <- " << trimmed(before) << "\n";
      } else if (kind == "listener") {
        const std::string listener = s["name"].as<std::string>();
        const auto space = listener.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 == listener.size()) {
          throw std::runtime_error("listener '" + listener + "': expected '<transport> <port>'");
        }
        const std::string nfsdctl = findHostTool(paths, "nfsdctl");
        if (!nfsdctl.empty()) {
          std::vector<std::string> argv = {
              nfsdctl, "listener",
              "-" + listener.substr(0, space) + "::" + listener.substr(space + 1)};
          if (dryRun) {
            out << "  would run: " << shellJoin(argv) << "\n";
            continue;
          }
          runOrThrow(runner, argv);
          out << "  ran: " << shellJoin(argv) << "\n";
        } else {
          out << "  kept: the '" << listener << "' listener stays open until nfsd restarts "
              << "(systemctl restart nfs-server; nfs.conf no longer asks for it)\n";
        }
      } else if (kind == "module") {
        const std::string name = s["name"].as<std::string>();
        out << "  kept: module " << name
            << " stays loaded (unloading it under a running server is unsafe; `modprobe -r " << name
            << "` once nfsd is stopped)\n";
      } else if (kind == "command" || kind == "threads") {
        const auto argv = s["argv"].as<std::vector<std::string>>();
        if (dryRun) {
          out << "  would run: " << shellJoin(argv) << "\n";
          continue;
        }
        runOrThrow(runner, argv);
        out << "  ran: " << shellJoin(argv) << "\n";
      } else {
        throw std::runtime_error("unknown undo step '" + kind + "'");
      }
    } catch (const std::exception& e) {
      ok = false;
      out << "  FAILED to undo " << kind << (path.empty() ? "" : " " + path) << ": " << e.what()
          << "\n";
    }
  }
  if (!dryRun) {
    std::error_code ec;
    fs::rename(record, record.string() + ".rolled-back." + ts, ec);
    if (ec) {
      ok = false;
      out << "  FAILED to retire " << record.string() << ": " << ec.message() << "\n";
    }
  }
  out << (ok ? "Rollback complete.\n" : "Rollback finished with failures (above).\n");
  return ok;
}

}  // namespace nfsrdma::server
