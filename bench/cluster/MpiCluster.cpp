#include "bench/cluster/MpiCluster.h"

// The C API only: OpenMPI's deprecated C++ bindings would need libmpi_cxx.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace nfsrdma::bench {
namespace {

// Point-to-point tags; the collectives have their own context in MPI.
constexpr int kTagPing = 1;
constexpr int kTagPong = 2;
constexpr int kTagDone = 3;
// Ping-pongs per rank: the one with the shortest round trip gives the
// offset (the others waited on a scheduler); 8 cost well under 1 ms.
constexpr int kOffsetRounds = 8;

// An MPI step that failed leaves the ranks out of step with each other: no
// rank can go on to the next collective, so the run ends here, everywhere.
void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr, "nfsrdma-bench: MPI %s: %.*s\n", what, len, text);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

class MpiCluster final : public Cluster {
 public:
  MpiCluster() {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "init");
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      throw std::runtime_error("MPI: the library offers no MPI_THREAD_FUNNELED");
    }
    // Errors come back as codes (and become exceptions with their text)
    // instead of ending the process where MPI found them.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int r = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    rank_ = static_cast<std::uint32_t>(r);
    size_ = static_cast<std::uint32_t>(n);
    host_ = hostName();
  }
  ~MpiCluster() override { MPI_Finalize(); }
  MpiCluster(const MpiCluster&) = delete;
  MpiCluster& operator=(const MpiCluster&) = delete;

  std::uint32_t rank() const override { return rank_; }
  std::uint32_t size() const override { return size_; }
  std::string host() const override { return host_; }

  std::vector<std::string> gather(const std::string& mine) override {
    const int len = static_cast<int>(mine.size());
    std::vector<int> lens(rank_ == 0 ? size_ : 0);
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "gather");
    std::vector<int> displs(lens.size());
    int total = 0;
    for (std::size_t i = 0; i < lens.size(); ++i) {
      displs[i] = total;
      if (lens[i] > std::numeric_limits<int>::max() - total) {
        // MPI counts are ints: rank 0 cannot take that much in one gather.
        std::fprintf(stderr, "nfsrdma-bench: the ranks' results exceed 2 GiB at rank 0\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      total += lens[i];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    check(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR,
                      0, MPI_COMM_WORLD),
          "gatherv");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < lens.size(); ++i) {
      out.push_back(
          all.substr(static_cast<std::size_t>(displs[i]), static_cast<std::size_t>(lens[i])));
    }
    return out;
  }

  std::string broadcast(const std::string& fromRank0) override {
    int len = static_cast<int>(fromRank0.size());
    check(MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD), "broadcast");
    std::string s = rank_ == 0 ? fromRank0 : std::string(static_cast<std::size_t>(len), '\0');
    check(MPI_Bcast(s.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD), "broadcast");
    return s;
  }

  bool allOk(bool ok) override {
    int mine = ok ? 1 : 0, all = 0;
    check(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "allreduce");
    return all == 1;
  }

  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "barrier"); }

  std::vector<ClockOffset> measureOffsets(const std::function<std::int64_t()>& clock) override {
    if (rank_ != 0) {
      for (int i = 0; i < kOffsetRounds; ++i) {
        char ping = 0;
        check(MPI_Recv(&ping, 1, MPI_CHAR, 0, kTagPing, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "recv");
        const std::int64_t now = clock();
        check(MPI_Send(&now, 1, MPI_INT64_T, 0, kTagPong, MPI_COMM_WORLD), "send");
      }
      return {};
    }
    std::vector<ClockOffset> offsets(size_);
    for (std::uint32_t peer = 1; peer < size_; ++peer) offsets[peer] = pingPong(peer, clock);
    return offsets;
  }

  void sendDone(std::uint32_t cell) override {
    // Not blocking: MPI need not deliver even 4 bytes before the peer
    // receives, and the peers receive only once their own jobs are done.
    doneCell_ = cell;
    for (std::uint32_t peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      sends_.emplace_back();
      check(MPI_Isend(&doneCell_, 1, MPI_UINT32_T, static_cast<int>(peer), kTagDone, MPI_COMM_WORLD,
                      &sends_.back()),
            "isend");
    }
  }

  std::uint32_t doneNotices(std::uint32_t cell) override {
    for (;;) {
      int flag = 0;
      check(MPI_Iprobe(MPI_ANY_SOURCE, kTagDone, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE),
            "iprobe");
      if (!flag) break;
      receiveDone(cell);
    }
    return received_;
  }

  void awaitDoneNotices(std::uint32_t cell) override {
    while (received_ < size_ - 1) receiveDone(cell);
    received_ = 0;  // the next cell's count
    check(MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE),
          "waitall");
    sends_.clear();
  }

  [[noreturn]] void abortAll(int status) override {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);
  }

 private:
  ClockOffset pingPong(std::uint32_t peer, const std::function<std::int64_t()>& clock) {
    ClockOffset best{0, -1};
    for (int i = 0; i < kOffsetRounds; ++i) {
      const char ping = 0;
      const std::int64_t t0 = clock();
      check(MPI_Send(&ping, 1, MPI_CHAR, static_cast<int>(peer), kTagPing, MPI_COMM_WORLD), "send");
      std::int64_t theirs = 0;
      check(MPI_Recv(&theirs, 1, MPI_INT64_T, static_cast<int>(peer), kTagPong, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE),
            "recv");
      const std::int64_t t1 = clock();
      const std::int64_t half = (t1 - t0) / 2;
      if (best.halfRoundTripNs < 0 || half < best.halfRoundTripNs) {
        // Their reading is taken to be halfway through the round trip.
        best = {t0 + half - theirs, half};
      }
    }
    return best;
  }

  void receiveDone(std::uint32_t cell) {
    std::uint32_t theirs = 0;
    MPI_Status status;
    check(MPI_Recv(&theirs, 1, MPI_UINT32_T, MPI_ANY_SOURCE, kTagDone, MPI_COMM_WORLD, &status),
          "recv");
    // One notice per process per cell, in order between each pair: a
    // notice of another cell is a bug in the caller, not a network fault.
    if (theirs != cell) {
      throw std::logic_error("stonewall notice of cell " + std::to_string(theirs) + " from rank " +
                             std::to_string(status.MPI_SOURCE) + " during cell " +
                             std::to_string(cell));
    }
    ++received_;
  }

  std::uint32_t rank_ = 0;
  std::uint32_t size_ = 1;
  std::string host_;
  std::uint32_t received_ = 0;      // done notices of the current cell
  std::uint32_t doneCell_ = 0;      // what the pending sends carry
  std::vector<MPI_Request> sends_;  // this cell's notices, completed in awaitDoneNotices
};

}  // namespace

bool launchedByMpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr ||
         std::getenv("PMI_SIZE") != nullptr;
}

std::unique_ptr<Cluster> startMpiCluster() {
  if (!launchedByMpi()) return nullptr;
  return std::make_unique<MpiCluster>();
}

}  // namespace nfsrdma::bench
