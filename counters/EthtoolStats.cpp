#include "counters/EthtoolStats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "util/UniqueFd.h"

namespace nfsrdma::counters {
namespace {

// A driver with more statistics than this is read in part (mlx5 has some
// thousands with all its queues).
constexpr std::uint32_t kMaxStats = 16384;

// One SIOCETHTOOL call on netdev with the command buffer buf, through
// the socket fd (any socket will do; the reader keeps one open).
bool ethtool(const UniqueFd& fd, const std::string& netdev, void* buf) {
  if (netdev.size() >= IFNAMSIZ || fd.get() < 0) return false;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, netdev.c_str(), netdev.size() + 1);
  ifr.ifr_data = static_cast<char*>(buf);
  return ::ioctl(fd.get(), SIOCETHTOOL, &ifr) == 0;
}

// How many ETH_SS_STATS strings the driver has; 0 when none or refused.
std::uint32_t statsCount(const UniqueFd& fd, const std::string& netdev) {
  // ethtool_sset_info ends in a flexible array: one u32 follows for our one set.
  std::vector<std::uint64_t> buf(3, 0);
  auto* info = reinterpret_cast<ethtool_sset_info*>(buf.data());
  info->cmd = ETHTOOL_GSSET_INFO;
  info->sset_mask = 1ULL << ETH_SS_STATS;
  if (!ethtool(fd, netdev, info) || (info->sset_mask & (1ULL << ETH_SS_STATS)) == 0) return 0;
  std::uint32_t n = 0;
  std::memcpy(&n, reinterpret_cast<const char*>(info) + sizeof(ethtool_sset_info), sizeof n);
  return n;
}

std::vector<std::string> statsNames(const UniqueFd& fd, const std::string& netdev,
                                    std::uint32_t count) {
  std::vector<std::uint64_t> buf((sizeof(ethtool_gstrings) + count * ETH_GSTRING_LEN) / 8 + 1, 0);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(buf.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = count;
  if (!ethtool(fd, netdev, strings) || strings->len != count) return {};
  const std::string_view block(reinterpret_cast<const char*>(strings->data),
                               std::size_t{count} * ETH_GSTRING_LEN);
  return parseEthtoolNames(block, count);
}

}  // namespace

std::vector<std::string> parseEthtoolNames(std::string_view block, std::size_t count) {
  if (count > block.size() / ETH_GSTRING_LEN) {
    throw std::invalid_argument("ethtool strings: " + std::to_string(count) + " names need " +
                                std::to_string(count * ETH_GSTRING_LEN) + " bytes, got " +
                                std::to_string(block.size()));
  }
  std::vector<std::string> names;
  names.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view entry = block.substr(i * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
    names.emplace_back(entry.substr(0, entry.find('\0')));
  }
  return names;
}

bool ethtoolCounterWanted(std::string_view name) {
  for (std::string_view part : {"pause", "discard", "drop", "ecn", "cnp", "out_of_buffer"}) {
    if (name.find(part) != std::string_view::npos) return true;
  }
  return false;
}

EthtoolStats::EthtoolStats(std::string netdev, std::function<bool(std::string_view)> keep)
    : netdev_(std::move(netdev)), socket_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
  const std::uint32_t count = statsCount(socket_, netdev_);
  if (count == 0 || count > kMaxStats) return;
  names_ = statsNames(socket_, netdev_, count);
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (!names_[i].empty() && keep(names_[i])) kept_.push_back(i);
  }
}

std::optional<NamedValues> EthtoolStats::read() const {
  if (kept_.empty()) return std::nullopt;
  std::vector<std::uint64_t> buf(sizeof(ethtool_stats) / 8 + names_.size() + 1, 0);
  auto* stats = reinterpret_cast<ethtool_stats*>(buf.data());
  stats->cmd = ETHTOOL_GSTATS;
  stats->n_stats = static_cast<std::uint32_t>(names_.size());
  if (!ethtool(socket_, netdev_, stats) || stats->n_stats != names_.size()) return std::nullopt;
  NamedValues out;
  for (const std::size_t i : kept_) {
    out.values.emplace_back("ethtool." + names_[i], static_cast<std::int64_t>(stats->data[i]));
  }
  return out;
}

}  // namespace nfsrdma::counters
