#include "bench/ranks/RankLog.h"

#include <algorithm>
#include <stdexcept>

#include "bench/ranks/RankJson.h"

namespace nfsrdma::bench {

InputLines rankLogLines(const std::string& path) {
  return InputLines(path, kRankLogInput, kMaxRankLogLineBytes);
}

void readRankLog(InputLines& in, RankLogCells& into) {
  std::string line;
  // Bounded by the input's limits: one pass, one line at a time.
  while (in.next(line)) {
    // Any version: a line of another one is refused by name, not passed over.
    if (line.find(kRankJsonSchemaFamily) == std::string::npos) continue;
    // A prefix (kubectl logs --prefix: "[pod/run-0-abc/bench] ") before the object.
    const auto brace = line.find('{');
    if (brace == std::string::npos) continue;
    const std::string where = in.source() + " line " + std::to_string(in.lineNumber());
    RankResult r = rankFromJsonLine(std::string_view(line).substr(brace), where);
    auto cell = std::find(into.cells.begin(), into.cells.end(), r.cell);
    if (cell == into.cells.end()) {
      into.cells.push_back(r.cell);
      into.results.emplace_back();
      cell = into.cells.end() - 1;
    }
    auto& results = into.results[static_cast<std::size_t>(cell - into.cells.begin())];
    for (const auto& seen : results) {
      if (seen.rank == r.rank) {
        throw std::invalid_argument(where + ": " + rankName(r) + " reported cell \"" + r.cell +
                                    "\" a second time");
      }
    }
    into.highestRank = std::max(into.highestRank, r.rank);
    ++into.lines;
    results.push_back(std::move(r));
  }
}

}  // namespace nfsrdma::bench
