// PlanExecutor: runs a ServerPlan (apply). Every change is recorded (file
// backups, previous kernel values) in /var/lib/nfsrdma/last-apply.yaml as it
// happens, so `rollback` (Rollback.h) can restore the state before the apply
// even when that apply stopped half way. Applies until the next rollback
// share that record (each item keeps its earliest before-value), so a
// retried apply does not lose the way back.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "server/CommandRunner.h"
#include "server/HostPaths.h"
#include "server/ServerConfig.h"
#include "server/ServerPlan.h"

namespace nfsrdma::server {

struct ApplyOutcome {
  bool changed = false;  // false: the host already matched ("no change")
  ServerPlan plan;       // what was (or, for a dry run, would be) done
};

// Probes the host, plans, checks before the first change everything that
// can be checked (each path apply writes is of the kind it expects, reached
// without a symlink, with room for it; see preflight in the .cpp), prints
// the plan to `out` and, unless dryRun, applies it. Modules are loaded first
// and the host re-probed, so knobs that appear with a module (svc_rdma
// sysctls) are set in the same run. When a change fails, apply undoes its own
// changes (printed to `out`) and throws std::runtime_error naming the failed
// change and whether all were undone; what could not be undone stays
// recorded. An existing record (an apply not rolled back) is extended; one
// that cannot be read stops apply before anything changes.
ApplyOutcome applyConfig(const ServerConfig& config, const HostPaths& paths, CommandRunner& runner,
                         bool dryRun, std::ostream& out);

// What stops apply of `plan` before its first change beyond what
// computePlan lists in plan.refusals, one message each naming the path and
// what was expected: the checks apply makes before its first change (the
// state and backup directories, each file and kernel value it writes, see
// preflight in the .cpp) and an undo record it cannot read or extend. Empty
// when the plan is (apply then says "No change" and checks nothing). `plan`
// lists these under "Apply refuses" and exits 1.
std::vector<std::string> applyRefusals(const ServerPlan& plan, const HostPaths& paths);

// Throws when the file a WriteFile change replaces no longer holds what the
// plan read (c.before): its new content would overwrite an edit made since.
// apply checks it before every file write.
void requireUnchangedSincePlan(const Change& c, const HostPaths& paths);

}  // namespace nfsrdma::server
