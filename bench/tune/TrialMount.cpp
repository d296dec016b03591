#include "bench/tune/TrialMount.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "client/mount/MountHost.h"
#include "util/ErrnoText.h"

namespace nfsrdma::bench {
namespace {

std::string mountedOptions(const std::filesystem::path& dir) {
  for (const auto& m : mount::parseProcMounts(mount::readHostFacts().mounts)) {
    if (m.mountPoint == dir.string()) return m.options;
  }
  return {};
}

// "rsize=1048576 asked, 262144 in effect; ..." for the sizes and nconnect.
std::string differences(const mount::MountRequest& r, const std::string& options) {
  std::string out;
  const auto check = [&](const char* key, const std::optional<std::uint32_t>& asked) {
    if (!asked) return;
    std::string got = mount::optionValue(options, key);
    // The kernel shows nconnect only above 1.
    if (got.empty() && std::string(key) == "nconnect") got = "1";
    if (got == std::to_string(*asked)) return;
    out += (out.empty() ? "" : "; ") + std::string(key) + "=" + std::to_string(*asked) +
           " asked, " + (got.empty() ? "none" : got) + " in effect";
  };
  check("nconnect", r.nconnect);
  check("rsize", r.rsize);
  check("wsize", r.wsize);
  return out;
}

}  // namespace

std::filesystem::path bdiOf(const std::filesystem::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    throw std::runtime_error(util::errnoMessage("stat " + dir.string()));
  }
  return std::filesystem::path("/sys/class/bdi") /
         (std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev)));
}

TrialMount::TrialMount(const KernelSetting& s, const std::filesystem::path& dir,
                       hostcheck::CommandRunner& runner)
    : dir_(dir), runner_(runner) {
  std::filesystem::create_directories(dir_);
  mount::MountRequest request = s.request;
  request.mountPoint = dir_.string();
  const mount::MountPlan plan = mount::planMount(request, mount::readHostFacts());
  if (!plan.problems.empty()) {
    throw std::runtime_error("cannot mount " + request.server + ":" + request.exportPath + ": " +
                             plan.problems.front());
  }
  const mount::PlannedMount& m = plan.mounts.at(0);
  command_ = m.command;
  const hostcheck::CommandResult r = runner_.run(m.argv);
  if (r.exitStatus != 0) {
    throw std::runtime_error(command_ + ": exit " + std::to_string(r.exitStatus) + ": " + r.output);
  }
  mounted_ = true;
  options_ = mountedOptions(dir_);
  note_ = differences(request, options_);
  if (s.readAheadKb) setReadAhead(*s.readAheadKb);
}

void TrialMount::setReadAhead(std::uint32_t kb) {
  const std::filesystem::path file = bdiOf(dir_) / "read_ahead_kb";
  std::ofstream out(file);
  out << kb << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write " + std::to_string(kb) + " to " + file.string());
}

void TrialMount::unmount() {
  if (!mounted_) return;
  hostcheck::CommandResult r;
  // A mount is busy for a moment after its last file closed (delayed fput).
  for (int attempt = 0; attempt < 10; ++attempt) {
    r = runner_.run({"umount", dir_.string()});
    if (r.exitStatus == 0) {
      mounted_ = false;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  throw std::runtime_error("umount " + dir_.string() + ": exit " + std::to_string(r.exitStatus) +
                           ": " + r.output);
}

TrialMount::~TrialMount() {
  try {
    unmount();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nfsrdma-bench tune: %s (still mounted; umount it by hand)\n", e.what());
  }
}

}  // namespace nfsrdma::bench
