// A many-rank cell in words and in JSON, as IOR and elbencho users read
// it: the aggregate (IOR's window), elbencho's first done / last done, the
// window all ranks shared, the merged latency percentiles, the clock
// offsets, and one row per rank with the stragglers marked. A cell that
// lost a rank shows only which and why.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "bench/ranks/RankAggregate.h"
#include "bench/report/Json.h"

namespace nfsrdma::bench {

// How the ranks' clocks were put on one: what the header says of them.
struct RankClockNote {
  // "measured at the barrier" (MPI: each rank's offset and its uncertainty)
  // or "not measured: pods use their nodes' wall clocks (NTP)".
  std::string how;
  std::vector<double> offsetsNs;      // by rank, when measured
  std::vector<double> uncertaintyNs;  // half the ping-pong round trip
};

// A many-rank cell's breakdown, as a report carries it.
struct RanksReport {
  std::uint32_t clients = 0;
  RankAggregate aggregate;
  RankClockNote clocks;
};

// The block printed after a cell's own lines (indented one space, as fio's).
std::string formatRanksText(const RankAggregate& a, const RankClockNote& clocks);

// An SVG chart: a bar of MiB/s per rank, stragglers marked, for the
// HTML reports (compare's under each cell, aggregate's page).
std::string ranksSvg(const RankAggregate& a);

// Under key: {"clients", "lost" [...]} or the windows, "latency_usec"
// percentiles of the merged histograms, "clocks" and "per_client" rows
// (with each rank's clock offset and its uncertainty when measured).
void writeRanksJson(JsonWriter& w, std::string_view key, const RankAggregate& a,
                    std::uint32_t clients, const RankClockNote& clocks);

// What writeRanksJson wrote, read back for a report re-rendered from its JSON
// (`compare --results`): everything the text and the chart show (windows,
// merged percentiles, rows, clocks; no histogram bins or progress samples).
// Throws std::runtime_error when v is not such an object.
RanksReport ranksFromJson(const JsonValue& v);

}  // namespace nfsrdma::bench
