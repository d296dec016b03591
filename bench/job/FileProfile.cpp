#include "bench/job/FileProfile.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "bench/job/WorkloadOptions.h"

namespace nfsrdma::bench {

const char* directionName(IoDirection d) {
  return d == IoDirection::Read ? "read" : "write";
}

const std::vector<FileProfile>& fileProfiles() {
  static const std::vector<FileProfile> kProfiles = {
      {"4k-randread", 4096, true, 100, 32, "4 KiB random reads"},
      {"4k-randwrite", 4096, true, 0, 32, "4 KiB random writes"},
      {"128k-read", 128U << 10, false, 100, 8, "128 KiB sequential reads"},
      {"128k-write", 128U << 10, false, 0, 8, "128 KiB sequential writes"},
      {"4m-read", 4U << 20, false, 100, 2, "4 MiB sequential reads"},
      {"4m-write", 4U << 20, false, 0, 2, "4 MiB sequential writes"},
      {"randrw", 4096, true, 80, 32,
       "4 KiB random, 80% reads / 20% writes (randrw:N sets N% reads)"},
  };
  return kProfiles;
}

FileProfile profileByName(std::string_view name) {
  std::string_view base = name;
  std::optional<unsigned> mix;
  if (const auto colon = name.find(':'); colon != std::string_view::npos) {
    base = name.substr(0, colon);
    const std::string num(name.substr(colon + 1));
    char* end = nullptr;
    const unsigned long v = std::strtoul(num.c_str(), &end, 10);
    if (num.empty() || end != num.c_str() + num.size() || v > 100 || base != "randrw") {
      throw std::invalid_argument("profile '" + std::string(name) +
                                  "': a mix is randrw:N with N% reads, 0..100");
    }
    mix = static_cast<unsigned>(v);
  }
  for (const auto& p : fileProfiles()) {
    if (p.name == base) {
      FileProfile out = p;
      if (mix) {
        out.readPercent = *mix;
        out.name = std::string(name);
      }
      return out;
    }
  }
  std::string known;
  for (const auto& p : fileProfiles()) known += (known.empty() ? "" : ", ") + p.name;
  throw std::invalid_argument("unknown profile '" + std::string(name) + "' (known: " + known + ")");
}

std::uint64_t parseSize(std::string_view text, std::string_view option) {
  const std::string t(text);
  const auto fail = [&](const std::string& why) {
    return std::invalid_argument(
        std::string(option) + " '" + t + "': " + why +
        "; expected a number with an optional unit k, m, g or t (binary multiples), "
        "e.g. 4096, 64m, 1.5g");
  };
  // Digits with at most one '.', and a digit on each side of it: "." and
  // "1.2.3m" are no sizes (stod read the first and a prefix of the second).
  std::size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  const std::size_t whole = i;
  if (i < t.size() && t[i] == '.') {
    ++i;
    const std::size_t frac = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    if (whole == 0 || i == frac) throw fail("not a number");
  }
  if (i == 0) throw fail(t.empty() ? "empty" : "not a number");
  double num = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + i, num);
  if (ec != std::errc() || end != t.data() + i) throw fail("not a number");
  std::size_t u = i;
  while (u < t.size() && t[u] == ' ') ++u;
  std::string unit;
  for (; u < t.size(); ++u) {
    if (!std::isalpha(static_cast<unsigned char>(t[u])))
      throw fail("unexpected '" + t.substr(u) + "'");
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(t[u])));
  }
  double mult = 1;
  if (unit.empty() || unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    mult = 1024.0;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    mult = 1048576.0;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    mult = 1073741824.0;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    mult = 1099511627776.0;
  } else {
    throw fail("unknown unit '" + unit + "'");
  }
  const double bytes = num * mult;
  if (!(bytes >= 0) || bytes > 1e18) throw fail("out of range");
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string formatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[48];
  // Whole numbers stay whole (a 64 MiB working set); anything else keeps
  // at least three significant figures: 1.04 GiB is not 1 GiB.
  if (u == 0 || bytes == std::round(bytes)) {
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
  } else {
    std::snprintf(buf, sizeof buf, bytes < 10 ? "%.2f %s" : "%.1f %s", bytes, units[u]);
  }
  return buf;
}

std::uint64_t fileBytes(const FileOptions& o, std::uint32_t blockSize) {
  const std::uint64_t per = o.sizeBytes / (o.nrfiles ? o.nrfiles : 1);
  return per / blockSize * blockSize;
}

std::string benchFileName(const FileOptions& o, std::uint32_t job, std::uint32_t file) {
  const std::uint64_t per = o.sizeBytes / (o.nrfiles ? o.nrfiles : 1);
  const std::string prefix =
      "nfsrdma-bench.s" + std::to_string(o.seed) + ".b" + std::to_string(per);
  if (o.sharedFile) {
    // One file set for all the jobs that share it; its name says how many.
    return prefix + ".shared" + std::to_string(o.sharingJobs) + ".f" + std::to_string(file);
  }
  return prefix + ".j" + std::to_string(o.jobBase + job) + ".f" + std::to_string(file);
}

std::uint64_t sharedRangeOffset(const FileOptions& o, std::uint32_t job) {
  if (!o.sharedFile) return 0;
  return static_cast<std::uint64_t>(o.jobBase + job) * (o.sizeBytes / (o.nrfiles ? o.nrfiles : 1));
}

void validateOptions(const FileOptions& o, const FileProfile& given) {
  const FileProfile p = profileAsRun(given, o);
  // The rules of the options themselves are WorkloadOptions.h's; a FileOptions
  // built in code goes through them too.
  checkNumjobs(o.numjobs);
  if (o.nrfiles == 0 || o.nrfiles > 1024) throw std::invalid_argument("--nrfiles must be 1..1024");
  checkIodepth(o.iodepth);
  if (o.blockSize != 0) checkBlockSize(o.blockSize);
  if (o.sizeBytes == 0) throw std::invalid_argument("--size must be more than 0 bytes per job");
  if (o.sharedFile && (o.sizeBytes / o.nrfiles) % 4096 != 0) {
    // The next job's range must start on a block an O_DIRECT request can use.
    throw std::invalid_argument(
        "--shared-file: --size " + formatBytes(static_cast<double>(o.sizeBytes)) +
        " per job over " + std::to_string(o.nrfiles) +
        " file(s) must be a multiple of 4 KiB per file (each job's range starts there)");
  }
  // Divided, not multiplied: size x numjobs overflows 64 bits near the parser's 1e18 limit.
  if (o.sizeBytes > kMaxWorkingSetBytes / o.numjobs) {
    throw std::invalid_argument(
        "--size " + formatBytes(static_cast<double>(o.sizeBytes)) + " x " +
        std::to_string(o.numjobs) + (o.numjobs == 1 ? " job = " : " jobs = ") +
        formatBytes(static_cast<double>(o.sizeBytes) * static_cast<double>(o.numjobs)) +
        " to lay out, above the " + formatBytes(static_cast<double>(kMaxWorkingSetBytes)) +
        " a file set may have (a typo? the layout writes every byte of it)");
  }
  if (fileBytes(o, p.blockSize) < p.blockSize) {
    throw std::invalid_argument("--size " + formatBytes(static_cast<double>(o.sizeBytes)) +
                                " over " + std::to_string(o.nrfiles) +
                                " file(s) leaves less than one " + formatBytes(p.blockSize) +
                                " block per file for " + p.name);
  }
  if (o.ioBytes > 0 && o.ioBytes < p.blockSize) {
    throw std::invalid_argument("--io-bytes " + formatBytes(static_cast<double>(o.ioBytes)) +
                                " is less than one " + formatBytes(p.blockSize) + " block of " +
                                p.name + " (it is rounded down to whole blocks per job)");
  }
  if (o.ioBytes == 0) checkRuntime(static_cast<double>(o.runtime.count()) / 1000);
  checkRamp(static_cast<double>(o.ramp.count()) / 1000);
  if (o.rwmixread && *o.rwmixread > 100) throw std::invalid_argument("--rwmixread must be 0..100");
  validateBufferMemory(o, p, memAvailableBytes());
}

std::uint64_t bufferBytes(const FileOptions& o, const FileProfile& p) {
  const std::uint64_t depth = o.iodepth ? o.iodepth : p.defaultIodepth;
  const FileProfile run = profileAsRun(p, o);
  const std::uint64_t sets = run.mixed() && !o.verify ? 2 : 1;
  return std::uint64_t{o.numjobs} * depth * run.blockSize * sets;
}

void validateBufferMemory(const FileOptions& o, const FileProfile& given,
                          std::optional<std::uint64_t> memAvailable) {
  if (!memAvailable) return;
  const FileProfile p = profileAsRun(given, o);
  const std::uint64_t need = bufferBytes(o, p);
  if (need <= *memAvailable / 4 * 3) return;
  const std::uint64_t depth = o.iodepth ? o.iodepth : p.defaultIodepth;
  throw std::invalid_argument(
      "--iodepth " + std::to_string(depth) + " x " + formatBytes(p.blockSize) + " blocks (" +
      p.name + ") x --numjobs " + std::to_string(o.numjobs) + " needs " +
      formatBytes(static_cast<double>(need)) + " of I/O buffers, more than 3/4 of this host's " +
      formatBytes(static_cast<double>(*memAvailable)) +
      " MemAvailable: lower --iodepth or --numjobs");
}

std::optional<std::uint64_t> memAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    std::getline(in, unit);  // the rest of the line: " kB", or nothing (HugePages_Total)
  }
  return std::nullopt;
}

std::uint64_t ioBytesPerJob(const FileOptions& o, std::uint32_t blockSize) {
  return blockSize ? o.ioBytes / blockSize * blockSize : 0;
}

unsigned readPercentOf(const FileProfile& p, const FileOptions& o) {
  return p.takesRwmixread() && o.rwmixread ? *o.rwmixread : p.readPercent;
}

std::string blockSizeLabel(std::uint32_t bytes) {
  if (bytes != 0 && bytes % (1U << 20) == 0) return std::to_string(bytes >> 20) + "m";
  if (bytes != 0 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "k";
  return std::to_string(bytes);
}

namespace {

// The name with its leading size ("4m-read") replaced, or the size added.
std::string nameWithBlockSize(const std::string& name, std::uint32_t bytes) {
  const std::string label = blockSizeLabel(bytes);
  const auto dash = name.find('-');
  if (dash != std::string::npos && dash > 0 &&
      std::isdigit(static_cast<unsigned char>(name.front())) != 0) {
    return label + name.substr(dash);
  }
  return name + "-" + label;
}

}  // namespace

FileProfile profileAsRun(FileProfile p, const FileOptions& o) {
  p.readPercent = readPercentOf(p, o);
  if (o.blockSize != 0 && o.blockSize != p.blockSize) {
    p.name = nameWithBlockSize(p.name, o.blockSize);
    p.blockSize = o.blockSize;
  }
  return p;
}

void validateRwmixread(const FileOptions& o, const std::vector<FileProfile>& profiles) {
  if (!o.rwmixread) return;
  std::string names;
  for (const auto& p : profiles) {
    if (p.takesRwmixread()) return;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  const std::string n = std::to_string(*o.rwmixread);
  throw std::invalid_argument(
      "--rwmixread " + n + " sets the read percent of the randrw profile only, and " +
      (profiles.size() == 1 ? "the profile is " : "the profiles are ") + names +
      (profiles.size() == 1 && profiles.front().name.rfind("randrw:", 0) == 0
           ? " (its mix is in the name)"
           : "") +
      ": run randrw with --rwmixread " + n + " (or randrw:" + n + "), or drop --rwmixread");
}

}  // namespace nfsrdma::bench
