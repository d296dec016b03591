// What `tune` makes better: one figure per trial, higher better for the
// search (a latency or a cost is inverted), and how the report shows it in
// the figure's own unit (fio's: IOPS, MiB/s, a p99 in microseconds).
#pragma once

#include <string>

#include "bench/file/FileRun.h"

namespace nfsrdma::bench {

enum class Objective {
  Iops,      // requests a second, reads and writes together
  Mibps,     // MiB a second, reads and writes together
  P99,       // the 99th percentile latency (the worse direction's), lower better
  CpuPerOp,  // this process's CPU time per request, lower better
};

// "iops", "mibps", "p99", "cpu-per-op"; throws std::invalid_argument naming
// the text and the four it takes.
Objective parseObjective(const std::string& text);
const char* objectiveName(Objective o);

// The trial's figure for the search (higher better): IOPS, MiB/s,
// 1e6 / p99 in us, 1e6 / CPU us per request. cpuSeconds: the process's
// CPU time over the run. 0 when the run moved nothing.
double objectiveValue(Objective o, const RunResult& r, double cpuSeconds);
// A search figure in the objective's unit: "41,230 IOPS", "812.0 MiB/s",
// "p99 1,204 us", "9.8 us CPU/op".
std::string objectiveText(Objective o, double value);
// The column header of the figure: "IOPS", "MiB/s", "p99[us]", "CPU/op[us]".
const char* objectiveUnit(Objective o);
// The figure in that unit (the inverse of the inverted ones).
double objectiveInUnit(Objective o, double value);
// The figure in that unit as a table cell: "41,230", "812.0", "1,204", "9.84".
std::string objectiveCell(Objective o, double value);

}  // namespace nfsrdma::bench
