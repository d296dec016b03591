#include "client/ClientOptions.h"

#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "client/Error.h"

namespace nfsrdma {
namespace {

[[noreturn]] void bad(std::string_view url, const std::string& what) {
  throw NfsException(
      makeError(ClientErrc::kInvalidArgument, "URL '" + std::string(url) + "': " + what));
}

template <typename T>
T number(std::string_view url, std::string_view key, std::string_view value, T min, T max) {
  unsigned long long v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() ||
      v < static_cast<unsigned long long>(min) || v > static_cast<unsigned long long>(max)) {
    bad(url, std::string(key) + "=" + std::string(value) + " is not a whole number from " +
                 std::to_string(min) + " to " + std::to_string(max));
  }
  return static_cast<T>(v);
}

// "a,b" -> {"a", "b"}; an empty item stays (the caller names it as an error).
std::vector<std::string> commaList(std::string_view text) {
  std::vector<std::string> items;
  for (;;) {
    const auto comma = text.find(',');
    items.emplace_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return items;
    text.remove_prefix(comma + 1);
  }
}

}  // namespace

std::string_view transportName(TransportKind kind) {
  switch (kind) {
    case TransportKind::kTcp:
      return "tcp";
    case TransportKind::kRdma:
      return "rdma";
  }
  return "unknown";  // a value cast from outside the enum
}

std::optional<TransportKind> parseTransportKind(std::string_view name) {
  for (const TransportKind kind : {TransportKind::kTcp, TransportKind::kRdma}) {
    if (name == transportName(kind)) return kind;
  }
  return std::nullopt;
}

namespace {

// The port a URL gives: after the host ("host:N", "[addr]:N", kept as written
// for messages) and as port=N.
struct UrlPort {
  bool colon = false;  // "host:" or "[addr]:" was written
  std::string_view text;
  bool given = false;
};

// host[:port] or [IPv6 address][:port] into o.host and o.port.
UrlPort parseAuthority(std::string_view url, std::string_view authority, ClientOptions& o) {
  UrlPort port;
  if (!authority.empty() && authority.front() == '[') {
    auto close = authority.find(']');
    if (close == std::string_view::npos) bad(url, "unterminated [IPv6 address]");
    o.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') bad(url, "expected :port after ]");
      port.colon = true;
      port.text = authority.substr(close + 2);
    }
  } else if (auto colon = authority.find(':'); colon != std::string_view::npos) {
    o.host = std::string(authority.substr(0, colon));
    port.colon = true;
    port.text = authority.substr(colon + 1);
    if (port.text.find(':') != std::string_view::npos) {
      bad(url, "an IPv6 address must be written in brackets: nfs://[addr]:port/path");
    }
  } else {
    o.host = std::string(authority);
  }
  if (o.host.empty()) bad(url, "no server host");
  port.given = port.colon;
  if (port.colon) {
    // "host:" is a typo, not the default port; the port is named as written.
    unsigned long v = 0;
    const auto [end, ec] =
        std::from_chars(port.text.data(), port.text.data() + port.text.size(), v);
    if (port.text.empty() || ec != std::errc() || end != port.text.data() + port.text.size() ||
        v < 1 || v > 65535) {
      bad(url, "port '" + std::string(port.text) + "' after the host: expected 1 to 65535");
    }
    o.port = static_cast<std::uint16_t>(v);
  }
  return port;
}

// nfs://a,b[:port],[v6]/export: the first address into o.host and o.port,
// the others (each with its own port or the first's) into o.moreServers.
UrlPort parseServers(std::string_view url, std::string_view authority, ClientOptions& o) {
  std::vector<std::string_view> parts;
  std::size_t from = 0;
  bool inBrackets = false;
  for (std::size_t i = 0; i <= authority.size(); ++i) {
    if (i < authority.size() && authority[i] == '[') inBrackets = true;
    if (i < authority.size() && authority[i] == ']') inBrackets = false;
    if (i == authority.size() || (authority[i] == ',' && !inBrackets)) {
      parts.push_back(authority.substr(from, i - from));
      from = i + 1;
    }
  }
  const UrlPort first = parseAuthority(url, parts.front(), o);
  for (std::size_t i = 1; i < parts.size(); ++i) {
    ClientOptions other;
    const UrlPort port = parseAuthority(url, parts[i], other);
    o.moreServers.push_back({other.host, port.colon ? other.port : std::uint16_t{0}});
  }
  return first;
}

}  // namespace

// One key's value as the parser hands it to the key's apply function: the
// URL (for errors), the key, its text, and the port the authority gave.
struct UrlValue {
  std::string_view url;
  std::string_view key;
  std::string_view text;
  UrlPort& port;

  [[noreturn]] void refuse(const std::string& expected) const {
    bad(url, std::string(key) + "=" + std::string(text) + " (expected " + expected + ")");
  }
  template <typename T>
  T whole(T min, T max) const {
    return number<T>(url, key, text, min, max);
  }
  std::chrono::milliseconds millis(std::uint32_t max) const {
    return std::chrono::milliseconds(whole<std::uint32_t>(0, max));
  }
};

namespace {

constexpr auto kMaxId = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint32_t kHourMs = 3600000;

// The keys that choose the transport and how it reaches the server.
void applyProto(const UrlValue& v, ClientOptions& o) {
  const std::optional<TransportKind> kind = parseTransportKind(v.text);
  if (!kind) v.refuse("tcp or rdma");
  o.proto = *kind;
  o.givenProto = *kind;
}

void applyPort(const UrlValue& v, ClientOptions& o) {
  const auto p = v.whole<std::uint16_t>(1, 65535);
  if (!v.port.text.empty() && p != o.port) {
    bad(v.url, "port=" + std::string(v.text) + " contradicts the port " + std::string(v.port.text) +
                   " after the host (give one)");
  }
  o.port = p;
  v.port.given = true;
}

void applyMemreg(const UrlValue& v, ClientOptions& o) {
  if (v.text != "pooled" && v.text != "per-io") v.refuse("pooled or per-io");
  o.perIoRegistration = v.text == "per-io";
  o.givenPerIoRegistration = o.perIoRegistration;
}

// bind=a,b: a local address per rail, taken in turn by the connections.
void applyBind(const UrlValue& v, ClientOptions& o) {
  const std::vector<std::string> binds = commaList(v.text);
  if (binds.empty() ||
      std::any_of(binds.begin(), binds.end(), [](const auto& b) { return b.empty(); })) {
    bad(v.url, "bind= needs a local address, or several comma-separated (got '" +
                   std::string(v.text) + "')");
  }
  o.bindAddress = binds.front();
  o.moreBindAddresses.assign(binds.begin() + 1, binds.end());
}

// The keys that say who calls and how: identity, timeouts, sizes.
void applyVersion(const UrlValue& v, ClientOptions&) {
  if (v.text != "4.1") {
    bad(v.url, "version=" + std::string(v.text) +
                   " is not supported: nfsrdma speaks NFSv4.1 (version=4.1)");
  }
}

void applyGids(const UrlValue& v, ClientOptions& o) {
  o.gids.clear();
  for (std::string_view rest = v.text; !rest.empty();) {
    const auto comma = rest.find(',');
    o.gids.push_back(number<std::uint32_t>(v.url, v.key, rest.substr(0, comma), 0, kMaxId));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  if (o.gids.size() > 16) bad(v.url, "gids lists more than the 16 groups AUTH_SYS carries");
}

void applyNumaKey(const UrlValue& v, ClientOptions& o) {
  if (v.text != "auto" && v.text != "off") v.refuse("auto or off");
  o.numaAuto = v.text == "auto";
}

// Every key, in the order --help lists them. The README's URL line lists
// them all (tests/unit/client/UrlKeysTest.cpp checks it).
constexpr UrlKey kUrlKeys[] = {
    {"version", "4.1", "the NFS version: only 4.1 is spoken", applyVersion},
    {"uid", "N", "AUTH_SYS user id (default 0)",
     [](const UrlValue& v, ClientOptions& o) { o.uid = v.whole<std::uint32_t>(0, kMaxId); }},
    {"gid", "N", "AUTH_SYS group id (default 0)",
     [](const UrlValue& v, ClientOptions& o) { o.gid = v.whole<std::uint32_t>(0, kMaxId); }},
    {"gids", "a,b", "AUTH_SYS extra groups (at most 16)", applyGids},
    {"proto", "tcp|rdma", "the transport (rdma: port 20049 unless given)", applyProto},
    {"port", "N", "the server's port, as host:N (default 2049)", applyPort},
    {"timeout", "ms", "an RPC call's timeout (default 30000)",
     [](const UrlValue& v, ClientOptions& o) {
       o.timeout = std::chrono::milliseconds(v.whole<std::uint32_t>(1, kHourMs));
     }},
    {"busy-timeout", "ms", "resend on DELAY or GRACE for this long (default 120000)",
     [](const UrlValue& v, ClientOptions& o) { o.busyTimeout = v.millis(kHourMs); }},
    {"recovery-timeout", "ms", "wait for a lost connection (default 120000)",
     [](const UrlValue& v, ClientOptions& o) { o.recoveryTimeout = v.millis(24 * kHourMs); }},
    {"qd", "N", "session slots asked for, 1-1024 (default 32)",
     [](const UrlValue& v, ClientOptions& o) {
       o.queueDepth = v.whole<std::uint32_t>(1, 1024);
       o.givenQueueDepth = o.queueDepth;
     }},
    {"iosize", "N", "the largest READ or WRITE, bytes (default 1048576)",
     [](const UrlValue& v, ClientOptions& o) {
       o.maxIoSize = v.whole<std::uint32_t>(4096, 16U << 20);
     }},
    {"machine", "NAME", "AUTH_SYS machine name (default this host's name)",
     [](const UrlValue& v, ClientOptions& o) { o.machineName = std::string(v.text); }},
    {"memreg", "pooled|per-io", "RDMA: register per call (default) or keep a pool", applyMemreg},
    {"bind", "ADDR[,ADDR...]", "local addresses, taken in turn by the connections", applyBind},
    {"reads-per-compound", "N", "queued READs of a file per COMPOUND, 1-16 (TCP only)",
     [](const UrlValue& v, ClientOptions& o) {
       o.readsPerCompound = v.whole<std::uint32_t>(1, 16);
     }},
    {"nconnect", "N", "connections bound to one session, 1-16 (default 1)",
     [](const UrlValue& v, ClientOptions& o) {
       o.nconnect = v.whole<std::uint32_t>(1, 16);
       o.givenNconnect = o.nconnect;
     }},
    {"iothreads", "N", "I/O threads the connections share, 1-16",
     [](const UrlValue& v, ClientOptions& o) { o.ioThreads = v.whole<std::uint32_t>(1, 16); }},
    {"numa", "auto|off", "I/O threads on their device's NUMA node (default off)", applyNumaKey},
};

std::string knownKeys() {
  std::string names;
  for (const UrlKey& k : kUrlKeys) names += (names.empty() ? "" : ", ") + std::string(k.name);
  return names;
}

// The query's key=value items, each key at most once.
void applyQuery(std::string_view url, std::string_view query, ClientOptions& o, UrlPort& port) {
  std::set<std::string_view> seenKeys;
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (item.empty()) continue;
    auto eq = item.find('=');
    if (eq == std::string_view::npos)
      bad(url, "option '" + std::string(item) + "' has no value (key=value)");
    std::string_view key = item.substr(0, eq);
    // A second value would silently win over the first: say which one is meant.
    if (!seenKeys.insert(key).second) bad(url, "option '" + std::string(key) + "' is given twice");
    const auto* k = std::find_if(std::begin(kUrlKeys), std::end(kUrlKeys),
                                 [key](const UrlKey& u) { return u.name == key; });
    if (k == std::end(kUrlKeys))
      bad(url, "unknown option '" + std::string(key) + "' (known: " + knownKeys() + ")");
    k->apply(UrlValue{url, key, item.substr(eq + 1), port}, o);
  }
}

}  // namespace

ClientOptions ClientOptions::fromUrl(std::string_view url) {
  constexpr std::string_view scheme = "nfs://";
  if (url.substr(0, scheme.size()) != scheme) bad(url, "expected it to start with nfs://");
  std::string_view rest = url.substr(scheme.size());
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string_view authority = rest;
  std::string_view path = "/";
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash);
  }
  ClientOptions o;
  UrlPort port = parseServers(url, authority, o);
  o.exportPath = std::string(path);
  while (o.exportPath.size() > 1 && o.exportPath.back() == '/') o.exportPath.pop_back();
  applyQuery(url, query, o, port);
  if (o.proto == TransportKind::kRdma && !port.given) o.port = 20049;
  if (o.proto == TransportKind::kRdma && o.readsPerCompound > 1) {
    bad(url, "reads-per-compound=" + std::to_string(o.readsPerCompound) +
                 " needs proto=tcp: over RDMA each READ's data is placed by its own Write chunk, "
                 "one READ per COMPOUND");
  }
  return o;
}

std::span<const UrlKey> urlKeys() {
  return kUrlKeys;
}

std::string ClientOptions::url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "nfs://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + exportPath;
}

std::string joinPath(std::string_view base, std::string_view rel) {
  std::string out(base);
  while (!rel.empty() && rel.front() == '/') rel.remove_prefix(1);
  if (rel.empty()) return out.empty() ? "/" : out;
  if (out.empty() || out.back() != '/') out += '/';
  out += rel;
  return out;
}

}  // namespace nfsrdma
