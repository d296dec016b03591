// The bounds compare finds from the cell's figure against the disk and the
// link (bench/compare/CacheFlags): passed in as flags, turned into findings
// with the flag's own text as evidence. A kind not known here keeps its own
// name as the bound, so nothing compare said is dropped.
#include <array>

#include "bench/bound/BoundRules.h"

namespace nfsrdma::bench {
namespace {

struct FlagBound {
  std::string_view kind;
  std::string_view bound;
  std::string_view knob;
};

constexpr std::array kFlagBounds{
    FlagBound{"disk-bound", "disk", "a faster disk or more of them on the server"},
    FlagBound{"link-bound", "link",
              "a faster link, or more ports (the link carries all it can; nconnect= does not "
              "widen it)"},
    FlagBound{"server-page-cache", "server-cache",
              "--size above the server's RAM or --drop-server-cache to measure the disk"},
    FlagBound{"server-write-cache", "server-cache",
              "--io-bytes above the server's RAM to measure the disk, not its page cache"},
    FlagBound{"above-disk", "server-cache",
              "--server-mem, and the disk figure of this export's own disk"},
};

}  // namespace

void judgeFlags(Judging& j) {
  for (const auto& [kind, detail] : j.facts.flags) {
    Finding f{kind, detail, "", false};
    for (const auto& fb : kFlagBounds) {
      if (fb.kind != kind) continue;
      f.bound = fb.bound;
      f.knob = fb.knob;
    }
    j.add(std::move(f));
  }
}

}  // namespace nfsrdma::bench
