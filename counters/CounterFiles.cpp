#include "counters/CounterFiles.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <system_error>

#include "counters/TextFields.h"

namespace nfsrdma::counters {

// A counter directory holds tens of files; one with more is read in part.
constexpr std::size_t kMaxFiles = 256;

CounterFiles::CounterFiles(const std::filesystem::path& dir,
                           const std::function<bool(std::string_view)>& keep) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code typeError;
    const std::string name = e.path().filename().string();
    if (e.is_regular_file(typeError) && (!keep || keep(name))) names.push_back(name);
    if (names.size() >= kMaxFiles) break;
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    UniqueFd fd(::open((dir / n).c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() >= 0) files_.emplace_back(n, std::move(fd));
  }
}

NamedValues CounterFiles::read() const {
  NamedValues out;
  std::array<char, 64> buf{};
  for (const auto& [name, fd] : files_) {
    const ssize_t n = ::pread(fd.get(), buf.data(), buf.size(), 0);
    if (n <= 0) continue;  // EFAULT: svcrdma's counters past 1,000,000
    const std::string_view text(buf.data(), static_cast<std::size_t>(n));
    if (const auto v = counterFileValue(text)) out.values.emplace_back(name, *v);
  }
  return out;
}

}  // namespace nfsrdma::counters
