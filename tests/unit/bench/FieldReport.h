// A compare report holding the table of a field measurement (host disk,
// NFS over RDMA, NFS over TCP; 128 jobs x 100 MiB on a 256 GiB server, a
// 389 Gb/s RoCE link and 23.4 Gb/s TCP), flags computed, for tests of the
// renderers and the baseline logic.
#pragma once

#include "bench/compare/CompareMatrix.h"

namespace nfsrdma::bench::testing {

inline CompareReport fieldNotesReport() {
  CompareReport r;
  r.config = {{"command", "field notes, by hand"}, {"workload", "fio -direct=1 -ioengine=libaio"}};
  r.diskTarget = "local";
  r.serverMemoryBytes = 256.0 * 1073741824.0;
  r.serverMemorySource = "assumed";
  CompareTarget local{"local", "path", "host disk", true, "", false, std::nullopt, "", "", 1};
  CompareTarget rdma{"nfs-rdma", "nfs",       "NFS over RDMA", true,   "",
                     true,       389.0e9 / 8, "ib_write_bw",   "rdma", 1};
  CompareTarget tcp{"nfs-tcp", "nfs",      "NFS over TCP", true,  "",
                    true,      23.4e9 / 8, "iperf3",       "tcp", 1};
  r.targets = {local, rdma, tcp};
  r.ratios = defaultRatios(r.targets);
  struct Row {
    const char* profile;
    IoDirection dir;
    std::uint32_t bs;
    double v[3];
  };
  const Row rows[] = {
      {"4k-randwrite", IoDirection::Write, 4096, {1128, 525, 291}},
      {"4k-randread", IoDirection::Read, 4096, {1441, 674, 311}},
      {"128k-write", IoDirection::Write, 131072, {3842, 2814, 2249}},
      {"128k-read", IoDirection::Read, 131072, {6503, 16.5 * 1024, 2556}},
      {"4m-write", IoDirection::Write, 4194304, {3838, 3840, 2520}},
      {"4m-read", IoDirection::Read, 4194304, {5510, 42.4 * 1024, 2754}},
  };
  for (const auto& row : rows) {
    r.rows.emplace_back(row.profile, row.dir);
    for (std::size_t i = 0; i < 3; ++i) {
      CompareCell c;
      c.profile = row.profile;
      c.direction = row.dir;
      c.target = r.targets[i].name;
      c.ran = true;
      c.mibPerSecond = row.v[i];
      c.mbPerSecond = row.v[i] * 1.048576;
      c.iops = row.v[i] * 1048576.0 / row.bs;
      c.blockSize = row.bs;
      c.iodepth = row.bs == 4096 ? 128 : 2;
      c.numjobs = row.bs == 4096 ? 1 : 128;
      c.workingSetBytes = 128 * 100 * 1048576.0;
      c.seconds = 30;
      c.latUs = {{"min", 10}, {"mean", 50}, {"max", 900},   {"stdev", 5},   {"p50", 45},
                 {"p90", 70}, {"p99", 120}, {"p99_9", 300}, {"p99_99", 800}};
      r.cells.push_back(c);
    }
  }
  computeFlags(r);
  return r;
}

}  // namespace nfsrdma::bench::testing
