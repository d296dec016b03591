// The path engine: files in a directory of any mounted file system, read and
// written through io_uring with O_DIRECT, so the client's page cache stays
// out of the figures as with fio's direct=1. The I/O loop (UringRun.h) has a
// ring per job and run, sized to the iodepth; each slot has one SQE in
// flight. The wait for completions is bounded (1 s per wait, the run's hard
// stop overall).
// A dev: target is the same engine on one file, the device: every name of
// the file set opens it (the jobs' ranges keep them apart), read-only
// unless the target may be written, and nothing is created or removed.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>

#include "bench/file/engines/Engine.h"
#include "bench/file/engines/UringRun.h"
#include "util/ErrnoText.h"
#include "util/UniqueFd.h"

namespace nfsrdma::bench {
namespace {

using util::errnoText;

class PathEngine final : public Engine {
 public:
  explicit PathEngine(const TargetSpec& t)
      : dir_(t.location), direct_(t.direct), device_(t.isDevice()), writable_(t.deviceWritable) {
    std::error_code ec;
    if (!device_ && !std::filesystem::is_directory(dir_, ec)) {
      throw std::runtime_error("path " + dir_.string() + ": not a directory");
    }
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
    RingFiles files;
    for (const UniqueFd& fd : fds_) files.fds.push_back(fd.get());
    files.location = device_ ? dir_.string() : (dir_ / "").string();
    files.device = device_;
    runOnRing(d, files);
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

  std::filesystem::path dir_;  // the directory, or the device
  bool direct_;
  bool device_;
  bool writable_;  // device_: opened for writing
  std::vector<UniqueFd> fds_;
};

}  // namespace

std::unique_ptr<Engine> makePathEngine(const TargetSpec& target) {
  return std::make_unique<PathEngine>(target);
}

}  // namespace nfsrdma::bench
