// Counter series for the verdict's tests, built as the sampler records them:
// a reading every 0.25 s, cumulative counters given by what they add per
// interval, gauges by their level. healthyCell() is a cell over RDMA that
// hit no bound: each test changes the one source its rule reads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/bound/Bound.h"
#include "counters/Series.h"

namespace nfsrdma::bench::testing {

class SeriesBuilder {
 public:
  SeriesBuilder(std::string source, int readings) {
    s_.source = std::move(source);
    for (int i = 0; i < readings; ++i) s_.readings.push_back({0.25 * i, {}});
  }
  // A cumulative counter adding `perInterval` in every interval.
  SeriesBuilder& rate(const std::string& name, std::int64_t perInterval) {
    return steps(name, std::vector<std::int64_t>(s_.readings.size() - 1, perInterval));
  }
  // A cumulative counter adding deltas[i] in interval i (from 1000, so a
  // counter that did not start at zero is what the rules see).
  SeriesBuilder& steps(const std::string& name, const std::vector<std::int64_t>& deltas) {
    std::int64_t v = 1000;
    for (std::size_t i = 0; i < s_.readings.size(); ++i) {
      if (i > 0) v += deltas.at(i - 1);
      s_.readings[i].values.values.emplace_back(name, v);
    }
    return *this;
  }
  // The values as read, reading by reading (a reset shows as a drop).
  SeriesBuilder& values(const std::string& name, const std::vector<std::int64_t>& at) {
    for (std::size_t i = 0; i < s_.readings.size(); ++i) {
      s_.readings[i].values.values.emplace_back(name, at.at(i));
    }
    return *this;
  }
  SeriesBuilder& gauge(const std::string& name, std::int64_t level) {
    s_.gauges.push_back(name);
    for (auto& r : s_.readings) r.values.values.emplace_back(name, level);
    return *this;
  }
  counters::Series build() const { return s_; }

 private:
  counters::Series s_;
};

inline constexpr int kReadings = 41;  // a 10 s cell: 40 intervals

// The host's /proc/stat line adding `busy` ticks of user and system and the
// rest of 2 CPUs x 25 ticks idle per interval.
inline counters::Series hostCpu(std::int64_t user, std::int64_t system, std::int64_t softirq,
                                int readings = kReadings) {
  const std::int64_t idle = 50 - user - system - softirq;
  return SeriesBuilder("host-cpu", readings)
      .rate("user", user)
      .rate("nice", 0)
      .rate("system", system)
      .rate("idle", idle)
      .rate("iowait", 0)
      .rate("irq", 0)
      .rate("softirq", softirq)
      .rate("steal", 0)
      .gauge("cpus", 2)
      .gauge("hz", 100)
      .build();
}

// Our client's series: `calls` per interval, the calls it wanted out and had
// in flight, the credits it held; 64 session slots, nothing resent.
inline counters::Series clientSeries(std::int64_t wanted, std::int64_t inFlight,
                                     std::int64_t credits, int readings = kReadings) {
  return SeriesBuilder("client", readings)
      .rate("calls", 2500 * inFlight)
      .rate("replies", 2500 * inFlight)
      .rate("retransmits", 0)
      .rate("reconnects", 0)
      .gauge("wanted", wanted)
      .gauge("in_flight", inFlight)
      .gauge("credits", credits)
      .gauge("slots", 64)
      .build();
}

// A 4 KiB random read at 32 in flight over RDMA against knfsd on this host:
// 8 nfsd threads mostly idle, no loss, CPUs half idle.
inline counters::CellSeries healthyCell(int readings = kReadings) {
  counters::CellSeries c;
  c.series.push_back(clientSeries(32, 32, 64, readings));
  c.series.push_back(SeriesBuilder("rdma:rxe1/1", readings)
                         .rate("sent_pkts", 10000)
                         .rate("rcvd_pkts", 10000)
                         .rate("out_of_seq_request", 0)
                         .rate("duplicate_request", 0)
                         .rate("rcvd_seq_err", 0)
                         .rate("completer_retry_err", 0)
                         .rate("retry_exceeded_err", 0)
                         .build());
  c.series.push_back(hostCpu(10, 10, 5, readings));
  c.series.push_back(SeriesBuilder("bench-threads", readings)
                         .rate("busiest_ticks", 10)
                         .rate("ticks", 12)
                         .gauge("hz", 100)
                         .build());
  c.series.push_back(SeriesBuilder("nfsd-pool", readings)
                         .rate("packets-arrived", 10000)
                         .rate("sockets-enqueued", 10000)
                         .rate("threads-woken", 9000)
                         .build());
  c.series.push_back(SeriesBuilder("nfsd-threads", readings)
                         .gauge("threads", 8)
                         .gauge("busy", 2)
                         .rate("ticks", 5)
                         .build());
  c.series.push_back(SeriesBuilder("svcrdma", readings)
                         .rate("rdma_stat_recv", 10000)
                         .rate("rdma_stat_sq_starve", 0)
                         .build());
  return c;
}

inline CellFacts rdmaFacts(std::uint32_t iodepth = 32) {
  CellFacts f;
  f.transport = "rdma";
  f.blockSize = 4096;
  f.iodepth = iodepth;
  f.effectiveIodepth = iodepth;
  f.numjobs = 1;
  f.seconds = 10;
  f.iops = 40000;
  f.meanLatencyUs = 800;  // 40,000 x 800 us = 32 in flight
  return f;
}

// Puts `s` in place of the cell's series of the same source (or adds it).
inline void replaceSeries(counters::CellSeries& c, counters::Series s) {
  for (auto& have : c.series) {
    if (have.source == s.source) {
      have = std::move(s);
      return;
    }
  }
  c.series.push_back(std::move(s));
}

inline void removeSeries(counters::CellSeries& c, const std::string& source) {
  std::erase_if(c.series, [&](const counters::Series& s) { return s.source == source; });
}

}  // namespace nfsrdma::bench::testing
