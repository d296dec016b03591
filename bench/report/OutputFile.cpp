#include "bench/report/OutputFile.h"

#include <fcntl.h>
#include <stdio_ext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "util/ErrnoText.h"
#include "util/UniqueFd.h"

namespace nfsrdma::bench {
namespace {

[[noreturn]] void writeFailed(std::string_view what, const std::string& where, int err) {
  throw std::runtime_error("cannot write the " + std::string(what) + " to " + where + ": " +
                           (err != 0 ? util::errnoText(err) : "write error"));
}

void writeToStdout(std::string_view text, std::string_view what) {
  errno = 0;
  const bool written = std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
  if (written && std::fflush(stdout) == 0 && std::ferror(stdout) == 0) return;
  const int err = errno;
  // Said here, once: what stdout still holds is dropped, so that the
  // command's end (tool::checkStdoutWritten) does not say it again.
  __fpurge(stdout);
  std::clearerr(stdout);
  writeFailed(what, "standard output", err);
}

}  // namespace

void writeReportFile(const std::string& path, std::string_view text, std::string_view what) {
  if (path == "-") {
    writeToStdout(text, what);
    return;
  }
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd) writeFailed(what, path, errno);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) writeFailed(what, path, n < 0 ? errno : ENOSPC);
    done += static_cast<std::size_t>(n);
  }
  // NFS reports a failed write back at close.
  if (::close(fd.release()) != 0) writeFailed(what, path, errno);
}

}  // namespace nfsrdma::bench
