// The processes of a many-rank run, seen from one of them: which one it
// is, and the few collective steps the benchmark takes with the others.
// MpiCluster (MpiCluster.h) is the real one, over the MPI library of the
// launcher the user runs (mpirun, the Kubeflow MPI operator); a unit test
// may stand in a double for it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace nfsrdma::bench {

// A rank's clock against rank 0's, measured by ping-pong: rank 0's clock
// minus this one's at the same moment, known to within halfRoundTripNs.
struct ClockOffset {
  std::int64_t offsetNs = 0;
  std::int64_t halfRoundTripNs = 0;
};

class Cluster {
 public:
  virtual ~Cluster() = default;
  virtual std::uint32_t rank() const = 0;
  virtual std::uint32_t size() const = 0;
  virtual std::string host() const = 0;
  // Every process's text, in rank order, at rank 0; empty elsewhere.
  virtual std::vector<std::string> gather(const std::string& mine) = 0;
  // Rank 0's text, on every process.
  virtual std::string broadcast(const std::string& fromRank0) = 0;
  // True on every process when ok is true on every process.
  virtual bool allOk(bool ok) = 0;
  virtual void barrier() = 0;
  // Every process's clock() against rank 0's; the result at rank 0 (one per
  // rank, rank 0's own zero), empty elsewhere.
  virtual std::vector<ClockOffset> measureOffsets(const std::function<std::int64_t()>& clock) = 0;
  // --stonewall: each process sends one notice per cell to every other and
  // so receives size() - 1. doneNotices counts those of the cell that have
  // arrived (no wait); awaitDoneNotices waits for the rest.
  virtual void sendDone(std::uint32_t cell) = 0;
  virtual std::uint32_t doneNotices(std::uint32_t cell) = 0;
  virtual void awaitDoneNotices(std::uint32_t cell) = 0;
  // Ends every process of the run now, with this exit status (after an
  // error that the others cannot learn of by a collective step).
  [[noreturn]] virtual void abortAll(int status) = 0;
};

// What each process reports of a step that can fail: every process's error
// (empty: fine) at rank 0, and on every process whether all were fine.
struct ClusterVerdict {
  bool allFine = true;
  std::vector<std::string> errors;  // at rank 0: "rank 2 (node-c): why", in rank order
};
ClusterVerdict agree(Cluster& cluster, const std::string& myError);

}  // namespace nfsrdma::bench
