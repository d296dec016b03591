// The link benchmark's result tables: perftest's bandwidth and latency
// columns on the report layer's table model, so text, CSV and JSON of a link
// run share one set of columns.
#pragma once

#include "bench/link/LinkStats.h"
#include "bench/report/ReportTable.h"

namespace nfsrdma::bench {

// perftest's bandwidth columns in the chosen unit.
ReportTable bandwidthTable(BandwidthUnit unit);
void addBandwidthRow(ReportTable& table, const BandwidthResult& r, BandwidthUnit unit);
// ib_send_lat's latency columns (microseconds).
ReportTable latencyTable();
void addLatencyRow(ReportTable& table, const LatencyResult& r);

}  // namespace nfsrdma::bench
