#include "counters/PoolStats.h"

#include <array>
#include <stdexcept>
#include <string>

#include "counters/TextFields.h"

namespace nfsrdma::counters {
namespace {

[[noreturn]] void fail(std::size_t line, const std::string& what) {
  throw std::invalid_argument("pool_stats line " + std::to_string(line) + ": " + what);
}

// Where each known column is in the header (npos: not there).
struct Columns {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t count = 0;
  std::size_t pool = kNone, arrived = kNone, enqueued = kNone, woken = kNone, timedout = kNone;
};

Columns readHeader(std::size_t number, std::string_view line) {
  const auto words = splitWords(line);
  if (words.size() < 2 || words[0] != "#") fail(number, "expected the header '# pool ...'");
  Columns c;
  c.count = words.size() - 1;
  for (std::size_t i = 1; i < words.size(); ++i) {
    const std::size_t col = i - 1;
    if (words[i] == "pool") c.pool = col;
    if (words[i] == "packets-arrived") c.arrived = col;
    if (words[i] == "sockets-enqueued") c.enqueued = col;
    if (words[i] == "threads-woken") c.woken = col;
    if (words[i] == "threads-timedout") c.timedout = col;
  }
  if (c.pool == Columns::kNone || c.arrived == Columns::kNone || c.enqueued == Columns::kNone ||
      c.woken == Columns::kNone) {
    fail(number, "expected the columns pool, packets-arrived, sockets-enqueued and threads-woken");
  }
  return c;
}

PoolStats readPool(std::size_t number, std::string_view line, const Columns& c) {
  const auto words = splitWords(line);
  if (words.size() != c.count) {
    fail(number, std::to_string(c.count) + " numbers, as the header names, got " +
                     std::to_string(words.size()));
  }
  std::vector<std::uint64_t> v;
  for (const auto w : words) {
    const auto n = wholeNumber<std::uint64_t>(w);
    if (!n) fail(number, "'" + std::string(w) + "' is not a whole number");
    v.push_back(*n);
  }
  if (v[c.pool] > UINT32_MAX) fail(number, "pool number out of range");
  PoolStats p;
  p.pool = static_cast<std::uint32_t>(v[c.pool]);
  p.packetsArrived = v[c.arrived];
  p.socketsEnqueued = v[c.enqueued];
  p.threadsWoken = v[c.woken];
  if (c.timedout != Columns::kNone) p.threadsTimedout = v[c.timedout];
  return p;
}

}  // namespace

std::vector<PoolStats> parsePoolStats(std::string_view text) {
  std::vector<PoolStats> pools;
  std::optional<Columns> columns;
  forEachLine(text, [&](std::size_t number, std::string_view line) {
    if (splitWords(line).empty()) return;
    if (!columns) {
      columns = readHeader(number, line);
      return;
    }
    pools.push_back(readPool(number, line, *columns));
  });
  if (!columns) fail(1, "expected the header '# pool ...' (the file is empty)");
  return pools;
}

}  // namespace nfsrdma::counters
