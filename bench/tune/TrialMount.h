// One trial's kernel NFS mount: the export mounted with the trial's options
// in tune's own directory, the BDI's read-ahead set, and unmounted when the
// trial ends. What the kernel made of the options (/proc/mounts) is kept:
// a size above the server's maximum is lowered by the kernel, and the
// report says so instead of crediting the asked size.
#pragma once

#include <filesystem>
#include <string>

#include "bench/tune/KernelTarget.h"
#include "hostcheck/CommandRunner.h"

namespace nfsrdma::bench {

class TrialMount {
 public:
  // Mounts s at dir (created when missing; it must not be a mount point
  // already). Throws std::runtime_error with mount's own words, or the
  // plan's problem (no rpcrdma module, a transport the kernel cannot add).
  TrialMount(const KernelSetting& s, const std::filesystem::path& dir,
             hostcheck::CommandRunner& runner);
  ~TrialMount();  // unmounts when unmount() was not called; says why on stderr if it cannot
  TrialMount(const TrialMount&) = delete;
  TrialMount& operator=(const TrialMount&) = delete;

  // The options in effect, as /proc/mounts shows them.
  const std::string& options() const { return options_; }
  // The mount command as run ("mount -t nfs -o ... server:/export DIR").
  const std::string& command() const { return command_; }
  // What differs from what was asked ("rsize=1048576 asked, 262144 in
  // effect"), or empty.
  const std::string& note() const { return note_; }
  // Unmounts (a few tries over about 5 s while the mount is busy); throws
  // std::runtime_error with umount's words when it stays mounted.
  void unmount();

 private:
  void setReadAhead(std::uint32_t kb);
  std::filesystem::path dir_;
  hostcheck::CommandRunner& runner_;
  std::string options_, command_, note_;
  bool mounted_ = false;
};

// The BDI of the mount at dir: /sys/class/bdi/MAJOR:MINOR of its st_dev.
std::filesystem::path bdiOf(const std::filesystem::path& dir);

}  // namespace nfsrdma::bench
