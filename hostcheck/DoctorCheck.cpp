// DoctorCheck: the doctors' text.
#include "hostcheck/DoctorCheck.h"

#include <algorithm>
#include <sstream>

namespace nfsrdma::hostcheck {

std::string renderDoctor(const std::vector<DoctorCheck>& checks) {
  std::ostringstream out;
  std::size_t fails = 0, warns = 0;
  for (const auto& c : checks) {
    const char* tag = c.level == CheckLevel::Pass   ? "PASS"
                      : c.level == CheckLevel::Warn ? "WARN"
                                                    : "FAIL";
    out << tag << "  " << c.name << ": " << c.detail;
    if (!c.fix.empty()) out << "\n      fix: " << c.fix;
    out << "\n";
    fails += c.level == CheckLevel::Fail;
    warns += c.level == CheckLevel::Warn;
  }
  out << checks.size() << " checks: " << fails << " FAIL, " << warns << " WARN, "
      << (checks.size() - fails - warns) << " PASS\n";
  return out.str();
}

bool anyFailed(const std::vector<DoctorCheck>& checks) {
  return std::any_of(checks.begin(), checks.end(),
                     [](const DoctorCheck& c) { return c.level == CheckLevel::Fail; });
}

}  // namespace nfsrdma::hostcheck
