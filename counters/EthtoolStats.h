// A netdev's driver statistics, what `ethtool -S IF` prints, read without
// running ethtool: the SIOCETHTOOL ioctl's ETHTOOL_GSTRINGS gives the
// names (once), ETHTOOL_GSTATS the values (each reading: one ioctl, no
// fork). The pause, discard and congestion counters of RoCE NICs (mlx5:
// rx_prio3_pause, rx_discards_phy, rx_out_of_buffer, ...) are only here,
// not in /sys/class/net/IF/statistics/.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "counters/NamedValues.h"
#include "util/UniqueFd.h"

namespace nfsrdma::counters {

// The ETH_SS_STATS string set as the kernel returns it: count names of
// ETH_GSTRING_LEN (32) bytes, each NUL-padded (a name of 32 characters has
// no NUL). Throws std::invalid_argument "ethtool strings: ..." when the
// block is shorter than count names.
std::vector<std::string> parseEthtoolNames(std::string_view block, std::size_t count);

// The counters worth sampling for the verdicts: pause frames, discards,
// drops, ECN marks, CNPs and buffer exhaustion (by name).
bool ethtoolCounterWanted(std::string_view name);

class EthtoolStats {
 public:
  // Finds the driver's statistics of netdev once; a netdev without any
  // (or a host where the ioctl is refused) reads nothing.
  EthtoolStats(std::string netdev, std::function<bool(std::string_view)> keep);
  // The kept counters, named "ethtool.NAME"; nothing when there are none.
  std::optional<NamedValues> read() const;

 private:
  std::string netdev_;
  UniqueFd socket_;                 // what the ioctls go through
  std::vector<std::string> names_;  // every statistic, in the driver's order
  std::vector<std::size_t> kept_;   // indices into names_
};

}  // namespace nfsrdma::counters
