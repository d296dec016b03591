// The knobs `tune` may turn for a target and a workload, and their levels:
// for our client (an nfs: target, or the embedded server) the URL keys that
// change how it moves the workload's bytes. A knob that cannot matter for
// the workload is left out with the reason, so the header can say which
// knobs were in play and which were left alone and why. Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/tune/TuneSearch.h"
#include "client/ClientOptions.h"

namespace nfsrdma::bench {

struct LeftAlone {
  std::string knob;
  std::string why;
};

struct KnobSpace {
  std::vector<Knob> knobs;
  std::vector<LeftAlone> leftAlone;
};

// What the workload asks of the client, as far as the knobs care.
struct ClientWorkload {
  std::uint32_t blockSize = 4096;
  std::uint32_t iodepth = 32;  // per job
  std::uint32_t numjobs = 1;
  bool reads = true;    // the profile reads (a mix counts)
  bool writes = false;  // the profile writes (a mix counts)
};

// "nfsd.threads" and "svcrdma.max_requests": the knobs that live on the
// server (bench/tune/ServerKnobs.h), not in the client's URL or mount.
bool isServerKnob(const std::string& name);

// A knob of numbers: the levels and the start's among them, ascending, the
// start's index its start.
Knob numericKnob(const std::string& name, std::vector<std::uint32_t> levels, std::uint32_t start);

// Our client's knobs for the URL's options (what it gave is the start):
//   nconnect            1, 2, 4, 8 (and the start's)
//   iothreads           auto, 1, 2, 4 (auto: one per two cores, at most nconnect)
//   memreg              pooled, per-io (RDMA only)
//   reads-per-compound  1, 2, 4, 8 (TCP and reads only)
//   qd                  the start's, the workload's need, twice it (only
//                       when the URL capped it with qd=: else the session
//                       asks for what the jobs keep in flight)
//   iosize              256k, 1m, 4m (only for blocks above 256 KiB: below,
//                       every level moves a request in one piece)
KnobSpace clientKnobSpace(const ClientOptions& url, const ClientWorkload& w);

// Keeps only the knobs named in list ("nconnect,qd"); the others join
// leftAlone ("not in --knobs"). Throws std::invalid_argument naming a
// knob that is not in the space, with those that are (or why it is left
// alone for this workload).
void restrictKnobs(KnobSpace& space, const std::string& list);

// A setting written as the knobs' keys ("nconnect=8&nfsd.threads=32", ','
// also joining): the knobs it does not name at their start. A number a
// knob's levels lack becomes one of them (a rule of thumb's nfsd.threads=8).
// Throws std::invalid_argument starting with option, naming the pair that
// is no KNOB=LEVEL, a knob not in play (with why, when it was left alone)
// or a level the knob cannot take.
Setting settingFromKeys(KnobSpace& space, const std::string& keys, const std::string& option);

// The URL with the levels of the setting that differ from the start as
// its query keys (a key the URL had is replaced; "auto" removes it: the
// client's own default); the start's levels are what the URL says already.
std::string urlWithSetting(const std::string& url, const std::vector<Knob>& knobs,
                           const Setting& setting, const Setting& start);
// "nconnect=4&memreg=pooled": the levels that differ from the start, as
// URL keys (empty when none do).
// sep: ',' for mount options.
std::string changedKeys(const std::vector<Knob>& knobs, const Setting& setting,
                        const Setting& start, char sep = '&');

// The knobs to screen first for the start's verdicts (bench/bound's tags,
// the most frequent one deciding, a verdict's first tag counting twice): credits ->
// svcrdma.max_requests, qd, nconnect; server-threads -> nfsd.threads; client-cpu -> iothreads,
// nconnect, memreg; latency -> nconnect, qd, reads-per-compound; link -> iosize, nconnect. Indices
// into knobs; the rest keep their order.
std::vector<std::size_t> knobsForVerdicts(const std::vector<Knob>& knobs,
                                          const std::vector<std::string>& verdicts);

}  // namespace nfsrdma::bench
