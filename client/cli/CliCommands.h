// Subcommands of nfsrdma-client that parse their own options.
#pragma once

namespace nfsrdma::cli {

int runMountCommand(int argc, char** argv);   // argv[0] is "mount"
int runUmountCommand(int argc, char** argv);  // argv[0] is "umount"

}  // namespace nfsrdma::cli
