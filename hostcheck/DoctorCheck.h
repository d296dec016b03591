// DoctorCheck: one line of a doctor's answer (PASS, WARN or FAIL, what was
// found, the command that fixes it), the list the checks append to, and
// the text both doctors print. Shared by `nfsrdma-server doctor` and
// `nfsrdma-client doctor`, so both answer in one shape.
#pragma once

#include <string>
#include <vector>

namespace nfsrdma::hostcheck {

enum class CheckLevel { Pass, Warn, Fail };

struct DoctorCheck {
  CheckLevel level = CheckLevel::Pass;
  std::string name;    // "module nfsd"
  std::string detail;  // what was found
  std::string fix;     // the command (or edit) that fixes it; empty for PASS
};

// What the check functions append to.
class CheckList {
 public:
  void pass(std::string name, std::string detail) {
    checks_.push_back({CheckLevel::Pass, std::move(name), std::move(detail), ""});
  }
  void warn(std::string name, std::string detail, std::string fix) {
    checks_.push_back({CheckLevel::Warn, std::move(name), std::move(detail), std::move(fix)});
  }
  void fail(std::string name, std::string detail, std::string fix) {
    checks_.push_back({CheckLevel::Fail, std::move(name), std::move(detail), std::move(fix)});
  }
  const std::vector<DoctorCheck>& checks() const& { return checks_; }
  std::vector<DoctorCheck> checks() && { return std::move(checks_); }

 private:
  std::vector<DoctorCheck> checks_;
};

// One line per check: "FAIL  module nfsd: not loaded", then "      fix: ..."
// under it, and a count line at the end.
std::string renderDoctor(const std::vector<DoctorCheck>& checks);
bool anyFailed(const std::vector<DoctorCheck>& checks);

}  // namespace nfsrdma::hostcheck
