// The I/O loop of the path and dev engines: one job's requests through an
// io_uring of its own, made on the job's thread for the run. It is built to
// cost what fio costs on the same ring at its best (the device anchor
// compares the two on one device):
// - a completion's task work waits for the job's next system call instead
//   of interrupting it (IORING_SETUP_COOP_TASKRUN, with SINGLE_ISSUER: one
//   thread submits; before Linux 5.19 the loop runs without, and says so
//   once). fio 3.33 also defers that work until it waits (DEFER_TASKRUN);
//   on a loop device that cost this loop more CPU per request (a median
//   0.91 against 0.64 us at 4 KiB QD32, 10 alternated runs each), so it is
//   not used;
// - the driver's buffers and the files are registered (fio's --fixedbufs
//   and --registerfiles): a request does not pin its pages nor take a
//   reference on its file;
// - one io_uring_enter per round submits every request prepared since the
//   last and waits for a batch of completions (reapBatch: a quarter of the
//   depth, fio's iodepth_batch_complete_min=8 at QD32); then every CQE
//   there is is reaped and its slot refilled at once;
// - the clock is read twice per round, not per request: when the round's
//   requests are submitted (their start) and when its completions are
//   reaped (their end). In a virtual machine a clock read can cost more
//   than the rest of a 4 KiB request: 170 ns through the vDSO on the VM the
//   anchor's figures come from, where rdtsc alone takes 100 ns; fio at its
//   best (--gtod_reduce) reads it once per hundreds of requests.
// What the latency percentiles then mean: from the submission of a
// request's round to the reaping of the round that saw it complete, as an
// application that reaps in batches sees its requests. A request that
// completes early waits for its round's batch (at most reapBatch
// completions), and that wait is part of its figure, as it is of fio's clat
// with iodepth_batch_complete_min.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/job/FileJob.h"

namespace nfsrdma::bench {

// The files of a job as the loop sees them.
struct RingFiles {
  std::vector<int> fds;  // IoRequest::file indexes them; the caller keeps them open
  std::string location;  // the device, or the directory with a trailing '/', for messages
  bool device = false;   // location is a device (every fd is it)
};

// The completions one wait asks for at depth slots: a quarter, at least one.
std::uint32_t reapBatch(std::uint32_t slots);

// Runs the job d to its end on this thread: keeps its slots busy until the
// driver stops issuing, then waits for the stragglers until d.hardStop().
// Throws std::runtime_error naming the io_uring call or the missing
// completions; before an error leaves, no request is left in flight (they
// are cancelled, or else the driver's buffers are abandoned to the kernel).
void runOnRing(JobDriver& d, const RingFiles& files);

}  // namespace nfsrdma::bench
