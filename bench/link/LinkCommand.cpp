// `nfsrdma-bench link`: glue between options, the RDMA and TCP halves and the
// output (perftest-style text or JSON from the same ReportTable). The server
// runs the RDMA listener and, beside it, a TCP listener on the same port
// number, so one server serves `link`, `link --tcp` and `link --both`.
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <thread>

#include "bench/BenchCommands.h"
#include "bench/link/LinkOptions.h"
#include "bench/link/LinkPlacement.h"
#include "bench/link/LinkRdmaBench.h"
#include "bench/link/LinkTables.h"
#include "bench/link/LinkTcpBench.h"
#include "bench/report/Json.h"
#include "util/ToolCli.h"
#include "verbs/DeviceList.h"
#include "verbs/VerbsError.h"

namespace nfsrdma::bench {

namespace {

ReportTable tableOf(const LinkRunReport& r, BandwidthUnit unit) {
  if (!r.latency.empty()) {
    ReportTable t = latencyTable();
    for (const auto& l : r.latency) addLatencyRow(t, l);
    return t;
  }
  ReportTable t = bandwidthTable(unit);
  for (const auto& b : r.bandwidth) addBandwidthRow(t, b, unit);
  return t;
}

void printText(const LinkRunReport& r, BandwidthUnit unit) {
  std::fputs(formatBanner(r.title, r.banner).c_str(), stdout);
  std::fputs(tableOf(r, unit).text().c_str(), stdout);
  std::fputs(bannerRule().c_str(), stdout);
  if (!r.verify.empty()) std::printf(" verify: %s\n", r.verify.c_str());
  if (r.eventWaits) {
    std::printf(" CQ events: the client slept %llu time%s between completions\n",
                static_cast<unsigned long long>(*r.eventWaits), *r.eventWaits == 1 ? "" : "s");
  }
}

void writeRun(JsonWriter& w, std::string_view key, const LinkRunReport& r, BandwidthUnit unit,
              bool document = false) {
  w.beginObject(key);
  if (document) writeVersionField(w);
  w.field("test", r.key).field("title", r.title);
  writeBanner(w, "config", r.banner);
  if (r.latency.empty()) w.field("unit", unitLabel(unit));
  tableOf(r, unit).writeRows(w, "results");
  if (!r.verify.empty()) w.field("verify", r.verify);
  if (r.eventWaits) w.field("cq_event_waits", *r.eventWaits);
  w.endObject();
}

void printJson(const LinkRunReport& r, BandwidthUnit unit) {
  JsonWriter w;
  writeRun(w, {}, r, unit, true);
  std::fputs(w.str().c_str(), stdout);
}

int runServer(const LinkOptions& o) {
  LinkServerState state;
  // Pinned before any serving thread starts, so they all inherit it; 'auto'
  // follows the -d device (a TCP-only server has none to follow).
  const std::optional<verbs::DeviceInfo> info =
      o.device.empty() ? std::nullopt : sysfsDeviceInfo(o.device);
  const std::string placement = applyPlacement(o, info ? info->numaNode : -1);
  if (o.cpu >= 0 || !o.numa.empty())
    std::fprintf(stderr, "nfsrdma-bench link: server %s\n", placement.c_str());
  if (o.tcp) {
    runTcpServer(o, state);
    return 0;
  }
  (void)verbs::DeviceList::open();  // the clear no-device error before anything starts
  std::exception_ptr tcpError;
  std::thread tcp([&] {
    try {
      runTcpServer(o, state);
    } catch (...) {
      tcpError = std::current_exception();
      state.finished = true;
    }
  });
  std::exception_ptr rdmaError;
  try {
    runRdmaServer(o, state);
  } catch (...) {
    rdmaError = std::current_exception();
    state.finished = true;
  }
  tcp.join();
  if (rdmaError) std::rethrow_exception(rdmaError);
  if (tcpError) std::rethrow_exception(tcpError);
  return 0;
}

int runClient(const LinkOptions& o) {
  if (o.tcp) {
    const LinkRunReport r = runTcpClient(o, true);
    if (o.json) {
      printJson(r, o.unit);
    } else {
      printText(r, o.unit);
    }
    return 0;
  }
  if (!o.both) {
    const LinkRunReport r = runRdmaClient(o, true);
    if (o.json) {
      printJson(r, o.unit);
    } else {
      printText(r, o.unit);
    }
    return 0;
  }
  const LinkRunReport rdma = runRdmaClient(o, false);
  const LinkRunReport tcp = runTcpClient(o, true);
  ReportTable ratio(
      {{"#bytes", "bytes", 0},
       {"RDMA BW average[" + std::string(unitLabel(o.unit)) + "]", "rdma_bw_average", 2, true},
       {"TCP BW average[" + std::string(unitLabel(o.unit)) + "]", "tcp_bw_average", 2, true},
       {"RDMA/TCP", "rdma_over_tcp", 3}});
  for (std::size_t i = 0; i < rdma.bandwidth.size() && i < tcp.bandwidth.size(); ++i) {
    const double a = bandwidthIn(o.unit, rdma.bandwidth[i].averageBytesPerSecond());
    const double b = bandwidthIn(o.unit, tcp.bandwidth[i].averageBytesPerSecond());
    ratio.addRow({static_cast<double>(rdma.bandwidth[i].messageBytes), a, b, b > 0 ? a / b : 0});
  }
  if (o.json) {
    JsonWriter w;
    w.beginObject();
    writeVersionField(w);
    writeRun(w, "rdma", rdma, o.unit);
    writeRun(w, "tcp", tcp, o.unit);
    ratio.writeRows(w, "ratio");
    w.endObject();
    std::fputs(w.str().c_str(), stdout);
  } else {
    printText(rdma, o.unit);
    std::printf("\n");
    printText(tcp, o.unit);
    std::printf("\n");
    std::fputs(formatBanner("RDMA WRITE vs TCP", {}).c_str(), stdout);
    std::fputs(ratio.text().c_str(), stdout);
    std::fputs(bannerRule().c_str(), stdout);
  }
  return 0;
}

}  // namespace

int runLinkCommand(int argc, char** argv) {
  return tool::runReportingErrors("nfsrdma-bench link", std::cerr, [&] {
    std::optional<LinkOptions> options;
    try {
      options = parseLinkOptions(argc, argv);
    } catch (const std::invalid_argument& e) {
      throw tool::UsageError(std::string(e.what()) + " (see --help)");
    }
    if (!options) return tool::kExitSuccess;  // --help
    return options->server ? runServer(*options) : runClient(*options);
  });
}

}  // namespace nfsrdma::bench
