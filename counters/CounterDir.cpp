#include "counters/CounterDir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <system_error>
#include <variant>

#include "counters/TextFields.h"
#include "util/ErrnoText.h"
#include "util/UniqueFd.h"

namespace nfsrdma::counters {
namespace {

// One counter file: its number, or why there is none. Sysfs and procfs
// files are read with one read() as the kernel fills them in one go.
std::variant<std::int64_t, std::string> readCounter(const std::filesystem::path& file) {
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return util::errnoMessage("open");
  std::array<char, 64> buf{};
  const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
  if (n < 0) return util::errnoMessage("read");
  std::string_view text(buf.data(), static_cast<std::size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (const auto v = wholeNumber<std::int64_t>(text)) return *v;
  return "not a whole number: '" + std::string(text.substr(0, 32)) + "'";
}

}  // namespace

CounterDirRead readCounterDir(const std::filesystem::path& dir, const std::set<std::string>& skip) {
  CounterDirRead out;
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code typeError;
    if (e.is_regular_file(typeError) && skip.count(e.path().filename().string()) == 0)
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const auto r = readCounter(f);
    const std::string name = f.filename().string();
    if (const auto* v = std::get_if<std::int64_t>(&r)) {
      out.counters.values.emplace_back(name, *v);
    } else {
      out.unread.emplace_back(name, std::get<std::string>(r));
    }
  }
  return out;
}

}  // namespace nfsrdma::counters
