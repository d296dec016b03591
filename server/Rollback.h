// Rollback: undoes what the recorded applies changed, from the undo record
// (last-apply.yaml, UndoRecord.h), in an order of its own whatever order the
// steps were recorded in. Apply uses the same steps to undo its own changes
// when one of them fails half way (PlanExecutor.h).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "server/CommandRunner.h"
#include "server/HostPaths.h"
#include "server/UndoRecord.h"

namespace nfsrdma::server {

// Restores what the recorded applies changed; refuses, before changing
// anything, a symlink on the way to a path it would write. In this order: nfsd threads,
// listeners (closed with nfsdctl when installed, else reported), lease/grace,
// versions, tuning, files, then re-exports. Our exports file goes back byte
// for byte from its backup (or is removed); in /etc/nfs.conf only apply's
// keys are undone once the admin edited the file, and keys changed since are
// kept and reported. Modules stay loaded (reported). Returns false when
// something could not be restored (each printed), true otherwise, also when
// there was nothing to roll back. It also removes the copies a killed apply
// or rollback left beside the files they write (each printed; a dry run
// lists them).
bool rollbackLastApply(const HostPaths& paths, CommandRunner& runner, bool dryRun,
                       std::ostream& out);

// Undoes `steps` in rollback's order (nfsd threads first, then listeners,
// lease/grace, versions, tuning, files, and the re-export last; later steps
// of one rank first, the reverse of the order they were made in), or for a
// dry run says what it would do. Goes on past a step that fails (printed,
// naming it). Returns the steps that failed. `ts` names the backups it makes.
std::vector<Undo> undoSteps(const std::vector<Undo>& steps, const HostPaths& paths,
                            CommandRunner& runner, bool dryRun, const std::string& ts,
                            std::ostream& out);

// Renames last-apply.yaml to last-apply.yaml.rolled-back.<ts> (or the next
// free .1, .2, ...: a record retired earlier in that second keeps its name).
void retireRecord(const HostPaths& paths, const std::string& ts);

}  // namespace nfsrdma::server
