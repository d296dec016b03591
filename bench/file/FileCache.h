// The server's page cache before a read phase (FileRun.cpp): dropped when
// the server is this host, warmed by reading the file set once, or a note
// saying in what state the run finds it.
#pragma once

#include "bench/file/FileRun.h"

namespace nfsrdma::bench::filerun {

// Before a read phase: the server cache as the settings ask (dropped,
// warmed), or a note saying what state the run finds it in.
void prepareServerCache(RunResult& result, const TargetSpec& target, const FileProfile& profile,
                        const FileOptions& options, const RunSettings& settings, bool laidOut);

}  // namespace nfsrdma::bench::filerun
