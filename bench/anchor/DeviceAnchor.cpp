#include "bench/anchor/DeviceAnchor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "bench/file/DeviceTargets.h"
#include "bench/file/FileRun.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

constexpr int kRounds = 3;

struct DeviceWorkload {
  const char* profile;  // the bench's profile; fio's rw= below
  const char* fioRw;
};
constexpr DeviceWorkload kWorkloads[] = {{"4k-randread", "randread"}, {"128k-read", "read"}};

ReadMeasurement runOurs(const TargetSpec& target, const FileProfile& profile, double seconds) {
  FileOptions o;
  o.runtime = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
  o.ramp = std::chrono::milliseconds(0);  // fio's CPU covers its whole run: no ramp on either side
  ReadMeasurement run;
  run.client = "nfsrdma";
  const double cpu0 = processCpuSeconds();
  RunSettings rs;
  rs.cache = CachePrep::FromOptions;
  const RunResult r = runFileBenchmark(target, profile, o, rs);
  run.cpuSeconds = processCpuSeconds() - cpu0;
  run.seconds = r.seconds;
  run.bytes = r.dir[static_cast<int>(IoDirection::Read)].bytes;
  run.ops = r.dir[static_cast<int>(IoDirection::Read)].ops;
  if (r.errors) run.error = r.firstError;
  return run;
}

ReadMeasurement runFio(const std::string& device, const FileProfile& p, const char* rw, double seconds) {
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("nfsrdma-anchor-fio-" + std::to_string(::getpid()) + ".json"))
                              .string();
  const std::string cmd = fmt(
      "timeout %d fio --name=anchor --filename=%s --readonly --direct=1 --ioengine=io_uring "
      "--fixedbufs=1 --registerfiles=1 --norandommap --disk_util=0 --rw=%s --bs=%u --iodepth=%u --runtime=%.3f --time_based "
      "--output-format=json --output=%s >/dev/null 2>&1",
      static_cast<int>(seconds) + 60, device.c_str(), rw, p.blockSize, p.defaultIodepth, seconds,
      out.c_str());
  const int status = std::system(cmd.c_str());
  ReadMeasurement run;
  run.client = "fio";
  if (status != 0) {
    run.error = "fio exited with status " + std::to_string(WEXITSTATUS(status)) + ": " + cmd;
  } else {
    try {
      run = fioRunFromJson(parseJsonFile(out));
    } catch (const std::exception& e) {
      run.error = e.what();
    }
  }
  std::filesystem::remove(out);
  return run;
}

struct DeviceRow {
  const char* workload;
  ReadMeasurement ours, fio;
};

DeviceRow measure(const TargetSpec& target, const DeviceWorkload& w, double seconds) {
  const FileProfile p = profileByName(w.profile);
  std::vector<ReadMeasurement> ours, fio;
  for (int k = 0; k < kRounds; ++k) {
    ours.push_back(runOurs(target, p, seconds));
    fio.push_back(runFio(target.location, p, w.fioRw, seconds));
    if (!ours.back().error.empty() || !fio.back().error.empty()) break;
  }
  return {w.profile, failedOrMedianByCpu(ours), failedOrMedianByCpu(fio)};
}

bool printRun(const char* workload, const ReadMeasurement& r) {
  if (!r.error.empty()) {
    std::fprintf(stderr, "nfsrdma-bench anchor: %s %s: %s\n", workload, r.client.c_str(), r.error.c_str());
    return false;
  }
  std::printf(" %-12s %-8s %10.0f %9.1f %12.2f\n", workload, r.client.c_str(), r.iops(),
              r.mibPerSecond(), r.cpuMicrosPerOp());
  return true;
}

void writeRows(const std::string& path, const std::string& device, const std::vector<DeviceRow>& rows) {
  JsonWriter w;
  w.beginObject().field("schema", "nfsrdma-bench-anchor-device/1").field("device", device);
  w.beginArray("results");
  for (const auto& r : rows) {
    for (const ReadMeasurement* m : {&r.ours, &r.fio}) {
      w.beginObject().field("workload", r.workload).field("client", m->client);
      w.field("ops", m->ops).field("seconds", m->seconds).field("iops", m->iops());
      w.field("cpu_us_per_op", m->cpuMicrosPerOp()).field("error", m->error).endObject();
    }
  }
  w.endArray().endObject();
  std::ofstream(path) << w.str();
}

}  // namespace

ReadMeasurement fioRunFromJson(const JsonValue& doc) {
  const JsonValue* jobs = doc.find("jobs");
  if (jobs == nullptr || jobs->array.empty()) throw std::runtime_error("fio JSON: no \"jobs\"");
  const JsonValue& job = jobs->array.front();
  const JsonValue* read = job.find("read");
  if (read == nullptr) throw std::runtime_error("fio JSON: job has no \"read\"");
  ReadMeasurement run;
  run.client = "fio";
  run.ops = static_cast<std::uint64_t>(read->num("total_ios"));
  run.bytes = static_cast<std::uint64_t>(read->num("io_bytes"));
  run.seconds = job.num("job_runtime") / 1000.0;
  run.cpuSeconds = (job.num("usr_cpu") + job.num("sys_cpu")) / 100.0 * run.seconds;
  if (job.num("error") != 0) run.error = "fio job error " + fmt("%.0f", job.num("error"));
  return run;
}

int runDeviceAnchor(const std::string& device, double runtimeSeconds, const std::string& jsonPath) {
  std::vector<TargetSpec> targets{TargetSpec::parse("dev", "dev:" + device)};
  FileOptions o;
  std::vector<FileProfile> profiles;
  for (const auto& w : kWorkloads) profiles.push_back(profileByName(w.profile));
  prepareDeviceTargets(targets, profiles, o);  // read-only: nothing is written
  std::printf("nfsrdma-bench anchor: the dev engine against fio on %s (read-only)\n",
              targets.front().describe().c_str());
  std::printf(" fio: io_uring, --fixedbufs --registerfiles, O_DIRECT, the same block size and depth;"
              " %d alternated rounds of %.1f s, each side's median by CPU/op\n\n",
              kRounds, runtimeSeconds);
  std::printf(" %-12s %-8s %10s %9s %12s\n", "workload", "client", "IOPS", "MiB/s", "CPU[usec/op]");
  bool ok = true;
  std::vector<DeviceRow> rows;
  for (const auto& w : kWorkloads) {
    rows.push_back(measure(targets.front(), w, runtimeSeconds));
    ok = printRun(w.profile, rows.back().ours) && ok;
    ok = printRun(w.profile, rows.back().fio) && ok;
  }
  std::printf("\n ratios nfsrdma/fio:");
  for (const auto& r : rows) {
    if (!r.ours.error.empty() || !r.fio.error.empty() || r.fio.ops == 0 || r.ours.ops == 0) continue;
    std::printf(" %s IOPS %.2fx, CPU/op %.2fx;", r.workload, r.ours.iops() / r.fio.iops(),
                r.ours.cpuMicrosPerOp() / r.fio.cpuMicrosPerOp());
  }
  std::printf("\n");
  if (!jsonPath.empty()) writeRows(jsonPath, device, rows);
  return ok ? 0 : 1;
}

}  // namespace nfsrdma::bench
