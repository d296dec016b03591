// JobDriver: one job of the file benchmark (one thread, one connection or
// ring) independent of the engine that moves the bytes. Engines ask it for
// the next request of a queue slot and hand back each completion; it picks
// offsets (seeded random blocks or a sequential cursor over the job's
// files), decides read or write (the profile's mix; --rwmixread for randrw
// only), prepares write buffers (the verify pattern with --verify and for
// the layout, else a buffer filled once whose unit headers are restamped:
// see fillWriteBuffer), checks read data when verifying, records
// latency (submission to completion) into per-direction histograms once the ramp is over,
// and says when to stop (runtime elapsed, io bytes issued, the first error,
// or an interrupt). Calls may come from two threads (our client completes on its I/O
// thread while the job thread submits), so the state is under one mutex;
// progress counters are atomics for the live line.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/job/FileProfile.h"
#include "bench/job/Histogram.h"
#include "bench/job/Interrupt.h"
#include "bench/job/Verify.h"

namespace nfsrdma::bench {

using BenchClock = std::chrono::steady_clock;

struct IoRequest {
  IoDirection op = IoDirection::Read;
  std::uint32_t file = 0;  // index into the job's files
  std::uint64_t offset = 0;
  std::span<std::uint8_t> buf;
  // Start of the latency: stamped by next() after the buffer is
  // ready; an engine that prepares several requests before submitting them
  // restamps it at submission.
  BenchClock::time_point issued;
  bool measured = false;  // issued after the ramp (what counts in an --io-bytes run)
};

// Live counters, read by the progress line while the jobs run.
struct JobProgress {
  std::atomic<std::uint64_t> bytes[2] = {0, 0};  // by IoDirection
  std::atomic<std::uint64_t> ops[2] = {0, 0};
};

struct DirectionResult {
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  // From submission to completion: fio's lat (its slat + clat), since the
  // clock starts before the engine's submit call returns.
  LatencyHistogram lat;
  void merge(const DirectionResult& o) {
    ops += o.ops;
    bytes += o.bytes;
    lat.merge(o.lat);
  }
};

struct JobResult {
  DirectionResult dir[2];  // by IoDirection
  double seconds = 0;      // measured window: end of ramp to last completion
  BenchClock::time_point measuredFrom, measuredTo;  // that window: end of ramp, last completion
  VerifyStats verify;
  std::uint64_t errors = 0;
  std::string firstError;
  // With a generation: the blocks whose write completed, by index over the job's files.
  std::vector<bool> writtenBlocks;
};

// Where the jobs of a run wait after their setup (connect, open, buffers),
// so that their clocks start together instead of one setup after another:
// staggered windows would each see fewer competitors than numjobs.
// A job whose setup failed calls fail(), which releases the others.
class StartGate {
 public:
  // held: the jobs also wait for open(), called by a coordinator once every
  // client of a many-client run is ready (RankHooks).
  StartGate(std::uint32_t jobs, std::chrono::milliseconds timeout, bool held = false);
  // True once every job arrived (and a held gate was opened); false when a
  // job failed or an interrupt came. Throws std::runtime_error (and fails
  // the gate) when the others are not there within the timeout.
  bool arriveAndWait();
  // A held gate's coordinator: true once every job arrived, false as
  // arriveAndWait; throws as it does on the timeout.
  bool awaitJobs();
  void open();
  void fail();

 private:
  // Under mu_: waits until pending_ is down to until, a failure or an
  // interrupt, or the timeout (throws).
  bool waitFor(std::unique_lock<std::mutex>& lock, std::uint32_t until);

  std::mutex mu_;
  std::condition_variable cv_;
  std::uint32_t waiting_;  // jobs, plus one for a held gate's open()
  std::uint32_t held_;     // 1 for a held gate: its open() is not a job's arrival
  bool failed_ = false;
  std::chrono::milliseconds timeout_;
};

struct JobSpec {
  FileProfile profile;
  FileOptions options;
  std::uint32_t job = 0;
  std::uint32_t iodepth = 1;
  std::vector<std::string> files;  // names relative to the target
  std::uint64_t fileBytes = 0;     // bytes used in each file (whole blocks)
  std::uint64_t fileOffset = 0;    // where those bytes start (--shared-file: the job's range)
  bool layout = false;             // one sequential write pass over every file, nothing measured
  // Layout: the indices (into files) of the files to write, in order; empty:
  // all. Files already at full size are not written: an interrupt removes
  // only what the layout wrote, and a complete file is not this run's.
  std::vector<std::uint32_t> layoutFiles;
  std::uint32_t fileIdBase = 0;  // file ids in the pattern: fileIdBase + index
  // A --verify write run's own non-zero generation (see fillPattern): its
  // writes carry it, and the job records which blocks it wrote.
  std::uint64_t generation = 0;
  // The read-back after such a run: the blocks (by index over the job's
  // files) that must hold that generation's data; null: none.
  std::shared_ptr<const std::vector<bool>> writtenBlocks;
};

class JobDriver {
 public:
  JobDriver(JobSpec spec, JobProgress* progress);

  const JobSpec& spec() const { return spec_; }
  std::uint32_t slots() const { return spec_.iodepth; }
  std::uint32_t blockSize() const { return block_; }

  // Starts the clock: ramp and deadline count from here.
  void start();
  // The next request for a slot; false when the job issues no more.
  bool next(std::uint32_t slot, IoRequest& req);
  // The same at a time the engine read (now, not before the previous
  // call's), for an engine that reads the clock once per batch of requests,
  // where a clock read can cost more than the rest of a request (a VM's
  // clock without a usable vDSO). req.issued is now: the engine stamps it
  // again when it submits.
  bool next(std::uint32_t slot, IoRequest& req, BenchClock::time_point now);
  // A completion: error empty on success, bytes transferred otherwise.
  void complete(const IoRequest& req, std::size_t bytes, const std::string& error);
  // The same, seen at now: the time the engine reaped a batch of completions.
  void complete(const IoRequest& req, std::size_t bytes, const std::string& error,
                BenchClock::time_point now);
  // When a job must give up waiting for stragglers: runtime plus a grace,
  // or a shorter grace after an interrupt. Engines ask again while they wait.
  BenchClock::time_point hardStop() const;
  bool stopped() const;
  // Issues nothing more (requests in flight still complete) once its ramp
  // is over: another client of a many-client run finished first
  // (--stonewall). A job still in its ramp then (a client that started
  // late) measures until its ramp's end, not nothing.
  void requestStop();

  JobResult result() const;

  // For an engine that could not get its requests back (io_uring entries
  // the kernel would not cancel): the buffers are leaked on purpose, since
  // the kernel may still read or write them after this driver is gone.
  void abandonBuffers();
  // Every buffer a request of this job can point at (a slot's, and with a
  // mix its write buffer), each of the block size, allocated for the
  // driver's life: what an engine may register (io_uring fixed buffers).
  std::vector<std::span<std::uint8_t>> buffers() const;

 private:
  std::uint64_t nextRandom();
  // next() without the stamp of req.issued.
  bool pick(std::uint32_t slot, IoRequest& req, BenchClock::time_point now);
  // The block and operation of the next request, or false when the job ends
  // (a layout job: every block written; a workload: the runtime, --io-bytes
  // or a stop) or this slot rests. Under mu_.
  bool pickLayoutBlock(IoRequest& req, std::uint64_t& block);
  bool pickWorkloadBlock(IoRequest& req, BenchClock::time_point now, std::uint64_t& block);
  // Moves block to one no request of this job has in flight and marks it so;
  // false when every block is in flight. Under mu_.
  bool claimFreeBlock(std::uint64_t& block);
  std::uint8_t* buffer(std::uint32_t slot, IoDirection op) const;

  JobSpec spec_;
  JobProgress* progress_;
  std::uint32_t block_;
  std::uint64_t blocksPerFile_;
  std::uint64_t totalBlocks_;
  std::vector<std::uint32_t> layoutFiles_;  // layout: the files written, in order
  unsigned readPercent_;
  bool patternWrites_;  // every write filled with the verify pattern (--verify, layout)
  // A --verify job that both reads and writes never has two requests on one
  // block (fio's serialize_overlap): a read racing a write of its block may
  // see half of each, which no server promises to prevent.
  bool serializeOverlap_;
  std::vector<std::uint64_t> inFlight_;  // blocks issued and not completed; under mu_
  std::vector<std::unique_ptr<std::uint8_t, void (*)(void*)>> buffers_;
  // Without --verify, a job that also reads keeps its filled-once write
  // buffers apart from the ones reads land in; else empty (buffers_ serve).
  std::vector<std::unique_ptr<std::uint8_t, void (*)(void*)>> writeBuffers_;

  mutable std::mutex mu_;
  std::uint64_t rng_;
  std::uint64_t cursor_ = 0;
  std::uint64_t issuedMeasuredBytes_ = 0;
  std::uint64_t ioLimit_ = 0;  // --io-bytes in whole blocks; 0: time-based
  std::uint64_t issuedLayoutBlocks_ = 0;
  bool stop_ = false;
  bool stopRequested_ = false;  // requestStop(): stop once the ramp is over
  BenchClock::time_point start_, rampEnd_, deadline_, hardStop_, lastCompletion_;
  mutable std::optional<BenchClock::time_point>
      interruptedAt_;  // first seen by next() or hardStop()
  JobResult result_;
};

}  // namespace nfsrdma::bench
