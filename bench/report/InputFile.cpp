#include "bench/report/InputFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "util/ErrnoText.h"

namespace nfsrdma::bench {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

const char* fileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// "256 MiB (268435456 bytes)" for the limits of the kinds, whole MiB; else "500 bytes".
std::string limitText(std::uint64_t bytes) {
  constexpr std::uint64_t kMiB = 1 << 20;
  if (bytes == 0 || bytes % kMiB != 0) return std::to_string(bytes) + " bytes";
  return std::to_string(bytes / kMiB) + " MiB (" + std::to_string(bytes) + " bytes)";
}

// found: the file's size, or nullopt for "more than the limit" (read so far).
[[noreturn]] void tooLarge(const std::string& source, const InputKind& kind,
                           std::optional<std::uint64_t> found) {
  throw std::runtime_error(source + ": " +
                           (found ? std::to_string(*found) + " bytes"
                                  : "more than " + std::to_string(kind.maxBytes) + " bytes") +
                           "; expected " + std::string(kind.what) + " of at most " +
                           limitText(kind.maxBytes));
}

[[noreturn]] void readFailed(const std::string& source, int err) {
  throw std::runtime_error(source + ": cannot read: " + util::errnoText(err));
}

// One read() into out's end; 0 at the end of the input.
std::size_t readChunk(int fd, std::string& out, const std::string& source) {
  const std::size_t had = out.size();
  out.resize(had + kReadChunk);
  for (;;) {
    const ssize_t n = ::read(fd, out.data() + had, kReadChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) readFailed(source, errno);
    out.resize(had + static_cast<std::size_t>(n));
    return static_cast<std::size_t>(n);
  }
}

}  // namespace

UniqueFd openInputFile(const std::string& path, const InputKind& kind) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!fd) throw std::runtime_error(path + ": cannot open: " + util::errnoText(errno));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) readFailed(path, errno);
  if (!S_ISREG(st.st_mode)) {
    throw std::runtime_error(path + ": " + fileKind(st.st_mode) + "; expected a regular file, " +
                             std::string(kind.what) + " of at most " + limitText(kind.maxBytes));
  }
  if (static_cast<std::uint64_t>(st.st_size) > kind.maxBytes)
    tooLarge(path, kind, static_cast<std::uint64_t>(st.st_size));
  return fd;
}

std::string readInputFile(const std::string& path, const InputKind& kind) {
  const UniqueFd fd = openInputFile(path, kind);
  std::string text;
  while (readChunk(fd.get(), text, path) > 0) {
    // The file may have grown since fstat: stop as soon as it passed the limit.
    if (text.size() > kind.maxBytes) tooLarge(path, kind, std::nullopt);
  }
  return text;
}

InputLines::InputLines(const std::string& path, const InputKind& kind, std::size_t maxLineBytes)
    : source_(path == "-" ? "stdin" : path), kind_(kind), maxLine_(maxLineBytes) {
  if (path == "-") {
    fd_.reset(::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0));
    if (!fd_) readFailed(source_, errno);
  } else {
    fd_ = openInputFile(path, kind);
  }
}

bool InputLines::fill() {
  if (eof_) return false;
  if (begin_ > 0) {
    buffer_.erase(0, begin_);
    scanned_ -= begin_;
    begin_ = 0;
  }
  const std::size_t n = readChunk(fd_.get(), buffer_, source_);
  readBytes_ += n;
  if (readBytes_ > kind_.maxBytes) tooLarge(source_, kind_, std::nullopt);
  eof_ = n == 0;
  return n > 0;
}

bool InputLines::next(std::string& line) {
  for (;;) {
    // A long line comes in many reads: each byte is searched once.
    const std::size_t nl = buffer_.find('\n', std::max(begin_, scanned_));
    scanned_ = nl == std::string::npos ? buffer_.size() : nl + 1;
    const std::size_t end = nl == std::string::npos ? buffer_.size() : nl;
    if (end - begin_ > maxLine_) {
      throw std::runtime_error(source_ + " line " + std::to_string(lineNumber_ + 1) +
                               ": more than " + std::to_string(maxLine_) +
                               " bytes without a line end; expected " + std::string(kind_.what) +
                               " with lines of at most " + limitText(maxLine_));
    }
    if (nl != std::string::npos || (eof_ && begin_ < buffer_.size())) {
      line.assign(buffer_, begin_, end - begin_);
      begin_ = nl == std::string::npos ? buffer_.size() : nl + 1;
      ++lineNumber_;
      return true;
    }
    if (!fill() && begin_ >= buffer_.size()) return false;
  }
}

}  // namespace nfsrdma::bench
