#include "bench/anchor/DeviceAnchor.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "bench/file/DeviceTargets.h"
#include "bench/file/FileRun.h"
#include "bench/report/Format.h"
#include "bench/report/Json.h"

namespace nfsrdma::bench {
namespace {

constexpr int kRounds = 3;

constexpr const char* kWorkloads[] = {"4k-randread", "128k-read"};  // the bench's profiles

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

ReadMeasurement runFio(const std::string& device, const FileProfile& p, double seconds) {
  const std::string out = (std::filesystem::temp_directory_path() /
                           ("nfsrdma-anchor-fio-" + std::to_string(::getpid()) + ".json"))
                              .string();
  const std::string cmd = fmt(
      "timeout %d fio --name=anchor --filename=%s --readonly %s --runtime=%.3f --time_based "
      "--output-format=json --output=%s >/dev/null 2>&1",
      static_cast<int>(seconds) + 60, device.c_str(), fioOptions(p).c_str(), seconds, out.c_str());
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
  std::vector<ReadMeasurement> ours, fio;  // by round
};

// The run of the median IOPS, or the first failed one.
ReadMeasurement failedOrMedianByIops(std::vector<ReadMeasurement> runs) {
  const auto failed =
      std::find_if(runs.begin(), runs.end(), [](const auto& m) { return !m.error.empty(); });
  if (failed != runs.end()) return *failed;
  std::sort(runs.begin(), runs.end(),
            [](const ReadMeasurement& a, const ReadMeasurement& b) { return a.iops() < b.iops(); });
  return runs[runs.size() / 2];
}

DeviceRow measure(const TargetSpec& target, const char* workload, double seconds) {
  const FileProfile p = profileByName(workload);
  DeviceRow row{workload, {}, {}};
  for (int k = 0; k < kRounds; ++k) {
    row.ours.push_back(runOurs(target, p, seconds));
    row.fio.push_back(runFio(target.location, p, seconds));
    if (!row.ours.back().error.empty() || !row.fio.back().error.empty()) break;
  }
  return row;
}

// "336k 341k 329k": each round's IOPS, in the order they ran.
std::string roundsText(const std::vector<ReadMeasurement>& runs) {
  std::string s;
  for (const auto& r : runs) s += (s.empty() ? "" : " ") + fmt("%.0fk", r.iops() / 1000);
  return s;
}

bool printRun(const char* workload, const std::vector<ReadMeasurement>& runs) {
  const ReadMeasurement r = failedOrMedianByIops(runs);
  if (!r.error.empty()) {
    std::fprintf(stderr, "nfsrdma-bench anchor: %s %s: %s\n", workload, r.client.c_str(),
                 r.error.c_str());
    return false;
  }
  std::printf(" %-12s %-8s %10.0f %9.1f %12.2f   %s\n", workload, r.client.c_str(), r.iops(),
              r.mibPerSecond(), r.cpuMicrosPerOp(), roundsText(runs).c_str());
  return true;
}

void writeRows(const std::string& path, const std::string& device,
               const std::vector<DeviceRow>& rows) {
  JsonWriter w;
  w.beginObject().field("schema", "nfsrdma-bench-anchor-device/1");
  writeVersionField(w).field("device", device);
  w.beginArray("results");
  for (const auto& r : rows) {
    const ReadMeasurement ours = failedOrMedianByIops(r.ours);
    const ReadMeasurement fio = failedOrMedianByIops(r.fio);
    for (const ReadMeasurement* m : {&ours, &fio}) {
      w.beginObject().field("workload", r.workload).field("client", m->client);
      w.field("ops", m->ops).field("seconds", m->seconds).field("iops", m->iops());
      w.field("cpu_us_per_op", m->cpuMicrosPerOp()).field("error", m->error);
      if (m == &fio) w.field("fio_options", fioOptions(profileByName(r.workload)));
      w.endObject();
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

std::string fioOptions(const FileProfile& p) {
  const std::uint32_t depth = p.defaultIodepth;
  return fmt(
      "--ioengine=io_uring --direct=1 --rw=%s --bs=%u --iodepth=%u --fixedbufs=1 "
      "--registerfiles=1 --iodepth_batch_submit=%u --iodepth_batch_complete_min=%u "
      "--iodepth_batch_complete_max=%u --gtod_reduce=1 --norandommap --disk_util=0",
      p.random ? "randread" : "read", p.blockSize, depth, depth,
      std::max<std::uint32_t>(1, depth / 2), depth);
}

int runDeviceAnchor(const std::string& device, double runtimeSeconds, const std::string& jsonPath) {
  std::vector<TargetSpec> targets{TargetSpec::parse("dev", "dev:" + device)};
  FileOptions o;
  std::vector<FileProfile> profiles;
  for (const char* w : kWorkloads) profiles.push_back(profileByName(w));
  prepareDeviceTargets(targets, profiles, o);  // read-only: nothing is written
  std::printf("nfsrdma-bench anchor: the dev engine against fio on %s\n",
              targets.front().describe().c_str());
  std::printf(" fio at its best, with the same block size, depth and O_DIRECT as ours:\n");
  for (const auto& p : profiles)
    std::printf("  %-12s fio %s\n", p.name.c_str(), fioOptions(p).c_str());
  std::printf(
      " %d alternated rounds of %.1f s (ours, fio, ours, ...); each side's median round by "
      "IOPS, then every round's IOPS\n\n",
      kRounds, runtimeSeconds);
  std::printf(" %-12s %-8s %10s %9s %12s   %s\n", "workload", "client", "IOPS", "MiB/s",
              "CPU[usec/op]", "rounds[IOPS]");
  bool ok = true;
  std::vector<DeviceRow> rows;
  for (const char* w : kWorkloads) {
    rows.push_back(measure(targets.front(), w, runtimeSeconds));
    ok = printRun(w, rows.back().ours) && ok;
    ok = printRun(w, rows.back().fio) && ok;
  }
  std::printf("\n ratios nfsrdma/fio:");
  for (const auto& r : rows) {
    const ReadMeasurement ours = failedOrMedianByIops(r.ours);
    const ReadMeasurement fio = failedOrMedianByIops(r.fio);
    if (!ours.error.empty() || !fio.error.empty() || fio.ops == 0 || ours.ops == 0) continue;
    std::printf(" %s IOPS %.2fx, CPU/op %.2fx;", r.workload, ours.iops() / fio.iops(),
                ours.cpuMicrosPerOp() / fio.cpuMicrosPerOp());
  }
  std::printf("\n");
  if (!jsonPath.empty()) writeRows(jsonPath, device, rows);
  return ok ? 0 : 1;
}

}  // namespace nfsrdma::bench
