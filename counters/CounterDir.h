// A directory of counter files, read: each regular file that holds one
// whole number ("%llu\n") is a counter named for the file. The RDMA ports'
// hw_counters/, a netdev's statistics/ and svcrdma's
// /proc/sys/sunrpc/svc_rdma/ are such directories. The one I/O part of
// counters/: the parsers beside it take text.
//
// A file that cannot be read or holds no whole number is not a counter
// and not zero: it is listed with the reason. svcrdma's statistics are one
// case: from 1,000,000 on, reading them fails with EFAULT (their print
// buffer is 8 bytes, net/sunrpc/xprtrdma/svc_rdma.c).
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "counters/NamedValues.h"

namespace nfsrdma::counters {

struct CounterDirRead {
  NamedValues counters;                                     // by file name, sorted
  std::vector<std::pair<std::string, std::string>> unread;  // file name, why
};

// Reads every regular file of dir whose name is not in skip (e.g.
// hw_counters' "lifespan", a setting). A missing directory reads as
// nothing at all: the host does not have these counters.
CounterDirRead readCounterDir(const std::filesystem::path& dir,
                              const std::set<std::string>& skip = {});

}  // namespace nfsrdma::counters
