#include "bench/anchor/AnchorRuns.h"

#include <sys/resource.h>

#include <algorithm>
#include <exception>
#include <memory>

#include "bench/file/engines/Engine.h"
#include "bench/job/FileJob.h"

namespace nfsrdma::bench {

double processCpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
  };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

ReadMeasurement failedOrMedianByCpu(std::vector<ReadMeasurement> runs) {
  const auto failed =
      std::find_if(runs.begin(), runs.end(), [](const auto& m) { return !m.error.empty(); });
  if (failed != runs.end()) return *failed;
  std::sort(runs.begin(), runs.end(), [](const ReadMeasurement& a, const ReadMeasurement& b) {
    return a.cpuMicrosPerOp() < b.cpuMicrosPerOp();
  });
  return runs[runs.size() / 2];
}

namespace {

// The workload as one job of the file benchmark: reads only, no ramp (the
// CPU is charged from the first request on, as the whole run's), the
// workload's seed for the random offsets.
JobSpec jobOf(const ReadWorkload& w, const std::string& file) {
  JobSpec spec;
  spec.profile.name = w.name;
  spec.profile.blockSize = w.blockSize;
  spec.profile.random = w.random;
  spec.profile.readPercent = 100;
  spec.profile.defaultIodepth = w.queueDepth;
  spec.options.sizeBytes = w.fileSize;
  spec.options.runtime = w.runtime;
  spec.options.ramp = std::chrono::milliseconds(0);
  spec.options.iodepth = w.queueDepth;
  spec.options.seed = w.seed;
  spec.iodepth = w.queueDepth;
  spec.files = {file};
  spec.fileBytes = w.fileSize / w.blockSize * w.blockSize;
  return spec;
}

// One run of the engine over the job, between two samples of the host's
// CPU: this process's CPU over the same window is charged to the client,
// everything else on the host (the server, the kernel's work not charged
// to us, other tenants) to the rest. What fails during the run is the
// measurement's error; a file that cannot be opened throws.
ReadMeasurement runJob(Engine& engine, const std::string& file, const ReadWorkload& w,
                       pid_t watched) {
  ReadMeasurement m;
  engine.open({file}, false);
  JobDriver driver(jobOf(w, file), nullptr);
  const HostCpuSample before = sampleHostCpu(watched);
  const double cpu0 = processCpuSeconds();
  try {
    engine.run(driver);
  } catch (const std::exception& e) {
    m.error = e.what();  // replies still missing after the grace period
  }
  m.cpuSeconds = processCpuSeconds() - cpu0;
  const HostCpuSample after = sampleHostCpu(watched);
  const JobResult r = driver.result();
  const DirectionResult& reads = r.dir[static_cast<int>(IoDirection::Read)];
  m.ops = reads.ops;
  m.bytes = reads.bytes;
  m.seconds = r.seconds;
  // After a throw the engine's destructor lets go of what is left.
  if (!m.error.empty()) return m;
  m.error = r.firstError;
  if (m.error.empty()) m.host = hostCpuShare(before, after, m.cpuSeconds, m.ops);
  engine.finish();  // closes the file
  return m;
}

}  // namespace

ReadMeasurement runNfsrdmaReads(Client& client, const std::string& file, const ReadWorkload& w,
                                pid_t watched) {
  TargetSpec t;
  t.name = "nfsrdma";
  t.engine = EngineKind::Nfs;
  t.nfs = client.options();
  t.nfs.readsPerCompound = w.readsPerCompound;
  t.location = t.nfs.url();
  ReadMeasurement m = runJob(*makeEngine(t, client), file, w, watched);
  m.client = "nfsrdma";
  return m;
}

ReadMeasurement runLibnfsReads(const ClientOptions& server, const std::string& file,
                               const ReadWorkload& w, pid_t watched) {
  TargetSpec t;
  t.name = "libnfs";
  t.engine = EngineKind::Libnfs;
  t.nfs = server;
  t.location = server.url();
  ReadMeasurement m = runJob(*makeEngine(t), file, w, watched);
  m.client = "libnfs";
  return m;
}

}  // namespace nfsrdma::bench
