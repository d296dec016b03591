// What the engines share (file/engines/Engine.h): the effective iodepth of
// our client's slots, the waits for a busy server. The tests came from
// reviews that found a bug; each fails without its fix.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "bench/file/engines/Engine.h"
#include "bench/job/Interrupt.h"
#include "client/Error.h"
#include "client/nfs4/Nfs4Status.h"
#include "tests/unit/bench/ErrorOf.h"

namespace nfsrdma::bench {
namespace {

using namespace std::chrono_literals;

// Only reads share a COMPOUND's slot; writes take one each (effective_iodepth
// with reads-per-compound counted writes as grouped).
TEST(Engine, EffectiveIodepthGroupsOnlyReads) {
  // iodepth 128 of 4 KiB, 16 slots (or RDMA credits), reads-per-compound 4: groups of 4.
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 100, 1U << 20, 16, 4, 16), 64U);
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 0, 1U << 20, 16, 4, 16), 16U);
  // 70/30: 16 slots / (0.7/4 + 0.3) = 33.7 requests.
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 70, 1U << 20, 16, 4, 16), 33U);
  // Without grouping, or with blocks above one READ: a slot per piece.
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 100, 1U << 20, 16, 1, 16), 16U);
  EXPECT_EQ(nfsEffectiveIodepth(16, 4U << 20, 100, 1U << 20, 32, 4, 1), 8U);
  // Groups are at most a quarter of the queue, and what the client takes.
  EXPECT_EQ(nfsEffectiveIodepth(8, 4096, 100, 1U << 20, 1, 16, 16), 2U);
  EXPECT_EQ(nfsEffectiveIodepth(128, 4096, 100, 1U << 20, 16, 16, 2), 32U);
  // Never more than asked for.
  EXPECT_EQ(nfsEffectiveIodepth(32, 4096, 100, 1U << 20, 64, 4, 16), 32U);
}

// A call the server keeps answering "grace" is not started again after
// Ctrl-C, and not beyond the budget (a job waiting out a busy server did not
// see Ctrl-C).
TEST(Engine, BusyRetriesStopAtAnInterruptAndAtTheBudget) {
  clearInterrupt();
  const auto grace = [] {
    throw NfsException(makeError(nfs4::statusError(nfs4::kErrGrace), "open /export/f"));
  };
  int calls = 0;
  try {
    callWhileBusy(
        [&] {
          if (++calls == 2) requestInterrupt(SIGINT);
          grace();
        },
        std::chrono::minutes(2));
    ADD_FAILURE() << "no exception";
  } catch (const Interrupted& e) {
    EXPECT_EQ(e.signal(), SIGINT);
  }
  EXPECT_EQ(calls, 2);
  // After Ctrl-C a first attempt still runs (the cleanup's REMOVEs), but a busy one is not
  // repeated.
  calls = 0;
  EXPECT_NO_THROW(callWhileBusy([&] { ++calls; }, 1s));
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_THROW(callWhileBusy(
                   [&] {
                     ++calls;
                     grace();
                   },
                   std::chrono::minutes(2)),
               Interrupted);
  EXPECT_EQ(calls, 1);
  clearInterrupt();

  calls = 0;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    callWhileBusy(
        [&] {
          ++calls;
          grace();
        },
        300ms);
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("NFS4ERR_GRACE"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("busy-timeout=300 ms in all"), std::string::npos)
        << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 300ms);
  EXPECT_GE(calls, 2);
  calls = 0;
  EXPECT_THROW(callWhileBusy(
                   [&] {
                     ++calls;
                     grace();
                   },
                   0ms),
               NfsException);  // busy-timeout=0: the first answer is the error
  EXPECT_EQ(calls, 1);
  calls = 0;
  EXPECT_THROW(callWhileBusy(
                   [&] {
                     ++calls;
                     throw NfsException(makeError(nfs4::statusError(nfs4::kErrNoEnt), "open x"));
                   },
                   2s),
               NfsException);
  EXPECT_EQ(calls, 1);
  // The slice the client gets is what bounds the wait after Ctrl-C.
  EXPECT_LE(kBusySlice, 2s);
}

// --client shared: one client for all jobs needs a connection per job and
// every job's slots, within the URL's keys and the client's limits.
TEST(Engine, ASharedClientGetsAConnectionAndTheSlotsOfEveryJob) {
  TargetSpec t = TargetSpec::parse("nfs-tcp", "nfs:nfs://127.0.0.1:2049/export?qd=40");
  t.nfs.givenQueueDepth.reset();  // as a run's withQueueDepthFor leaves it: 40 per job
  TargetSpec s = withSharedClientFor(t, 4);
  EXPECT_EQ(s.nfs.nconnect, 4U);
  EXPECT_EQ(s.nfs.queueDepth, 160U);
  s = withSharedClientFor(t, 32);
  EXPECT_EQ(s.nfs.nconnect, 16U);      // the client's and the kernel's most
  EXPECT_EQ(s.nfs.queueDepth, 1024U);  // qd='s most
  // What the URL says stands.
  const TargetSpec given =
      TargetSpec::parse("nfs-tcp", "nfs:nfs://127.0.0.1:2049/export?nconnect=2&qd=8");
  s = withSharedClientFor(given, 4);
  EXPECT_EQ(s.nfs.nconnect, 2U);
  EXPECT_EQ(s.nfs.queueDepth, 8U);
  const TargetSpec path = TargetSpec::parse("local", "path:/tmp");
  EXPECT_EQ(withSharedClientFor(path, 4).nfs.nconnect, 1U);
  EXPECT_EQ(testing::errorOf([&] { makeEngineShare(path, 4); }),
            "--client shared: target local uses the path engine; only the nfs engine (our "
            "client) can share one client between jobs");
}

TEST(Engine, ClientUseSaysSessionsAndConnections) {
  ClientUse u;
  u.mode = "shared";
  u.sessions = 1;
  u.connections = 4;
  EXPECT_EQ(u.describe(), "shared (1 session, 4 connections)");
  u.mode = "per-job";
  u.sessions = 3;
  u.connections = 3;
  EXPECT_EQ(u.describe(), "per-job (3 sessions, 1 connection each)");
}

}  // namespace
}  // namespace nfsrdma::bench
