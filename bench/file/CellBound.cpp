#include "bench/file/CellBound.h"

namespace nfsrdma::bench {
namespace {

std::string transportOf(const TargetSpec& t) {
  switch (t.engine) {
    case EngineKind::Nfs:
    case EngineKind::Libnfs:
      return t.nfsTransport();
    case EngineKind::Device:
      return "block";
    case EngineKind::Path:
      break;
  }
  return t.onNfs ? "kernel-nfs" : "local";
}

}  // namespace

CellFacts cellFacts(const TargetSpec& target, const RunResult& r) {
  CellFacts f;
  f.transport = transportOf(target);
  f.blockSize = r.blockSize;
  f.iodepth = r.iodepth;
  f.effectiveIodepth = r.effectiveIodepth ? r.effectiveIodepth : r.iodepth;
  f.numjobs = r.numjobs;
  f.seconds = r.seconds;
  f.serverOnThisHost = target.overNfs() && target.serverIsLocal();
  double weighted = 0;
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    if (!r.has(d)) continue;
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    f.iops += r.iops(d);
    weighted += x.lat.mean() * static_cast<double>(x.ops);
  }
  const double ops = static_cast<double>(r.dir[0].ops + r.dir[1].ops);
  f.meanLatencyUs = ops > 0 ? weighted / ops / 1e3 : 0;
  return f;
}

}  // namespace nfsrdma::bench
