#include "bench/file/engines/Engine.h"

#include <sys/vfs.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "bench/job/FileProfile.h"
#include "bench/job/Interrupt.h"
#include "client/Client.h"
#include "client/Error.h"
#include "client/KernelMounts.h"
#include "util/ToolCli.h"

namespace nfsrdma::bench {

std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target);  // EngineNfs.cpp
std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target,
                                      const std::shared_ptr<EngineShare>& share);
std::shared_ptr<EngineShare> makeNfsShare(const TargetSpec& target, std::uint32_t jobs);
std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target, Client& client);
std::unique_ptr<Engine> makeLibnfsEngine(const TargetSpec& target);  // EngineLibnfs.cpp
std::unique_ptr<Engine> makePathEngine(const TargetSpec& target);    // EnginePath.cpp

void OutageAccount::merge(const OutageAccount& o) {
  outages += o.outages;
  reconnects += o.reconnects;
  newSessions += o.newSessions;
  replayed += o.replayed;
  resent += o.resent;
  unrecovered += o.unrecovered;
  // Jobs lose service together: the longest job's time, not their sum.
  outageMillis = std::max(outageMillis, o.outageMillis);
  reclaimedOpens += o.reclaimedOpens;
  reopenedOpens += o.reopenedOpens;
  rewrittenBytes += o.rewrittenBytes;
  if (unstableLost.empty()) unstableLost = o.unstableLost;
}

std::string OutageAccount::describe() const {
  const auto n = [](std::uint64_t v, const char* one, const char* many) {
    return std::to_string(v) + " " + (v == 1 ? one : many);
  };
  std::ostringstream s;
  s << "outage: " << n(outages, "loss of connection or session", "losses of connection or session")
    << " (" << n(reconnects, "reconnect", "reconnects") << ", "
    << n(newSessions, "new session after a server restart", "new sessions after a server restart")
    << "), " << outageMillis / 1000 << "." << outageMillis % 1000 / 100 << " s without service, "
    << n(replayed, "call resent on its slot", "calls resent on their slots") << ", "
    << n(resent, "call sent again on a new session", "calls sent again on a new session") << ", "
    << n(reclaimedOpens + reopenedOpens, "open restored", "opens restored") << ", "
    << n(rewrittenBytes, "byte written again", "bytes written again");
  if (unrecovered > 0) s << ", " << n(unrecovered, "outage not recovered", "outages not recovered");
  s << "; the figures include it, so no baseline is compared with this cell";
  return s.str();
}

void Engine::remove(const std::vector<std::string>& files) {
  if (!files.empty()) throw std::runtime_error("this engine cannot remove " + files.front());
}

std::uint32_t nfsEffectiveIodepth(std::uint32_t iodepth, std::uint32_t blockSize,
                                  unsigned readPercent, std::size_t maxIoSize,
                                  std::uint32_t maxInFlight, std::uint32_t readsPerCompound,
                                  std::size_t maxReadsPerCompound) {
  const std::uint64_t maxIo = std::max<std::size_t>(maxIoSize, 1);
  const std::uint64_t pieces = (blockSize + maxIo - 1) / maxIo;  // each takes a slot
  const std::uint64_t slots = maxInFlight;
  std::uint64_t onWire = std::max<std::uint64_t>(slots / pieces, 1);
  const std::uint64_t per =
      std::min<std::uint64_t>({std::max<std::uint32_t>(readsPerCompound, 1),
                               std::max<std::uint64_t>(1, iodepth / 4), maxReadsPerCompound});
  const std::uint64_t reads = std::min(readPercent, 100U);
  if (per > 1 && pieces == 1 && reads > 0) {
    // Writes are never grouped: only the reads share slots, per to one.
    // slots / (reads/100/per + (100-reads)/100), in whole numbers.
    onWire = std::max<std::uint64_t>(slots * 100 * per / (reads + (100 - reads) * per), 1);
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(iodepth, onWire));
}

void callWhileBusy(const std::function<void()>& call, std::chrono::milliseconds budget,
                   const std::function<void()>& onAgain) {
  const auto start = std::chrono::steady_clock::now();
  for (bool again = false;; again = true) {
    // The first attempt runs also after Ctrl-C: the cleanup's REMOVEs come
    // through here (with budget 0). Only attempts after it are not started.
    if (again) {
      if (const int sig = interruptSignal()) throw Interrupted(sig);
      if (onAgain) onAgain();
    }
    try {
      call();
      return;
    } catch (const NfsException& e) {
      if (!isBusy(e.code()) || budget.count() == 0) throw;
      if (const int sig = interruptSignal()) throw Interrupted(sig);
      const auto spent = std::chrono::steady_clock::now() - start;
      if (spent >= budget) {
        throw std::runtime_error(std::string(e.what()) + " (sent again for busy-timeout=" +
                                 std::to_string(budget.count()) + " ms in all)");
      }
      // The client paused between its own attempts; this pause only keeps a
      // call that fails at once from spinning.
      std::this_thread::sleep_for(kFirstBusyPause);
    }
  }
}

const char* engineName(EngineKind k) {
  switch (k) {
    case EngineKind::Nfs:
      return "nfs";
    case EngineKind::Libnfs:
      return "libnfs";
    case EngineKind::Path:
      return "path";
    case EngineKind::Device:
      return "dev";
  }
  return "?";
}

namespace {

// The engine and location as written: a wrong form is the command line's.
TargetSpec parseTargetForm(const std::string& name, const std::string& spec) {
  TargetSpec t;
  const auto colon = spec.find(':');
  const std::string engine = spec.substr(0, colon);
  if (colon == std::string::npos || colon + 1 >= spec.size()) {
    throw std::invalid_argument("target '" + spec +
                                "': expected nfs:URL, libnfs:URL, path:DIR or dev:DEVICE");
  }
  t.location = spec.substr(colon + 1);
  if (engine == "nfs" || engine == "libnfs") {
    t.engine = engine == "nfs" ? EngineKind::Nfs : EngineKind::Libnfs;
    t.nfs = ClientOptions::fromUrl(t.location);
    if (t.engine == EngineKind::Libnfs && t.nfs.proto != TransportKind::kTcp) {
      throw std::invalid_argument("target '" + spec + "': libnfs speaks TCP only");
    }
    t.name = name.empty()
                 ? (t.engine == EngineKind::Nfs ? "nfs-" + std::string(transportName(t.nfs.proto))
                                                : std::string("libnfs"))
                 : name;
  } else if (engine == "path") {
    t.engine = EngineKind::Path;
    t.name = name.empty() ? "path" : name;
  } else if (engine == "dev") {
    t.engine = EngineKind::Device;
    t.name = name.empty() ? "dev" : name;
  } else {
    throw std::invalid_argument("target '" + spec + "': unknown engine '" + engine +
                                "' (nfs, libnfs, path, dev)");
  }
  return t;
}

}  // namespace

TargetSpec TargetSpec::parse(const std::string& name, const std::string& spec) {
  TargetSpec t;
  tool::parseOrUsageError([&] { t = parseTargetForm(name, spec); });
  // What the path or the device is, is the host's: a failure, not a usage error.
  if (t.engine == EngineKind::Path) {
    t.onNfs = pathIsOnNfs(t.location);
    t.localDir = t.location;
    if (t.onNfs) t.mountProto = nfsMountProto(t.location);
  } else if (t.engine == EngineKind::Device) {
    t.device = inspectBlockDevice(t.location);
  }
  return t;
}

bool TargetSpec::serverIsLocal() const {
  if (engine == EngineKind::Path) return !onNfs;
  // A device's server (an NVMe-oF or iSCSI target) is not known from here:
  // only this host's page cache is in reach, and O_DIRECT keeps it out.
  if (engine == EngineKind::Device) return true;
  return nfs.host == "127.0.0.1" || nfs.host == "localhost" || nfs.host == "::1";
}

std::string TargetSpec::describe(bool sharedClient) const {
  if (engine == EngineKind::Device) {
    return "dev " + location + " (" + formatBytes(static_cast<double>(device.sizeBytes)) + ", " +
           std::to_string(device.logicalBlock) + " B logical blocks, " +
           (deviceWritable ? "writes allowed" : "read-only") +
           (direct ? ", O_DIRECT, io_uring)" : ", buffered, io_uring)");
  }
  if (engine == EngineKind::Path) {
    return std::string("path ") + location +
           (onNfs ? " on NFS (proto=" + mountProto + ")" : std::string()) +
           (direct ? " (O_DIRECT, io_uring)" : " (buffered, io_uring)");
  }
  if (engine == EngineKind::Libnfs)
    return "libnfs NFSv4.0 " + nfs.url() + " (async API, one context per job)";
  return "nfs NFSv4.1 " + nfs.url() + " proto=" + std::string(transportName(nfs.proto)) +
         (nfs.readsPerCompound > 1 ? " reads-per-compound=" + std::to_string(nfs.readsPerCompound)
                                   : std::string()) +
         (sharedClient ? " (our client, one client shared by the jobs)"
                       : " (our client, one connection per job)");
}

bool pathIsOnNfs(const std::string& dir) {
  struct statfs st {};
  return ::statfs(dir.c_str(), &st) == 0 && static_cast<long>(st.f_type) == kNfsSuperMagic;
}

std::string nfsMountProto(const std::string& dir) {
  std::error_code ec;
  const std::string where = std::filesystem::weakly_canonical(dir, ec).string();
  std::ifstream in("/proc/self/mounts");
  std::ostringstream text;
  text << in.rdbuf();
  return std::string(transportName(kernelMountTransport(text.str(), where)));
}

std::unique_ptr<Engine> makeEngine(const TargetSpec& target) {
  switch (target.engine) {
    case EngineKind::Nfs:
      return makeNfsEngine(target);
    case EngineKind::Libnfs:
      return makeLibnfsEngine(target);
    case EngineKind::Path:
    case EngineKind::Device:
      return makePathEngine(target);
  }
  throw std::logic_error("unknown engine");
}

std::unique_ptr<Engine> makeEngine(const TargetSpec& target,
                                   const std::shared_ptr<EngineShare>& share) {
  if (!share) return makeEngine(target);
  return makeNfsEngine(target, share);
}

std::unique_ptr<Engine> makeEngine(const TargetSpec& target, Client& client) {
  if (target.engine != EngineKind::Nfs) {
    throw std::invalid_argument("target " + target.name + " uses the " + engineName(target.engine) +
                                " engine; only the nfs engine runs on a caller's client");
  }
  return makeNfsEngine(target, client);
}

TargetSpec withSharedClientFor(TargetSpec target, std::uint32_t jobs) {
  if (target.engine != EngineKind::Nfs) return target;
  if (!target.nfs.givenNconnect) target.nfs.nconnect = std::clamp<std::uint32_t>(jobs, 1, 16);
  if (!target.nfs.givenQueueDepth) {
    const std::uint64_t all = std::uint64_t{target.nfs.queueDepth} * jobs;
    target.nfs.queueDepth = static_cast<std::uint32_t>(std::min<std::uint64_t>(all, 1024));
  }
  return target;
}

std::shared_ptr<EngineShare> makeEngineShare(const TargetSpec& target, std::uint32_t jobs) {
  if (target.engine != EngineKind::Nfs) {
    throw std::invalid_argument("--client shared: target " + target.name + " uses the " +
                                engineName(target.engine) +
                                " engine; only the nfs engine (our client) can share one client "
                                "between jobs");
  }
  return makeNfsShare(target, jobs);
}

ClientLive& ClientLive::operator+=(const ClientLive& o) {
  calls += o.calls;
  replies += o.replies;
  timeouts += o.timeouts;
  reconnects += o.reconnects;
  connectionsLost += o.connectionsLost;
  slotWaits += o.slotWaits;
  replayed += o.replayed;
  credits += o.credits;
  slots += o.slots;
  return *this;
}

std::string ClientUse::describe() const {
  const auto n = [](std::uint32_t k, const char* one) {
    return std::to_string(k) + " " + one + (k == 1 ? "" : "s");
  };
  if (mode == "shared")
    return "shared (" + n(sessions, "session") + ", " + n(connections, "connection") + ")";
  const std::uint32_t each = sessions ? connections / sessions : 0;
  return mode + " (" + n(sessions, "session") + ", " + n(each, "connection") + " each)";
}

}  // namespace nfsrdma::bench
