#include "bench/ranks/RankJson.h"

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <limits>
#include <stdexcept>

#include "bench/report/Json.h"

namespace nfsrdma::bench {

namespace {

// Times and offsets stay within +-2^61 (73 years of nanoseconds) so that a
// time plus an offset, or a difference of two such sums, cannot overflow.
constexpr std::int64_t kTimeLimit = std::int64_t{1} << 61;

void writeHistogram(JsonWriter& w, const LatencyHistogram& h) {
  const LatencyHistogram::State s = h.state();
  w.beginObject("latency").field("min_ns", s.min).field("max_ns", s.max);
  w.field("sum_ns", s.sum).field("sum_squares_ns2", s.sumSquares).beginArray("buckets");
  for (const auto& [bucket, count] : s.buckets) {
    w.beginArray().field("", static_cast<std::uint64_t>(bucket)).field("", count).endArray();
  }
  w.endArray().endObject();
}

void writeDirection(JsonWriter& w, std::string_view key, const RankDirection& d) {
  w.beginObject(key).field("bytes", d.bytes).field("ops", d.ops);
  writeHistogram(w, d.latency);
  w.endObject();
}

// "first": each described mismatch as [file_id, offset, first_bad_byte, kind].
void writeVerify(JsonWriter& w, const VerifyStats& v) {
  w.beginObject("verify").field("blocks_checked", v.unitsChecked);
  w.field("bytes_checked", v.bytesChecked);
  w.field("mismatches", v.mismatches).beginArray("first");
  for (const VerifyMismatch& m : v.first) {
    w.beginArray().field("", std::uint64_t{m.fileId}).field("", m.offset);
    w.field("", m.firstBadByte).field("", m.kind).endArray();
  }
  w.endArray().endObject();
}

}  // namespace

std::string rankToJsonLine(const RankResult& r) {
  JsonWriter w;
  w.beginObject().field("schema", kRankJsonSchema);
  if (!r.version.empty()) w.field(kVersionKey, r.version);
  w.field("cell", r.cell);
  w.field("rank", std::uint64_t{r.rank}).field("host", r.host).field("failed", r.failed);
  // The writer has no signed integer field: signed ones go as their text.
  w.number("clock_offset_ns", std::to_string(r.clockOffsetNs));
  w.number("start_ns", std::to_string(r.startNs)).number("end_ns", std::to_string(r.endNs));
  writeDirection(w, "read", r.read);
  writeDirection(w, "write", r.write);
  w.field("errors", r.errors).field("first_error", r.firstError);
  writeVerify(w, r.verify);
  w.beginArray("samples");
  for (const ProgressSample& s : r.samples) {
    w.beginArray()
        .number("", std::to_string(s.atNs))
        .field("", s.bytes)
        .field("", s.ops)
        .endArray();
  }
  w.endArray().endObject();
  return w.str();
}

namespace {

// Reads one line's members, each error naming the source and the field.
class RankReader {
 public:
  explicit RankReader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::invalid_argument(std::string(source_) + ": field \"" + field + "\": expected " +
                                what);
  }

  const JsonValue& member(const JsonValue& object, const std::string& path,
                          std::string_view key) const {
    const JsonValue* v = object.find(key);
    if (v == nullptr) fail(join(path, key), "it to be present");
    return *v;
  }

  // Members of object must be exactly keys.
  void onlyKeys(const JsonValue& object, const std::string& path,
                std::initializer_list<std::string_view> keys) const {
    for (const auto& [name, value] : object.object) {
      if (std::find(keys.begin(), keys.end(), name) == keys.end())
        fail(join(path, name),
             "only the fields of " + std::string(kRankJsonSchema) + ", not this one");
    }
  }

  const JsonValue& object(const JsonValue& parent, const std::string& path,
                          std::string_view key) const {
    const JsonValue& v = member(parent, path, key);
    if (!v.isObject()) fail(join(path, key), "an object");
    return v;
  }

  const JsonValue& array(const JsonValue& parent, const std::string& path,
                         std::string_view key) const {
    const JsonValue& v = member(parent, path, key);
    if (!v.isArray()) fail(join(path, key), "an array");
    return v;
  }

  std::string string(const JsonValue& parent, const std::string& path, std::string_view key) const {
    const JsonValue& v = member(parent, path, key);
    if (!v.isString()) fail(join(path, key), "a string");
    return v.string;
  }

  bool boolean(const JsonValue& parent, const std::string& path, std::string_view key) const {
    const JsonValue& v = member(parent, path, key);
    if (v.kind != JsonValue::Kind::Bool) fail(join(path, key), "true or false");
    return v.boolean;
  }

  double real(const JsonValue& parent, const std::string& path, std::string_view key) const {
    const JsonValue& v = member(parent, path, key);
    if (!v.isNumber() || !(v.number >= 0) || v.number > std::numeric_limits<double>::max()) {
      fail(join(path, key), "a finite number >= 0");
    }
    return v.number;
  }

  std::uint64_t unsignedOf(const JsonValue& v, const std::string& field, std::uint64_t max) const {
    std::uint64_t out = 0;
    if (!parseWhole(v, out) || out > max) fail(field, "a whole number 0.." + std::to_string(max));
    return out;
  }

  std::int64_t signedOf(const JsonValue& v, const std::string& field, std::int64_t min) const {
    std::int64_t out = 0;
    if (!parseWhole(v, out) || out < min || out > kTimeLimit) {
      fail(field, "a whole number " + std::to_string(min) + ".." + std::to_string(kTimeLimit));
    }
    return out;
  }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }

 private:
  // Only digits (and a leading '-'): 1e3 and 1.0 are not whole numbers here.
  template <typename T>
  static bool parseWhole(const JsonValue& v, T& out) {
    if (!v.isNumber()) return false;
    const std::string& t = v.numberText;
    const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    return ec == std::errc() && end == t.data() + t.size() &&
           t.find_first_of("+.eE") == std::string::npos;
  }

  std::string_view source_;
};

LatencyHistogram readHistogram(const RankReader& in, const JsonValue& parent,
                               const std::string& path) {
  const std::string at = RankReader::join(path, "latency");
  const JsonValue& h = in.object(parent, path, "latency");
  in.onlyKeys(h, at, {"min_ns", "max_ns", "sum_ns", "sum_squares_ns2", "buckets"});
  LatencyHistogram::State s;
  constexpr auto kAny = std::numeric_limits<std::uint64_t>::max();
  s.min = in.unsignedOf(in.member(h, at, "min_ns"), at + ".min_ns", kAny);
  s.max = in.unsignedOf(in.member(h, at, "max_ns"), at + ".max_ns", kAny);
  s.sum = in.real(h, at, "sum_ns");
  s.sumSquares = in.real(h, at, "sum_squares_ns2");
  const JsonValue& buckets = in.array(h, at, "buckets");
  for (std::size_t i = 0; i < buckets.array.size(); ++i) {
    const std::string field = at + ".buckets[" + std::to_string(i) + "]";
    const JsonValue& pair = buckets.array[i];
    if (!pair.isArray() || pair.array.size() != 2) in.fail(field, "[bucket, count]");
    s.buckets.emplace_back(
        in.unsignedOf(pair.array[0], field + "[0]", LatencyHistogram::kBuckets - 1),
        in.unsignedOf(pair.array[1], field + "[1]", kAny));
  }
  try {
    return LatencyHistogram::fromState(s);
  } catch (const std::invalid_argument& e) {
    in.fail(at, std::string("a consistent histogram (") + e.what() + ")");
  }
}

RankDirection readDirection(const RankReader& in, const JsonValue& doc, std::string_view key) {
  const std::string at(key);
  const JsonValue& d = in.object(doc, "", key);
  in.onlyKeys(d, at, {"bytes", "ops", "latency"});
  constexpr auto kAny = std::numeric_limits<std::uint64_t>::max();
  RankDirection out;
  out.bytes = in.unsignedOf(in.member(d, at, "bytes"), at + ".bytes", kAny);
  out.ops = in.unsignedOf(in.member(d, at, "ops"), at + ".ops", kAny);
  out.latency = readHistogram(in, d, at);
  return out;
}

VerifyMismatch readMismatch(const RankReader& in, const JsonValue& m, const std::string& field) {
  if (!m.isArray() || m.array.size() != 4 || !m.array[3].isString())
    in.fail(field, "[file_id, offset, first_bad_byte, kind]");
  constexpr auto kAny = std::numeric_limits<std::uint64_t>::max();
  return {static_cast<std::uint32_t>(
              in.unsignedOf(m.array[0], field + "[0]", std::numeric_limits<std::uint32_t>::max())),
          in.unsignedOf(m.array[1], field + "[1]", kAny),
          in.unsignedOf(m.array[2], field + "[2]", kAny), m.array[3].string};
}

VerifyStats readVerify(const RankReader& in, const JsonValue& doc) {
  const JsonValue& v = in.object(doc, "", "verify");
  in.onlyKeys(v, "verify", {"blocks_checked", "bytes_checked", "mismatches", "first"});
  constexpr auto kAny = std::numeric_limits<std::uint64_t>::max();
  VerifyStats out;
  out.unitsChecked =
      in.unsignedOf(in.member(v, "verify", "blocks_checked"), "verify.blocks_checked", kAny);
  out.bytesChecked =
      in.unsignedOf(in.member(v, "verify", "bytes_checked"), "verify.bytes_checked", kAny);
  out.mismatches = in.unsignedOf(in.member(v, "verify", "mismatches"), "verify.mismatches", kAny);
  const JsonValue& first = in.array(v, "verify", "first");
  if (first.array.size() > VerifyStats::kMaxReported) {
    in.fail("verify.first",
            "at most " + std::to_string(VerifyStats::kMaxReported) + " described mismatches");
  }
  for (std::size_t i = 0; i < first.array.size(); ++i) {
    out.first.push_back(
        readMismatch(in, first.array[i], "verify.first[" + std::to_string(i) + "]"));
  }
  return out;
}

std::vector<ProgressSample> readSamples(const RankReader& in, const JsonValue& doc) {
  std::vector<ProgressSample> out;
  const JsonValue& samples = in.array(doc, "", "samples");
  constexpr auto kAny = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < samples.array.size(); ++i) {
    const std::string field = "samples[" + std::to_string(i) + "]";
    const JsonValue& s = samples.array[i];
    if (!s.isArray() || s.array.size() != 3) in.fail(field, "[at_ns, bytes, ops]");
    out.push_back({in.signedOf(s.array[0], field + "[0]", 0),
                   in.unsignedOf(s.array[1], field + "[1]", kAny),
                   in.unsignedOf(s.array[2], field + "[2]", kAny)});
  }
  return out;
}

RankResult readRank(const RankReader& in, const JsonValue& doc) {
  in.onlyKeys(
      doc, "",
      {"schema", kVersionKey, "cell", "rank", "host", "failed", "clock_offset_ns", "start_ns",
       "end_ns", "read", "write", "errors", "first_error", "verify", "samples"});
  if (const std::string schema = in.string(doc, "", "schema"); schema != kRankJsonSchema) {
    in.fail("schema", "\"" + std::string(kRankJsonSchema) + "\", got \"" + schema + "\"");
  }
  RankResult r;
  // Optional: lines of earlier builds lack it. Present, it names a build
  // (an empty one would not be written back as it was read).
  if (doc.find(kVersionKey) != nullptr) {
    r.version = in.string(doc, "", kVersionKey);
    if (r.version.empty()) in.fail(std::string(kVersionKey), "the build's version, not \"\"");
  }
  r.cell = in.string(doc, "", "cell");
  r.rank = static_cast<std::uint32_t>(in.unsignedOf(in.member(doc, "", "rank"), "rank", kMaxRank));
  r.host = in.string(doc, "", "host");
  r.failed = in.boolean(doc, "", "failed");
  r.clockOffsetNs =
      in.signedOf(in.member(doc, "", "clock_offset_ns"), "clock_offset_ns", -kTimeLimit);
  r.startNs = in.signedOf(in.member(doc, "", "start_ns"), "start_ns", 0);
  r.endNs = in.signedOf(in.member(doc, "", "end_ns"), "end_ns", 0);
  r.read = readDirection(in, doc, "read");
  r.write = readDirection(in, doc, "write");
  r.errors = in.unsignedOf(in.member(doc, "", "errors"), "errors",
                           std::numeric_limits<std::uint64_t>::max());
  r.firstError = in.string(doc, "", "first_error");
  r.verify = readVerify(in, doc);
  r.samples = readSamples(in, doc);
  return r;
}

}  // namespace

RankResult rankFromJsonLine(std::string_view line, std::string_view source) {
  if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
  if (line.find('\n') != std::string_view::npos) {
    throw std::invalid_argument(std::string(source) +
                                ": expected one JSON line, found a line break inside");
  }
  JsonValue doc;
  try {
    doc = parseJson(line);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string(source) + ": not a JSON line (" + e.what() + ")");
  }
  if (!doc.isObject())
    throw std::invalid_argument(std::string(source) + ": expected a JSON object");
  const RankReader in(source);
  RankResult r = readRank(in, doc);
  if (auto problem = rankResultProblem(r))
    throw std::invalid_argument(std::string(source) + ": " + *problem);
  return r;
}

}  // namespace nfsrdma::bench
