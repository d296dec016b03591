#include "bench/link/LinkTables.h"

#include <algorithm>

namespace nfsrdma::bench {

ReportTable bandwidthTable(BandwidthUnit unit) {
  const std::string u = unitLabel(unit);
  const std::string k = unitKey(unit);
  return ReportTable({{"#bytes", "bytes", 0},
                      {"#iterations", "iterations", 0},
                      {"BW peak[" + u + "]", "bw_peak_" + k, 2, true},
                      {"BW average[" + u + "]", "bw_average_" + k, 2, true},
                      {"MsgRate[Mpps]", "msg_rate_mpps", 6}});
}

void addBandwidthRow(ReportTable& t, const BandwidthResult& r, BandwidthUnit unit) {
  const double avg = r.averageBytesPerSecond();
  const double peak = std::max(r.peakBytesPerSecond, avg);
  t.addRow({static_cast<double>(r.messageBytes), static_cast<double>(r.iterations),
            bandwidthIn(unit, peak), bandwidthIn(unit, avg), r.messageRateMpps()});
}

ReportTable latencyTable() {
  return ReportTable({{"#bytes", "bytes", 0},
                      {"#iterations", "iterations", 0},
                      {"t_min[usec]", "t_min_us", 2},
                      {"t_max[usec]", "t_max_us", 2},
                      {"t_typical[usec]", "t_typical_us", 2},
                      {"t_avg[usec]", "t_avg_us", 2},
                      {"t_stdev[usec]", "t_stdev_us", 2},
                      {"99% percentile[usec]", "p99_us", 2},
                      {"99.9% percentile[usec]", "p99_9_us", 2}});
}

void addLatencyRow(ReportTable& t, const LatencyResult& r) {
  t.addRow({static_cast<double>(r.messageBytes), static_cast<double>(r.iterations), r.minUs,
            r.maxUs, r.typicalUs, r.averageUs, r.stdevUs, r.p99Us, r.p999Us});
}

}  // namespace nfsrdma::bench
