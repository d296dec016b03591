// nfsrdma-bench anchor: our client against libnfs, the anchor, on one server
// in one run: 4 KiB random reads at QD32 and 1 MiB sequential reads at QD8
// over a 256 MiB file. Prints IOPS, MiB/s, client CPU per operation and the
// ratios. Without --url it starts its own nfs-ganesha on loopback.
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "bench/BenchCommands.h"
#include "bench/anchor/AnchorRuns.h"
#include "bench/anchor/DeviceAnchor.h"
#include "bench/anchor/SocketFloor.h"
#include "bench/file/FileCli.h"
#include "bench/pattern/DataPattern.h"
#include "bench/report/Json.h"
#include "client/Client.h"
#include "server/ganesha/GaneshaServer.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {
namespace {

constexpr const char* kFileName = "nfsrdma-anchor.dat";
constexpr std::uint64_t kFileSeed = 42;  // the file's bytes are the same every run

void writeTestFile(Client& client, std::uint64_t size) {
  OpenFlags flags;
  flags.read = false;
  flags.write = true;
  flags.create = true;
  flags.truncate = true;
  OpenFile f = client.open(kFileName, flags);
  std::vector<std::uint8_t> chunk(8U << 20);
  for (std::uint64_t off = 0; off < size; off += chunk.size()) {
    // Incompressible and different in every chunk, so neither a compressing
    // nor a deduplicating file system under the server shrinks what the
    // reads fetch.
    DataPattern::of(kFileSeed, 0, off).fill(std::as_writable_bytes(std::span(chunk)));
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), size - off));
    client.pwrite(f, {chunk.data(), n}, off);
  }
  client.close(f);
}

// One result row of the --json file.
void writeMeasurement(JsonWriter& w, const ReadWorkload& wl, const ReadMeasurement& m,
                      std::uint32_t readsPerCompound, std::uint32_t nconnect) {
  w.beginObject().field("workload", wl.name).field("client", m.client);
  w.field("block_bytes", std::uint64_t{wl.blockSize})
      .field("iodepth", std::uint64_t{wl.queueDepth});
  w.field("reads_per_compound", std::uint64_t{readsPerCompound}).field("ops", m.ops);
  w.field("nconnect", std::uint64_t{nconnect});
  w.field("bytes", m.bytes).field("seconds", m.seconds).field("iops", m.iops());
  w.field("mib_per_s", m.mibPerSecond()).field("cpu_us_per_op", m.cpuMicrosPerOp());
  if (m.host) {
    w.field("host_cpu_busy", m.host->busyFraction);
    w.field("host_rest_cpu_us_per_op", m.host->othersMicrosPerOp);
    if (m.host->serverMicrosPerOp) w.field("server_cpu_us_per_op", *m.host->serverMicrosPerOp);
  }
  w.field("error", m.error).endObject();
}

std::string serverColumn(const ReadMeasurement& m) {
  if (!m.host || !m.host->serverMicrosPerOp) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *m.host->serverMicrosPerOp);
  return buf;
}

std::string busyColumn(const ReadMeasurement& m) {
  if (!m.host) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", m.host->busyFraction * 100);
  return buf;
}

// Below this share of busy CPU the host was not what limited a run. Not
// 100%: with the server's threads handing each request to one another, a
// saturated 2-core host still shows some idle time between hand-offs.
constexpr double kSaturatedHost = 0.75;

// What the host's CPU allowed: when both runs kept it saturated, a client
// that cost no CPU at all could go no faster than the rest of the host's
// cost per operation allows. At the busy share our run reached (a server's
// hand-offs keep some idle time however cheap the client), that is libnfs's
// whole cost per operation over the rest's in our run, scaled by the two
// runs' busy shares: the IOPS ratio over libnfs no client could beat here.
void printHostBound(const std::string& workload, const ReadMeasurement& ours,
                    const ReadMeasurement& anchor) {
  if (!ours.host || !anchor.host) return;
  const HostCpuShare& o = *ours.host;
  const HostCpuShare& a = *anchor.host;
  std::printf(
      " %-18s host CPU busy %.0f%% (nfsrdma) and %.0f%% (libnfs); the rest of the host took %.2f "
      "and %.2f "
      "usec/op",
      workload.c_str(), o.busyFraction * 100, a.busyFraction * 100, o.othersMicrosPerOp,
      a.othersMicrosPerOp);
  if (o.serverMicrosPerOp && a.serverMicrosPerOp) {
    std::printf(" (the server %.2f and %.2f)", *o.serverMicrosPerOp, *a.serverMicrosPerOp);
  }
  if (o.busyFraction >= kSaturatedHost && a.busyFraction >= kSaturatedHost &&
      o.othersMicrosPerOp > 0) {
    const double limit = (a.othersMicrosPerOp + anchor.cpuMicrosPerOp()) / o.othersMicrosPerOp *
                         (o.busyFraction / a.busyFraction);
    std::printf(
        ":\n %-18s CPU-bound: a client costing no CPU would reach about %.2fx libnfs's IOPS here "
        "(nfsrdma: %.2fx)\n",
        "", limit, anchor.iops() > 0 ? ours.iops() / anchor.iops() : 0.0);
  } else {
    std::printf(":\n %-18s not CPU-bound (busy < %.0f%%): latency, not CPU, set the rate\n", "",
                kSaturatedHost * 100);
  }
}

// What the command line asked for.
struct AnchorArgs {
  std::string url;
  std::string size = "256m";   // --size, as file's and compare's
  std::int64_t sizeMiB = 256;  // --size-mib, the older spelling; signed: boost wraps "-5"
  bool sizeMiBGiven = false;
  double runtime = 5;
  std::string jsonPath;
  std::string only;
  std::int64_t readsPerCompound = 8;
  std::int64_t nconnect = 4;
  std::string device;  // --device: the dev engine against fio instead
};

po::options_description anchorOptions(AnchorArgs& a) {
  po::options_description opts("nfsrdma-bench anchor options");
  opts.add_options()("help,h", "show this help")(
      "url", po::value(&a.url),
      "server export as nfs://host:port/export (default: start nfs-ganesha on 127.0.0.1 exporting "
      "a temp dir)");
  addSizeOption(opts, a.size);
  opts.add_options()("size-mib",
                     po::value(&a.sizeMiB)->notifier([&a](std::int64_t) { a.sizeMiBGiven = true; }),
                     "the test file's size in MiB, 8..1048576 (the older spelling of --size Nm)");
  addRuntimeOption(opts, a.runtime);
  opts.add_options()("json", po::value(&a.jsonPath), "also write the results as JSON to this file")(
      "only", po::value(&a.only),
      "run one client only (nfsrdma or libnfs), e.g. for profiling; no ratios")(
      "reads-per-compound", po::value(&a.readsPerCompound)->default_value(a.readsPerCompound),
      "an extra nfsrdma-vN row for 4 KiB reads: N of the queued READs share one COMPOUND (0 or 1: "
      "no such row; at most 8, a quarter of the queue)")(
      "nconnect", po::value(&a.nconnect)->default_value(a.nconnect),
      "an extra nfsrdma-ncN row: our client with N connections bound to its session, against "
      "one (0 or 1, or a --url with nconnect=: no such row)")(
      "device", po::value(&a.device),
      "instead: the dev engine against fio on this block device, read-only (4 KiB random and "
      "128 KiB sequential reads)");
  return opts;
}

// The test file: --size (the rule every command shares), whole MiB from
// 8 MiB (the reads' queue) to 1 TiB; --size-mib N instead when given.
void checkFileSize(AnchorArgs& a) {
  if (!a.sizeMiBGiven) {
    const std::uint64_t bytes = checkSize(a.size);
    if (bytes % (1U << 20) != 0 || bytes < (8U << 20) || bytes > (1ULL << 40)) {
      throw std::invalid_argument("--size '" + a.size +
                                  "': expected whole MiB from 8m to 1t for the anchor's file");
    }
    a.sizeMiB = static_cast<std::int64_t>(bytes >> 20);
  }
  if (a.sizeMiB < 8 || a.sizeMiB > (1 << 20))
    throw std::invalid_argument("--size-mib must be 8..1048576");
}

// The values given, each by its rule; a refused one is a usage error.
void validate(AnchorArgs& a) {
  tool::parseOrUsageError([&] {
    if (!a.only.empty() && a.only != "nfsrdma" && a.only != "libnfs") {
      throw std::invalid_argument("--only " + a.only + ": expected nfsrdma or libnfs");
    }
    checkFileSize(a);
    if (a.readsPerCompound < 0 || a.readsPerCompound > 16) {
      throw std::invalid_argument("--reads-per-compound must be 0..16 (0 or 1: no vectored row)");
    }
    if (a.nconnect < 0 || a.nconnect > 16) {
      throw std::invalid_argument("--nconnect must be 0..16 (0 or 1: no trunked row)");
    }
    checkRuntime(a.runtime);
  });
  checkOutputPath(a.jsonPath, "--json");  // the host's directory: a failure, not a usage error
}

// The server both clients read from: --url's, or an nfs-ganesha started here.
struct AnchorServer {
  std::optional<server::GaneshaServer> ganesha;
  std::filesystem::path exportDir;
  ClientOptions options;
  std::string note;

  pid_t pid() const { return ganesha ? ganesha->pid() : 0; }
  void stop() {
    if (!ganesha) return;
    ganesha->stop();
    std::filesystem::remove_all(exportDir);
  }
};

void startEmbedded(AnchorServer& s) {
  if (auto why = server::GaneshaServer::unavailableReason()) {
    throw std::runtime_error("cannot start the embedded nfs-ganesha: " + *why +
                             " (run scripts/install-deps.sh, or give --url)");
  }
  s.exportDir =
      std::filesystem::temp_directory_path() / ("nfsrdma-anchor-" + std::to_string(::getpid()));
  std::filesystem::create_directories(s.exportDir);
  server::GaneshaOptions go;
  server::GaneshaExportSpec spec;
  spec.path = s.exportDir;
  spec.pseudo = "/export";
  go.exports.push_back(spec);
  s.ganesha.emplace(server::GaneshaServer::start(go));
  s.options.host = s.ganesha->address();
  s.options.port = s.ganesha->port();
  s.options.exportPath = "/export";
  s.note = "nfs-ganesha started for this run, exporting " + s.exportDir.string();
}

void openServer(AnchorServer& s, const std::string& url) {
  if (url.empty()) {
    startEmbedded(s);
  } else {
    s.options = ClientOptions::fromUrl(url);
    s.note = "given with --url";
  }
  // Slots for the deepest workload: 1 MiB reads at QD8 are 32 calls in
  // flight when the server's largest I/O is 256 KiB (knfsd over RDMA), as
  // the kernel client's are on the same server; twice that leaves room. The
  // server may grant fewer (its reply cache memory bounds them): the header
  // says what it granted.
  s.options.queueDepth = 64;
  // Over RDMA the anchor measures with pooled registration unless the URL
  // says memreg=: each phase's buffers live until all its reads completed
  // (a timeout fails the run), and no later phase reads into a freed one.
  if (!s.options.givenPerIoRegistration) s.options.perIoRegistration = false;
  s.options.onBusy = [](const std::string& what) {
    std::fprintf(stderr, "nfsrdma-bench: %s\n", what.c_str());
  };
}

void printHeader(const AnchorServer& s, const Client& client, const AnchorArgs& a) {
  std::printf(
      "nfsrdma-bench anchor: our NFSv4.1 client vs libnfs (NFSv4.0, async API) on the same "
      "server\n");
  std::printf(" server : %s (%s)\n", s.options.url().c_str(), s.note.c_str());
  std::printf(" file   : %s, %llu MiB; %.1f s per run; CPU = this process's user+system time\n",
              kFileName, static_cast<unsigned long long>(a.sizeMiB), a.runtime);
  std::printf(" nfsrdma: %u calls in flight at most (session slots%s), %zu-byte max I/O\n",
              client.maxInFlight(), s.options.proto == TransportKind::kRdma ? ", RDMA credits" : "",
              client.maxIoSize());
  std::fflush(stdout);
}

// The session slots asked for and granted, against the calls the deepest
// workload keeps in flight (its depth times the READs one block takes at
// the server's I/O size): a server granting fewer caps that cell's depth.
void printSlots(const Client& client, const std::vector<ReadWorkload>& workloads) {
  std::uint64_t deepest = 0;
  for (const auto& w : workloads) {
    const std::uint64_t pieces = (w.blockSize + client.maxIoSize() - 1) / client.maxIoSize();
    deepest = std::max<std::uint64_t>(deepest, std::uint64_t{w.queueDepth} * pieces);
  }
  const auto s = client.stats().session;
  std::printf(" slots  : asked %u, granted %u; the deepest workload keeps %llu calls in flight\n",
              s.slotsAsked, s.slots, static_cast<unsigned long long>(deepest));
  if (s.slots < deepest) {
    std::printf(
        " note   : the server granted fewer session slots than the deepest workload needs: its "
        "depth is capped at %u calls\n",
        s.slots);
  }
  std::printf("\n");
}

// The queue depth of the 4 KiB workload, the one with a vectored row.
constexpr std::uint32_t kVectoredQueue = 32;

// How many queued 4 KiB READs share a COMPOUND in the vectored row (<= 1:
// no such row), said in the header either way.
std::uint32_t vectoredWidth(const AnchorArgs& a, const Client& client, TransportKind proto) {
  // The nfs engine keeps at least four COMPOUNDs in flight: a group is at
  // most a quarter of the queue.
  const std::uint32_t width =
      std::min<std::uint32_t>({static_cast<std::uint32_t>(a.readsPerCompound), kVectoredQueue / 4,
                               static_cast<std::uint32_t>(client.maxReadsPerCompound(4096))});
  if (a.readsPerCompound > 1 && width <= 1) {
    std::printf(" no vectored row: %s\n\n",
                proto == TransportKind::kRdma
                    ? "over RDMA each READ's data has its own Write chunk, one READ per COMPOUND"
                    : "the session allows one READ per COMPOUND");
  }
  if (width > 1) {
    std::printf(
        " nfsrdma-v%u: %u of the %u queued READs share one COMPOUND (Client::preadvAsync), so the "
        "server\n"
        " pays its per-RPC cost once per %u reads; nfsrdma and libnfs send one READ per RPC.\n\n",
        width, width, kVectoredQueue, width);
  }
  return width;
}

// Runs of nfsrdma and nfsrdma-ncN each, alternated (measureTrunkPair).
constexpr int kTrunkRounds = 3;

// The second client of the nfsrdma-ncN row, on the same server (none when
// the URL set nconnect itself: then every nfsrdma row is trunked).
std::unique_ptr<Client> connectTrunked(const AnchorArgs& a, const AnchorServer& s) {
  if (a.nconnect <= 1 || a.only == "libnfs" || s.options.givenNconnect) return nullptr;
  ClientOptions o = s.options;
  o.nconnect = static_cast<std::uint32_t>(a.nconnect);
  try {
    auto trunked = Client::connect(o);
    std::printf(
        " nfsrdma-nc%u: the same client with %u connections bound to its one session (nconnect);\n"
        " it and nfsrdma run alternately %d times each, and each row is its median run by "
        "CPU/op\n\n",
        o.nconnect, o.nconnect, kTrunkRounds);
    return trunked;
  } catch (const std::exception& e) {
    // A server that will not trunk still has the other rows to measure.
    std::printf(" nfsrdma-nc%u: no such row: %s\n\n", o.nconnect, e.what());
    return nullptr;
  }
}

struct AnchorRow {
  const ReadWorkload* w;
  ReadMeasurement ours;
  ReadMeasurement trunked;   // ours with nconnect connections on the one session
  ReadMeasurement vectored;  // ours with several READs per COMPOUND (4 KiB only)
  ReadMeasurement anchor;
  ReadMeasurement floor;  // bare socket receive at the anchor's rate
};

// One connection and the trunk, alternated kTrunkRounds times (1, N, 1, N,
// ...) so that both see the same host over the same minutes; each row is its
// median run. A failed run is the row's result, as with one round.

void measureTrunkPair(AnchorRow& r, const ReadWorkload& w, Client& client, Client& trunked,
                      pid_t serverPid) {
  std::vector<ReadMeasurement> one, many;
  for (int k = 0; k < kTrunkRounds; ++k) {
    one.push_back(runNfsrdmaReads(client, kFileName, w, serverPid));
    many.push_back(runNfsrdmaReads(trunked, kFileName, w, serverPid));
    if (!one.back().error.empty() || !many.back().error.empty()) break;
  }
  r.ours = failedOrMedianByCpu(one);
  r.trunked = failedOrMedianByCpu(many);
  r.trunked.client = "nfsrdma-nc" + std::to_string(trunked.options().nconnect);
}

AnchorRow measureRow(const ReadWorkload& w, Client& client, Client* trunked, const AnchorServer& s,
                     const std::string& only, std::uint32_t width) {
  AnchorRow r{&w, {}, {}, {}, {}, {}};
  const pid_t serverPid = s.pid();
  if (only != "libnfs") {
    if (trunked != nullptr) {
      measureTrunkPair(r, w, client, *trunked, serverPid);
    } else {
      r.ours = runNfsrdmaReads(client, kFileName, w, serverPid);
    }
  }
  if (only != "libnfs" && width > 1 && w.blockSize == 4096) {
    ReadWorkload v = w;
    v.readsPerCompound = width;
    r.vectored = runNfsrdmaReads(client, kFileName, v, serverPid);
    r.vectored.client = "nfsrdma-v" + std::to_string(width);
  }
  if (only != "nfsrdma") {
    r.anchor = runLibnfsReads(s.options, kFileName, w, serverPid);
  }
  if (only.empty() && r.anchor.error.empty() && r.anchor.ops > 0)
    r.floor = runSocketFloor(w, r.anchor.iops(), client.maxIoSize());
  return r;
}

// The row's lines; false when one of its runs failed (said on stderr).
bool printRow(const AnchorRow& r) {
  bool ok = true;
  for (const ReadMeasurement* m : {&r.ours, &r.trunked, &r.vectored, &r.anchor, &r.floor}) {
    if (m->client.empty()) continue;
    std::printf(" %-18s %-11s %12.1f %10.1f %12.2f %12s %6s%s\n", r.w->name.c_str(),
                m->client.c_str(), m->iops(), m->mibPerSecond(), m->cpuMicrosPerOp(),
                serverColumn(*m).c_str(), busyColumn(*m).c_str(),
                m->error.empty() ? "" : "  ERROR");
    if (!m->error.empty()) {
      std::fprintf(stderr, "nfsrdma-bench anchor: %s %s: %s\n", r.w->name.c_str(),
                   m->client.c_str(), m->error.c_str());
      ok = false;
    }
  }
  std::fflush(stdout);
  return ok;
}

// What the connections of a trunk cost and bought against one connection
// (same client code, same server, same run): the client CPU per operation
// is the figure a trunk must not raise much on a host that has few cores.
void printTrunkRatios(const std::vector<AnchorRow>& rows) {
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  bool header = false;
  for (const auto& r : rows) {
    if (r.trunked.client.empty() || r.ours.client.empty()) continue;
    if (!header)
      std::printf("\n ratios %s/nfsrdma (connections on one session vs one)\n",
                  r.trunked.client.c_str());
    header = true;
    std::printf(" %-18s %-11s IOPS %5.2fx   MiB/s %5.2fx   CPU/op %5.2fx\n", r.w->name.c_str(),
                r.trunked.client.c_str(), ratio(r.trunked.iops(), r.ours.iops()),
                ratio(r.trunked.mibPerSecond(), r.ours.mibPerSecond()),
                ratio(r.trunked.cpuMicrosPerOp(), r.ours.cpuMicrosPerOp()));
  }
}

// The trunked client's calls per connection: whether the load spread.
void printSpread(const Client& trunked) {
  const ClientStats s = trunked.stats();
  std::printf("\n nfsrdma-nc%zu calls per connection:", s.connections.size());
  for (const auto& c : s.connections)
    std::printf(" %llu", static_cast<unsigned long long>(c.rpc.calls));
  std::printf("\n");
}

void printRatios(const std::vector<AnchorRow>& rows) {
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  std::printf("\n ratios nfsrdma/libnfs (same server, same run)\n");
  for (const auto& r : rows) {
    for (const ReadMeasurement* m : {&r.ours, &r.trunked, &r.vectored}) {
      if (m->client.empty()) continue;
      std::printf(" %-18s %-11s IOPS %5.2fx   MiB/s %5.2fx   CPU/op %5.2fx\n", r.w->name.c_str(),
                  m->client.c_str(), ratio(m->iops(), r.anchor.iops()),
                  ratio(m->mibPerSecond(), r.anchor.mibPerSecond()),
                  ratio(m->cpuMicrosPerOp(), r.anchor.cpuMicrosPerOp()));
    }
    if (!r.floor.client.empty() && r.floor.error.empty()) {
      std::printf(" %-18s %-11s %33s CPU/op %5.2fx\n", r.w->name.c_str(), r.floor.client.c_str(),
                  "", ratio(r.floor.cpuMicrosPerOp(), r.anchor.cpuMicrosPerOp()));
    }
  }
  printTrunkRatios(rows);
  std::printf("\n what bounds the rate (host CPU sampled from /proc around each run)\n");
  for (const auto& r : rows) printHostBound(r.w->name, r.ours, r.anchor);
  std::printf(
      "\n socket-floor: the same reply bytes over a bare loopback TCP socket at libnfs's rate, "
      "received\n"
      " by a loop that does nothing else (its thread's CPU only): the CPU per op that any client\n"
      " receiving its data through a socket pays on this host before doing any work of its own.\n");
}

// nconnect: the connections of the nfsrdma-ncN row; base: those of the
// other nfsrdma rows (the URL's nconnect=, else 1).
void writeJson(const std::string& path, const std::string& url, std::uint64_t fileSize,
               const std::vector<AnchorRow>& rows, std::uint32_t width, std::uint32_t nconnect,
               std::uint32_t base) {
  JsonWriter w;
  w.beginObject().field("benchmark", "anchor");
  writeVersionField(w).field("server", url);
  w.field("file_bytes", fileSize).beginArray("results");
  for (const auto& r : rows) {
    for (const ReadMeasurement* m : {&r.ours, &r.trunked, &r.vectored, &r.anchor, &r.floor}) {
      if (m->client.empty()) continue;  // not run (--only, no vectored row, no anchor rate)
      const bool ours = m == &r.ours || m == &r.vectored;
      writeMeasurement(w, *r.w, *m, m == &r.vectored ? width : 1U,
                       m == &r.trunked ? nconnect : (ours ? base : 1U));
    }
  }
  w.endArray().endObject();
  std::ofstream js(path);
  js << w.str();
  if (!js) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int runAnchorCommand(int argc, char** argv) {
  AnchorArgs a;
  const po::options_description opts = anchorOptions(a);
  return tool::runReportingErrors("nfsrdma-bench anchor", std::cerr, [&] {
    if (parseOptionsOrHelp(argc, argv, opts, "anchor", "--url")) return tool::kExitSuccess;
    validate(a);
    if (!a.device.empty()) return runDeviceAnchor(a.device, a.runtime, a.jsonPath);
    AnchorServer s;
    openServer(s, a.url);
    const std::uint64_t fileSize = static_cast<std::uint64_t>(a.sizeMiB) << 20;
    auto client = Client::connect(s.options);
    printHeader(s, *client, a);
    writeTestFile(*client, fileSize);
    const auto ms = std::chrono::milliseconds(static_cast<long>(a.runtime * 1000));
    const std::vector<ReadWorkload> workloads = {
        {"4k-randread QD32", 4096, kVectoredQueue, true, fileSize, ms, 1},
        {"1m-seqread QD8", 1U << 20, 8, false, fileSize, ms, 2},
    };
    printSlots(*client, workloads);
    const std::uint32_t width = vectoredWidth(a, *client, s.options.proto);
    std::unique_ptr<Client> trunked = connectTrunked(a, s);
    std::printf(" %-18s %-11s %12s %10s %12s %12s %6s\n", "workload", "client", "IOPS", "MiB/s",
                "CPU[usec/op]", s.pid() > 0 ? "srv[usec/op]" : "", "host%");
    bool failed = false;
    std::vector<AnchorRow> rows;
    for (const auto& w : workloads) {
      rows.push_back(measureRow(w, *client, trunked.get(), s, a.only, width));
      failed = !printRow(rows.back()) || failed;
    }
    if (trunked) printSpread(*trunked);
    if (a.only.empty()) printRatios(rows);  // one client ran: nothing to compare
    if (a.only == "nfsrdma") printTrunkRatios(rows);
    const std::uint32_t nc = trunked ? trunked->options().nconnect : 1U;
    if (!a.jsonPath.empty())
      writeJson(a.jsonPath, s.options.url(), fileSize, rows, width, nc, s.options.nconnect);
    if (trunked) trunked->close();
    client->unlink(kFileName);
    client->close();
    s.stop();
    return failed ? tool::kExitFailure : tool::kExitSuccess;
  });
}

}  // namespace nfsrdma::bench
