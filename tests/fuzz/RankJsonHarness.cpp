#include "tests/fuzz/RankJsonHarness.h"

#include <stdexcept>
#include <string>
#include <string_view>

#include "bench/ranks/RankJson.h"

namespace nfsrdma::fuzz {

bool runRankJson(std::span<const std::uint8_t> input) {
  const std::string_view line(reinterpret_cast<const char*>(input.data()), input.size());
  bench::RankResult r;
  try {
    r = bench::rankFromJsonLine(line, "fuzz line");
  } catch (const std::invalid_argument&) {
    return true;  // refused, with a reason: what untrusted input may get
  } catch (...) {
    return false;
  }
  if (bench::rankResultProblem(r)) return false;
  try {
    const std::string once = bench::rankToJsonLine(r);
    const std::string twice = bench::rankToJsonLine(bench::rankFromJsonLine(once, "fuzz rewrite"));
    return once == twice;
  } catch (...) {
    return false;  // what it accepted, written out, must read back
  }
}

}  // namespace nfsrdma::fuzz
