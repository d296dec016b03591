// The nfs engine: our client's asynchronous READ/WRITE. Each slot resubmits
// from its own completion on the client's I/O thread (no hand-off to the job
// thread per operation, the cost the anchor measures); the job thread only
// starts the slots and waits. Writes are UNSTABLE and COMMITted by finish(),
// as an application's write()+fsync() over a kernel mount would be.
//
// With reads-per-compound=N (URL key) the slots form groups of up to N (and
// at most a quarter of the queue): a group's READs of one file go out as one
// COMPOUND (Client::preadvAsync) and the group refills when all of its
// requests are back. Each request still completes, and is timed, on its own.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/file/engines/Engine.h"
#include "client/Client.h"
#include "client/nfs4/Nfs4Status.h"

namespace nfsrdma::bench {
namespace {

// One job's run on the client: the driver's slots kept busy from the
// client's completions. Callbacks run on the client's I/O thread and refer
// to this object, which lives on the job thread's stack until every slot is
// done (wait() makes sure of it).
class NfsJobRun {
 public:
  NfsJobRun(JobDriver& d, Client& client, const std::vector<OpenFile>& files,
            std::uint32_t readsPerCompound)
      : d_(d),
        client_(client),
        files_(files),
        maxIo_(client.maxIoSize()),
        // At least four COMPOUNDs stay in flight: one big COMPOUND at a time
        // would serialise what the queue depth is there to overlap.
        per_(static_cast<std::uint32_t>(
            std::min<std::size_t>({readsPerCompound, std::max<std::size_t>(1, d.slots() / 4),
                                   client.maxReadsPerCompound(d.blockSize())}))),
        slots_(d.slots()),
        groups_((d.slots() + per_ - 1) / per_),
        active_(d.slots()) {}

  void start() {
    d_.start();
    if (per_ > 1) {
      for (std::uint32_t g = 0; g < groups_.size(); ++g) submitGroup(g);
    } else {
      for (std::uint32_t i = 0; i < d_.slots(); ++i) submit(i);
    }
  }

  // Until every slot is done, bounded by the driver's hard stop.
  void wait() {
    std::unique_lock lock(mu_);
    // In slices: an interrupt moves the hard stop closer (JobDriver::hardStop).
    while (BenchClock::now() < d_.hardStop()) {
      if (cv_.wait_for(lock, std::chrono::milliseconds(200), [&] { return active_ == 0; })) return;
    }
    if (active_ == 0) return;
    // The client's own call timeouts fire long before this; the last guard.
    // Callbacks still reference this frame, so fail them by closing the
    // connection and wait for them before returning (a shared client's
    // other jobs fail with it: the cell is lost either way).
    lock.unlock();
    client_.close();
    lock.lock();
    if (!cv_.wait_for(lock, std::chrono::seconds(30), [&] { return active_ == 0; })) {
      std::fprintf(stderr, "nfsrdma-bench: nfs requests outstanding after close; aborting\n");
      std::abort();
    }
    throw std::runtime_error("nfs: requests still outstanding after the run's grace period");
  }

 private:
  struct Slot {
    IoRequest req;
    std::size_t pieces = 0;  // outstanding sub-requests
    std::size_t bytes = 0;
    std::string error;
    bool retired = false;  // grouped mode: finished, no more requests (its group's thread only)
  };
  // Grouped (vectored) mode: slot i belongs to group i / per_.
  struct Group {
    std::size_t outstanding = 0;
  };

  void finishSlot() {
    std::lock_guard lock(mu_);
    if (--active_ == 0) cv_.notify_all();
  }

  // One sub-request done; the last one completes the slot's request.
  void piece(std::uint32_t i, std::size_t want, const IoResult& r) {
    Slot& s = slots_[i];
    bool last = false;
    {
      std::lock_guard lock(mu_);
      if (r.error) {
        if (s.error.empty()) s.error = r.error.message();
      } else if (r.bytes != want) {
        if (s.error.empty()) {
          s.error = std::string(directionName(s.req.op)) + " at " + std::to_string(s.req.offset) +
                    ": " + std::to_string(r.bytes) + " of " + std::to_string(want) +
                    " bytes (short)";
        }
      } else {
        s.bytes += r.bytes;
      }
      last = --s.pieces == 0;
    }
    if (!last) return;
    d_.complete(s.req, s.bytes, s.error);
    if (per_ <= 1) {
      submit(i);
      return;
    }
    bool groupDone = false;
    {
      std::lock_guard lock(mu_);
      groupDone = --groups_[i / per_].outstanding == 0;
    }
    if (groupDone) submitGroup(i / per_);
  }

  // Sends slot i's current request (already taken from the driver), in
  // pieces of the client's max I/O.
  void issue(std::uint32_t i) {
    Slot& s = slots_[i];
    const std::size_t n = s.req.buf.size();
    {
      std::lock_guard lock(mu_);
      s.pieces = (n + maxIo_ - 1) / maxIo_;
      s.bytes = 0;
      s.error.clear();
    }
    const OpenFile& f = files_[s.req.file];
    for (std::size_t pos = 0; pos < n; pos += maxIo_) {
      const std::size_t len = std::min(maxIo_, n - pos);
      auto part = s.req.buf.subspan(pos, len);
      auto cb = [this, i, len](const IoResult& r) { piece(i, len, r); };
      if (s.req.op == IoDirection::Read) {
        client_.preadAsync(f, part, s.req.offset + pos, cb);
      } else {
        client_.pwriteAsync(f, part, s.req.offset + pos, StableHow::kUnstable, cb);
      }
    }
  }

  void submit(std::uint32_t i) {
    if (!d_.next(i, slots_[i].req)) {
      finishSlot();
      return;
    }
    issue(i);
  }

  void submitGroup(std::uint32_t g) {
    const std::uint32_t first = g * per_;
    const std::uint32_t end = std::min<std::uint32_t>(first + per_, d_.slots());
    std::vector<std::uint32_t> live;
    for (std::uint32_t i = first; i < end; ++i) {
      // A slot the job stopped in an earlier round of its group (the
      // deadline passed between two of the group's slots) is done already:
      // counting it again would take another slot's place in active_.
      if (slots_[i].retired) continue;
      if (d_.next(i, slots_[i].req)) {
        live.push_back(i);
      } else {
        slots_[i].retired = true;
        finishSlot();
      }
    }
    if (live.empty()) return;
    {
      std::lock_guard lock(mu_);
      groups_[g].outstanding = live.size();
    }
    issueGrouped(live);
  }

  // READs of one file that fit one READ each go together; the rest alone.
  void issueGrouped(const std::vector<std::uint32_t>& live) {
    std::vector<std::uint32_t> single;
    std::vector<std::vector<std::uint32_t>> byFile(files_.size());
    for (std::uint32_t i : live) {
      const IoRequest& r = slots_[i].req;
      if (r.op == IoDirection::Read && r.buf.size() <= maxIo_) {
        byFile[r.file].push_back(i);
      } else {
        single.push_back(i);
      }
    }
    for (std::size_t file = 0; file < byFile.size(); ++file) {
      const auto& members = byFile[file];
      if (members.size() < 2) {
        single.insert(single.end(), members.begin(), members.end());
        continue;
      }
      readTogether(file, members);
    }
    for (std::uint32_t i : single) issue(i);
  }

  void readTogether(std::size_t file, const std::vector<std::uint32_t>& members) {
    std::vector<Client::ReadVector> reads;
    for (std::uint32_t i : members) {
      std::lock_guard lock(mu_);
      slots_[i].pieces = 1;
      slots_[i].bytes = 0;
      slots_[i].error.clear();
      reads.push_back({slots_[i].req.buf, slots_[i].req.offset});
    }
    client_.preadvAsync(files_[file], reads, [this, members](std::size_t k, const IoResult& r) {
      const std::uint32_t i = members[k];
      piece(i, slots_[i].req.buf.size(), r);
    });
  }

  JobDriver& d_;
  Client& client_;
  const std::vector<OpenFile>& files_;
  const std::size_t maxIo_;
  const std::uint32_t per_;
  std::vector<Slot> slots_;
  std::vector<Group> groups_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::uint32_t active_;  // slots not done; under mu_
};

// What every job's client is told: retry a busy server in short slices
// (callWhileBusy repeats them, seeing Ctrl-C between), say once per call
// why it waits, and print what the client recovered from.
struct BusyNotice {
  explicit BusyNotice(std::chrono::milliseconds b) : budget(b) {}
  const std::chrono::milliseconds budget;
  std::atomic<bool> told{false};  // said for the current call
};

ClientOptions jobClientOptions(const TargetSpec& t, const std::shared_ptr<BusyNotice>& notice) {
  ClientOptions o = t.nfs;
  // The job keeps its buffers for the client's whole life (JobDriver owns
  // them), which is the pooled mode's contract; a URL can still ask for
  // memreg=per-io to measure registration per I/O.
  if (!o.givenPerIoRegistration) o.perIoRegistration = false;
  // The client retries a busy server for short slices and the job repeats
  // them up to the URL's busy-timeout (callWhileBusy): between slices it
  // sees Ctrl-C, which a client waiting out a 90 s grace period would not.
  o.busyTimeout = std::min(o.busyTimeout, kBusySlice);
  // A server in its grace period holds the job's OPENs: say why it waits,
  // once per call (not once per slice), with the whole budget.
  o.onBusy = [notice](const std::string& what) {
    if (notice->told.exchange(true)) return;
    const auto cut = what.find("; sending it again");
    std::fprintf(stderr,
                 "nfsrdma-bench: %s; sending it again for up to %lld ms (busy-timeout; Ctrl-C "
                 "stops it)\n",
                 what.substr(0, cut).c_str(), static_cast<long long>(notice->budget.count()));
  };
  // The job's open files die with a lost client ID: its errors then say why.
  o.onSessionReplaced = [](const std::string& what) {
    std::fprintf(stderr, "nfsrdma-bench: note: %s\n", what.c_str());
  };
  o.onRecovered = [](const std::string& what) {
    std::fprintf(stderr, "nfsrdma-bench: note: %s\n", what.c_str());
  };
  // The job's data was committed before: a session the server keeps after
  // the run is a warning, not a failed job.
  o.onTeardownError = [](const std::string& what) {
    std::fprintf(stderr, "nfsrdma-bench: warning: closing the session: %s\n", what.c_str());
  };
  return o;
}

OutageAccount outagesOf(const Client& client) {
  OutageAccount a;
  const ClientStats s = client.stats();
  a.outages = s.session.outages;
  a.reconnects = s.session.reconnects;
  a.newSessions = s.session.recoveries;
  a.replayed = s.session.replayed;
  a.resent = s.session.resent;
  a.unrecovered = s.session.unrecovered;
  a.outageMillis = s.session.outageMillis;
  a.reclaimedOpens = s.recovery.reclaimedOpens;
  a.reopenedOpens = s.recovery.reopenedOpens;
  a.rewrittenBytes = s.recovery.rewrittenBytes;
  return a;
}

// Each connection's counters; the cell says whose job they are.
std::vector<ConnectionUse> connectionsOf(const Client& client) {
  std::vector<ConnectionUse> out;
  for (const ConnectionStats& c : client.stats().connections) {
    ConnectionUse u;
    u.peer = c.peer;
    u.calls = c.rpc.calls;
    u.bytesSent = c.rpc.bytesSent;
    u.bytesReceived = c.rpc.bytesReceived;
    u.credits = c.credits;
    u.reconnects = c.rpc.reconnects;
    u.up = c.up;
    out.push_back(std::move(u));
  }
  return out;
}

ClientLive liveOf(const Client& client) {
  const ClientStats s = client.stats();
  ClientLive l;
  l.calls = s.rpc.calls;
  l.replies = s.rpc.replies;
  l.timeouts = s.rpc.timeouts;
  l.reconnects = s.rpc.reconnects;
  l.connectionsLost = s.rpc.connectionsLost;
  l.slotWaits = s.session.waitedForSlot;
  l.replayed = s.session.replayed + s.session.resent;
  for (const auto& c : s.connections) l.credits += c.credits;
  l.slots = s.session.slots;
  return l;
}

// A client and what its jobs are told: the cell's one for --client shared
// (jobs: all of them), a job's own (jobs 1), or one its caller owns.
class NfsShare final : public EngineShare {
 public:
  NfsShare(const TargetSpec& t, std::uint32_t jobs)
      : jobs_(jobs), notice_(std::make_shared<BusyNotice>(t.nfs.busyTimeout)) {
    const ClientOptions o = jobClientOptions(t, notice_);
    // Repeated while the server is busy, as every synchronous call of a job.
    callWhileBusy([&] { owned_ = Client::connect(o); }, notice_->budget);
    client_ = owned_.get();
  }
  // The caller's client, connected with its own options and closed by it.
  explicit NfsShare(Client& borrowed)
      : jobs_(1),
        notice_(std::make_shared<BusyNotice>(borrowed.options().busyTimeout)),
        client_(&borrowed) {}

  OutageAccount outages() const override { return outagesOf(*client_); }
  std::vector<ConnectionUse> connections() const override { return connectionsOf(*client_); }
  ClientLive live() const override { return liveOf(*client_); }
  void close() override {
    if (owned_) owned_->close();
  }

  Client& client() { return *client_; }
  std::uint32_t jobs() const { return jobs_; }
  BusyNotice& notice() const { return *notice_; }

 private:
  std::uint32_t jobs_;
  std::shared_ptr<BusyNotice> notice_;
  std::unique_ptr<Client> owned_;  // null for a borrowed client
  Client* client_ = nullptr;
};

class NfsEngine final : public Engine {
 public:
  // share: the cell's shared client, or null for one of the job's own.
  NfsEngine(const TargetSpec& t, std::shared_ptr<NfsShare> share)
      : readsPerCompound_(t.nfs.readsPerCompound),
        owns_(share == nullptr),
        share_(owns_ ? std::make_shared<NfsShare>(t, 1) : std::move(share)),
        client_(share_->client()) {}

  std::vector<std::uint64_t> open(const std::vector<std::string>& files, bool create) override {
    std::vector<std::uint64_t> sizes;
    for (const auto& name : files) {
      OpenFlags flags;
      flags.read = true;
      flags.write = true;
      flags.create = create;
      busy([&] { files_.push_back(client_.open(name, flags)); });
      busy([&] { sizes.push_back(client_.fstat(files_.back()).size); });
    }
    return sizes;
  }

  void run(JobDriver& d) override {
    if (d.spec().layout || d.spec().profile.writes()) wrote_ = true;
    NfsJobRun run(d, client_, files_, readsPerCompound_);
    run.start();
    run.wait();
  }

  void commit() override {
    for (auto& f : files_) {
      try {
        busy([&] { client_.fsync(f); });  // COMMIT
      } catch (const NfsException& e) {
        // The server restarted during the run: whether it kept the data is
        // for the run to decide (--verify reads every written block back).
        if (e.code() != make_error_code(ClientErrc::kUnstableDataLost)) throw;
        if (unstableLost_.empty()) unstableLost_ = e.what();
      }
    }
  }

  std::uint32_t effectiveIodepth(std::uint32_t iodepth, std::uint32_t blockSize,
                                 unsigned readPercent) const override {
    // maxInFlight: the session's slots and, over RDMA, the credits granted;
    // on a shared client every job's share of them.
    const std::uint32_t inFlight =
        std::max<std::uint32_t>(1, client_.maxInFlight() / share_->jobs());
    return nfsEffectiveIodepth(iodepth, blockSize, readPercent, client_.maxIoSize(), inFlight,
                               readsPerCompound_, client_.maxReadsPerCompound(blockSize));
  }

  OutageAccount outages() const override {
    // A shared client's outages are the cell's, counted once (EngineShare).
    OutageAccount a = owns_ ? share_->outages() : OutageAccount{};
    a.unstableLost = unstableLost_;
    return a;
  }

  std::vector<ConnectionUse> connections() const override {
    return owns_ ? share_->connections() : std::vector<ConnectionUse>{};
  }

  std::optional<ClientLive> live() const override {
    if (!owns_) return std::nullopt;
    return share_->live();
  }

  void remove(const std::vector<std::string>& files) override {
    for (const auto& name : files) {
      try {
        busy([&] { client_.unlink(name); });
      } catch (const NfsException& e) {
        if (e.code() != nfs4::statusError(nfs4::kErrNoEnt)) throw;
      }
    }
  }

  void finish() override {
    // The COMMIT first, on its own: it may be repeated while the server is
    // busy (a CLOSE may not: the client counts the file closed once sent).
    // The files are closed also when it fails (the open state must not leak).
    std::exception_ptr commitFailure;
    if (wrote_) {
      try {
        commit();
      } catch (...) {
        commitFailure = std::current_exception();
      }
    }
    for (auto& f : files_) client_.close(f);  // CLOSE (nothing left to COMMIT)
    files_.clear();
    if (owns_) share_->close();  // a shared client stays for the other jobs
    if (commitFailure) std::rethrow_exception(commitFailure);
  }

  void abandon() override {
    // No COMMIT and no CLOSE: the files are about to be removed. Closing the
    // client destroys the session and client ID, and with them the open
    // state (a server that refuses while opens remain drops it when the
    // lease expires). A shared client is the cell's to close.
    files_.clear();
    if (owns_) share_->close();
  }

 private:
  void busy(const std::function<void()>& call) {
    share_->notice().told = false;
    callWhileBusy(call, share_->notice().budget);
  }

  std::uint32_t readsPerCompound_ = 1;
  // The job's own client (owns_), or the cell's: then the busy notice,
  // said once per call, is the jobs' together (a grace period holds them
  // all alike), and the cell counts its outages and closes it.
  const bool owns_;
  std::shared_ptr<NfsShare> share_;
  Client& client_;
  bool wrote_ = false;        // a run wrote: finish() COMMITs
  std::string unstableLost_;  // the first COMMIT that found a new write verifier
  std::vector<OpenFile> files_;
};

}  // namespace

std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target) {
  return std::make_unique<NfsEngine>(target, nullptr);
}

std::shared_ptr<EngineShare> makeNfsShare(const TargetSpec& target, std::uint32_t jobs) {
  return std::make_shared<NfsShare>(target, jobs);
}

std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target, Client& client) {
  return std::make_unique<NfsEngine>(target, std::make_shared<NfsShare>(client));
}

std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target,
                                      const std::shared_ptr<EngineShare>& share) {
  auto nfs = std::dynamic_pointer_cast<NfsShare>(share);
  if (!nfs) throw std::logic_error("nfs engine: the shared client is not an nfs one");
  return std::make_unique<NfsEngine>(target, std::move(nfs));
}

}  // namespace nfsrdma::bench
