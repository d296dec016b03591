// A FIFO whose pipe is full, for tests of writes that cannot finish by
// themselves (a layout into it, an io_uring write on it).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

namespace nfsrdma::bench::testing {

// A write into it waits until someone reads. The FIFO keeps both ends open
// (one O_RDWR descriptor) until it is destroyed.
class FullFifo {
 public:
  explicit FullFifo(const std::filesystem::path& p) {
    if (::mkfifo(p.c_str(), 0644) != 0) throw std::runtime_error("mkfifo " + p.string());
    fd_ = ::open(p.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd_ < 0) throw std::runtime_error("open " + p.string());
    std::vector<char> junk(65536, 'x');
    for (ssize_t n; (n = ::write(fd_, junk.data(), junk.size())) > 0;)
      filled_ += static_cast<std::size_t>(n);
  }
  ~FullFifo() { ::close(fd_); }
  FullFifo(const FullFifo&) = delete;
  FullFifo& operator=(const FullFifo&) = delete;

  std::size_t filled() const { return filled_; }
  // Everything that can be read within the time (writers waiting get room).
  std::size_t drain(std::chrono::milliseconds during) const {
    std::vector<char> buf(65536);
    std::size_t got = 0;
    const auto end = std::chrono::steady_clock::now() + during;
    while (std::chrono::steady_clock::now() < end) {
      const ssize_t n = ::read(fd_, buf.data(), buf.size());
      if (n > 0) {
        got += static_cast<std::size_t>(n);
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return got;
  }

 private:
  int fd_ = -1;
  std::size_t filled_ = 0;
};

}  // namespace nfsrdma::bench::testing
