// The kernel's share of a read workload over TCP: the same reply records
// (record mark, a reply header's worth of bytes, the block) sent over a bare
// loopback socket at a given rate and received by a loop that does nothing
// else. Its CPU per operation is what any client that receives its data
// through a socket pays on this host before it does any work of its own, so
// the anchor can show how far a CPU-per-operation ratio can fall at all.
#pragma once

#include "bench/anchor/AnchorRuns.h"

namespace nfsrdma::bench {

// Blocks of w.blockSize bytes at opsPerSecond for w.runtime, each as replies
// of at most maxRead bytes (0: one reply per block), as the clients read
// them. The CPU time is the receiving thread's alone (RUSAGE_THREAD): the
// sending thread stands for the server. Errors (socket calls) are reported in
// the measurement's error.
ReadMeasurement runSocketFloor(const ReadWorkload& w, double opsPerSecond, std::size_t maxRead);

}  // namespace nfsrdma::bench
