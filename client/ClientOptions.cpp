#include "client/ClientOptions.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "client/Error.h"

namespace nfsrdma {
namespace {

[[noreturn]] void bad(std::string_view url, const std::string& what) {
  throw NfsException(makeError(ClientErrc::kInvalidArgument, "URL '" + std::string(url) + "': " + what));
}

template <typename T>
T number(std::string_view url, std::string_view key, std::string_view value, T min, T max) {
  unsigned long long v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || p != value.data() + value.size() || v < static_cast<unsigned long long>(min) ||
      v > static_cast<unsigned long long>(max)) {
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

// The keys that choose the transport and how it reaches the server.
bool applyTransportOption(std::string_view url, std::string_view key, std::string_view value,
                          ClientOptions& o, UrlPort& port) {
  if (key == "proto") {
    const std::optional<TransportKind> kind = parseTransportKind(value);
    if (!kind) bad(url, "proto=" + std::string(value) + " (expected tcp or rdma)");
    o.proto = *kind;
    o.givenProto = *kind;
  } else if (key == "port") {
    const auto p = number<std::uint16_t>(url, key, value, 1, 65535);
    if (!port.text.empty() && p != o.port) {
      bad(url, "port=" + std::string(value) + " contradicts the port " + std::string(port.text) +
                   " after the host (give one)");
    }
    o.port = p;
    port.given = true;
  } else if (key == "memreg") {
    if (value != "pooled" && value != "per-io")
      bad(url, "memreg=" + std::string(value) + " (expected pooled or per-io)");
    o.perIoRegistration = value == "per-io";
    o.givenPerIoRegistration = o.perIoRegistration;
  } else if (key == "bind") {
    // bind=a,b: a local address per rail, taken in turn by the connections.
    const std::vector<std::string> binds = commaList(value);
    if (binds.empty() || std::any_of(binds.begin(), binds.end(), [](const auto& b) { return b.empty(); })) {
      bad(url, "bind= needs a local address, or several comma-separated (got '" + std::string(value) + "')");
    }
    o.bindAddress = binds.front();
    o.moreBindAddresses.assign(binds.begin() + 1, binds.end());
  } else {
    return false;
  }
  return true;
}

// The keys that say who calls and how: identity, timeouts, sizes.
bool applyCallOption(std::string_view url, std::string_view key, std::string_view value,
                     ClientOptions& o) {
  constexpr auto kMaxId = std::numeric_limits<std::uint32_t>::max();
  if (key == "version") {
    if (value != "4.1") {
      bad(url, "version=" + std::string(value) +
                   " is not supported: nfsrdma speaks NFSv4.1 (version=4.1)");
    }
  } else if (key == "uid") {
    o.uid = number<std::uint32_t>(url, key, value, 0, kMaxId);
  } else if (key == "gid") {
    o.gid = number<std::uint32_t>(url, key, value, 0, kMaxId);
  } else if (key == "gids") {
    o.gids.clear();
    while (!value.empty()) {
      auto comma = value.find(',');
      o.gids.push_back(number<std::uint32_t>(url, key, value.substr(0, comma), 0, kMaxId));
      value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
    }
    if (o.gids.size() > 16) bad(url, "gids lists more than the 16 groups AUTH_SYS carries");
  } else if (key == "timeout") {
    o.timeout = std::chrono::milliseconds(number<std::uint32_t>(url, key, value, 1, 3600000));
  } else if (key == "busy-timeout") {
    o.busyTimeout = std::chrono::milliseconds(number<std::uint32_t>(url, key, value, 0, 3600000));
  } else if (key == "recovery-timeout") {
    o.recoveryTimeout = std::chrono::milliseconds(number<std::uint32_t>(url, key, value, 0, 24 * 3600000));
  } else if (key == "nconnect") {
    o.nconnect = number<std::uint32_t>(url, key, value, 1, 16);
    o.givenNconnect = o.nconnect;
  } else if (key == "numa") {
    if (value != "auto" && value != "off") bad(url, "numa=" + std::string(value) + " (expected auto or off)");
    o.numaAuto = value == "auto";
  } else if (key == "iothreads") {
    o.ioThreads = number<std::uint32_t>(url, key, value, 1, 16);
  } else if (key == "qd") {
    o.queueDepth = number<std::uint32_t>(url, key, value, 1, 1024);
    o.givenQueueDepth = o.queueDepth;
  } else if (key == "iosize") {
    o.maxIoSize = number<std::uint32_t>(url, key, value, 4096, 16U << 20);
  } else if (key == "reads-per-compound") {
    o.readsPerCompound = number<std::uint32_t>(url, key, value, 1, 16);
  } else if (key == "machine") {
    o.machineName = std::string(value);
  } else {
    return false;
  }
  return true;
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
    if (eq == std::string_view::npos) bad(url, "option '" + std::string(item) + "' has no value (key=value)");
    std::string_view key = item.substr(0, eq);
    std::string_view value = item.substr(eq + 1);
    // A second value would silently win over the first: say which one is meant.
    if (!seenKeys.insert(key).second) bad(url, "option '" + std::string(key) + "' is given twice");
    if (!applyTransportOption(url, key, value, o, port) && !applyCallOption(url, key, value, o)) {
      bad(url, "unknown option '" + std::string(key) +
                   "' (known: version, uid, gid, gids, proto, port, timeout, busy-timeout, "
                   "recovery-timeout, qd, iosize, machine, memreg, bind, reads-per-compound, nconnect, iothreads, numa)");
    }
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
                 " needs proto=tcp: over RDMA each READ's data is placed by its own Write chunk, one READ per COMPOUND");
  }
  return o;
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
