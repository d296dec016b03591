// The verdict of one cell: which bounds its figure ran into, each with one
// line of the numbers that show it and the knob that moves it.
//
// Bound tags: disk, link, server-cache (found by compare and passed in as
// flags), server-threads, credits, fabric-loss, fabric-congestion,
// client-cpu, server-cpu, host-cpu (a host the client and the server share,
// saturated by neither alone), latency; "none" when no bound fired. Two bounds
// are both named ("server-threads+fabric-loss"). A finding whose evidence
// is thin (the counters moved in fewer than two intervals, too few samples,
// a handful of events against many packets) is listed with "evidence thin"
// but kept out of the tag: it says what was seen without claiming it bounded
// the figure. A source the rules needed and the sampler did not record is
// named in notMeasured; absent is never read as zero.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "counters/Series.h"

namespace nfsrdma::bench {

class JsonWriter;

// What the benchmark knows of the cell besides the counters.
struct CellFacts {
  // "rdma", "tcp" (our client), "kernel-nfs" (a path on an NFS mount),
  // "local" or "block" (no network between the jobs and the data).
  std::string transport;
  std::uint32_t blockSize = 0;
  std::uint32_t iodepth = 0;           // per job, as asked
  std::uint32_t effectiveIodepth = 0;  // per job, after the slots granted
  std::uint32_t numjobs = 0;
  double seconds = 0;
  double iops = 0;           // all jobs
  double meanLatencyUs = 0;  // all jobs
  // The server runs on this host (nfsd, or the embedded nfs-ganesha on
  // loopback): its CPU time is in the host's, so a busy host is not the
  // client's alone.
  bool serverOnThisHost = false;
  // Bounds the compare command found: its flag kind ("link-bound",
  // "server-page-cache", "server-write-cache", "above-disk", "disk-bound",
  // ...) and the flag's text.
  std::vector<std::pair<std::string, std::string>> flags;
};

struct Finding {
  std::string bound;     // one of the tags above
  std::string evidence;  // one line, with the numbers
  std::string knob;      // what moves it
  bool thin = false;     // seen, but too little to say it bounded the figure
};

struct Verdict {
  std::vector<Finding> findings;
  std::vector<std::string> notMeasured;  // "nfsd-pool: not on this host"
  // The bounds of the findings that are not thin, joined by '+', each once
  // in the order found; "none" when there is none.
  std::string tag() const;
};

Verdict judgeCell(const CellFacts& facts, const counters::CellSeries& cell);

// The verdict under a cell of the text table: "bound: TAG", then per finding
// "  BOUND: EVIDENCE -> KNOB", then "  not measured: A; B" when any.
std::vector<std::string> boundLines(const Verdict& v);

// The cell's "bound" member: {tag, findings: [{bound, evidence, knob,
// thin}], not_measured: [...]}, into the open object of `w`.
void writeBoundJson(JsonWriter& w, const Verdict& v);

}  // namespace nfsrdma::bench
