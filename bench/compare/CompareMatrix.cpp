#include "bench/compare/CompareMatrix.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "bench/compare/CompareGrid.h"
#include "bench/report/Format.h"

namespace nfsrdma::bench {
namespace {

IoDirection directionFrom(const std::string& s) {
  if (s == "read") return IoDirection::Read;
  if (s == "write") return IoDirection::Write;
  throw std::runtime_error("direction '" + s + "': expected read or write");
}

// Display width in terminal columns: UTF-8 continuation bytes take none.
std::size_t displayWidth(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = displayWidth(s);
  if (w >= width) return s;
  return right ? std::string(width - w, ' ') + s : s + std::string(width - w, ' ');
}

}  // namespace

std::string rowName(const CompareReport& report, const std::string& profile) {
  // randrw:N says its mix already.
  if (profile.find(':') != std::string::npos) return profile;
  for (const auto& c : report.cells) {
    if (c.profile != profile || !c.readPercent || *c.readPercent == 0 || *c.readPercent >= 100)
      continue;
    return profile + "(" + std::to_string(*c.readPercent) + "/" +
           std::to_string(100 - *c.readPercent) + ")";
  }
  return profile;
}

double CompareCell::lat(const std::string& key) const {
  for (const auto& [k, v] : latUs) {
    if (k == key) return v;
  }
  return 0;
}

const CompareCell* CompareReport::cell(const std::string& profile, IoDirection d,
                                       const std::string& t) const {
  for (const auto& c : cells) {
    if (c.profile == profile && c.direction == d && c.target == t) return &c;
  }
  return nullptr;
}

CompareCell* CompareReport::cell(const std::string& profile, IoDirection d, const std::string& t) {
  return const_cast<CompareCell*>(static_cast<const CompareReport*>(this)->cell(profile, d, t));
}

const CompareTarget* CompareReport::target(const std::string& name) const {
  for (const auto& t : targets) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::optional<double> CompareReport::ratio(const CompareRatio& r, const std::string& profile,
                                           IoDirection d) const {
  const CompareCell* a = cell(profile, d, r.numerator);
  const CompareCell* b = cell(profile, d, r.denominator);
  if (a == nullptr || b == nullptr || !a->ran || !b->ran || b->mibPerSecond <= 0)
    return std::nullopt;
  return a->mibPerSecond / b->mibPerSecond;
}

std::size_t CompareReport::regressions() const {
  return static_cast<std::size_t>(
      std::count_if(cells.begin(), cells.end(), [](const CompareCell& c) { return c.regression; }));
}

std::size_t CompareReport::warnings() const {
  std::size_t n = 0;
  for (const auto& c : cells) {
    for (const auto& f : c.flags) n += f.severity == FlagSeverity::Warning;
  }
  return n;
}

std::vector<CompareRatio> defaultRatios(const std::vector<CompareTarget>& targets) {
  // Only between targets that ran: a ratio column of dashes says nothing.
  auto has = [&](const char* n) {
    return std::any_of(targets.begin(), targets.end(),
                       [&](const CompareTarget& t) { return t.name == n && t.available; });
  };
  std::vector<CompareRatio> out;
  // NFS against the block protocols over the same link, then each of
  // those over RDMA against itself over TCP.
  const std::pair<const char*, const char*> wanted[] = {
      {"nfs-rdma", "nfs-tcp"},   {"nfs-tcp", "libnfs"},     {"nfs-tcp", "local"},
      {"nfs-rdma", "local"},     {"nfs-rdma", "nvmf-rdma"}, {"nfs-rdma", "iser"},
      {"nvmf-rdma", "nvme-tcp"}, {"iser", "iscsi"},         {"nvmf-rdma", "local"}};
  for (const auto& [a, b] : wanted) {
    if (has(a) && has(b)) out.push_back({a, b});
  }
  // A vectored column (several READs per COMPOUND) against the anchor too.
  for (const auto& t : targets) {
    if (t.available && t.name.rfind("nfs-tcp-v", 0) == 0 && has("libnfs"))
      out.push_back({t.name, "libnfs"});
  }
  return out;
}

std::vector<CompareRatio> parseRatios(const std::string& list,
                                      const std::vector<CompareTarget>& targets) {
  const auto known = [&](const std::string& n) {
    return std::any_of(targets.begin(), targets.end(),
                       [&](const CompareTarget& t) { return t.name == n; });
  };
  std::vector<CompareRatio> out;
  std::size_t from = 0;
  while (from <= list.size()) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    const std::string item = list.substr(from, comma - from);
    from = comma + 1;
    const auto slash = item.find('/');
    const CompareRatio r{item.substr(0, slash),
                         slash == std::string::npos ? "" : item.substr(slash + 1)};
    if (slash == std::string::npos || r.numerator.empty() || r.denominator.empty()) {
      throw std::invalid_argument("--ratios '" + item +
                                  "': expected NUMERATOR/DENOMINATOR target names");
    }
    for (const auto& n : {r.numerator, r.denominator}) {
      if (!known(n)) throw std::invalid_argument("--ratios " + item + ": no target is named " + n);
    }
    out.push_back(r);
  }
  return out;
}

// A sampled cell's verdict again, now with the bounds its flags found.
void rejudge(CompareCell& c) {
  if (!c.series) return;
  CellFacts facts = c.facts;
  facts.flags.clear();
  for (const auto& f : c.flags) facts.flags.emplace_back(f.kind, f.message);
  c.bound = judgeCell(facts, *c.series);
}

void computeFlags(CompareReport& report) {
  for (auto& c : report.cells) {
    c.flags.clear();
    if (!c.ran) continue;
    const CompareTarget* t = report.target(c.target);
    FigureCheck fc;
    fc.profile = c.profile;
    fc.direction = c.direction;
    fc.bytesPerSecond = c.mibPerSecond * 1048576.0;
    fc.overNetwork = t == nullptr || t->overNetwork;
    if (const CompareCell* disk = report.cell(c.profile, c.direction, report.diskTarget);
        disk != nullptr && disk->ran && c.target != report.diskTarget) {
      fc.diskBytesPerSecond = disk->mibPerSecond * 1048576.0;
    }
    if (t != nullptr) {
      fc.linkBytesPerSecond = t->linkBytesPerSecond;
      fc.linkSource = t->linkSource;
    }
    fc.serverMemoryBytes = report.serverMemoryBytes;
    fc.workingSetBytes = c.workingSetBytes;
    fc.serverCacheDropped = c.cacheDropped;
    c.flags = checkFigure(fc);
    rejudge(c);
  }
}

std::string notRunText(const CompareCell* c) {
  if (c != nullptr && !c->firstError.empty()) return "error";
  if (c != nullptr && !c->unsupported.empty()) return "n/a";
  return "-";
}

std::string baselineChangeText(const CompareCell& c) {
  if (!c.baselineConfigChange.empty()) return "config changed (" + c.baselineConfigChange + ")";
  if (!c.baselineMibPerSecond) return "new";
  return fmt("%+.1f%%", c.changePercent) + (c.regression ? "!" : "");
}

std::vector<std::string> errorLines(const CompareReport& r) {
  std::vector<std::string> out;
  for (const auto& c : r.cells) {
    if (!c.firstError.empty()) out.push_back(c.target + " " + c.profile + ": " + c.firstError);
    if (c.verifyMismatches) {
      out.push_back(fmt("%s %s %s: %llu verify mismatches", c.target.c_str(), c.profile.c_str(),
                        directionName(c.direction),
                        static_cast<unsigned long long>(c.verifyMismatches)));
    }
  }
  return out;
}

std::vector<std::string> boundsReachedLines(const CompareReport& r) {
  std::vector<std::string> out;
  for (const auto& c : r.cells) {
    for (const auto& f : c.flags) {
      if (f.severity == FlagSeverity::Info) out.push_back(c.target + " " + f.message);
    }
  }
  return out;
}

std::vector<std::string> boundLines(const CompareReport& r) {
  std::vector<std::string> out;
  for (const auto& c : r.cells) {
    if (!c.bound) continue;
    const std::vector<std::string> lines = boundLines(*c.bound);
    std::string text = c.target + " " + c.profile + " " + directionName(c.direction) + ": ";
    for (std::size_t i = 0; i < lines.size(); ++i) text += (i ? "\n   " : "") + lines[i];
    out.push_back(text);
  }
  return out;
}

std::vector<std::string> commitLines(const CompareReport& r) {
  std::vector<std::string> out;
  for (const auto& c : r.cells) {
    if (c.ran && c.direction == IoDirection::Write && c.commitSeconds > 0) {
      out.push_back(fmt("%s %s: %.3f s of writes + %.0f ms COMMIT/fsync", c.target.c_str(),
                        c.profile.c_str(), c.seconds, c.commitSeconds * 1e3));
    }
  }
  return out;
}

std::vector<std::string> unsupportedLines(const CompareReport& r) {
  std::vector<std::string> na;
  for (const auto& c : r.cells) {
    const std::string line = c.target + ": " + c.unsupported;
    if (!c.unsupported.empty() && std::find(na.begin(), na.end(), line) == na.end())
      na.push_back(line);
  }
  return na;
}

namespace {

// A cell as the text shows it: warnings as " [n]" and a bad read-back as
// BAD-DATA after the figure.
std::string textOf(const GridCell& c) {
  std::string s = c.text;
  for (std::size_t n : c.flags) s += " [" + std::to_string(n) + "]";
  if (c.badData) s += std::string(" ") + kBadDataMark;
  if (!c.bound.empty()) s += " (" + c.bound + ")";
  return s;
}

// The grid as a text table, each column as wide as its widest cell and its
// figures right-aligned (headers never).
std::string textTable(const CompareGrid& g) {
  std::vector<std::size_t> width(g.columns.size());
  for (std::size_t i = 0; i < g.columns.size(); ++i) {
    width[i] = displayWidth(g.columns[i].text);
    for (const auto& row : g.rows) width[i] = std::max(width[i], displayWidth(textOf(row[i])));
  }
  std::string out = "|";
  for (std::size_t i = 0; i < g.columns.size(); ++i)
    out += " " + pad(g.columns[i].text, width[i], false) + " |";
  out += "\n|";
  for (std::size_t i = 0; i < g.columns.size(); ++i) out += std::string(width[i] + 2, '-') + "|";
  out += "\n";
  for (const auto& row : g.rows) {
    out += "|";
    for (std::size_t i = 0; i < row.size(); ++i)
      out += " " + pad(textOf(row[i]), width[i], g.columns[i].number) + " |";
    out += "\n";
  }
  return out;
}

// "\n heading\n" and " - line" per line; nothing when there are none.
std::string bullets(const std::string& heading, const std::vector<std::string>& lines) {
  if (lines.empty()) return {};
  std::string out = "\n " + heading + "\n";
  for (const auto& l : lines) out += " - " + l + "\n";
  return out;
}

std::string baselineText(const CompareReport& r) {
  std::string out = fmt("\n Baseline: %s (regression = a drop of more than %.0f%%)\n",
                        r.baselinePath.c_str(), r.regressionThresholdPercent);
  std::size_t n = 0;
  for (const auto& c : r.cells) {
    if (!c.regression) continue;
    ++n;
    out += fmt(
        " REGRESSION %s %s %s: %.1f MiB/s (%.0f IOPS), was %.1f MiB/s (%.0f IOPS): %+.1f%%\n",
        rowName(r, c.profile).c_str(), directionName(c.direction), c.target.c_str(), c.mibPerSecond,
        c.iops, c.baselineMibPerSecond.value_or(0), c.baselineIops.value_or(0), c.changePercent);
  }
  if (n == 0) out += " no regressions\n";
  for (const auto& c : r.cells) {
    if (c.baselineConfigChange.empty()) continue;
    out += " not compared, config changed: " + rowName(r, c.profile) + " " +
           directionName(c.direction) + " " + c.target + ": " + c.baselineConfigChange + "\n";
  }
  return out;
}

}  // namespace

namespace {

// A many-client run: each cell's clients, after the table of their totals.
std::string clientsText(const CompareReport& r) {
  std::string out;
  for (const auto& c : r.cells) {
    if (!c.clients) continue;
    if (out.empty()) out = "\n Clients: each cell's totals above are all clients' together\n";
    out += fmt("\n %s %s %s:\n", c.profile.c_str(), directionName(c.direction), c.target.c_str());
    out += formatRanksText(c.clients->aggregate, c.clients->clocks);
  }
  return out;
}

}  // namespace

std::string formatCompareText(const CompareReport& r) {
  const bool withBaseline = !r.baselinePath.empty();
  const CompareGrid grid = compareGrid(r);
  const std::vector<std::string>& footnotes = grid.footnotes;  // warnings, numbered in row order
  std::string out;
  for (const auto& [k, v] : r.config) out += " " + k + ": " + v + "\n";
  out += "\n" + textTable(grid);
  out += "\n MiB/s = 2^20 bytes/s (MB/s = 10^6 bytes/s in the JSON); ratios of MiB/s, same run\n";
  out += bullets(kCommitHeading, commitLines(r));
  if (!footnotes.empty()) {
    out += "\n Flags: figures above what bounds them\n";
    for (std::size_t i = 0; i < footnotes.size(); ++i)
      out += fmt(" [%zu] ", i + 1) + footnotes[i] + "\n";
  }
  out += bullets("Bounds reached", boundsReachedLines(r));
  out += bullets("What bounded each cell", boundLines(r));
  if (withBaseline) out += baselineText(r);
  out += bullets("n/a", unsupportedLines(r));
  out += bullets("Errors", errorLines(r));
  out += bullets("Notes", r.notes);
  out += clientsText(r);
  return out;
}

namespace {

void writeTargetsJson(JsonWriter& w, const std::vector<CompareTarget>& targets) {
  w.beginArray("targets");
  for (const auto& t : targets) {
    w.beginObject()
        .field("name", t.name)
        .field("engine", t.engine)
        .field("description", t.description);
    w.field("available", t.available)
        .field("unavailable", t.unavailable)
        .field("over_network", t.overNetwork);
    if (t.linkBytesPerSecond) {
      w.field("link_bytes_per_s", *t.linkBytesPerSecond)
          .field("link_gbps", *t.linkBytesPerSecond * 8 / 1e9);
    } else {
      w.null("link_bytes_per_s");
    }
    w.field("link_source", t.linkSource).endObject();
  }
  w.endArray();
}

void writeLimitsJson(JsonWriter& w, const CompareReport& r) {
  w.beginObject("limits");
  w.field("disk_target", r.diskTarget);
  if (r.serverMemoryBytes) {
    w.field("server_memory_bytes", *r.serverMemoryBytes);
  } else {
    w.null("server_memory_bytes");
  }
  w.field("server_memory_source", r.serverMemorySource);
  w.endObject();
}

// A cell's flags and its comparison with the baseline, when there was one.
void writeCellVerdictsJson(JsonWriter& w, const CompareCell& c) {
  w.beginArray("flags");
  for (const auto& f : c.flags) {
    w.beginObject().field("kind", f.kind);
    w.field("severity", f.severity == FlagSeverity::Warning ? "warning" : "info")
        .field("message", f.message);
    w.endObject();
  }
  w.endArray();
  if (c.baselineMibPerSecond) {
    w.beginObject("baseline")
        .field("mib_per_s", *c.baselineMibPerSecond)
        .field("iops", c.baselineIops.value_or(0));
    w.field("change_percent", c.changePercent).field("regression", c.regression).endObject();
  } else if (!c.baselineConfigChange.empty()) {
    w.beginObject("baseline")
        .field("config_changed", c.baselineConfigChange)
        .field("regression", false)
        .endObject();
  }
}

void writeCellJson(JsonWriter& w, const CompareCell& c) {
  w.beginObject();
  w.field("profile", c.profile)
      .field("direction", directionName(c.direction))
      .field("target", c.target);
  w.field("ran", c.ran)
      .field("mib_per_s", c.mibPerSecond)
      .field("mb_per_s", c.mbPerSecond)
      .field("iops", c.iops);
  w.field("ops", c.ops)
      .field("bytes", c.bytes)
      .field("run_s", c.seconds)
      .field("commit_s", c.commitSeconds);
  w.field("block_bytes", std::uint64_t{c.blockSize}).field("iodepth", std::uint64_t{c.iodepth});
  w.field("numjobs", std::uint64_t{c.numjobs}).field("working_set_bytes", c.workingSetBytes);
  if (!c.clientMode.empty()) w.field("client", c.clientMode);
  if (c.effectiveIodepth) w.field("effective_iodepth", std::uint64_t{c.effectiveIodepth});
  if (c.readPercent) w.field("read_percent", std::uint64_t{*c.readPercent});
  w.beginObject("lat_us");
  for (const auto& [k, v] : c.latUs) w.field(k, v);
  w.endObject();
  w.field("verified", c.verified).field("verify_mismatches", c.verifyMismatches);
  w.field("crossed_outage", c.crossedOutage).field("outage_s", c.outageSeconds);
  w.field("errors", c.errors)
      .field("first_error", c.firstError)
      .field("server_cache_dropped", c.cacheDropped);
  w.field("server_cache", c.serverCache);
  w.field("unsupported", c.unsupported);
  writeCellVerdictsJson(w, c);
  if (c.bound) writeBoundJson(w, *c.bound);
  if (c.clients)
    writeRanksJson(w, "clients", c.clients->aggregate, c.clients->clients, c.clients->clocks);
  w.endObject();
}

// Each ratio's value per row; null where a row lacks one of its two cells.
void writeRatiosJson(JsonWriter& w, const CompareReport& r) {
  w.beginArray("ratios");
  for (const auto& q : r.ratios) {
    w.beginObject()
        .field("name", q.name())
        .field("numerator", q.numerator)
        .field("denominator", q.denominator);
    w.beginArray("values");
    for (const auto& [p, d] : r.rows) {
      w.beginObject().field("profile", p).field("direction", directionName(d));
      if (const auto v = r.ratio(q, p, d)) {
        w.field("value", *v);
      } else {
        w.null("value");
      }
      w.endObject();
    }
    w.endArray().endObject();
  }
  w.endArray();
}

}  // namespace

std::string compareToJson(const CompareReport& r) {
  JsonWriter w;
  w.beginObject();
  w.field("schema", "nfsrdma-bench-compare/3");
  writeVersionField(w);
  w.beginObject("config");
  for (const auto& [k, v] : r.config) w.field(k, v);
  w.endObject();
  writeTargetsJson(w, r.targets);
  w.beginArray("rows");
  for (const auto& [p, d] : r.rows)
    w.beginObject().field("profile", p).field("direction", directionName(d)).endObject();
  w.endArray();
  writeLimitsJson(w, r);
  w.beginArray("results");
  for (const auto& c : r.cells) writeCellJson(w, c);
  w.endArray();
  writeRatiosJson(w, r);
  if (!r.baselinePath.empty()) {
    w.beginObject("baseline")
        .field("path", r.baselinePath)
        .field("threshold_percent", r.regressionThresholdPercent);
    w.field("regressions", std::uint64_t{r.regressions()}).endObject();
  }
  w.beginArray("notes");
  for (const auto& n : r.notes) w.field("", n);
  w.endArray();
  w.endObject();
  return w.str();
}

namespace {

const JsonValue& requiredMember(const JsonValue& v, const char* key) {
  const JsonValue* x = v.find(key);
  if (x == nullptr) throw std::runtime_error(std::string("compare JSON: missing '") + key + "'");
  return *x;
}

// A boolean member; absent, it is what files from before the member had.
bool flagOr(const JsonValue& v, const char* key, bool absent) {
  const JsonValue* x = v.find(key);
  return x == nullptr ? absent : x->boolean;
}

CompareTarget targetFromJson(const JsonValue& t) {
  CompareTarget ct;
  ct.name = t.str("name");
  ct.engine = t.str("engine");
  ct.description = t.str("description");
  ct.available = flagOr(t, "available", true);
  ct.unavailable = t.str("unavailable");
  ct.overNetwork = flagOr(t, "over_network", true);
  if (const JsonValue* l = t.find("link_bytes_per_s"); l != nullptr && l->isNumber())
    ct.linkBytesPerSecond = l->number;
  ct.linkSource = t.str("link_source");
  return ct;
}

constexpr std::uint64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();

// What a cell measured: figures, the conditions they were measured under
// and latency percentiles.
void readCellFigures(const JsonValue& c, CompareCell& cell) {
  cell.mibPerSecond = c.num("mib_per_s");
  cell.mbPerSecond = c.num("mb_per_s");
  cell.iops = c.num("iops");
  cell.ops = c.whole("ops");
  cell.bytes = c.whole("bytes");
  cell.seconds = c.num("run_s");
  cell.commitCounted = c.find("commit_s") != nullptr;
  cell.commitSeconds = c.num("commit_s");
  cell.blockSize = static_cast<std::uint32_t>(c.whole("block_bytes", kMaxU32));
  cell.iodepth = static_cast<std::uint32_t>(c.whole("iodepth", kMaxU32));
  cell.numjobs = static_cast<std::uint32_t>(c.whole("numjobs", kMaxU32));
  cell.clientMode = c.str("client");
  cell.effectiveIodepth = static_cast<std::uint32_t>(c.whole("effective_iodepth", kMaxU32));
  if (const JsonValue* rp = c.find("read_percent"); rp != nullptr && rp->isNumber()) {
    cell.readPercent = static_cast<unsigned>(c.whole("read_percent", 100));
  }
  cell.workingSetBytes = c.num("working_set_bytes");
  // "clat_us": the key's name in files written before it was renamed.
  const JsonValue* cl = c.find("lat_us");
  if (cl == nullptr) cl = c.find("clat_us");
  if (cl != nullptr) {
    for (const auto& [k, v] : cl->object) cell.latUs.emplace_back(k, v.number);
  }
}

CompareCell cellFromJson(const JsonValue& c) {
  CompareCell cell;
  cell.profile = c.str("profile");
  cell.direction = directionFrom(c.str("direction"));
  cell.target = c.str("target");
  cell.ran = flagOr(c, "ran", false);
  readCellFigures(c, cell);
  cell.verified = flagOr(c, "verified", false);
  cell.verifyMismatches = c.whole("verify_mismatches");
  cell.crossedOutage = flagOr(c, "crossed_outage", false);
  cell.outageSeconds = c.num("outage_s");
  cell.errors = c.whole("errors");
  cell.firstError = c.str("first_error");
  cell.cacheDropped = flagOr(c, "server_cache_dropped", false);
  cell.serverCache = c.str("server_cache");
  cell.unsupported = c.str("unsupported");
  if (const JsonValue* fl = c.find("flags")) {
    for (const auto& f : fl->array) {
      cell.flags.push_back(
          {f.str("kind"), f.str("severity") == "info" ? FlagSeverity::Info : FlagSeverity::Warning,
           f.str("message")});
    }
  }
  // /3: a many-client cell's breakdown, which the text and the HTML show again.
  if (const JsonValue* cl = c.find("clients"); cl != nullptr && cl->isObject()) {
    try {
      cell.clients = std::make_shared<const RanksReport>(ranksFromJson(*cl));
    } catch (const std::exception& e) {
      throw std::runtime_error("compare JSON: " + cell.profile + " " + cell.target + ": " +
                               e.what());
    }
  }
  return cell;
}

}  // namespace

CompareReport compareFromJson(const JsonValue& doc) {
  // /1 named the latency object clat_us (read below as well).
  if (doc.str("schema") != "nfsrdma-bench-compare/3" &&
      doc.str("schema") != "nfsrdma-bench-compare/2" &&
      doc.str("schema") != "nfsrdma-bench-compare/1") {
    throw std::runtime_error("not an nfsrdma-bench compare result (schema '" + doc.str("schema") +
                             "')");
  }
  CompareReport r;
  for (const auto& [k, v] : requiredMember(doc, "config").object)
    r.config.emplace_back(k, v.string);
  for (const auto& t : requiredMember(doc, "targets").array) r.targets.push_back(targetFromJson(t));
  for (const auto& row : requiredMember(doc, "rows").array) {
    r.rows.emplace_back(row.str("profile"), directionFrom(row.str("direction")));
  }
  if (const JsonValue* lim = doc.find("limits")) {
    r.diskTarget = lim->str("disk_target");
    if (const JsonValue* m = lim->find("server_memory_bytes"); m != nullptr && m->isNumber())
      r.serverMemoryBytes = m->number;
    r.serverMemorySource = lim->str("server_memory_source");
  }
  for (const auto& c : requiredMember(doc, "results").array) r.cells.push_back(cellFromJson(c));
  if (const JsonValue* q = doc.find("ratios")) {
    for (const auto& x : q->array) r.ratios.push_back({x.str("numerator"), x.str("denominator")});
  }
  if (const JsonValue* n = doc.find("notes")) {
    for (const auto& x : n->array) r.notes.push_back(x.string);
  }
  return r;
}

LinkFigures linkFiguresFromJson(const JsonValue& doc) {
  LinkFigures out;
  auto best = [](const JsonValue& run) -> std::optional<double> {
    const std::string unit = run.str("unit");
    const JsonValue* results = run.find("results");
    if (results == nullptr || !results->isArray()) return std::nullopt;
    double top = 0;
    for (const auto& row : results->array) {
      if (unit == "Gb/sec") top = std::max(top, row.num("bw_average_gbps") * 1e9 / 8);
      if (unit == "MiB/sec") top = std::max(top, row.num("bw_average_mibps") * 1048576.0);
    }
    return top > 0 ? std::optional<double>(top) : std::nullopt;
  };
  auto classify = [&](const JsonValue& run) {
    const std::string test = run.str("test");
    if (test == "tcp_bw") {
      out.tcpBytesPerSecond = best(run);
    } else if (test.rfind("rdma_", 0) == 0) {
      out.rdmaBytesPerSecond = best(run);
    }
  };
  if (const JsonValue* rdma = doc.find("rdma")) classify(*rdma);
  if (const JsonValue* tcp = doc.find("tcp")) classify(*tcp);
  if (doc.find("test") != nullptr) classify(doc);
  return out;
}

}  // namespace nfsrdma::bench
