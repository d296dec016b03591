// Subcommands of nfsrdma-bench. Each lives in its own file and parses its own
// options (Boost.Program_options); main.cpp only dispatches on the first word.
#pragma once

namespace nfsrdma::bench {

// Every command returns the process exit status and prints its own errors.
// link/DevicesCommand.cpp: RDMA device discovery
int runDevicesCommand(int argc, char** argv);
// link/LinkCommand.cpp: RDMA/TCP link bandwidth, latency
int runLinkCommand(int argc, char** argv);
// anchor/AnchorCommand.cpp: our client vs libnfs, same server
int runAnchorCommand(int argc, char** argv);
// file/FileCommand.cpp: one profile on one target, fio-style
int runFileCommand(int argc, char** argv);
// compare/CompareCommand.cpp: profiles x targets, table/JSON/HTML
int runCompareCommand(int argc, char** argv);
// cluster/AggregateCommand.cpp: many clients' result lines added up
int runAggregateCommand(int argc, char** argv);
// kube/KubeCommand.cpp: an N-client run rendered for Kubernetes
int runKubeCommand(int argc, char** argv);
// tune/TuneCommand.cpp: the client settings that make a workload fast
int runTuneCommand(int argc, char** argv);

}  // namespace nfsrdma::bench
