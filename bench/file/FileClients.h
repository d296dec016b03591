// How a `file` or `compare` process runs its cells: alone (today's
// commands, no MPI touched), as one rank of an MPI launch (mpirun; the
// cells start at MPI's barrier and rank 0 adds them up), or as one pod of a
// Kubernetes run (--clients N --client-index I --start-at T: each cell at
// its scheduled time, this client's result printed as one JSON line for
// `nfsrdma-bench aggregate`). One client per rank or pod, each with its
// own jobs and files (IOR's file per process), all against the same
// targets; "{rank}" in a target becomes the client's number.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bench/cluster/Cluster.h"
#include "bench/cluster/ClusterCell.h"
#include "bench/file/FileRun.h"
#include "bench/ranks/RankReport.h"

namespace nfsrdma::bench {

struct ClientsArgs {
  double stonewall = 0;       // MPI: seconds after the ramp; 0: none
  std::uint32_t clients = 0;  // pods: how many; 0: not a pod
  std::int64_t clientIndex = -1;
  std::string startAt;  // pods: Unix seconds of the first cell's start
  double cellSlot = 0;  // pods: seconds from one cell's start to the next's
};

// Adds --stonewall, --clients, --client-index, --start-at, --cell-slot.
void addClientsOptions(boost::program_options::options_description& opts, ClientsArgs& a);

// "{rank}" in text replaced by rank: a client's own target; "{pod-ip}" by
// the NFSRDMA_POD_IP variable a Kubernetes pod gets from `kube` (its
// status.podIP), for bind= in an RDMA target. Throws std::invalid_argument
// for {pod-ip} without the variable.
std::string withRank(std::string text, std::uint32_t rank);

class ClientRun {
 public:
  // Starts MPI when an MPI launcher started this process; checks the
  // options against the mode (--stonewall needs MPI, a pod needs all four
  // of its options). Throws std::invalid_argument naming the option.
  static ClientRun start(const ClientsArgs& args, const FileOptions& options);

  bool alone() const { return !cluster_ && !pod_; }
  bool mpi() const { return cluster_ != nullptr; }
  bool pod() const { return pod_; }
  // Rank 0, or alone: the process that prints the run's report.
  bool leader() const { return rank_ == 0 && !pod_; }
  std::uint32_t rank() const { return rank_; }
  std::uint32_t clients() const { return clients_; }
  std::string host() const;
  Cluster* cluster() { return cluster_.get(); }
  // The options as this client runs them: its own jobs (jobBase).
  FileOptions forThisClient(FileOptions o) const;

  struct Cell {
    RunResult local;                 // this client's own run
    std::optional<CellRanks> ranks;  // MPI, at rank 0
    bool allRan = true;              // MPI: the same on every rank
    std::string line;                // pod: the JSON line it printed
  };
  // Alone: runFileBenchmark. MPI: every rank, in the same order. Pod: at the
  // cell's scheduled time, its line printed on stdout.
  // cell: the cell's place in the whole run (the same on every client,
  // whichever cells it could run): its start time for a pod, its stonewall
  // notices' number under MPI. A cell that could not run here comes back
  // with errors 1 and the reason as its first error.
  Cell run(const TargetSpec& target, const FileProfile& profile, const FileOptions& options,
           const RunSettings& settings, std::uint32_t cell);

  // How the cell's clocks were put on one, for its report.
  RankClockNote clockNote(const CellRanks& c) const;
  std::string describe() const;  // "3 MPI ranks", "pod 2 of 4"

 private:
  std::unique_ptr<Cluster> cluster_;
  bool pod_ = false;
  std::uint32_t rank_ = 0;
  std::uint32_t clients_ = 1;
  std::int64_t startAtNs_ = 0;
  std::int64_t slotNs_ = 0;
  std::int64_t stonewallNs_ = 0;
  std::int64_t rampNs_ = 0;
};

// Rank 0's view of a cell: the figures of every rank together, as one run
// of all their jobs over IOR's window (bytes, ops, merged latency, errors),
// with rank 0's own run for what the ranks share (target, profile, notes).
RunResult mergeClients(const RunResult& local, const CellRanks& c, const RankClockNote& clocks);

}  // namespace nfsrdma::bench
