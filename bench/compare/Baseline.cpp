// Baseline comparison: a saved compare JSON against this run, cell by cell
// (profile, direction, target). What users judge later complaints against
// is the figure measured at install time, so the change is shown for every
// cell and drops beyond the threshold are flagged as regressions; but only
// between cells measured under the same conditions: a rerun at iodepth 1
// against a baseline at 128 is another test, not a regression.
#include <cmath>
#include <stdexcept>

#include "bench/compare/CompareMatrix.h"

namespace nfsrdma::bench {
namespace {

std::string configValue(const CompareReport& r, const std::string& key) {
  for (const auto& [k, v] : r.config) {
    if (k == key) return v;
  }
  return {};
}

// The run length from compare's workload banner: "..., 2.0 s time-based
// after ..." -> "2.0 s", "..., 1 GiB per job after ..." -> "1 GiB per job";
// "" when the banner has neither (a report written by hand).
std::string runLength(const CompareReport& r) {
  const std::string w = configValue(r, "workload");
  for (const std::string tail : {" s time-based", " per job after"}) {
    const auto end = w.find(tail);
    if (end == std::string::npos) continue;
    const auto begin = w.rfind(", ", end);
    if (begin == std::string::npos) continue;
    return w.substr(begin + 2, end - begin - 2) + (tail[1] == 's' ? " s" : " per job");
  }
  return {};
}

// "..., 2.0 s time-based after a 0.3 s ramp, seed 1" -> "0.3 s"; "" when absent.
std::string rampOf(const CompareReport& r) {
  const std::string w = configValue(r, "workload");
  const std::string head = " after a ";
  const auto begin = w.find(head);
  if (begin == std::string::npos) return {};
  const auto end = w.find(" ramp", begin + head.size());
  if (end == std::string::npos) return {};
  return w.substr(begin + head.size(), end - begin - head.size());
}

// The embedded nfs-ganesha gets a new port and export directory every run,
// which its targets' descriptions carry: those differ without a change.
bool embeddedServer(const CompareReport& r) {
  return configValue(r, "server").find("(started for this run)") != std::string::npos;
}

std::string mixText(unsigned readPercent) {
  return std::to_string(readPercent) + "/" + std::to_string(100 - readPercent);
}

// A cell's read/write mix; for reports that did not record it the mix its
// profile's name implies, "unrecorded" for plain randrw (--rwmixread may
// have set any mix).
std::string mixOf(const CompareCell& c) {
  if (c.readPercent) return mixText(*c.readPercent);
  if (c.profile == "randrw") return "unrecorded";
  try {
    return mixText(profileByName(c.profile).readPercent);
  } catch (const std::invalid_argument&) {
    return {};  // a profile this build does not know: nothing to compare
  }
}

// "O_DIRECT for path targets; ..." -> "1", "buffered" -> "0", else "".
std::string directOf(const CompareReport& r) {
  const std::string d = configValue(r, "direct");
  if (d.rfind("O_DIRECT", 0) == 0) return "1";
  if (d == "buffered") return "0";
  return {};
}

void differs(std::string& out, const char* what, const std::string& before,
             const std::string& now) {
  if (before.empty() || now.empty() || before == now) return;
  out += (out.empty() ? "" : ", ") + std::string(what) + " " + before + " -> " + now;
}

// What differs between the conditions of `old` (in `before`) and `c` (in
// `report`); "" when they match. Fields a report does not record (0, "")
// are not compared.
std::string conditionChange(const CompareReport& report, const CompareCell& c,
                            const CompareReport& before, const CompareCell& old) {
  auto num = [](double v) {
    return v > 0 ? std::to_string(static_cast<std::uint64_t>(v)) : std::string();
  };
  auto bytes = [](double v) { return v > 0 ? formatBytes(v) : std::string(); };
  std::string out;
  // A figure that includes an outage measures the outage, not the setup.
  if (c.crossedOutage || old.crossedOutage) {
    out = std::string("the ") + (c.crossedOutage ? "run" : "baseline") + " crossed a server outage";
  }
  differs(out, "block", bytes(old.blockSize), bytes(c.blockSize));
  differs(out, "iodepth", num(old.iodepth), num(c.iodepth));
  differs(out, "effective iodepth", num(old.effectiveIodepth), num(c.effectiveIodepth));
  differs(out, "numjobs", num(old.numjobs), num(c.numjobs));
  // A report from before --client recorded nothing: its nfs cells ran per job.
  differs(out, "client",
          old.clientMode.empty() && !c.clientMode.empty() ? "per-job" : old.clientMode,
          c.clientMode);
  // Another mix is another test: 70/30 against 80/20 is no regression.
  if (c.readPercent) differs(out, "mix", mixOf(old), mixOf(c));
  differs(out, "verify", old.verified ? "on" : "off", c.verified ? "on" : "off");
  // formatBytes rounds: the exact byte counts decide.
  if (old.workingSetBytes > 0 && c.workingSetBytes > 0 &&
      old.workingSetBytes != c.workingSetBytes) {
    out += (out.empty() ? "" : ", ") + std::string("working set ") +
           formatBytes(old.workingSetBytes) + " -> " + formatBytes(c.workingSetBytes);
  }
  differs(out, "runtime", runLength(before), runLength(report));
  differs(out, "ramp", rampOf(before), rampOf(report));
  differs(out, "direct", directOf(before), directOf(report));
  const CompareTarget* tOld = before.target(old.target);
  const CompareTarget* tNow = report.target(c.target);
  if (tOld != nullptr && tNow != nullptr) {
    differs(out, "engine", tOld->engine, tNow->engine);
    if (!embeddedServer(before) || !embeddedServer(report)) {
      differs(out, "target", tOld->description, tNow->description);
    }
  }
  // Reads: the server's page cache each started with (unrecorded before
  // compare managed it). Writes: whether the figure counts the commit.
  if (c.direction == IoDirection::Read && !c.serverCache.empty()) {
    differs(out, "server cache", old.serverCache.empty() ? "unrecorded" : old.serverCache,
            c.serverCache);
  }
  if (c.direction == IoDirection::Write && old.commitCounted != c.commitCounted) {
    differs(out, "commit counted", old.commitCounted ? "yes" : "no",
            c.commitCounted ? "yes" : "no");
  }
  return out;
}

}  // namespace

void applyBaseline(CompareReport& report, const CompareReport& before, const std::string& path,
                   double thresholdPercent) {
  report.baselinePath = path;
  report.regressionThresholdPercent = thresholdPercent;
  for (auto& c : report.cells) {
    c.baselineMibPerSecond.reset();
    c.baselineIops.reset();
    c.regression = false;
    c.changePercent = 0;
    c.baselineConfigChange.clear();
    if (!c.ran) continue;
    const CompareCell* old = before.cell(c.profile, c.direction, c.target);
    if (old == nullptr || !old->ran || old->mibPerSecond <= 0) continue;
    c.baselineConfigChange = conditionChange(report, c, before, *old);
    if (!c.baselineConfigChange.empty()) continue;
    c.baselineMibPerSecond = old->mibPerSecond;
    c.baselineIops = old->iops;
    c.changePercent = (c.mibPerSecond - old->mibPerSecond) / old->mibPerSecond * 100.0;
    c.regression = c.changePercent < -thresholdPercent;
  }
}

}  // namespace nfsrdma::bench
