// How to reach and talk to a server: parsed from libnfs's URL shape,
// nfs://host[:port]/export/path?version=4.1&uid=N&gid=N, plus our own keys
// (urlKeys(), the one table of them).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma {

// The transport under RPC. An enum, not the URL's text, so that every
// choice made on it is a switch the compiler checks for a missing kind.
enum class TransportKind { kTcp, kRdma };
// "tcp" or "rdma", as proto= spells it.
std::string_view transportName(TransportKind kind);
// The kind proto= (or the CLI's --proto) names; nullopt for any other text.
std::optional<TransportKind> parseTransportKind(std::string_view name);

struct ClientOptions {
  std::string host;
  std::uint16_t port = 2049;     // 20049 is the usual RDMA port
  std::string exportPath = "/";  // path of the export in the server's pseudo file system
  TransportKind proto = TransportKind::kTcp;  // proto=tcp | rdma
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::vector<std::uint32_t> gids;
  std::string machineName;  // AUTH_SYS machine name; empty: this host's name
  std::chrono::milliseconds timeout{30000};
  // How long a synchronous call the server answers with NFS4ERR_DELAY or
  // NFS4ERR_GRACE is sent again (nfs4/BusyRetry.h); 0: the first such answer
  // is the error. The asynchronous READ/WRITE calls pass such answers on.
  // Two minutes outlast Linux's and nfs-ganesha's default 90 s grace period
  // after a server restart.
  std::chrono::milliseconds busyTimeout{120000};
  // How long calls wait for a lost connection (and, after a server
  // restart, the session and the files' opens) to come back before each
  // fails with one error naming the server and how long it tried. Like a
  // kernel "hard" mount bounded by timeo x retrans; 0: one attempt, no waiting.
  std::chrono::milliseconds recoveryTimeout{120000};
  // Told after a connection was restored: how long service stopped and what
  // was resent (the CLI prints it). Renewal thread. Not parsed from URLs.
  std::function<void(const std::string&)> onRecovered;
  // Told once per synchronous call (each READDIR round of a long listing is
  // one), when the server first answers DELAY or GRACE, what is sent again
  // and for how long (the CLI prints it): a command waiting out a grace
  // period should not look hung. Not parsed from URLs.
  std::function<void(const std::string&)> onBusy;
  // Told when a session the server lost was replaced (nfs4/Session.h), and
  // whether files opened before are gone with the old client ID (the CLI
  // prints it): it explains the NFS4ERR_EXPIRED of such a file. Called on
  // the session's renewal thread. Not parsed from URLs.
  std::function<void(const std::string&)> onSessionReplaced;
  // Told when close() could not tear the session down on the server
  // (DESTROY_SESSION or DESTROY_CLIENTID failed, after riding out a busy
  // server): close() does not throw for it, as no data depends on it (the
  // server drops the client ID when its lease runs out). Not parsed from URLs.
  std::function<void(const std::string&)> onTeardownError;
  // Told once at connect when the server granted fewer session slots than
  // queueDepth asked for: no more calls than that are in flight, whatever
  // depth the caller keeps (the CLI and the benchmarks print it). Not parsed from URLs.
  std::function<void(const std::string&)> onFewerSlots;
  std::uint32_t queueDepth = 32;  // session slots asked for
  std::uint32_t maxIoSize = 1U << 20;
  // RDMA: register a caller's buffer per call and deregister it when the
  // call ends (the default), or keep registrations in a pool (memreg=pooled):
  // faster, but only safe when every buffer stays mapped for the client's
  // life (the pool is keyed by address and the server keeps its rkey). A
  // call that times out takes its registrations out of the pool, so the
  // server loses access to its buffer as in per-call mode, unless another
  // call in flight uses the same pages (then when that call ends).
  bool perIoRegistration = true;
  // What the URL itself said (qd=, memreg= with true for per-io, proto=),
  // for callers whose own default differs from the library's (the file
  // benchmark's iodepth-sized session, the benchmarks' pooled registration,
  // the CLI's --proto); queueDepth, perIoRegistration and proto hold the
  // value in effect either way.
  std::optional<std::uint32_t> givenQueueDepth;
  std::optional<bool> givenPerIoRegistration;
  std::optional<TransportKind> givenProto;
  std::string bindAddress;  // local address to connect from (bind=); empty: routing chooses
  // Session trunking (RFC 8881 2.10.5): nconnect=N opens N connections (TCP
  // connections or RDMA queue pairs) and binds them all to the one session;
  // calls go to the least loaded. 1..16, as the kernel's mount option.
  std::uint32_t nconnect = 1;
  std::optional<std::uint32_t>
      givenNconnect;  // what the URL said, for callers with their own default
  // iothreads=N: the I/O threads a trunk's connections share (connection i
  // runs on thread i mod N; TCP sockets and RDMA completion queues alike);
  // 0: one per two cores, at most nconnect.
  std::uint32_t ioThreads = 0;
  // numa=auto: each connection's I/O thread runs on the CPUs of its device's
  // NUMA node (the RDMA device; over TCP the NIC holding the local address),
  // as perftest's --cpu or SPDK's reactors pin theirs; the stats line says
  // where, or why not (a virtual device has no node). Off by default.
  bool numaAuto = false;
  // More server addresses after the first, from nfs://a,b/export (each may
  // carry its own :port, else the first's): connection i goes to address
  // i mod count, and a connection to another address joins the session only
  // if EXCHANGE_ID there shows the same server owner and scope.
  struct Address {
    std::string host;
    std::uint16_t port = 0;  // 0: the same port as the first address
  };
  std::vector<Address> moreServers;
  // bind=a,b: connection i connects from address i mod count (multi-rail:
  // over RDMA the address picks the device); bindAddress holds the first.
  std::vector<std::string> moreBindAddresses;
  // For drivers that keep a queue (the file benchmark's nfs engine): up to
  // this many queued READs of one file share a COMPOUND (Client::preadvAsync).
  std::uint32_t readsPerCompound = 1;

  // Parses a URL; throws NfsException (kInvalidArgument) naming the bad part
  // and what was expected. The query's keys are urlKeys().
  static ClientOptions fromUrl(std::string_view url);
  // "nfs://host:port/export"
  std::string url() const;
};

// One key of an nfs:// URL's query. urlKeys() is the one table of them:
// what fromUrl() parses, what nfsrdma-client --help lists, and what the
// README's URL line is checked against.
struct UrlValue;  // a key's value as the parser hands it over (ClientOptions.cpp)
struct UrlKey {
  std::string_view name;   // "busy-timeout"
  std::string_view value;  // what it takes, as help writes it: "ms", "tcp|rdma"
  std::string_view help;   // one line: what it sets, its range and default
  void (*apply)(const UrlValue& value, ClientOptions& options);  // throws like fromUrl()
};
// Every key, in the order --help lists them.
std::span<const UrlKey> urlKeys();

// base + "/" + rel with exactly one slash between them ("/export", "a/b" -> "/export/a/b").
std::string joinPath(std::string_view base, std::string_view rel);

}  // namespace nfsrdma
