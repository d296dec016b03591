// `nfsrdma-bench aggregate`: adds up the result lines of ranks that ran
// without MPI (Kubernetes pods), read from their logs, into what an MPI run
// prints: per cell the aggregate, elbencho's first done, the window in
// which all ranks ran (warp's merge), merged percentiles and a row per
// rank. The pods' clocks are their nodes' wall clocks, not measured
// against each other: a rank whose window misses another's is flagged,
// and the overlap window is what to trust.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "bench/BenchCommands.h"
#include "bench/ranks/RankJson.h"
#include "bench/ranks/RankLog.h"
#include "bench/ranks/RankReport.h"
#include "bench/report/Json.h"
#include "bench/report/OutputFile.h"
#include "util/HtmlEscape.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {
namespace {

struct AggregateArgs {
  std::vector<std::string> logs;  // none or "-": stdin
  std::uint32_t clients = 0;      // 0: the highest rank seen + 1
  std::string jsonPath;
  std::string htmlPath;
  double straggler = 0.5;
};

RankLogCells readLogs(const AggregateArgs& a) {
  RankLogCells cells;
  const std::vector<std::string> logs = a.logs.empty() ? std::vector<std::string>{"-"} : a.logs;
  for (const auto& path : logs) {
    InputLines in = rankLogLines(path);
    readRankLog(in, cells);
  }
  if (cells.lines == 0) {
    throw std::invalid_argument("no result lines (schema " + std::string(kRankJsonSchema) +
                                ") in the logs: give the pods' logs, e.g. "
                                "kubectl logs -l job-name=RUN --tail=-1 | nfsrdma-bench aggregate");
  }
  return cells;
}

RankClockNote podClocks() {
  return {
      "not measured: each client's own wall clock (its node's NTP); windows checked for overlap",
      {},
      {}};
}

int aggregateSteps(const AggregateArgs& a) {
  const RankLogCells cells = readLogs(a);
  const std::uint32_t clients = a.clients ? a.clients : cells.highestRank + 1;
  JsonWriter w;
  w.beginObject().field("schema", "nfsrdma-bench-aggregate/1");
  writeVersionField(w);
  w.beginArray("cells");
  std::string html =
      "<!doctype html><meta charset=\"utf-8\"><title>nfsrdma-bench aggregate</title>\n";
  bool allFine = true;
  for (std::size_t i = 0; i < cells.cells.size(); ++i) {
    const RankAggregate agg = aggregateRanks(cells.results[i], clients, {a.straggler, 0});
    allFine = allFine && agg.totals.has_value();
    if (agg.totals) {
      for (const auto& row : agg.totals->rows) allFine = allFine && row.errors == 0;
    }
    if (a.jsonPath != "-" && a.htmlPath != "-") {
      std::printf("%s%s:\n%s", i ? "\n" : "", cells.cells[i].c_str(),
                  formatRanksText(agg, podClocks()).c_str());
    }
    w.beginObject().field("cell", cells.cells[i]);
    if (const auto note = rankBuildsNote(cells.results[i])) {
      std::fprintf(stderr, "nfsrdma-bench aggregate: %s: %s\n", cells.cells[i].c_str(),
                   note->c_str());
      w.field("builds_differ", *note);
    }
    writeRanksJson(w, "clients", agg, clients, podClocks());
    w.endObject();
    html += "<h2>" + util::htmlEscape(cells.cells[i]) + "</h2>\n" + ranksSvg(agg);
  }
  w.endArray().endObject();
  if (!a.jsonPath.empty()) writeReportFile(a.jsonPath, w.str() + "\n", "JSON");
  if (!a.htmlPath.empty()) writeReportFile(a.htmlPath, html, "HTML report");
  return allFine ? tool::kExitSuccess : tool::kExitFailure;
}

}  // namespace

int runAggregateCommand(int argc, char** argv) {
  return tool::runReportingErrors("nfsrdma-bench aggregate", std::cerr, [&] {
    AggregateArgs a;
    po::options_description opts("nfsrdma-bench aggregate options");
    opts.add_options()("help,h", "show this help")(
        "clients", po::value(&a.clients),
        "how many clients the run started (default: the highest rank seen + 1); a missing one "
        "is reported as lost")("json", po::value(&a.jsonPath), "write the JSON here ('-': stdout)")(
        "html", po::value(&a.htmlPath), "write the HTML here ('-': stdout)")(
        "straggler", po::value(&a.straggler)->default_value(a.straggler),
        "a client below this share of the median client's MiB/s is a straggler")(
        "log", po::value(&a.logs), "a log file ('-': stdin; default: stdin)");
    po::positional_options_description pos;
    pos.add("log", -1);
    po::variables_map vm;
    try {
      po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
      po::notify(vm);
    } catch (const po::error& e) {
      throw tool::UsageError(e.what());
    }
    if (vm.count("help")) {
      std::cout << "usage: nfsrdma-bench aggregate [options] [LOG...]\n" << opts;
      return tool::kExitSuccess;
    }
    // Ranks stop at kMaxRank, as the result lines' own do.
    if (a.clients > kMaxRank + 1) {
      throw tool::UsageError("--clients " + std::to_string(a.clients) + ": expected 1.." +
                             std::to_string(kMaxRank + 1));
    }
    return aggregateSteps(a);
  });
}

}  // namespace nfsrdma::bench
