#include "bench/FileReport.h"

#include <cstdarg>
#include <cstdio>

namespace nfsrdma::bench {

std::string percentileName(double p) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "p%g", p);
  return buf;
}

std::string percentileKey(double p) {
  std::string s = percentileName(p);
  for (char& c : s) {
    if (c == '.') c = '_';
  }
  return s;
}

std::string formatIops(double iops) {
  char buf[32];
  if (iops >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.2fM", iops / 1e6);
  } else if (iops >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.1fk", iops / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f", iops);
  }
  return buf;
}

namespace {

__attribute__((format(printf, 1, 2))) std::string line(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

// Latencies in the unit fio would pick for them.
struct LatUnit {
  const char* name;
  double divisor;
};
LatUnit latUnit(const LatencyHistogram& h) {
  if (h.percentile(50) >= 10e6) return {"msec", 1e6};
  return {"usec", 1e3};
}

}  // namespace

std::string formatRunText(const RunResult& r) {
  std::string out;
  out += line("%s: (profile=%s, bs=%uB, iodepth=%u, numjobs=%u%s) target %s\n", r.target.c_str(), r.profile.c_str(),
              r.blockSize, r.iodepth, r.numjobs,
              r.readPercent > 0 && r.readPercent < 100 ? (", rwmixread=" + std::to_string(r.readPercent)).c_str() : "",
              r.targetDescription.c_str());
  const double msec = r.seconds * 1e3;
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    if (!r.has(d)) continue;
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    out += line("  %s: IOPS=%s, BW=%.1fMiB/s (%.1fMB/s)(%s/%.0fmsec)\n", directionName(d), formatIops(r.iops(d)).c_str(),
                r.mibPerSecond(d), r.mbPerSecond(d), formatBytes(static_cast<double>(x.bytes)).c_str(), msec);
    const LatUnit u = latUnit(x.lat);
    out += line("    lat (%s): min=%.1f, max=%.1f, avg=%.2f, stdev=%.2f\n", u.name,
                static_cast<double>(x.lat.min()) / u.divisor,
                static_cast<double>(x.lat.max()) / u.divisor, x.lat.mean() / u.divisor,
                x.lat.stdev() / u.divisor);
    std::string pct;
    for (double p : kPercentiles) {
      pct += line("%s%s=%.1f", pct.empty() ? "" : ", ", percentileName(p).c_str(),
                  x.lat.percentile(p) / u.divisor);
    }
    out += line("    lat percentiles (%s): %s\n", u.name, pct.c_str());
  }
  for (const auto& n : r.notes) out += "  note: " + n + "\n";
  if (r.commitSeconds > 0.0005) out += line("  commit/fsync after the writes: %.0f msec (not in run=)\n", r.commitSeconds * 1e3);
  if (r.verified) {
    out += line("  verify: %llu blocks (%s) checked, %llu mismatches\n",
                static_cast<unsigned long long>(r.verify.unitsChecked),
                formatBytes(static_cast<double>(r.verify.bytesChecked)).c_str(),
                static_cast<unsigned long long>(r.verify.mismatches));
    for (const auto& m : r.verify.first) {
      out += line("    mismatch: file %u offset %llu (first bad byte %llu): %s\n", m.fileId,
                  static_cast<unsigned long long>(m.offset), static_cast<unsigned long long>(m.firstBadByte),
                  m.kind.c_str());
    }
  }
  if (r.errors) out += line("  errors: %llu, first: %s\n", static_cast<unsigned long long>(r.errors), r.firstError.c_str());
  out += "\nRun status (all jobs):\n";
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    if (!r.has(d)) continue;
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    out += line("  %s: bw=%.1fMiB/s (%.1fMB/s), io=%s (%.1fMB), run=%.0fmsec\n", d == IoDirection::Read ? "READ" : "WRITE",
                r.mibPerSecond(d), r.mbPerSecond(d), formatBytes(static_cast<double>(x.bytes)).c_str(),
                static_cast<double>(x.bytes) / 1e6, msec);
  }
  return out;
}

void writeRunJson(JsonWriter& w, const RunResult& r, std::string_view key) {
  w.beginObject(key);
  w.field("target", r.target).field("target_description", r.targetDescription).field("profile", r.profile);
  w.field("block_bytes", std::uint64_t{r.blockSize}).field("iodepth", std::uint64_t{r.iodepth});
  w.field("numjobs", std::uint64_t{r.numjobs}).field("rwmixread", std::uint64_t{r.readPercent});
  w.beginObject("options");
  w.field("size_bytes_per_job", r.options.sizeBytes).field("nrfiles", std::uint64_t{r.options.nrfiles});
  w.field("runtime_s", std::chrono::duration<double>(r.options.runtime).count());
  w.field("io_bytes_per_job", r.options.ioBytes);
  w.field("time_based", r.options.ioBytes == 0);
  w.field("ramp_s", std::chrono::duration<double>(r.options.ramp).count());
  w.field("direct", r.options.direct).field("seed", r.options.seed).field("verify", r.options.verify);
  w.field("drop_server_cache", r.options.dropServerCache);
  w.field("working_set_bytes", r.options.workingSetBytes());
  w.endObject();
  w.field("run_s", r.seconds).field("commit_s", r.commitSeconds);
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    if (!r.has(d)) {
      w.null(directionName(d));
      continue;
    }
    w.beginObject(directionName(d));
    w.field("ops", x.ops).field("bytes", x.bytes);
    w.field("iops", r.iops(d)).field("mib_per_s", r.mibPerSecond(d)).field("mb_per_s", r.mbPerSecond(d));
    w.beginObject("lat_us");
    w.field("min", static_cast<double>(x.lat.min()) / 1e3)
        .field("max", static_cast<double>(x.lat.max()) / 1e3);
    w.field("mean", x.lat.mean() / 1e3).field("stdev", x.lat.stdev() / 1e3);
    for (double p : kPercentiles) w.field(percentileKey(p), x.lat.percentile(p) / 1e3);
    w.endObject();
    w.endObject();
  }
  w.beginObject("verify");
  w.field("enabled", r.verified).field("blocks_checked", r.verify.unitsChecked);
  w.field("bytes_checked", r.verify.bytesChecked).field("mismatches", r.verify.mismatches);
  w.beginArray("first_mismatches");
  for (const auto& m : r.verify.first) {
    w.beginObject().field("file_id", std::uint64_t{m.fileId}).field("offset", m.offset);
    w.field("first_bad_byte", m.firstBadByte).field("kind", m.kind).endObject();
  }
  w.endArray();
  w.endObject();
  w.field("errors", r.errors).field("first_error", r.firstError);
  w.beginArray("notes");
  for (const auto& n : r.notes) w.field("", n);
  w.endArray();
  w.endObject();
}

}  // namespace nfsrdma::bench
