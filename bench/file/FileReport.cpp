#include "bench/file/FileReport.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <optional>
#include <vector>

#include "bench/file/CounterReport.h"
#include "bench/report/Format.h"

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

std::string fioNumber(std::uint64_t num, unsigned maxlen, bool binary, std::string_view unit) {
  static constexpr const char* kDecimal[] = {"", "k", "M", "G", "T", "P", "E"};
  static constexpr const char* kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  const std::uint64_t thousand = binary ? 1024 : 1000;
  std::size_t prefix = 0;
  std::optional<std::uint64_t> remainder;  // of the last division: the fraction to show
  while (prefix + 1 < std::size(kDecimal) && std::to_string(num).size() > maxlen) {
    remainder = num % thousand;
    num /= thousand;
    ++prefix;
  }
  const std::string suffix =
      std::string(binary ? kBinary[prefix] : kDecimal[prefix]) + std::string(unit);
  if (!remainder) return std::to_string(num) + suffix;
  const std::size_t digits = std::to_string(num).size();
  // fio leaves out a single decimal: 178.4k is shown as 178k.
  if (digits + 1 >= maxlen)
    return std::to_string(num + (*remainder >= thousand / 2 ? 1 : 0)) + suffix;
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, "%.*f", static_cast<int>(maxlen - digits - 1),
                static_cast<double>(*remainder) / static_cast<double>(thousand));
  if (fraction[0] == '1') ++num;  // rounded up to the next whole number (current fio carries too)
  return std::to_string(num) + "." + (fraction + 2) + suffix;
}

std::string formatIops(double iops) {
  return fioNumber(static_cast<std::uint64_t>(std::max(iops, 0.0)), kFioSignificantFigures, false,
                   "");
}

namespace {

// fio's unit for a latency summary: msec only when min, max, mean and stdev
// all exceed a millisecond, usec when they all exceed a microsecond.
struct LatUnit {
  const char* name;
  std::uint64_t divisor;
};
LatUnit summaryUnit(const LatencyHistogram& h) {
  const auto all = [&](double limit) {
    return static_cast<double>(h.min()) > limit && static_cast<double>(h.max()) > limit &&
           h.mean() > limit && h.stdev() > limit;
  };
  if (all(1e6)) return {"msec", 1000000};
  if (all(1e3)) return {"usec", 1000};
  return {"nsec", 1};
}

// fio's percentile block: its default list, its unit rule (usec once the
// smallest shown value exceeds 2 us and the largest 100 us; msec at 2 ms and
// 100 ms), values rounded up, as many per line as fit 80 columns.
std::string percentileBlock(const LatencyHistogram& h) {
  std::vector<std::uint64_t> values;
  for (double p : kFioPercentiles)
    values.push_back(static_cast<std::uint64_t>(std::llround(h.percentile(p))));
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  unsigned scaleDowns = 0;
  const char* unit = "nsec";
  if (*lo > 2000000 && *hi > 99999999) {
    scaleDowns = 2;
    unit = "msec";
  } else if (*lo > 2000 && *hi > 99999) {
    scaleDowns = 1;
    unit = "usec";
  }
  for (std::uint64_t& v : values) {
    for (unsigned i = 0; i < scaleDowns; ++i) v = (v + 999) / 1000;
  }
  const std::uint64_t largest = *std::max_element(values.begin(), values.end());
  const int width = std::max<int>(5, static_cast<int>(std::to_string(largest).size()));
  const std::size_t perLine = static_cast<std::size_t>((80 - 7) / (2 + 10 + width));
  std::string out = fmt("    lat percentiles (%s):\n     |", unit);
  for (std::size_t j = 0; j < values.size(); ++j) {
    if (j != 0 && j % perLine == 0) out += "     |";
    const bool last = j + 1 == values.size();
    out += fmt(" %5.2fth=[%*llu]%c", kFioPercentiles[j], width,
               static_cast<unsigned long long>(values[j]), last ? '\n' : ',');
    if (!last && j % perLine == perLine - 1) out += "\n";
  }
  return out;
}

// fio's pair of figures, binary first and decimal in brackets:
// "94.2MiB/s (98.8MB/s)", "5652MiB (5927MB)".
std::string fioBinaryAndDecimal(std::uint64_t n, std::string_view unit) {
  return fioNumber(n, kFioSignificantFigures, true, unit) + " (" +
         fioNumber(n, kFioSignificantFigures, false, unit) + ")";
}

// Whole bytes per second over the run's window, as fio computes its bw.
std::uint64_t bytesPerSecond(const RunResult& r, const DirectionResult& x) {
  return static_cast<std::uint64_t>(r.seconds > 0 ? static_cast<double>(x.bytes) / r.seconds : 0);
}

// "  client: shared (1 session, 4 connections)" and, on a shared client, a
// line per connection as `nfsrdma-client --stats` prints them.
std::string clientText(const ClientUse& c) {
  if (c.mode.empty()) return {};
  std::string out = "  client: " + c.describe() + "\n";
  if (c.mode != "shared") return out;
  for (std::size_t i = 0; i < c.perConnection.size(); ++i) {
    const ConnectionUse& u = c.perConnection[i];
    out +=
        fmt("    connection %zu: %s calls=%llu bytes-sent=%llu bytes-received=%llu credits=%u "
            "reconnects=%llu up=%s\n",
            i, u.peer.c_str(), static_cast<unsigned long long>(u.calls),
            static_cast<unsigned long long>(u.bytesSent),
            static_cast<unsigned long long>(u.bytesReceived), u.credits,
            static_cast<unsigned long long>(u.reconnects), u.up ? "yes" : "no");
  }
  return out;
}

void writeClientJson(JsonWriter& w, const ClientUse& c) {
  if (c.mode.empty()) {
    w.null("client");
    return;
  }
  w.beginObject("client");
  w.field("mode", c.mode).field("sessions", std::uint64_t{c.sessions});
  w.field("connections", std::uint64_t{c.connections});
  w.beginArray("per_connection");
  for (const ConnectionUse& u : c.perConnection) {
    w.beginObject().field("job", std::uint64_t{u.job}).field("peer", u.peer);
    w.field("calls", u.calls).field("bytes_sent", u.bytesSent);
    w.field("bytes_received", u.bytesReceived).field("credits", std::uint64_t{u.credits});
    w.field("reconnects", u.reconnects).field("up", u.up).endObject();
  }
  w.endArray();
  w.endObject();
}

// The options a run was given, as its JSON's "options" object.
void writeOptionsJson(JsonWriter& w, const FileOptions& options) {
  w.beginObject("options");
  w.field("size_bytes_per_job", options.sizeBytes).field("nrfiles", std::uint64_t{options.nrfiles});
  w.field("runtime_s", std::chrono::duration<double>(options.runtime).count());
  w.field("io_bytes_per_job", options.ioBytes);
  w.field("time_based", options.ioBytes == 0);
  w.field("ramp_s", std::chrono::duration<double>(options.ramp).count());
  w.field("direct", options.direct).field("seed", options.seed).field("verify", options.verify);
  w.field("drop_server_cache", options.dropServerCache);
  w.field("working_set_bytes", options.workingSetBytes());
  w.endObject();
}

// What --verify checked, as the run's "verify" object.
void writeVerifyJson(JsonWriter& w, const RunResult& r) {
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
}

// What riding through outages cost, as the run's "recovery" object.
void writeRecoveryJson(JsonWriter& w, const OutageAccount& o) {
  w.beginObject("recovery");
  w.field("outages", o.outages)
      .field("reconnects", o.reconnects)
      .field("new_sessions", o.newSessions);
  w.field("replayed", o.replayed).field("resent", o.resent).field("unrecovered", o.unrecovered);
  w.field("seconds_without_service", static_cast<double>(o.outageMillis) / 1e3);
  w.field("reclaimed_opens", o.reclaimedOpens).field("reopened_opens", o.reopenedOpens);
  w.field("rewritten_bytes", o.rewrittenBytes);
  w.endObject();
}

}  // namespace

std::string formatRunText(const RunResult& r) {
  std::string out;
  const std::string effective = r.effectiveIodepth > 0 && r.effectiveIodepth < r.iodepth
                                    ? " (effective " + std::to_string(r.effectiveIodepth) + ")"
                                    : std::string();
  out += fmt("%s: (profile=%s, bs=%uB, iodepth=%u%s, numjobs=%u%s) target %s\n", r.target.c_str(),
             r.profile.c_str(), r.blockSize, r.iodepth, effective.c_str(), r.numjobs,
             r.readPercent > 0 && r.readPercent < 100
                 ? (", rwmixread=" + std::to_string(r.readPercent)).c_str()
                 : "",
             r.targetDescription.c_str());
  out += clientText(r.client);
  const double msec = r.seconds * 1e3;
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    if (!r.has(d)) continue;
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    out +=
        fmt("  %s: IOPS=%s, BW=%s(%s/%.0fmsec)\n", directionName(d), formatIops(r.iops(d)).c_str(),
            fioBinaryAndDecimal(bytesPerSecond(r, x), "B/s").c_str(),
            fioNumber(x.bytes, kFioSignificantFigures, true, "B").c_str(), msec);
    const LatUnit u = summaryUnit(x.lat);
    const auto scaled = [&](double ns) { return ns / static_cast<double>(u.divisor); };
    out += fmt("    lat (%s): min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", u.name,
               fioNumber(x.lat.min() / u.divisor, 6, false, "").c_str(),
               fioNumber(x.lat.max() / u.divisor, 6, false, "").c_str(), scaled(x.lat.mean()),
               scaled(x.lat.stdev()));
    out += percentileBlock(x.lat);
  }
  for (const auto& n : r.notes) out += "  note: " + n + "\n";
  if (r.sampled()) {
    for (const auto& line : boundLines(r.bound)) out += "  " + line + "\n";
  }
  if (r.commitSeconds > 0.0005)
    out += fmt("  commit/fsync after the writes: %.0f msec (not in run=)\n", r.commitSeconds * 1e3);
  if (r.verified) {
    out += fmt("  verify: %llu blocks (%s) checked, %llu mismatches\n",
               static_cast<unsigned long long>(r.verify.unitsChecked),
               formatBytes(static_cast<double>(r.verify.bytesChecked)).c_str(),
               static_cast<unsigned long long>(r.verify.mismatches));
    for (const auto& m : r.verify.first) {
      out += fmt("    mismatch: file %u offset %llu (first bad byte %llu): %s\n", m.fileId,
                 static_cast<unsigned long long>(m.offset),
                 static_cast<unsigned long long>(m.firstBadByte), m.kind.c_str());
    }
  }
  if (r.errors)
    out += fmt("  errors: %llu, first: %s\n", static_cast<unsigned long long>(r.errors),
               r.firstError.c_str());
  out += "\nRun status (all jobs):\n";
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    if (!r.has(d)) continue;
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    out += fmt("  %s: bw=%s, io=%s, run=%.0fmsec\n", d == IoDirection::Read ? "READ" : "WRITE",
               fioBinaryAndDecimal(bytesPerSecond(r, x), "B/s").c_str(),
               fioBinaryAndDecimal(x.bytes, "B").c_str(), msec);
  }
  return out;
}

void writeRunJson(JsonWriter& w, const RunResult& r, std::string_view key) {
  w.beginObject(key);
  w.field("target", r.target)
      .field("target_description", r.targetDescription)
      .field("profile", r.profile);
  w.field("block_bytes", std::uint64_t{r.blockSize}).field("iodepth", std::uint64_t{r.iodepth});
  w.field("effective_iodepth", std::uint64_t{r.effectiveIodepth ? r.effectiveIodepth : r.iodepth});
  w.field("numjobs", std::uint64_t{r.numjobs}).field("rwmixread", std::uint64_t{r.readPercent});
  writeOptionsJson(w, r.options);
  // What the cache was, not what was asked for (options.drop_server_cache): a drop can fail.
  w.field("server_cache", r.serverCacheDetail.empty() ? std::string(serverCacheName(r.serverCache))
                                                      : r.serverCacheDetail);
  w.field("run_s", r.seconds).field("commit_s", r.commitSeconds);
  for (IoDirection d : {IoDirection::Read, IoDirection::Write}) {
    const DirectionResult& x = r.dir[static_cast<int>(d)];
    if (!r.has(d)) {
      w.null(directionName(d));
      continue;
    }
    w.beginObject(directionName(d));
    w.field("ops", x.ops).field("bytes", x.bytes);
    w.field("iops", r.iops(d))
        .field("mib_per_s", r.mibPerSecond(d))
        .field("mb_per_s", r.mbPerSecond(d));
    w.beginObject("lat_us");
    w.field("min", static_cast<double>(x.lat.min()) / 1e3)
        .field("max", static_cast<double>(x.lat.max()) / 1e3);
    w.field("mean", x.lat.mean() / 1e3).field("stdev", x.lat.stdev() / 1e3);
    for (double p : kPercentiles) w.field(percentileKey(p), x.lat.percentile(p) / 1e3);
    w.endObject();
    w.endObject();
  }
  writeVerifyJson(w, r);
  w.field("errors", r.errors).field("first_error", r.firstError);
  writeRecoveryJson(w, r.outage);
  writeClientJson(w, r.client);
  if (r.sampled()) writeBoundJson(w, r.bound);
  writeCountersJson(w, r.series);
  w.beginArray("notes");
  for (const auto& n : r.notes) w.field("", n);
  w.endArray();
  w.endObject();
}

}  // namespace nfsrdma::bench
