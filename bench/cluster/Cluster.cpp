#include "bench/cluster/Cluster.h"

namespace nfsrdma::bench {

ClusterVerdict agree(Cluster& cluster, const std::string& myError) {
  ClusterVerdict v;
  v.allFine = cluster.allOk(myError.empty());
  if (v.allFine) return v;
  const auto all = cluster.gather(myError.empty() ? "" : cluster.host() + "\n" + myError);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const auto nl = all[r].find('\n');
    v.errors.push_back("rank " + std::to_string(r) + " (" + all[r].substr(0, nl) +
                       "): " + all[r].substr(nl + 1));
  }
  return v;
}

}  // namespace nfsrdma::bench
