// Text and JSON of one file-benchmark run, in fio's conventions: per
// direction "read: IOPS=24.1k, BW=94.2MiB/s (98.8MB/s)(5652MiB/60000msec)",
// the latency summary and fio's percentile block (its default list and unit
// rules), then the group line
// "READ: bw=94.2MiB/s (98.8MB/s), io=5652MiB (5927MB), run=60000msec".
// The JSON carries every figure the text shows and more (all in base units:
// bytes, seconds, microseconds).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bench/file/FileRun.h"
#include "bench/report/Json.h"

namespace nfsrdma::bench {

// The percentiles of the JSON and the side-by-side reports.
inline constexpr double kPercentiles[] = {50, 90, 99, 99.9, 99.99};
// fio's default percentile list, which the text report shows.
inline constexpr double kFioPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                             80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
// fio's sig_figs default: IOPS, bandwidths and byte totals keep 4 digits.
inline constexpr unsigned kFioSignificantFigures = 4;
// "p50", "p90", "p99", "p99.9", "p99.99"
std::string percentileName(double p);
// JSON key: "p50", "p99_9", "p99_99"
std::string percentileKey(double p);

// A number as fio's num2str prints it: at most maxlen digits, divided by
// 1000 (or 1024 when binary) with the prefix k/M/G (Ki/Mi/Gi) until it fits,
// the last remainder shown as maxlen - digits - 1 decimals, none when that is
// one or fewer (rounded): 3016, 24.1k, 178k, 94.2MiB/s, 2121MiB.
std::string fioNumber(std::uint64_t num, unsigned maxlen, bool binary, std::string_view unit);
// IOPS as fio prints them ("IOPS=24.1k"): whole operations per second, 4 digits.
std::string formatIops(double iops);

std::string formatRunText(const RunResult& r);
// The run as one JSON object (written into w, keyed by key when inside an object).
void writeRunJson(JsonWriter& w, const RunResult& r, std::string_view key = {});

}  // namespace nfsrdma::bench
