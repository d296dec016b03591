// GaneshaClients: each client form as nfs-ganesha's config lexer reads it
// (see the header for what it reads and where that is decided).
#include "server/ganesha/GaneshaClients.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "util/ErrnoText.h"

namespace nfsrdma::server {
namespace {

// add_client refuses a netgroup or wildcard token longer than MAXHOSTNAMELEN.
constexpr std::size_t kMaxTokenBytes = 64;
// The longest prefix ganesha's lexer reads: its CIDR is /[1-9][0-9]?.
constexpr unsigned kMaxLexedPrefix = 99;
// Every character a host name has, as a class ganesha's lexer reads.
constexpr const char* kHostNameClass = "[a-zA-Z0-9._-]";

const char* const kNotAClient =
    "is not a host, network, wildcard or @netgroup ganesha.conf can carry";

[[noreturn]] void refuse(const std::string& why) {
  throw std::runtime_error(why);
}

// ganesha's WC: what a host name, netgroup or wildcard is made of between
// its wildcards.
bool isWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '_' || c == '-';
}

bool allWordChars(std::string_view s) {
  return std::all_of(s.begin(), s.end(), isWordChar);
}

bool startsLikeAToken(std::string_view s) {
  return !s.empty() &&
         (std::isalpha(static_cast<unsigned char>(s.front())) != 0 || s.front() == '_');
}

// A numeric network: family, address bytes, prefix length.
struct Network {
  int family = AF_UNSPEC;
  std::array<unsigned char, 16> bytes{};
  unsigned prefix = 0;
  bool alone = false;  // an address written without a prefix
  unsigned width() const { return family == AF_INET ? 32 : 128; }
};

std::optional<Network> parseAddress(const std::string& text) {
  Network n;
  if (::inet_pton(AF_INET, text.c_str(), n.bytes.data()) == 1) {
    n.family = AF_INET;
  } else if (::inet_pton(AF_INET6, text.c_str(), n.bytes.data()) == 1) {
    n.family = AF_INET6;
  } else {
    return std::nullopt;
  }
  n.prefix = n.width();
  n.alone = true;
  return n;
}

// The prefix length a mask stands for: digits, or (IPv4) a contiguous dotted
// netmask.
unsigned prefixOf(const std::string& mask, const Network& n) {
  const bool digits =
      !mask.empty() && mask.size() <= 3 &&
      std::all_of(mask.begin(), mask.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
  if (digits) {
    const auto p = static_cast<unsigned>(std::stoul(mask));
    if (p > n.width())
      refuse("has prefix /" + mask + ", beyond the address's " + std::to_string(n.width()) +
             " bits");
    return p;
  }
  in_addr m{};
  if (n.family != AF_INET || ::inet_pton(AF_INET, mask.c_str(), &m) != 1) refuse(kNotAClient);
  const std::uint32_t bits = ntohl(m.s_addr);
  if (((~bits) & (~bits + 1)) != 0) refuse("has netmask " + mask + ", which is not contiguous");
  return static_cast<unsigned>(std::popcount(bits));
}

// nullopt when `client` is not an address or network at all.
std::optional<Network> parseNetwork(const std::string& client) {
  const auto slash = client.find('/');
  std::optional<Network> n = parseAddress(client.substr(0, slash));
  if (!n) {
    // A network of something else, or a short IPv4 form (10.1) a resolver
    // would expand.
    if (slash != std::string::npos || client.find_first_not_of("0123456789.") == std::string::npos)
      refuse(kNotAClient);
    return std::nullopt;
  }
  if (slash != std::string::npos) {
    n->prefix = prefixOf(client.substr(slash + 1), *n);
    n->alone = false;
  }
  return n;
}

// ::ffff:a.b.c.d (with a prefix of at least 96) as a.b.c.d: ganesha compares
// an IPv4 client as IPv4, also on a dual-stack listener, so the mapped form
// would match nobody.
void unmapIpv4(Network& n) {
  static constexpr std::array<unsigned char, 12> kMapped{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (n.family != AF_INET6 || n.prefix < 96 ||
      !std::equal(kMapped.begin(), kMapped.end(), n.bytes.begin()))
    return;
  std::copy(n.bytes.begin() + 12, n.bytes.end(), n.bytes.begin());
  std::fill(n.bytes.begin() + 4, n.bytes.end(), 0);
  n.family = AF_INET;
  n.prefix -= 96;
}

std::string addressText(const Network& n) {
  std::array<char, INET6_ADDRSTRLEN> text{};
  ::inet_ntop(n.family, n.bytes.data(), text.data(), text.size());
  return text.data();
}

std::vector<std::string> networkTerms(Network n) {
  unmapIpv4(n);
  if (n.alone || n.prefix == n.width()) {
    const std::string a = addressText(n);
    // Bare, ganesha reads 0.0.0.0 as every host.
    if (n.family == AF_INET && a == "0.0.0.0") return {"0.0.0.0/32"};
    return {a};
  }
  for (unsigned bit = n.prefix; bit < n.width(); ++bit)
    n.bytes[bit / 8] &= static_cast<unsigned char>(~(0x80u >> (bit % 8)));
  if (n.prefix == 0) {  // ganesha reads no /0: the two halves are the same hosts
    Network upper = n;
    upper.bytes[0] = 0x80;
    return {addressText(n) + "/1", addressText(upper) + "/1"};
  }
  if (n.prefix > kMaxLexedPrefix) {
    refuse(
        "is an IPv6 network of prefix /" + std::to_string(n.prefix) +
        ", which nfs-ganesha's config cannot carry (it reads prefixes /1 to /99); list its hosts "
        "one by one, or write a shorter prefix if the wider network may use the export");
  }
  return {addressText(n) + "/" + std::to_string(n.prefix)};
}

std::string netgroupTerm(const std::string& client) {
  const std::string_view name = std::string_view(client).substr(1);
  if (!startsLikeAToken(name) || !allWordChars(name)) {
    refuse(
        "is a netgroup name nfs-ganesha's config cannot carry (it reads names that start with a "
        "letter or '_' and hold letters, digits, '.', '_' and '-')");
  }
  if (client.size() > kMaxTokenBytes)
    refuse("is longer than the " + std::to_string(kMaxTokenBytes) +
           " bytes nfs-ganesha takes for a netgroup");
  return client;
}

// One [class] of a wildcard, from `open` to its ']': a '^' first (exportfs's
// "not") becomes ganesha's '!'.
std::string classTerm(const std::string& pattern, std::size_t open, std::size_t* close) {
  *close = pattern.find(']', open + 1);
  if (*close == std::string::npos) refuse("has a '[' that no ']' closes");
  std::string body = pattern.substr(open + 1, *close - open - 1);
  const bool negated = !body.empty() && body.front() == '^';
  if (negated) body.erase(0, 1);
  if (!body.empty() && body.front() == '!') {
    refuse("has the class [" + pattern.substr(open + 1, *close - open - 1) +
           "]: exportfs reads its '!' as a character and nfs-ganesha as \"not\"; write '^' for "
           "\"not\"");
  }
  if (body.empty() || !allWordChars(body)) {
    refuse(
        "has the class [" + pattern.substr(open + 1, *close - open - 1) +
        "], which nfs-ganesha's config cannot carry (classes of letters, digits, '.', '_' and '-', "
        "'^' first for \"not\")");
  }
  return std::string("[") + (negated ? "!" : "") + body + "]";
}

std::string wildcardTerm(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (isWordChar(c) || c == '*' || c == '?') {
      out += c;
    } else if (c == '[') {
      out += classTerm(pattern, i, &i);
    } else {
      refuse(kNotAClient);
    }
  }
  // ganesha's lexer reads ?name as a host name "?name", which never resolves.
  if (out.front() == '?' && allWordChars(std::string_view(out).substr(1)))
    out.replace(0, 1, kHostNameClass);
  if (out.size() > kMaxTokenBytes) {
    refuse("is longer than the " + std::to_string(kMaxTokenBytes) +
           " bytes nfs-ganesha takes for a wildcard" +
           (out != pattern ? " (written as " + out + ")" : std::string()));
  }
  return out;
}

// A name ganesha's lexer reads as a host name, not as a number, address or
// boolean.
bool ganeshaReadsAsHostName(const std::string& name) {
  if (!startsLikeAToken(name)) return false;
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* word : {"yes", "no", "on", "off", "true", "false"}) {
    if (lower == word) return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::string>> ganeshaClientTerms(const std::string& client) {
  if (client == "*") return std::vector<std::string>{"*"};
  if (client.empty()) refuse(kNotAClient);
  if (client.front() == '@') return std::vector<std::string>{netgroupTerm(client)};
  if (const std::optional<Network> n = parseNetwork(client)) return networkTerms(*n);
  if (client.find_first_of("*?[") != std::string::npos)
    return std::vector<std::string>{wildcardTerm(client)};
  if (!allWordChars(client)) refuse(kNotAClient);
  if (ganeshaReadsAsHostName(client)) return std::vector<std::string>{client};
  return std::nullopt;
}

namespace {

// Whether the network of a term holds `addr`; nullopt for a term that is not
// numeric (a name, wildcard or netgroup).
std::optional<bool> termHolds(const std::string& term, const Network& addr) {
  if (term == "*") return true;
  std::optional<Network> net;
  try {
    net = parseNetwork(term);
  } catch (const std::runtime_error&) {
    return std::nullopt;
  }
  if (!net) return std::nullopt;
  if (net->family != addr.family) return false;
  for (unsigned bit = 0; bit < net->prefix; ++bit) {
    const unsigned mask = 0x80u >> (bit % 8);
    if ((net->bytes[bit / 8] & mask) != (addr.bytes[bit / 8] & mask)) return false;
  }
  return true;
}

}  // namespace

std::optional<bool> ganeshaClientAdmits(const std::string& client, const std::string& address) {
  std::optional<Network> addr = parseAddress(address);
  std::optional<std::vector<std::string>> terms;
  try {
    terms = ganeshaClientTerms(client);
  } catch (const std::runtime_error&) {
    return std::nullopt;  // not written for ganesha at all
  }
  if (!addr || !terms) return std::nullopt;
  unmapIpv4(*addr);
  bool unknown = false;
  for (const std::string& t : *terms) {
    const std::optional<bool> held = termHolds(t, *addr);
    if (held == true) return true;
    unknown = unknown || !held;
  }
  if (unknown) return std::nullopt;
  return false;
}

bool isNumericAddress(const std::string& address) {
  return parseAddress(address).has_value();
}

std::vector<std::string> lookUpGaneshaClient(const std::string& name) {
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(name.c_str(), nullptr, nullptr, &found);
  if (rc != 0) {
    const std::string why = rc == EAI_SYSTEM ? util::errnoText(errno) : ::gai_strerror(rc);
    refuse("cannot resolve host name '" + name + "': " + why);
  }
  const std::unique_ptr<addrinfo, void (*)(addrinfo*)> owner(found, ::freeaddrinfo);
  std::vector<std::string> out;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    Network n;
    if (ai->ai_family == AF_INET) {
      n.family = AF_INET;
      std::memcpy(n.bytes.data(), &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr, 4);
    } else if (ai->ai_family == AF_INET6) {
      n.family = AF_INET6;
      std::memcpy(n.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr,
                  16);
    } else {
      continue;
    }
    n.prefix = n.width();
    n.alone = true;
    for (std::string& t : networkTerms(n)) {
      if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(std::move(t));
    }
  }
  if (out.empty()) refuse("host name '" + name + "' resolves to no IPv4 or IPv6 address");
  return out;
}

}  // namespace nfsrdma::server
