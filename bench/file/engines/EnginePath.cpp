// The path engine: files in a directory of any mounted file system, read and
// written through io_uring (liburing) with O_DIRECT, so the client's page
// cache stays out of the figures as with fio's direct=1. One ring per job,
// sized to the iodepth; each slot has one SQE in flight. The wait for
// completions is bounded (1 s per wait, the run's hard stop overall).
// A dev: target is the same engine on one file, the device: every name of
// the file set opens it (the jobs' ranges keep them apart), read-only
// unless the target may be written, and nothing is created or removed.
#include <fcntl.h>
#include <linux/fs.h>
#include <liburing.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <unordered_map>

#include "bench/file/engines/Engine.h"
#include "verbs/UniqueFd.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::bench {
namespace {

using verbs::errnoText;

class PathEngine final : public Engine {
 public:
  explicit PathEngine(const TargetSpec& t)
      : dir_(t.location), direct_(t.direct), device_(t.isDevice()), writable_(t.deviceWritable) {
    std::error_code ec;
    if (!device_ && !std::filesystem::is_directory(dir_, ec)) {
      throw std::runtime_error("path " + dir_.string() + ": not a directory");
    }
  }

  ~PathEngine() override {
    if (ringUp_) io_uring_queue_exit(&ring_);  // before fds_ closes the files it reads
  }

  std::vector<std::uint64_t> open(const std::vector<std::string>& files, bool create) override {
    std::vector<std::uint64_t> sizes;
    for (const auto& name : files) {
      const std::string p = pathOf(name);
      const int flags = openFlags(create);
      int fd = ::open(p.c_str(), flags, 0644);
      if (fd < 0 && direct_ && errno == EINVAL) {
        throw std::runtime_error("open " + p +
                                 ": O_DIRECT not supported by this file system (use --direct 0)");
      }
      if (fd < 0) throw std::runtime_error("open " + p + ": " + errnoText(errno));
      fds_.emplace_back(fd);
      sizes.push_back(sizeOf(fd, p));
    }
    return sizes;
  }

  void run(JobDriver& d) override {
    startRing(d.slots());
    registerBuffers(d);
    RingRun run(d);
    d.start();
    try {
      for (std::uint32_t i = 0; i < d.slots(); ++i) prepare(run, i);
      while (run.active > 0) {
        if (BenchClock::now() > d.hardStop())
          throw std::runtime_error("io_uring: completions missing after the grace period");
        stampSubmission(run);
        if (!submitAndWait()) continue;
        reapCompletions(run);
      }
    } catch (...) {
      // The kernel still reads or writes the buffers of the requests in
      // flight (the driver's): they must be back before the error leaves,
      // since the driver may be freed right after.
      if (run.active > 0) cancelInFlight(d, run.inFlight, run.active);
      unregisterBuffers();
      throw;
    }
    unregisterBuffers();
  }

  void commit() override {
    for (const UniqueFd& fd : fds_) {
      if (::fsync(fd.get()) != 0) throw std::runtime_error("fsync: " + errnoText(errno));
    }
  }

  void finish() override {
    // Every fd closed here exactly once, also after a failed fsync: one the
    // destructor closed again could by then be another job's file.
    std::string firstError;
    for (const UniqueFd& fd : fds_) {
      if (::fsync(fd.get()) != 0 && firstError.empty()) firstError = "fsync: " + errnoText(errno);
    }
    fds_.clear();
    if (!firstError.empty()) throw std::runtime_error(firstError);
  }

  void abandon() override {
    // Without fsync: the files are about to be removed.
    fds_.clear();
  }

  void remove(const std::vector<std::string>& files) override {
    if (device_) return;  // a device keeps what was written: the user gave it to be written
    for (const auto& name : files) {
      const std::string p = (dir_ / name).string();
      if (::unlink(p.c_str()) != 0 && errno != ENOENT)
        throw std::runtime_error("unlink " + p + ": " + errnoText(errno));
    }
  }

 private:
  std::string pathOf(const std::string& name) const {
    return device_ ? dir_.string() : (dir_ / name).string();
  }

  int openFlags(bool create) const {
    int flags = O_CLOEXEC | (direct_ ? O_DIRECT : 0);
    if (device_) return flags | (writable_ ? O_RDWR : O_RDONLY);
    return flags | O_RDWR | (create ? O_CREAT : 0);
  }

  // A file's size; a device's (BLKGETSIZE64: st_size is 0 for it).
  std::uint64_t sizeOf(int fd, const std::string& p) const {
    if (device_) {
      std::uint64_t bytes = 0;
      if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0)
        throw std::runtime_error("BLKGETSIZE64 " + p + ": " + errnoText(errno));
      return bytes;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw std::runtime_error("fstat " + p + ": " + errnoText(errno));
    return static_cast<std::uint64_t>(st.st_size);
  }

  // One run's requests: one slot each, with one SQE at a time.
  struct RingRun {
    explicit RingRun(JobDriver& driver)
        : d(driver), reqs(driver.slots()), inFlight(driver.slots(), false) {}
    JobDriver& d;
    std::vector<IoRequest> reqs;
    std::vector<bool> inFlight;  // prepared or submitted, no CQE yet
    std::uint32_t active = 0;
    std::vector<std::uint32_t> unsubmitted;  // prepared since the last submit
  };

  // The ring is made on the first run, sized to the slots.
  void startRing(std::uint32_t slots) {
    if (ringUp_) return;
    const int rc = io_uring_queue_init(std::max<unsigned>(slots, 1), &ring_, 0);
    if (rc < 0) throw std::runtime_error("io_uring_queue_init: " + errnoText(-rc));
    ringUp_ = true;
  }

  // The driver's buffers as io_uring fixed buffers (fio's --fixedbufs): a
  // request on one does not pin and unpin its pages, most of a 128 KiB
  // submission's CPU. Per run, since each run has its own driver. Where the
  // kernel refuses (RLIMIT_MEMLOCK of an unprivileged user) the requests go
  // out unregistered: the same I/O, only dearer.
  void registerBuffers(const JobDriver& d) {
    std::vector<iovec> iov;
    for (const auto& b : d.buffers()) iov.push_back({b.data(), b.size()});
    if (iov.empty() || io_uring_register_buffers(&ring_, iov.data(), static_cast<unsigned>(iov.size())) != 0)
      return;
    for (std::size_t k = 0; k < iov.size(); ++k)
      fixed_.emplace(static_cast<const std::uint8_t*>(iov[k].iov_base), static_cast<int>(k));
  }

  void unregisterBuffers() {
    if (fixed_.empty()) return;
    (void)io_uring_unregister_buffers(&ring_);
    fixed_.clear();
  }

  // Slot i's next request into an SQE; false when the driver has none.
  bool prepare(RingRun& run, std::uint32_t i) {
    if (!run.d.next(i, run.reqs[i])) return false;
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr)
      throw std::logic_error("io_uring: no free SQE");  // ring is sized to the slots
    const IoRequest& r = run.reqs[i];
    const int fd = fds_[r.file].get();
    const auto len = static_cast<unsigned>(r.buf.size());
    const auto fixed = fixed_.find(r.buf.data());
    if (fixed != fixed_.end()) {
      if (r.op == IoDirection::Read) {
        io_uring_prep_read_fixed(sqe, fd, r.buf.data(), len, r.offset, fixed->second);
      } else {
        io_uring_prep_write_fixed(sqe, fd, r.buf.data(), len, r.offset, fixed->second);
      }
    } else if (r.op == IoDirection::Read) {
      io_uring_prep_read(sqe, fd, r.buf.data(), len, r.offset);
    } else {
      io_uring_prep_write(sqe, fd, r.buf.data(), len, r.offset);
    }
    io_uring_sqe_set_data64(sqe, i);
    run.unsubmitted.push_back(i);
    run.inFlight[i] = true;
    ++run.active;
    return true;
  }

  // Latency starts at submission: a slot prepared early in a batch does
  // not wait on its behalf while the rest of the batch is prepared.
  static void stampSubmission(RingRun& run) {
    const auto submitted = BenchClock::now();
    for (std::uint32_t i : run.unsubmitted) run.reqs[i].issued = submitted;
    run.unsubmitted.clear();
  }

  // Submits what was prepared and waits up to 1 s for a completion; false
  // when none came (timeout or signal).
  bool submitAndWait() {
    __kernel_timespec ts{1, 0};
    io_uring_cqe* cqe = nullptr;
    const int rc = io_uring_submit_and_wait_timeout(&ring_, &cqe, 1, &ts, nullptr);
    if (rc == -ETIME || rc == -EINTR) return false;
    if (rc < 0) throw std::runtime_error("io_uring_submit_and_wait: " + errnoText(-rc));
    return true;
  }

  // The error text of a CQE's result for r, empty when r moved all its bytes.
  std::string completionError(const IoRequest& r, int res) const {
    if (res < 0) {
      const std::string where =
          device_ ? dir_.string() : (dir_ / "").string() + " file " + std::to_string(r.file);
      return std::string(directionName(r.op)) + " " + where + " at " + std::to_string(r.offset) +
             ": " + errnoText(-res);
    }
    if (static_cast<std::size_t>(res) != r.buf.size()) {
      return std::string(directionName(r.op)) + " at " + std::to_string(r.offset) + ": " +
             std::to_string(res) + " of " + std::to_string(r.buf.size()) + " bytes (short)";
    }
    return "";
  }

  // Hands every CQE there is to the driver, then prepares those slots'
  // next requests.
  void reapCompletions(RingRun& run) {
    unsigned head = 0;
    unsigned seen = 0;
    io_uring_cqe* cqe = nullptr;
    std::vector<std::uint32_t> again;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      ++seen;
      const auto i = static_cast<std::uint32_t>(io_uring_cqe_get_data64(cqe));
      const IoRequest& r = run.reqs[i];
      const std::string error = completionError(r, cqe->res);
      run.inFlight[i] = false;
      --run.active;
      run.d.complete(r, error.empty() ? r.buf.size() : 0, error);
      again.push_back(i);
    }
    io_uring_cq_advance(&ring_, seen);
    for (std::uint32_t i : again) prepare(run, i);
  }

  static constexpr std::uint64_t kCancelTag = ~std::uint64_t{0};

  // Cancels the requests still in flight and waits for their CQEs (bounded:
  // a request the kernel cannot interrupt may take long). If some do not
  // come back, the driver's buffers are leaked rather than freed under them.
  void cancelInFlight(JobDriver& d, std::vector<bool>& inFlight, std::uint32_t& active) {
    (void)io_uring_submit(&ring_);  // what was prepared goes out, to be cancelled with the rest
    for (std::uint32_t i = 0; i < inFlight.size(); ++i) {
      if (!inFlight[i]) continue;
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) {
        (void)io_uring_submit(&ring_);
        sqe = io_uring_get_sqe(&ring_);
      }
      if (sqe == nullptr) break;
      io_uring_prep_cancel64(sqe, i, 0);
      io_uring_sqe_set_data64(sqe, kCancelTag);
    }
    (void)io_uring_submit(&ring_);
    const auto deadline = BenchClock::now() + std::chrono::seconds(5);
    while (active > 0 && BenchClock::now() < deadline) {
      __kernel_timespec ts{0, 100 * 1000 * 1000};
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe_timeout(&ring_, &cqe, &ts);
      if (rc == -ETIME || rc == -EINTR) continue;
      if (rc < 0) break;
      const std::uint64_t tag = io_uring_cqe_get_data64(cqe);
      io_uring_cqe_seen(&ring_, cqe);
      if (tag != kCancelTag && tag < inFlight.size() && inFlight[tag]) {
        inFlight[tag] = false;
        --active;
      }
    }
    if (active > 0) {
      std::fprintf(stderr,
                   "nfsrdma-bench: %u io_uring request(s) on %s not back after cancelling; their "
                   "buffers are left allocated\n",
                   active, dir_.c_str());
      d.abandonBuffers();
    }
  }

  std::filesystem::path dir_;  // the directory, or the device
  bool direct_;
  bool device_;
  bool writable_;  // device_: opened for writing
  std::unordered_map<const std::uint8_t*, int> fixed_;  // registered buffer -> its index
  std::vector<UniqueFd> fds_;
  io_uring ring_{};
  bool ringUp_ = false;
};

}  // namespace

std::unique_ptr<Engine> makePathEngine(const TargetSpec& target) {
  return std::make_unique<PathEngine>(target);
}

}  // namespace nfsrdma::bench
