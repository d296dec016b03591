// What a cell's sampler recorded: one series per counter source, each a
// reading at the cell's start, one about every 250 ms during it and one at
// its end. A source names where its counters come from; its readings hold
// the counters that source had at that moment (absent is not zero: a
// counter missing from a reading was not there to read).
//
// The sources and their counter names (what the verdicts read):
//   client               our NFS client, summed over the cell's connections:
//                        calls, replies, retransmits, reconnects (cumulative);
//                        wanted, in_flight, credits, slots (gauges)
//   rdma:DEV/PORT        the port's hw_counters/ and counters/ (cumulative)
//   net:IF               the netdev's statistics/ (cumulative)
//   host-cpu             /proc/stat's "cpu" line in ticks: user nice system
//                        idle iowait irq softirq steal (cumulative); cpus,
//                        hz (gauges)
//   bench-threads        the benchmark's threads: busiest_ticks (summed
//                        over the intervals, the ticks of the thread that
//                        used the most CPU in each), longest_wait_ms
//                        (summed likewise, the longest any thread waited
//                        on a run queue for a CPU, from schedstat), ticks
//                        (all of them);
//                        threads, hz (gauges)
//   nfsd-pool            /proc/fs/nfsd/pool_stats summed over the pools:
//                        packets-arrived sockets-enqueued threads-woken
//   nfsd-threads         threads, busy (not idle, state other than I) as
//                        gauges; ticks (their CPU, cumulative)
//   svcrdma              /proc/sys/sunrpc/svc_rdma/rdma_stat_* (cumulative;
//                        reset when written)
//   mountstats:MNT       the kernel mount's xprt fields (sends, req_u,
//                        bklog_u, connect_count, ...) and per operation
//                        OP.ops, OP.transmissions, OP.queue_ms, OP.rtt_ms,
//                        OP.execute_ms, OP.errors (cumulative)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "counters/NamedValues.h"

namespace nfsrdma::counters {

struct Reading {
  double seconds = 0;  // since the cell's first reading
  NamedValues values;
};

struct Series {
  std::string source;               // "rdma:rxe1/1", "host-cpu", ...
  std::vector<std::string> gauges;  // names that are levels, not counts
  std::vector<Reading> readings;    // in time order
  bool isGauge(std::string_view name) const {
    for (const auto& g : gauges) {
      if (g == name) return true;
    }
    return false;
  }
};

// Every counter name of a series' readings, each once, in the order first seen.
std::vector<std::string> counterNames(const Series& s);

// Keeps each series' readings that bound the window [from, to] (seconds on
// the readings' clock): the last one at or before from, those inside, and
// the first at or after to. A cell's jobs connect and ramp before their
// measured window; the verdicts judge the window.
void trimToWindow(Series& s, double from, double to);

// A cell's series, in the order the sampler found the sources.
struct CellSeries {
  double intervalSeconds = 0.25;  // what the sampler aimed at
  double cpuSeconds = 0;          // the CPU the readings cost (the sampler's own cost)
  std::vector<Series> series;
  const Series* find(std::string_view source) const {
    for (const auto& s : series) {
      if (s.source == source) return &s;
    }
    return nullptr;
  }
};

}  // namespace nfsrdma::counters
