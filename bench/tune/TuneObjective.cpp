#include "bench/tune/TuneObjective.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench/bound/BoundRules.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

constexpr IoDirection kDirections[] = {IoDirection::Read, IoDirection::Write};

double worseP99Ns(const RunResult& r) {
  double worst = 0;
  for (IoDirection d : kDirections) {
    if (r.has(d)) worst = std::max(worst, r.dir[static_cast<int>(d)].lat.percentile(99));
  }
  return worst;
}

}  // namespace

Objective parseObjective(const std::string& text) {
  if (text == "iops") return Objective::Iops;
  if (text == "mibps") return Objective::Mibps;
  if (text == "p99") return Objective::P99;
  if (text == "cpu-per-op") return Objective::CpuPerOp;
  throw std::invalid_argument("--objective " + text + ": expected iops, mibps, p99 or cpu-per-op");
}

const char* objectiveName(Objective o) {
  switch (o) {
    case Objective::Iops:
      return "iops";
    case Objective::Mibps:
      return "mibps";
    case Objective::P99:
      return "p99";
    case Objective::CpuPerOp:
      return "cpu-per-op";
  }
  return "?";
}

double objectiveValue(Objective o, const RunResult& r, double cpuSeconds) {
  double iops = 0, mibps = 0, ops = 0;
  for (IoDirection d : kDirections) {
    iops += r.iops(d);
    mibps += r.mibPerSecond(d);
    ops += static_cast<double>(r.dir[static_cast<int>(d)].ops);
  }
  switch (o) {
    case Objective::Iops:
      return iops;
    case Objective::Mibps:
      return mibps;
    case Objective::P99: {
      const double ns = worseP99Ns(r);
      return ns > 0 ? 1e9 / ns : 0;
    }
    case Objective::CpuPerOp:
      return ops > 0 && cpuSeconds > 0 ? ops / cpuSeconds : 0;
  }
  return 0;
}

const char* objectiveUnit(Objective o) {
  switch (o) {
    case Objective::Iops:
      return "IOPS";
    case Objective::Mibps:
      return "MiB/s";
    case Objective::P99:
      return "p99[us]";
    case Objective::CpuPerOp:
      return "CPU/op[us]";
  }
  return "?";
}

double objectiveInUnit(Objective o, double value) {
  if (o == Objective::Iops || o == Objective::Mibps) return value;
  return value > 0 ? 1e6 / value : 0;
}

std::string objectiveCell(Objective o, double value) {
  const double v = objectiveInUnit(o, value);
  switch (o) {
    case Objective::Iops:
    case Objective::P99:
      return countText(std::llround(v));
    case Objective::Mibps:
      return fmt("%.1f", v);
    case Objective::CpuPerOp:
      return fmt("%.2f", v);
  }
  return "?";
}

std::string objectiveText(Objective o, double value) {
  const double v = objectiveInUnit(o, value);
  switch (o) {
    case Objective::Iops:
      return countText(std::llround(v)) + " IOPS";
    case Objective::Mibps:
      return fmt("%.1f MiB/s", v);
    case Objective::P99:
      return "p99 " + countText(std::llround(v)) + " us";
    case Objective::CpuPerOp:
      return fmt("%.1f us CPU/op", v);
  }
  return "?";
}

}  // namespace nfsrdma::bench
