#include "bench/tune/KernelTarget.h"

#include <charconv>
#include <sstream>
#include <stdexcept>

namespace nfsrdma::bench {
namespace {

std::uint32_t wholeValue(const std::string& key, const std::string& text, std::uint32_t low,
                         std::uint32_t high) {
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < low || v > high) {
    throw std::invalid_argument("knfs: " + key + "=" + text + ": expected a whole number " +
                                std::to_string(low) + ".." + std::to_string(high));
  }
  return v;
}

void applyOption(KernelTarget& t, const std::string& word) {
  const auto eq = word.find('=');
  const std::string key = word.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
  mount::MountRequest& r = t.request;
  if (key == "proto") {
    r.proto = value;  // planMount checks it
  } else if (key == "port") {
    r.port = static_cast<std::uint16_t>(wholeValue(key, value, 1, 65535));
  } else if (key == "vers") {
    r.vers = value;
  } else if (key == "nconnect") {
    r.nconnect = wholeValue(key, value, 1, 16);
  } else if (key == "rsize") {
    r.rsize = wholeValue(key, value, 1024, 16U << 20);
  } else if (key == "wsize") {
    r.wsize = wholeValue(key, value, 1024, 16U << 20);
  } else if (key == "read_ahead_kb") {
    t.readAheadKb = wholeValue(key, value, 0, 1U << 20);
  } else {
    r.extraOptions.push_back(word);
  }
}

}  // namespace

KernelTarget parseKernelTarget(const std::string& spec) {
  const std::string prefix = "knfs:";
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--target " + spec + ": " + why +
                                 " (expected knfs:SERVER:/export[?proto=rdma&nconnect=N&...])");
  };
  if (spec.rfind(prefix, 0) != 0) throw bad("not a knfs: target");
  std::string rest = spec.substr(prefix.size());
  const auto q = rest.find('?');
  const std::string query = q == std::string::npos ? "" : rest.substr(q + 1);
  rest = rest.substr(0, q);
  // SERVER may be [IPv6]: the export starts at the first ":/" after it.
  const auto close = rest.rfind(']');
  const auto colon = rest.find(":/", close == std::string::npos ? 0 : close);
  if (colon == std::string::npos || colon == 0) throw bad("no SERVER:/export");
  KernelTarget t;
  t.request.server = rest.substr(0, colon);
  t.request.exportPath = rest.substr(colon + 1);
  std::istringstream in(query);
  std::string word;
  while (std::getline(in, word, '&')) {
    if (!word.empty()) applyOption(t, word);
  }
  if (t.request.proto == "both") throw bad("proto=both: a trial mounts one transport");
  return t;
}

KnobSpace kernelKnobSpace(const KernelTarget& target, const ClientWorkload& w, bool direct,
                          bool sequential) {
  const mount::MountRequest& r = target.request;
  KnobSpace space;
  space.knobs.push_back(numericKnob("nconnect", {1, 2, 4, 8, 16}, r.nconnect.value_or(1)));
  const std::vector<std::uint32_t> sizes{64U << 10, 256U << 10, 1U << 20};
  // Without rsize=/wsize= the kernel takes the server's preferred size (1 MiB from knfsd).
  if (w.reads) space.knobs.push_back(numericKnob("rsize", sizes, r.rsize.value_or(1U << 20)));
  if (w.writes) space.knobs.push_back(numericKnob("wsize", sizes, r.wsize.value_or(1U << 20)));
  if (!w.reads) space.leftAlone.push_back({"rsize", "the workload does not read"});
  if (!w.writes) space.leftAlone.push_back({"wsize", "the workload does not write"});
  if (!w.reads || direct || !sequential) {
    space.leftAlone.push_back(
        {"read_ahead_kb", !w.reads ? "the workload does not read"
                          : direct ? "O_DIRECT reads bypass read-ahead (--direct 0 tunes it)"
                                   : "random reads do not read ahead"});
  } else {
    // 128 KiB: the BDI's default on current kernels.
    space.knobs.push_back(
        numericKnob("read_ahead_kb", {128, 1024, 4096, 15360}, target.readAheadKb.value_or(128)));
  }
  return space;
}

KernelSetting kernelSetting(const KernelTarget& target, const std::vector<Knob>& knobs,
                            const Setting& setting) {
  KernelSetting s{target.request, target.readAheadKb};
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    const std::string& level = knobs[i].levels.at(setting.at(i));
    const auto v = static_cast<std::uint32_t>(std::stoul(level));
    if (knobs[i].name == "nconnect") s.request.nconnect = v;
    if (knobs[i].name == "rsize") s.request.rsize = v;
    if (knobs[i].name == "wsize") s.request.wsize = v;
    if (knobs[i].name == "read_ahead_kb") s.readAheadKb = v;
  }
  return s;
}

namespace {

// The plan for /mnt/nfs on a host like this one, without its mounts (a
// second mount of the same server would add nosharecache to the lines).
mount::MountPlan handOverPlan(const KernelSetting& s, mount::HostFacts facts) {
  facts.mounts.clear();
  mount::MountRequest r = s.request;
  r.mountPoint = "/mnt/nfs";
  return mount::planMount(r, facts);
}

}  // namespace

std::string kernelSettingText(const KernelSetting& s, const mount::HostFacts& facts) {
  std::string text = handOverPlan(s, facts).mounts.at(0).options;
  if (s.readAheadKb) text += ", read_ahead_kb=" + std::to_string(*s.readAheadKb);
  return text;
}

KernelHandOver kernelHandOver(const KernelSetting& s, const mount::HostFacts& facts) {
  const mount::MountPlan plan = handOverPlan(s, facts);
  KernelHandOver h;
  h.mountCommand = plan.mounts.at(0).command;
  h.fstabLine = plan.mounts.at(0).fstabLine;
  h.kubernetesYaml = plan.kubernetesYaml;
  if (!s.readAheadKb) return h;
  const std::string kb = std::to_string(*s.readAheadKb);
  // nfsrahead(5): a value per NFS version; ours are NFSv4 mounts.
  h.readAheadNfsConf = "[nfsrahead]\nnfs4=" + kb + "\n";
  // For every new BDI that /proc/fs/nfsfs/volumes lists (its 4th column is
  // the device, MAJOR:MINOR, as the BDI is named).
  h.readAheadUdevRule =
      "SUBSYSTEM==\"bdi\", ACTION==\"add\", PROGRAM=\"/usr/bin/awk -v dev=$kernel "
      "'$4 == dev { found = 1 } END { exit !found }' /proc/fs/nfsfs/volumes\", "
      "ATTR{read_ahead_kb}=\"" +
      kb + "\"\n";
  return h;
}

}  // namespace nfsrdma::bench
