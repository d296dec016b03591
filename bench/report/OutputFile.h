// Where the benchmark's reports go (JSON, HTML, YAML): a file, or standard
// output for "-". Every command writes its report files through here, so a
// report that did not arrive whole (a full disk, /dev/full, a failed close
// on NFS) is an error, never a run that exits 0 with the report lost. What a
// command prints on standard output otherwise is checked once when it ends
// (tool::checkStdoutWritten).
#pragma once

#include <string>
#include <string_view>

namespace nfsrdma::bench {

// Writes text to path (created or truncated), or to standard output when
// path is "-", and checks that all of it was written: every write(), the
// close(), stdout's flush. Throws std::runtime_error "cannot write the
// <what> to <path>: <errno text>", what being e.g. "JSON" or "HTML report".
void writeReportFile(const std::string& path, std::string_view text, std::string_view what);

}  // namespace nfsrdma::bench
