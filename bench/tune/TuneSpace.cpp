#include "bench/tune/TuneSpace.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

namespace nfsrdma::bench {
namespace {

std::string sizeText(std::uint32_t bytes) {
  if (bytes % (1U << 20) == 0) return std::to_string(bytes >> 20) + "m";
  if (bytes % 1024 == 0) return std::to_string(bytes >> 10) + "k";
  return std::to_string(bytes);
}

Knob iothreadsKnob(std::uint32_t start) {
  Knob k{"iothreads", {"auto", "1", "2", "4"}, 0};
  if (start == 0) return k;
  const std::string s = std::to_string(start);
  const auto it = std::find(k.levels.begin(), k.levels.end(), s);
  if (it == k.levels.end()) k.levels.push_back(s);
  k.start =
      static_cast<std::size_t>(std::find(k.levels.begin(), k.levels.end(), s) - k.levels.begin());
  return k;
}

void addQueueDepth(KnobSpace& space, const ClientOptions& url, const ClientWorkload& w) {
  // What the jobs keep in flight, a piece per request (a job's own session).
  const std::uint32_t pieces = std::max<std::uint32_t>(1, w.blockSize / url.maxIoSize);
  const std::uint32_t need = std::min<std::uint32_t>(1024, w.iodepth * pieces);
  if (!url.givenQueueDepth) {
    space.leftAlone.push_back({"qd", "the session asks for the slots the jobs keep in flight (" +
                                         std::to_string(need) + ", from --iodepth)"});
    return;
  }
  space.knobs.push_back(
      numericKnob("qd", {need, std::min<std::uint32_t>(1024, 2 * need)}, *url.givenQueueDepth));
}

// Splits "a=1&b=2" into its pairs, in order.
std::vector<std::pair<std::string, std::string>> queryPairs(const std::string& query) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::istringstream in(query);
  std::string item;
  while (std::getline(in, item, '&')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    pairs.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
  }
  return pairs;
}

}  // namespace

bool isServerKnob(const std::string& name) {
  return name == "nfsd.threads" || name == "svcrdma.max_requests";
}

Knob numericKnob(const std::string& name, std::vector<std::uint32_t> levels, std::uint32_t start) {
  levels.push_back(start);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  Knob k{name, {}, 0};
  for (std::uint32_t l : levels) {
    if (l == start) k.start = k.levels.size();
    k.levels.push_back(std::to_string(l));
  }
  return k;
}

KnobSpace clientKnobSpace(const ClientOptions& url, const ClientWorkload& w) {
  KnobSpace space;
  space.knobs.push_back(numericKnob("nconnect", {1, 2, 4, 8}, url.nconnect));
  space.knobs.push_back(iothreadsKnob(url.ioThreads));
  if (url.proto == TransportKind::kRdma) {
    // The benchmark's engine keeps a pool unless the URL said per-io.
    const bool perIo = url.givenPerIoRegistration.value_or(false);
    space.knobs.push_back({"memreg", {"pooled", "per-io"}, perIo ? 1U : 0U});
    space.leftAlone.push_back({"reads-per-compound", "TCP only (RDMA moves each READ by itself)"});
  } else {
    space.leftAlone.push_back({"memreg", "RDMA only"});
    if (w.reads) {
      space.knobs.push_back(numericKnob("reads-per-compound", {1, 2, 4, 8}, url.readsPerCompound));
    } else {
      space.leftAlone.push_back({"reads-per-compound", "the workload does not read"});
    }
  }
  addQueueDepth(space, url, w);
  if (w.blockSize > (256U << 10)) {
    // The URL takes bytes.
    space.knobs.push_back(numericKnob("iosize", {256U << 10, 1U << 20, 4U << 20}, url.maxIoSize));
  } else {
    space.leftAlone.push_back({"iosize", sizeText(w.blockSize) +
                                             " requests go in one piece at every level "
                                             "(256k and up)"});
  }
  return space;
}

namespace {

// The index of the knob named, or std::invalid_argument that says why it
// is not in play (left alone, and why) or which knobs are.
std::size_t knobIndex(const KnobSpace& space, const std::string& name, const std::string& what) {
  for (std::size_t i = 0; i < space.knobs.size(); ++i) {
    if (space.knobs[i].name == name) return i;
  }
  for (const auto& l : space.leftAlone) {
    if (l.knob == name) throw std::invalid_argument(what + ": not for this run: " + l.why);
  }
  std::string known;
  for (const auto& k : space.knobs) known += (known.empty() ? "" : ", ") + k.name;
  throw std::invalid_argument(what + ": expected one of " + known);
}

bool isNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The level's index in k, a number k lacks added to it.
std::size_t levelIndex(Knob& k, const std::string& value, const std::string& what) {
  const auto at = std::find(k.levels.begin(), k.levels.end(), value);
  if (at != k.levels.end()) return static_cast<std::size_t>(at - k.levels.begin());
  const bool numeric = std::any_of(k.levels.begin(), k.levels.end(), isNumber);
  if (numeric && isNumber(value) && value.front() != '0') {
    k.levels.push_back(value);
    return k.levels.size() - 1;
  }
  std::string levels;
  for (const auto& l : k.levels) levels += (levels.empty() ? "" : ", ") + l;
  throw std::invalid_argument(what + ": expected a level of " + k.name + " (" + levels + ")" +
                              (numeric ? " or a whole number above 0" : ""));
}

}  // namespace

void restrictKnobs(KnobSpace& space, const std::string& list) {
  std::vector<std::string> names;
  std::istringstream in(list);
  std::string n;
  while (std::getline(in, n, ',')) {
    if (!n.empty()) names.push_back(n);
  }
  if (names.empty()) throw std::invalid_argument("--knobs '" + list + "': expected knob names");
  for (const auto& name : names) knobIndex(space, name, "--knobs " + name);
  std::vector<Knob> kept;
  for (auto& k : space.knobs) {
    if (std::find(names.begin(), names.end(), k.name) != names.end()) {
      kept.push_back(std::move(k));
    } else {
      space.leftAlone.push_back({k.name, "not in --knobs"});
    }
  }
  space.knobs = std::move(kept);
}

Setting settingFromKeys(KnobSpace& space, const std::string& keys, const std::string& option) {
  Setting setting;
  for (const Knob& k : space.knobs) setting.push_back(k.start);
  std::string pair;
  std::string rest = keys;
  std::replace(rest.begin(), rest.end(), ',', '&');
  std::istringstream in(rest);
  bool any = false;
  while (std::getline(in, pair, '&')) {
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == pair.size()) {
      throw std::invalid_argument(option + " '" + keys + "': '" + pair +
                                  "' is no KNOB=LEVEL (e.g. nconnect=8&nfsd.threads=32)");
    }
    const std::string what = option + " " + pair;
    const std::size_t k = knobIndex(space, pair.substr(0, eq), what);
    setting[k] = levelIndex(space.knobs[k], pair.substr(eq + 1), what);
    any = true;
  }
  if (!any) {
    throw std::invalid_argument(option + " '" + keys +
                                "': expected KNOB=LEVEL pairs (e.g. nconnect=8&nfsd.threads=32)");
  }
  return setting;
}

std::string urlWithSetting(const std::string& url, const std::vector<Knob>& knobs,
                           const Setting& setting, const Setting& start) {
  const auto q = url.find('?');
  auto pairs = queryPairs(q == std::string::npos ? "" : url.substr(q + 1));
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    if (setting.at(i) == start.at(i) || isServerKnob(knobs[i].name)) continue;
    const std::string& level = knobs[i].levels.at(setting.at(i));
    const auto it = std::find_if(pairs.begin(), pairs.end(),
                                 [&](const auto& p) { return p.first == knobs[i].name; });
    if (level == "auto") {
      if (it != pairs.end()) pairs.erase(it);
    } else if (it != pairs.end()) {
      it->second = level;
    } else {
      pairs.emplace_back(knobs[i].name, level);
    }
  }
  std::string out = url.substr(0, q);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    // A word without a value (a mount option such as noatime) stays one.
    out += (i == 0 ? "?" : "&") + pairs[i].first +
           (pairs[i].second.empty() ? "" : "=" + pairs[i].second);
  }
  return out;
}

std::string changedKeys(const std::vector<Knob>& knobs, const Setting& setting,
                        const Setting& start, char sep) {
  std::string out;
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    if (setting.at(i) == start.at(i)) continue;
    if (!out.empty()) out += sep;
    out += knobs[i].name + "=" + knobs[i].levels.at(setting[i]);
  }
  return out;
}

std::vector<std::size_t> knobsForVerdicts(const std::vector<Knob>& knobs,
                                          const std::vector<std::string>& verdicts) {
  static const std::map<std::string, std::vector<std::string>> kFirst = {
      {"credits", {"svcrdma.max_requests", "qd", "nconnect"}},
      {"server-threads", {"nfsd.threads"}},
      {"client-cpu", {"iothreads", "nconnect", "memreg"}},
      {"latency", {"nconnect", "qd", "reads-per-compound"}},
      {"link", {"iosize", "nconnect"}},
  };
  // The most frequent bound of the start's runs: "a+b" counts for both, a
  // (found first, the verdict's lead) twice.
  std::map<std::string, int> count;
  for (const auto& v : verdicts) {
    std::istringstream in(v);
    std::string tag;
    for (int weight = 2; std::getline(in, tag, '+'); weight = 1) count[tag] += weight;
  }
  std::string top;
  int most = 0;
  for (const auto& [tag, n] : count) {
    if (n > most && kFirst.count(tag) != 0) {
      top = tag;
      most = n;
    }
  }
  std::vector<std::size_t> order;
  if (top.empty()) return order;
  for (const auto& name : kFirst.at(top)) {
    for (std::size_t i = 0; i < knobs.size(); ++i) {
      if (knobs[i].name == name) order.push_back(i);
    }
  }
  return order;
}

}  // namespace nfsrdma::bench
