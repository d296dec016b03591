// Text and JSON of one file-benchmark run, in fio's conventions: per
// direction "read: IOPS=..., BW=...MiB/s (...MB/s)(...MiB/...msec)", the
// completion latency summary and percentiles (p50, p90, p99, p99.9, p99.99
// from the histogram), then the group line
// "READ: bw=...MiB/s (...MB/s), io=...MiB (...MB), run=...msec".
// The JSON carries every figure the text shows and more (all in base units:
// bytes, seconds, microseconds).
#pragma once

#include <string>

#include "bench/FileJson.h"
#include "bench/FileRun.h"

namespace nfsrdma::bench {

// The percentiles every report shows.
inline constexpr double kPercentiles[] = {50, 90, 99, 99.9, 99.99};
// "p50", "p90", "p99", "p99.9", "p99.99"
std::string percentileName(double p);
// JSON key: "p50", "p99_9", "p99_99"
std::string percentileKey(double p);

// "12.3k" style IOPS as fio prints them.
std::string formatIops(double iops);

std::string formatRunText(const RunResult& r);
// The run as one JSON object (written into w, keyed by key when inside an object).
void writeRunJson(JsonWriter& w, const RunResult& r, std::string_view key = {});

}  // namespace nfsrdma::bench
