// A directory of counter files kept open for a sampler: listed and opened
// once, then each reading is one pread() at offset 0 per file, which makes
// sysfs and procfs print the value afresh. readCounterDir (CounterDir.h)
// lists and opens the directory at every call, three system calls a file
// and a listing more: at four readings a second over a few hundred files,
// that was the sampler's cost.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "counters/NamedValues.h"
#include "util/UniqueFd.h"

namespace nfsrdma::counters {

class CounterFiles {
 public:
  // The regular files of dir that keep accepts (every one when it is
  // empty), sorted by name; a missing directory opens nothing.
  explicit CounterFiles(const std::filesystem::path& dir,
                        const std::function<bool(std::string_view)>& keep = {});
  // Each file's number now; a file that does not read as a whole number
  // this time is left out (absent, never zero).
  NamedValues read() const;
  bool empty() const { return files_.empty(); }

 private:
  std::vector<std::pair<std::string, UniqueFd>> files_;
};

}  // namespace nfsrdma::counters
