// The path and dev engines' io_uring loop (UringRun.h has the design).
#include "bench/file/engines/UringRun.h"

#include <liburing.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <stdexcept>
#include <unordered_map>

#include "util/ErrnoText.h"

namespace nfsrdma::bench {
namespace {

using util::errnoText;

// A fallback said once per process, where the user sees it.
void sayOnce(std::atomic<bool>& said, const std::string& what) {
  if (said.exchange(true)) return;
  std::fprintf(stderr, "nfsrdma-bench: %s\n", what.c_str());
}

std::atomic<bool> flagsSaid{false};
std::atomic<bool> buffersSaid{false};
std::atomic<bool> filesSaid{false};

// liburing's ring, its completions' task work run when the job next enters
// the kernel, where the kernel has that (UringRun.h says why not deferred).
class Ring {
 public:
  explicit Ring(unsigned entries) {
    static constexpr unsigned kFlags[] = {
        IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER,  // Linux 6.0
        IORING_SETUP_COOP_TASKRUN,                               // Linux 5.19
        0};
    int rc = -EINVAL;
    for (const unsigned flags : kFlags) {
      rc = io_uring_queue_init(entries, &ring_, flags);
      if (rc != -EINVAL) break;  // EINVAL: flags this kernel does not know
      if (flags == IORING_SETUP_COOP_TASKRUN) {
        sayOnce(flagsSaid,
                "io_uring: this kernel refuses IORING_SETUP_COOP_TASKRUN (Linux 5.19); the path "
                "and dev engines run without it: a completion interrupts the job, at more CPU per "
                "request");
      }
    }
    if (rc < 0) throw std::runtime_error("io_uring_queue_init: " + errnoText(-rc));
  }
  ~Ring() { io_uring_queue_exit(&ring_); }
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  io_uring* get() { return &ring_; }

 private:
  io_uring ring_{};
};

const std::string kNoError;

class RingLoop {
 public:
  RingLoop(JobDriver& d, const RingFiles& files)
      : d_(d),
        files_(files),
        ring_(std::max<unsigned>(d.slots(), 1)),
        batch_(reapBatch(d.slots())),
        reqs_(d.slots()),
        inFlight_(d.slots(), false),
        slotBuffer_(d.slots(), {nullptr, -1}),
        cqes_(std::max<unsigned>(d.slots(), 1)) {
    unsubmitted_.reserve(d.slots());
    done_.reserve(d.slots());
    registerBuffers();
    registerFiles();
  }

  void run() {
    d_.start();
    auto now = BenchClock::now();
    try {
      for (std::uint32_t i = 0; i < d_.slots(); ++i) prepare(i, now);
      while (active_ > 0) {
        if (now > d_.hardStop())
          throw std::runtime_error("io_uring: completions missing after the grace period");
        submitAndWait();
        now = BenchClock::now();
        reap(now);
      }
    } catch (...) {
      // The kernel still reads or writes the buffers of the requests in
      // flight (the driver's): they must be back before the error leaves,
      // since the driver may be freed right after.
      if (active_ > 0) cancelInFlight();
      throw;
    }
  }

 private:
  // The driver's buffers as fixed buffers: a request on one does not pin
  // and unpin its pages, most of a 128 KiB submission's CPU. Where the
  // kernel refuses (RLIMIT_MEMLOCK of an unprivileged user) the requests go
  // out unregistered: the same I/O, only dearer.
  void registerBuffers() {
    std::vector<iovec> iov;
    for (const auto& b : d_.buffers()) iov.push_back({b.data(), b.size()});
    if (iov.empty()) return;
    const int rc =
        io_uring_register_buffers(ring_.get(), iov.data(), static_cast<unsigned>(iov.size()));
    if (rc != 0) {
      sayOnce(buffersSaid,
              "io_uring: registering the buffers failed (" + errnoText(-rc) +
                  "; RLIMIT_MEMLOCK?): requests go out unregistered, at more CPU each");
      return;
    }
    for (std::size_t k = 0; k < iov.size(); ++k)
      fixed_.emplace(static_cast<const std::uint8_t*>(iov[k].iov_base), static_cast<int>(k));
  }

  void registerFiles() {
    if (files_.fds.empty()) return;
    const int rc = io_uring_register_files(ring_.get(), files_.fds.data(),
                                           static_cast<unsigned>(files_.fds.size()));
    fixedFiles_ = rc == 0;
    if (rc != 0) {
      sayOnce(filesSaid, "io_uring: registering the files failed (" + errnoText(-rc) +
                             "): requests name them by descriptor, at more CPU each");
    }
  }

  // The fixed buffer index of slot i's buffer p, or -1 (the lookup is
  // remembered per slot: a slot's buffer seldom changes).
  int fixedIndex(std::uint32_t i, const std::uint8_t* p) {
    auto& [buffer, index] = slotBuffer_[i];
    if (buffer != p) {
      const auto it = fixed_.find(p);
      buffer = p;
      index = it == fixed_.end() ? -1 : it->second;
    }
    return index;
  }

  // Slot i's next request into an SQE; false when the driver has none.
  bool prepare(std::uint32_t i, BenchClock::time_point now) {
    IoRequest& r = reqs_[i];
    if (!d_.next(i, r, now)) return false;
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    if (sqe == nullptr) throw std::logic_error("io_uring: no free SQE");  // sized to the slots
    const int fd = fixedFiles_ ? static_cast<int>(r.file) : files_.fds[r.file];
    const auto len = static_cast<unsigned>(r.buf.size());
    const bool read = r.op == IoDirection::Read;
    if (const int buf = fixedIndex(i, r.buf.data()); buf >= 0) {
      if (read) {
        io_uring_prep_read_fixed(sqe, fd, r.buf.data(), len, r.offset, buf);
      } else {
        io_uring_prep_write_fixed(sqe, fd, r.buf.data(), len, r.offset, buf);
      }
    } else if (read) {
      io_uring_prep_read(sqe, fd, r.buf.data(), len, r.offset);
    } else {
      io_uring_prep_write(sqe, fd, r.buf.data(), len, r.offset);
    }
    if (fixedFiles_) io_uring_sqe_set_flags(sqe, IOSQE_FIXED_FILE);
    io_uring_sqe_set_data64(sqe, i);
    unsubmitted_.push_back(i);
    inFlight_[i] = true;
    ++active_;
    return true;
  }

  // Submits what was prepared, its latency starting now, and waits up to
  // 1 s for a batch of completions (fewer when fewer are in flight).
  void submitAndWait() {
    if (!unsubmitted_.empty()) {
      const auto submitted = BenchClock::now();
      for (std::uint32_t i : unsubmitted_) reqs_[i].issued = submitted;
      unsubmitted_.clear();
    }
    __kernel_timespec ts{1, 0};
    io_uring_cqe* cqe = nullptr;
    const unsigned want = std::min(batch_, active_);
    const int rc = io_uring_submit_and_wait_timeout(ring_.get(), &cqe, want, &ts, nullptr);
    if (rc < 0 && rc != -ETIME && rc != -EINTR)
      throw std::runtime_error("io_uring_submit_and_wait: " + errnoText(-rc));
  }

  // The error text of a CQE's result for r, empty when r moved all its bytes.
  std::string completionError(const IoRequest& r, int res) const {
    if (res < 0) {
      const std::string where =
          files_.device ? files_.location : files_.location + " file " + std::to_string(r.file);
      return std::string(directionName(r.op)) + " " + where + " at " + std::to_string(r.offset) +
             ": " + errnoText(-res);
    }
    return std::string(directionName(r.op)) + " at " + std::to_string(r.offset) + ": " +
           std::to_string(res) + " of " + std::to_string(r.buf.size()) + " bytes (short)";
  }

  // Hands every CQE there is to the driver, all seen at now, then prepares
  // those slots' next requests.
  void reap(BenchClock::time_point now) {
    const unsigned n =
        io_uring_peek_batch_cqe(ring_.get(), cqes_.data(), static_cast<unsigned>(cqes_.size()));
    done_.clear();
    for (unsigned k = 0; k < n; ++k) {
      const auto i = static_cast<std::uint32_t>(io_uring_cqe_get_data64(cqes_[k]));
      const IoRequest& r = reqs_[i];
      const int res = cqes_[k]->res;
      inFlight_[i] = false;
      --active_;
      if (res >= 0 && static_cast<std::size_t>(res) == r.buf.size()) {
        d_.complete(r, r.buf.size(), kNoError, now);
      } else {
        d_.complete(r, 0, completionError(r, res), now);
      }
      done_.push_back(i);
    }
    io_uring_cq_advance(ring_.get(), n);
    for (std::uint32_t i : done_) prepare(i, now);
  }

  static constexpr std::uint64_t kCancelTag = ~std::uint64_t{0};

  // Cancels the requests still in flight and waits for their CQEs (bounded:
  // a request the kernel cannot interrupt may take long). If some do not
  // come back, the driver's buffers are leaked rather than freed under them.
  void cancelInFlight() {
    io_uring* ring = ring_.get();
    (void)io_uring_submit(ring);  // what was prepared goes out, to be cancelled with the rest
    for (std::uint32_t i = 0; i < inFlight_.size(); ++i) {
      if (!inFlight_[i]) continue;
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) {
        (void)io_uring_submit(ring);
        sqe = io_uring_get_sqe(ring);
      }
      if (sqe == nullptr) break;
      io_uring_prep_cancel64(sqe, i, 0);
      io_uring_sqe_set_data64(sqe, kCancelTag);
    }
    (void)io_uring_submit(ring);
    const auto deadline = BenchClock::now() + std::chrono::seconds(5);
    while (active_ > 0 && BenchClock::now() < deadline) {
      __kernel_timespec ts{0, 100 * 1000 * 1000};
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe_timeout(ring, &cqe, &ts);
      if (rc == -ETIME || rc == -EINTR) continue;
      if (rc < 0) break;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      io_uring_cqe_seen(ring, cqe);
      if (tag != kCancelTag && tag < inFlight_.size() && inFlight_[tag]) {
        inFlight_[tag] = false;
        --active_;
      }
    }
    if (active_ > 0) {
      std::fprintf(stderr,
                   "nfsrdma-bench: %u io_uring request(s) on %s not back after cancelling; their "
                   "buffers are left allocated\n",
                   active_, files_.location.c_str());
      d_.abandonBuffers();
    }
  }

  JobDriver& d_;
  const RingFiles& files_;
  Ring ring_;
  unsigned batch_;
  bool fixedFiles_ = false;
  std::unordered_map<const std::uint8_t*, int> fixed_;  // registered buffer -> its index
  std::vector<IoRequest> reqs_;                         // one per slot
  std::vector<bool> inFlight_;                          // prepared or submitted, no CQE yet
  std::vector<std::pair<const std::uint8_t*, int>> slotBuffer_;  // fixedIndex's memory
  std::vector<io_uring_cqe*> cqes_;
  std::vector<std::uint32_t> unsubmitted_;  // slots prepared since the last submit
  std::vector<std::uint32_t> done_;         // slots reaped in this round
  std::uint32_t active_ = 0;
};

}  // namespace

std::uint32_t reapBatch(std::uint32_t slots) {
  return std::max<std::uint32_t>(1, slots / 4);
}

void runOnRing(JobDriver& d, const RingFiles& files) {
  RingLoop(d, files).run();
}

}  // namespace nfsrdma::bench
