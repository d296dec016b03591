#include "counters/MountStats.h"

#include <array>
#include <stdexcept>

#include "counters/TextFields.h"

namespace nfsrdma::counters {
namespace {

using Names = std::vector<std::string_view>;

// Field names in the kernel's order: xprt_rdma_print_stats
// (net/sunrpc/xprtrdma/transport.c), xs_tcp/udp/local_print_stats
// (net/sunrpc/xprtsock.c), enum nfs_stat_eventcounters and
// nfs_stat_bytecounters (fs/nfs/iostat.h).
const Names kRdmaFields = {"srcport",
                           "bind_count",
                           "connect_count",
                           "connect_time",
                           "idle_time",
                           "sends",
                           "recvs",
                           "bad_xids",
                           "req_u",
                           "bklog_u",
                           "read_chunk_count",
                           "write_chunk_count",
                           "reply_chunk_count",
                           "total_rdma_request",
                           "total_rdma_reply",
                           "pullup_copy_count",
                           "fixup_copy_count",
                           "hardway_register_count",
                           "failed_marshal_count",
                           "bad_reply_count",
                           "nomsg_call_count",
                           "mrs_recycled",
                           "mrs_orphaned",
                           "mrs_allocated",
                           "local_inv_needed",
                           "empty_sendctx_q",
                           "reply_waits_for_send"};
const Names kTcpFields = {"srcport",   "bind_count", "connect_count", "connect_time", "idle_time",
                          "sends",     "recvs",      "bad_xids",      "req_u",        "bklog_u",
                          "max_slots", "sending_u",  "pending_u"};
const Names kUdpFields = {"srcport", "bind_count", "sends",     "recvs",     "bad_xids",
                          "req_u",   "bklog_u",    "max_slots", "sending_u", "pending_u"};
const Names kLocalFields = {"bind_count", "connect_count", "connect_time", "idle_time",
                            "sends",      "recvs",         "bad_xids",     "req_u",
                            "bklog_u",    "max_slots",     "sending_u",    "pending_u"};
const Names kEvents = {"inoderevalidate", "dentryrevalidate", "datainvalidate", "attrinvalidate",
                       "vfsopen",         "vfslookup",        "vfsaccess",      "vfsupdatepage",
                       "vfsreadpage",     "vfsreadpages",     "vfswritepage",   "vfswritepages",
                       "vfsgetdents",     "vfssetattr",       "vfsflush",       "vfsfsync",
                       "vfslock",         "vfsrelease",       "congestionwait", "setattrtrunc",
                       "extendwrite",     "sillyrename",      "shortread",      "shortwrite",
                       "delay",           "pnfs_read",        "pnfs_write"};
const Names kBytes = {"normalreadbytes",    "normalwrittenbytes", "directreadbytes",
                      "directwrittenbytes", "serverreadbytes",    "serverwrittenbytes",
                      "readpages",          "writepages"};
const Names kNone = {};

[[noreturn]] void fail(std::size_t line, const std::string& what) {
  throw std::invalid_argument("mountstats line " + std::to_string(line) + ": " + what);
}

std::int64_t number(std::size_t line, std::string_view word) {
  if (const auto n = wholeNumber<std::int64_t>(word)) return *n;
  fail(line, "'" + std::string(word) + "' is not a whole number");
}

// Values named in order; those beyond the known names are extra_N (1-based
// position), and those the kernel did not print are absent.
NamedValues named(std::size_t line, const std::vector<std::string_view>& words, std::size_t from,
                  const Names& names) {
  NamedValues out;
  for (std::size_t i = from; i < words.size(); ++i) {
    const std::size_t k = i - from;
    std::string name = k < names.size() ? std::string(names[k]) : "extra_" + std::to_string(k + 1);
    out.values.emplace_back(std::move(name), number(line, words[i]));
  }
  return out;
}

const Names& xprtNames(std::string_view proto) {
  if (proto == "rdma") return kRdmaFields;
  if (proto == "tcp") return kTcpFields;
  if (proto == "udp") return kUdpFields;
  if (proto == "local") return kLocalFields;
  return kNone;
}

// "\040" and the other octal escapes of seq_escape, back to bytes.
std::string unescape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      const auto d = [&](std::size_t k) { return s[i + k] >= '0' && s[i + k] <= '7'; };
      if (d(1) && d(2) && d(3)) {
        out.push_back(static_cast<char>(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) |
                                        (s[i + 3] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

RpcOpStats opStats(std::size_t line, const std::vector<std::string_view>& words) {
  // NAME: then at least 8 numbers (errors came later); newer kernels may append.
  if (words.size() < 9) fail(line, "an operation's line needs at least 8 numbers after its name");
  std::array<std::uint64_t, 9> v{};
  for (std::size_t i = 1; i < words.size() && i <= v.size(); ++i) {
    const auto n = wholeNumber<std::uint64_t>(words[i]);
    if (!n) fail(line, "'" + std::string(words[i]) + "' is not a whole number");
    v[i - 1] = *n;
  }
  RpcOpStats s{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], std::nullopt};
  if (words.size() > 9) s.errors = v[8];
  return s;
}

// The section of one NFS mount, line by line.
class MountSection {
 public:
  explicit MountSection(NfsMountStats& m) : m_(m) {}
  void line(std::size_t number, std::string_view text);

 private:
  NfsMountStats& m_;
  bool inOps_ = false;
};

void MountSection::line(std::size_t number, std::string_view text) {
  const auto words = splitWords(text);
  if (words.empty()) return;
  const std::string_view key = words[0];
  if (key == "opts:") {
    m_.options = words.size() > 1 ? std::string(words[1]) : "";
  } else if (key == "events:") {
    m_.events = named(number, words, 1, kEvents);
  } else if (key == "bytes:") {
    m_.bytes = named(number, words, 1, kBytes);
  } else if (key == "xprt:") {
    if (words.size() < 2) fail(number, "'xprt:' needs a transport name");
    m_.xprts.push_back({std::string(words[1]), named(number, words, 2, xprtNames(words[1]))});
  } else if (key == "per-op" && words.size() == 2 && words[1] == "statistics") {
    inOps_ = true;
  } else if (inOps_ && key.size() > 1 && key.back() == ':') {
    m_.ops.emplace_back(std::string(key.substr(0, key.size() - 1)), opStats(number, words));
  }
}

}  // namespace

const RpcOpStats* NfsMountStats::op(std::string_view name) const {
  for (const auto& [n, s] : ops) {
    if (n == name) return &s;
  }
  return nullptr;
}

std::vector<NfsMountStats> parseMountStats(std::string_view text) {
  std::vector<NfsMountStats> mounts;
  std::optional<MountSection> section;
  forEachLine(text, [&](std::size_t number, std::string_view line) {
    const auto words = splitWords(line);
    if (!words.empty() && words[0] == "device" && line.front() == 'd') {
      // device DEV mounted on MP with fstype TYPE [statvers=V]
      if (words.size() < 8 || words[2] != "mounted" || words[3] != "on" || words[5] != "with" ||
          words[6] != "fstype") {
        fail(number, "expected 'device DEV mounted on DIR with fstype TYPE'");
      }
      section.reset();
      if (words[7] != "nfs" && words[7] != "nfs4") return;
      NfsMountStats m;
      m.device = unescape(words[1]);
      m.mountPoint = unescape(words[4]);
      m.fstype = std::string(words[7]);
      mounts.push_back(std::move(m));
      section.emplace(mounts.back());
      return;
    }
    if (section) section->line(number, line);
  });
  return mounts;
}

}  // namespace nfsrdma::counters
