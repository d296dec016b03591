// Subcommands of nfsrdma-bench. Each lives in its own file and parses its own
// options (Boost.Program_options); main.cpp only dispatches on the first word.
#pragma once

namespace nfsrdma::bench {

// Every command returns the process exit status and prints its own errors.
int runDevicesCommand(int argc, char** argv);  // DevicesCommand.cpp: RDMA device discovery
int runLinkCommand(int argc, char** argv);     // LinkCommand.cpp: RDMA/TCP link bandwidth, latency
int runAnchorCommand(int argc, char** argv);   // AnchorCommand.cpp: our client vs libnfs, same server
int runFileCommand(int argc, char** argv);     // FileCommand.cpp: one profile on one target, fio-style
int runCompareCommand(int argc, char** argv);  // CompareCommand.cpp: profiles x targets, table/JSON/HTML

}  // namespace nfsrdma::bench
