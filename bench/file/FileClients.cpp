#include "bench/file/FileClients.h"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "bench/cluster/MpiCluster.h"
#include "bench/cluster/RankClock.h"
#include "bench/report/Format.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {

void addClientsOptions(po::options_description& opts, ClientsArgs& a) {
  opts.add_options()("stonewall", po::value(&a.stonewall),
                     "under mpirun: stop every rank when the first has run S seconds after the "
                     "ramp or finished its --io-bytes (IOR's stonewalling)")(
      "clients", po::value(&a.clients),
      "without MPI (Kubernetes pods): this process is one of N clients, each cell starting at "
      "its scheduled time; prints one JSON line per cell for `nfsrdma-bench aggregate`")(
      "client-index", po::value(&a.clientIndex), "with --clients: this client's number, 0..N-1")(
      "start-at", po::value(&a.startAt),
      "with --clients: the first cell's start, in Unix seconds (the same for every client)")(
      "cell-slot", po::value(&a.cellSlot),
      "with --clients: seconds from one cell's start to the next's (set-up, layout, ramp, run)");
}

namespace {

std::string replaceAll(std::string text, const std::string& key, const std::string& value) {
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
  return text;
}

}  // namespace

std::string withRank(std::string text, std::uint32_t rank) {
  text = replaceAll(std::move(text), "{rank}", std::to_string(rank));
  if (text.find("{pod-ip}") == std::string::npos) return text;
  const char* ip = std::getenv("NFSRDMA_POD_IP");
  if (ip == nullptr || *ip == '\0') {
    throw std::invalid_argument("target " + text +
                                ": {pod-ip} needs NFSRDMA_POD_IP (a pod's status.podIP, which "
                                "`nfsrdma-bench kube` renders into its environment)");
  }
  return replaceAll(std::move(text), "{pod-ip}", ip);
}

namespace {

std::int64_t secondsToNs(double s) {
  return static_cast<std::int64_t>(std::llround(s * 1e9));
}

double parseStartAt(const std::string& text) {
  double v = 0;
  const auto* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || !(v > 0)) {
    throw tool::UsageError("--start-at '" + text +
                           "': expected Unix seconds, e.g. 1764687600 (date +%s)");
  }
  return v;
}

void checkPodArgs(const ClientsArgs& a, const FileOptions& o) {
  if (a.clients == 0 || a.clients > kMaxRank + 1)
    throw tool::UsageError("--clients must be 1.." + std::to_string(kMaxRank + 1));
  if (a.clientIndex < 0 || a.clientIndex >= static_cast<std::int64_t>(a.clients)) {
    throw tool::UsageError("--client-index " + std::to_string(a.clientIndex) + ": expected 0.." +
                           std::to_string(a.clients - 1) + " (--clients " +
                           std::to_string(a.clients) + ")");
  }
  if (a.startAt.empty()) throw tool::UsageError("--clients needs --start-at (Unix seconds)");
  const double run = std::chrono::duration<double>(o.ramp + o.runtime).count();
  if (!(a.cellSlot > run)) {
    throw tool::UsageError(
        fmt("--cell-slot %g: expected more than the ramp and runtime "
            "(%g s) so that one cell ends before the next starts",
            a.cellSlot, run));
  }
  if (o.ioBytes > 0) {
    throw tool::UsageError(
        "--io-bytes with --clients: scheduled clients need a time-based run to fit their slots");
  }
}

RankOutcome outcomeOf(const RunResult& r) {
  RankOutcome o;
  o.timeline = r.timeline;
  o.dir[0] = r.dir[0];
  o.dir[1] = r.dir[1];
  o.errors = r.errors + r.verify.mismatches;
  o.verify = r.verify;
  o.firstError = r.firstError;
  if (o.firstError.empty() && r.verify.mismatches > 0) {
    o.firstError = std::to_string(r.verify.mismatches) + " verify mismatches";
  }
  return o;
}

}  // namespace

ClientRun ClientRun::start(const ClientsArgs& a, const FileOptions& o) {
  ClientRun run;
  run.rampNs_ = std::chrono::duration_cast<std::chrono::nanoseconds>(o.ramp).count();
  const bool podArgs = a.clients > 0 || a.clientIndex >= 0 || !a.startAt.empty() || a.cellSlot > 0;
  if (podArgs && launchedByMpi()) {
    throw std::invalid_argument(
        "--clients/--client-index/--start-at/--cell-slot are for runs without MPI (pods): under "
        "mpirun the ranks start together at MPI's barrier");
  }
  if (a.stonewall < 0) throw tool::UsageError("--stonewall must be 0 or more seconds");
  if (podArgs) {
    checkPodArgs(a, o);
    if (a.stonewall > 0)
      throw tool::UsageError("--stonewall needs mpirun: pods have no channel to stop each other");
    run.pod_ = true;
    run.clients_ = a.clients;
    run.rank_ = static_cast<std::uint32_t>(a.clientIndex);
    run.startAtNs_ = secondsToNs(parseStartAt(a.startAt));
    run.slotNs_ = secondsToNs(a.cellSlot);
    return run;
  }
  run.cluster_ = startMpiCluster();
  if (!run.cluster_) {
    if (a.stonewall > 0) throw std::invalid_argument("--stonewall needs mpirun (MPI ranks)");
    return run;
  }
  // A rank's result line carries at most kMaxRank: beyond it rank 0 could not add the run up.
  if (run.cluster_->size() > kMaxRank + 1) {
    throw std::invalid_argument("mpirun started " + std::to_string(run.cluster_->size()) +
                                " ranks: expected at most " + std::to_string(kMaxRank + 1) +
                                " clients (ranks 0.." + std::to_string(kMaxRank) + ")");
  }
  run.rank_ = run.cluster_->rank();
  run.clients_ = run.cluster_->size();
  run.stonewallNs_ = secondsToNs(a.stonewall);
  return run;
}

std::string ClientRun::host() const {
  if (cluster_) return cluster_->host();
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : "unknown-host";
}

FileOptions ClientRun::forThisClient(FileOptions o) const {
  o.jobBase = rank_ * o.numjobs;
  o.sharingJobs = clients_ * o.numjobs;
  return o;
}

ClientRun::Cell ClientRun::run(const TargetSpec& target, const FileProfile& profile,
                               const FileOptions& options, const RunSettings& settings,
                               std::uint32_t k) {
  Cell cell;
  // Alone, and a cell the engine cannot run (the same on every client): as today.
  if (alone() || !unsupportedReason(target, profile).empty()) {
    cell.local = runFileBenchmark(target, profile, options, settings);
    return cell;
  }
  RunSettings rs = settings;
  const auto body = [&](RankHooks& hooks) {
    rs.rank = &hooks;
    try {
      cell.local = runFileBenchmark(target, profile, options, rs);
      return outcomeOf(cell.local);
    } catch (const Interrupted&) {
      throw;
    } catch (const std::exception& e) {
      RankOutcome failed;
      failed.failure = e.what();
      cell.local.target = target.name;
      cell.local.profile = profile.name;
      cell.local.errors = 1;
      cell.local.firstError = e.what();
      return failed;
    }
  };
  const std::string label = profile.name + " " + target.name;
  if (pod_) {
    cell.line = runScheduledCell({rank_, host()}, startAtNs_ + k * slotNs_, label, body);
    std::fputs(cell.line.c_str(), stdout);
    std::fflush(stdout);
    if (cell.local.errors > 0)
      std::fprintf(stderr, "nfsrdma-bench: %s: %s\n", label.c_str(), cell.local.firstError.c_str());
    return cell;
  }
  cell.ranks = runClusterCell(*cluster_, k, label, {rampNs_, stonewallNs_, 0.5}, body, cell.allRan);
  return cell;
}

RankClockNote ClientRun::clockNote(const CellRanks& c) const {
  RankClockNote n;
  n.how = "put on rank 0's by offsets measured at the barrier (ping-pong)";
  for (const auto& o : c.offsets) {
    n.offsetsNs.push_back(static_cast<double>(o.offsetNs));
    n.uncertaintyNs.push_back(static_cast<double>(o.halfRoundTripNs));
  }
  return n;
}

std::string ClientRun::describe() const {
  if (pod_)
    return "client " + std::to_string(rank_) + " of " + std::to_string(clients_) + " (scheduled)";
  if (cluster_) return std::to_string(clients_) + " MPI ranks";
  return "one process";
}

RunResult mergeClients(const RunResult& local, const CellRanks& c, const RankClockNote& clocks) {
  RunResult m = local;
  for (auto& d : m.dir) d = DirectionResult{};
  m.errors = 0;
  m.firstError.clear();
  m.verify = VerifyStats{};
  for (const RankResult& r : c.results) {
    m.dir[0].merge({r.read.ops, r.read.bytes, r.read.latency});
    m.dir[1].merge({r.write.ops, r.write.bytes, r.write.latency});
    // A rank's errors count its verify mismatches too: they are kept apart, as a run's are.
    m.errors += r.errors - std::min(r.errors, r.verify.mismatches);
    m.verify.merge(r.verify);
    // The first I/O error (a rank with mismatches only says "N verify mismatches").
    if (m.firstError.empty() && r.errors > r.verify.mismatches && !r.firstError.empty())
      m.firstError = rankName(r) + ": " + r.firstError;
  }
  if (c.aggregate.totals) m.seconds = c.aggregate.totals->aggregate.seconds();
  m.durableSeconds = m.seconds + local.commitSeconds;
  // Every client ran the same mode: sessions and connections are all of
  // theirs; the per-connection counters stay each client's own (not gathered).
  const auto clients = static_cast<std::uint32_t>(c.results.size());
  m.client.sessions *= clients;
  m.client.connections *= clients;
  m.client.perConnection.clear();
  m.clients = std::make_shared<const RanksReport>(
      RanksReport{static_cast<std::uint32_t>(c.results.size()), c.aggregate, clocks});
  m.notes.push_back(std::to_string(c.results.size()) + " clients x numjobs " +
                    std::to_string(local.numjobs) +
                    ", each client its own files; figures over IOR's window (first start to last "
                    "end, on rank 0's clock)");
  return m;
}

}  // namespace nfsrdma::bench
