// Subcommands of nfsrdma-client implemented outside NfsClientCli.cpp: cp,
// and the ones that parse their own options (mount, umount, doctor).
#pragma once

#include <string>
#include <vector>

#include "client/cli/RemoteFiles.h"

namespace nfsrdma::cli {

// cp SRC DST (CopyCommand.cpp).
int runCopyCommand(const CliOptions& o, const std::vector<std::string>& args);

int runMountCommand(int argc, char** argv);   // argv[0] is "mount"
int runUmountCommand(int argc, char** argv);  // argv[0] is "umount"
int runDoctorCommand(int argc, char** argv);  // argv[0] is "doctor" (DoctorCommand.cpp)

}  // namespace nfsrdma::cli
