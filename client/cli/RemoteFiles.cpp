#include "client/cli/RemoteFiles.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "util/ToolCli.h"

namespace nfsrdma::cli {
namespace {

// "name=value" pairs for a --stats line.
std::string counters(std::initializer_list<std::pair<const char*, unsigned long long>> items) {
  std::string out;
  for (const auto& [name, value] : items) {
    out += (out.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
  }
  return out;
}

}  // namespace

void printStats(const CliOptions& o, const Client& c) {
  if (!o.printStats) return;
  const auto s = c.stats();
  const auto& r = s.rpc;
  const auto& n = s.session;
  std::cerr << "rpc: "
            << counters({{"calls", r.calls},
                         {"replies", r.replies},
                         {"timeouts", r.timeouts},
                         {"unknown_xids", r.unknownXids},
                         {"malformed", r.malformedReplies},
                         {"sent", r.bytesSent},
                         {"received", r.bytesReceived}})
            << "\nsession: "
            << counters({{"slots", n.slots},
                         {"slots_asked", n.slotsAsked},
                         {"retired", n.retiredSlots},
                         {"compounds", n.compounds},
                         {"waited_for_slot", n.waitedForSlot},
                         {"renewals", n.renewals}})
            << "\nrecovery: "
            << counters({{"outages", n.outages},
                         {"reconnects", n.reconnects},
                         {"replayed", n.replayed},
                         {"resent", n.resent},
                         {"uncached_replays", n.uncachedReplays},
                         {"new_sessions", n.recoveries},
                         {"unrecovered", n.unrecovered},
                         {"outage_ms", n.outageMillis},
                         {"reclaimed_opens", s.recovery.reclaimedOpens},
                         {"reopened_opens", s.recovery.reopenedOpens},
                         {"lost_opens", s.recovery.lostOpens},
                         {"rewritten_bytes", s.recovery.rewrittenBytes}})
            << "\n"
            << c.transportStats() << "\n";
  // A line per connection of the session: whether the load spread.
  for (std::size_t i = 0; i < s.connections.size(); ++i) {
    const auto& k = s.connections[i];
    std::cerr << "connection " << i << ": " << k.peer << " "
              << counters({{"calls", k.rpc.calls},
                           {"replies", k.rpc.replies},
                           {"bytes-sent", k.rpc.bytesSent},
                           {"bytes-received", k.rpc.bytesReceived},
                           {"credits", k.credits},
                           {"lost", k.rpc.connectionsLost},
                           {"reconnects", k.rpc.reconnects}})
              << " up=" << (k.up ? "yes" : "no") << "\n";
  }
}

bool isRemote(const std::string& s) {
  return s.rfind("nfs://", 0) == 0;
}

std::string urlPath(const std::string& url) {
  return url.substr(0, url.find('?'));
}

bool endsWithSlash(const std::string& s) {
  return !s.empty() && s.back() == '/';
}

Remote parseRemote(const CliOptions& o, const std::string& url) {
  Remote r;
  // The URL is the command line's: a key or value it refuses is a usage error (exit 2).
  tool::parseOrUsageError([&] { r.options = ClientOptions::fromUrl(url); });
  // --proto for a URL that names no transport: parsed again with it, so the
  // port follows it (proto=rdma: 20049 unless the URL gives one).
  std::string more;
  if (o.proto && !r.options.givenProto) more = "proto=" + std::string(transportName(*o.proto));
  if (o.nconnect != 0 && !r.options.givenNconnect) {
    more += (more.empty() ? "" : "&") + std::string("nconnect=") + std::to_string(o.nconnect);
  }
  if (!more.empty()) {
    tool::parseOrUsageError([&] {
      r.options =
          ClientOptions::fromUrl(url + (url.find('?') == std::string::npos ? "?" : "&") + more);
    });
  }
  // A server in its grace period holds an OPEN, REMOVE or RENAME for up to
  // a minute and a half: say why the command waits.
  r.options.onBusy = [](const std::string& what) {
    std::cerr << "nfsrdma-client: " << what << "\n";
  };
  r.options.onSessionReplaced = [](const std::string& what) {
    std::cerr << "nfsrdma-client: note: " << what << "\n";
  };
  r.options.onRecovered = [](const std::string& what) {
    std::cerr << "nfsrdma-client: note: " << what << "\n";
  };
  // The command's own work is done and durable by then: a server that will
  // not let go of the session is worth a warning, not a failed command.
  r.options.onTeardownError = [](const std::string& what) {
    std::cerr << "nfsrdma-client: warning: closing the session: " << what << "\n";
  };
  r.path = r.options.exportPath;
  r.options.exportPath = "/";
  // The URL parser drops a trailing '/', which says "a directory": a link
  // there is followed, and a file there is an error.
  const std::string typed = urlPath(url);
  if ((endsWithSlash(typed) || typed.ends_with("/.")) && !endsWithSlash(r.path)) r.path += '/';
  return r;
}

std::unique_ptr<Client> connectTo(const Remote& r) {
  return Client::connect(r.options);
}

[[noreturn]] void fail(const std::string& message) {
  throw std::runtime_error(message);
}

std::string childPath(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

void writeAll(int fd, const std::uint8_t* p, std::size_t n, const std::string& what) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(errnoMessage(what));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace nfsrdma::cli
