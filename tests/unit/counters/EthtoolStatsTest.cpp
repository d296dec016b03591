// counters/EthtoolStats: the string set's 32-byte names (padded, full
// length, short block refused), which counters are sampled, and this
// host's loopback (no driver statistics) reading nothing.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "counters/EthtoolStats.h"

namespace nfsrdma::counters {
namespace {

std::string entry(const std::string& name) {
  std::string e = name;
  e.resize(32, '\0');
  return e;
}

TEST(EthtoolStats, NamesAreNulPaddedEntriesOf32Bytes) {
  const std::string full(32, 'x');  // a name of 32 characters has no NUL
  const std::string block = entry("rx_prio3_pause") + entry("rx_discards_phy") + full;
  EXPECT_EQ(parseEthtoolNames(block, 3),
            (std::vector<std::string>{"rx_prio3_pause", "rx_discards_phy", full}));
  EXPECT_EQ(parseEthtoolNames(block, 1), std::vector<std::string>{"rx_prio3_pause"});
}

TEST(EthtoolStats, ABlockShorterThanItsNamesIsRefused) {
  try {
    parseEthtoolNames(entry("a") + "short", 2);
    FAIL() << "a block of 37 bytes cannot hold 2 names";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ethtool strings: 2 names need 64 bytes, got 37");
  }
}

TEST(EthtoolStats, SamplesPauseDiscardDropEcnCnpAndBufferCounters) {
  for (const char* n : {"rx_prio3_pause", "tx_pause_ctrl_phy", "rx_discards_phy",
                        "rx_queue_0_drops", "rx_ecn_mark", "np_cnp_sent", "rx_out_of_buffer"}) {
    EXPECT_TRUE(ethtoolCounterWanted(n)) << n;
  }
  for (const char* n : {"rx_packets", "tx_bytes", "rx_queue_0_xdp_packets", "peer_ifindex"}) {
    EXPECT_FALSE(ethtoolCounterWanted(n)) << n;
  }
}

TEST(EthtoolStats, ANetdevWithoutDriverStatisticsReadsNothing) {
  EXPECT_FALSE(EthtoolStats("lo", ethtoolCounterWanted).read());
  EXPECT_FALSE(EthtoolStats("no-such-netdev0", ethtoolCounterWanted).read());
}

}  // namespace
}  // namespace nfsrdma::counters
