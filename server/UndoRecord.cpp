// UndoRecord: last-apply.yaml read, checked and written.
#include "server/UndoRecord.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string_view>

#include "server/CommandRunner.h"
#include "server/ExportsFile.h"
#include "server/HostFiles.h"
#include "server/ServerConfig.h"
#include "server/ServerPlan.h"

namespace nfsrdma::server {
namespace fs = std::filesystem;
namespace {

constexpr std::pair<UndoKind, const char*> kUndoKindNames[] = {
    {UndoKind::File, "file"},     {UndoKind::Kernel, "kernel"},   {UndoKind::Listener, "listener"},
    {UndoKind::Module, "module"}, {UndoKind::Command, "command"}, {UndoKind::Threads, "threads"}};

// nullopt for a name apply never writes.
std::optional<UndoKind> undoKindNamed(const std::string& name) {
  for (const auto& [k, n] : kUndoKindNames) {
    if (name == n) return k;
  }
  return std::nullopt;
}

// A file directly in `dir`, as apply names backups and kernel values.
bool isFileIn(const std::string& hostPath, const char* dir) {
  const fs::path p = fs::path(hostPath).lexically_normal();
  return p.has_filename() && p.parent_path() == dir;
}

// A value as messages show it, quoted.
std::string shown(std::string_view v) {
  return "'" + shownInput(v) + "'";
}

// A decimal number as the kernel prints one ("90": no sign, no leading 0) in min..max.
bool isNumberIn(std::string_view s, std::uint64_t min, std::uint64_t max) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  if (s.size() > 1 && s.front() == '0') return false;
  const std::uint64_t v = std::stoull(std::string(s));
  return v >= min && v <= max;
}

// /proc/fs/nfsd/versions as apply reads it back: "+"/"-" and a version
// (2, 3, 4 or 4.N) per token, one space between tokens.
bool isVersionList(std::string_view s) {
  if (s.empty()) return false;
  std::size_t at = 0;
  while (at <= s.size()) {
    const auto end = std::min(s.find(' ', at), s.size());
    const std::string_view t = s.substr(at, end - at);
    const bool sign = t.size() >= 2 && (t[0] == '+' || t[0] == '-');
    const std::string_view v = sign ? t.substr(1) : std::string_view();
    const bool minor = v.size() == 3 && v[0] == '4' && v[1] == '.' && v[2] >= '0' && v[2] <= '9';
    if (!(v == "2" || v == "3" || v == "4" || minor)) return false;
    at = end + 1;
  }
  return true;
}

// What apply may record as a kernel file's value before it wrote the file:
// the kernel's own reading of it, one line (a final newline or none).
struct KernelValueRule {
  std::string path;
  std::string form;
  std::function<bool(std::string_view)> accepts;
};

const std::vector<KernelValueRule>& kernelValueRules() {
  static const std::vector<KernelValueRule> rules = [] {
    auto number = [](std::uint64_t min, std::uint64_t max) {
      return [=](std::string_view v) { return isNumberIn(v, min, max); };
    };
    const KernelLimit t = kNfsv4TimeLimits;
    const std::string seconds =
        "a number of seconds " + std::to_string(t.min) + ".." + std::to_string(t.max);
    std::vector<KernelValueRule> r = {
        {HostPaths::kThreads, "a thread count 0.." + std::to_string(kNfsdMaxThreads),
         number(0, kNfsdMaxThreads)},
        {HostPaths::kVersions, "versions such as '-2 +3 +4 +4.0 +4.1 +4.2'", isVersionList},
        {HostPaths::kLeaseTime, seconds, number(t.min, t.max)},
        {HostPaths::kGraceTime, seconds, number(t.min, t.max)}};
    for (const KernelLimit& l : kSvcRdmaLimits) {
      r.push_back({std::string(HostPaths::kSvcRdmaSysctl) + "/" + l.name,
                   "a number " + std::to_string(l.min) + ".." + std::to_string(l.max),
                   number(l.min, l.max)});
    }
    return r;
  }();
  return rules;
}

std::string unlikeKernelStep(const Undo& u) {
  const auto& rules = kernelValueRules();
  const auto rule = std::find_if(rules.begin(), rules.end(),
                                 [&u](const KernelValueRule& r) { return r.path == u.path; });
  if (rule == rules.end()) {
    std::string names;
    for (const auto& r : rules)
      names += (names.empty() ? "" : ", ") + fs::path(r.path).filename().string();
    return std::string("a path in ") + HostPaths::kNfsdDir + " or " + HostPaths::kSvcRdmaSysctl +
           " that apply writes (" + names + ")";
  }
  std::string_view value = u.before;
  if (!value.empty() && value.back() == '\n') value.remove_suffix(1);
  if (!rule->accepts(value)) {
    return "before: " + rule->form + " on one line, as the kernel reports it (got " +
           shown(u.before) + ")";
  }
  return "";
}

bool isDigest(const std::string& d) {
  return d.size() == 16 && d.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// A value nfs-utils can read from one line: not empty, no line break or other control byte.
bool isOneLineValue(const std::string& v) {
  return !v.empty() && std::none_of(v.begin(), v.end(), [](char c) {
    const auto b = static_cast<unsigned char>(c);
    return (b < 0x20 && c != '\t') || b == 0x7f;
  });
}

std::string unlikeConfKeys(const Undo& u) {
  const auto& owned = ownedNfsConfKeys();
  for (const ConfKey& k : u.keys) {
    if (k.section != kNfsConfSection ||
        std::find(owned.begin(), owned.end(), k.key) == owned.end()) {
      std::string names;
      for (const auto& o : owned) names += (names.empty() ? "" : ", ") + o;
      return std::string("keys apply sets, in [") + kNfsConfSection + "]: " + names + " (got [" +
             shownInput(k.section) + "] " + shownInput(k.key) + ")";
    }
    for (const auto& v : {k.before, k.after}) {
      if (v && !isOneLineValue(*v)) {
        return "[" + k.section + "] " + k.key +
               " values on one line, without control bytes, as nfs-utils reads a value (got " +
               shown(*v) + ")";
      }
    }
  }
  return "";
}

std::string unlikeFileStep(const Undo& u) {
  using P = HostPaths;
  if (u.path != P::kOwnExports && u.path != P::kNfsConf)
    return std::string("path ") + P::kOwnExports + " or " + P::kNfsConf;
  // backupHostFile names a backup after the file: <name>.<time>[.N].
  const std::string name = fs::path(u.path).filename().string() + ".";
  if (u.existed && (!isFileIn(u.backup, P::kBackupDir) ||
                    fs::path(u.backup).filename().string().rfind(name, 0) != 0))
    return std::string("a backup in ") + P::kBackupDir + " named " + name + "<time>";
  if (u.path == P::kNfsConf && !u.perKey)
    return std::string("the [") + kNfsConfSection + "] keys apply set (it undoes " + P::kNfsConf +
           " key by key)";
  if (u.path == P::kOwnExports && (u.perKey || !u.writes.empty()))
    return "no keys or writes (our exports file goes back whole)";
  for (const ConfWrite& w : u.writes) {
    if (!isDigest(w.replaced) || !isDigest(w.wrote))
      return "writes whose digests are 16 lowercase hex digits (got " + shown(w.replaced) + ", " +
             shown(w.wrote) + ")";
  }
  return unlikeConfKeys(u);
}

std::string unlikeListenerStep(const Undo& u) {
  if (u.path != HostPaths::kPortList) return std::string("path ") + HostPaths::kPortList;
  // Apply opens "tcp <port>" and "rdma <port>", as the port list spells them.
  const auto space = u.name.find(' ');
  const std::string transport = u.name.substr(0, space);
  if (space == std::string::npos || (transport != "tcp" && transport != "rdma") ||
      !isNumberIn(std::string_view(u.name).substr(space + 1), 1, 65535))
    return "name '<tcp or rdma> <port 1..65535>', a listener apply opens (got " + shown(u.name) +
           ")";
  if (!u.argv.empty() && (u.argv.size() != 1 || !isHostToolPath(u.argv[0], "nfsdctl")))
    return "argv [] or [<sbin or bin>/nfsdctl]";
  return "";
}

std::string unlikeCommandStep(const Undo& u) {
  if (u.kind == UndoKind::Module && u.name != "nfsd" && u.name != "svcrdma" && u.name != "rpcrdma")
    return "name nfsd, svcrdma or rpcrdma (got " + shown(u.name) + ")";
  if (u.kind == UndoKind::Command &&
      (u.argv.size() != 2 || !isHostToolPath(u.argv[0], "exportfs") || u.argv[1] != "-ra"))
    return "argv [<sbin or bin>/exportfs, -ra]";
  if (u.kind == UndoKind::Threads &&
      (u.argv.size() != 3 || !isHostToolPath(u.argv[0], "nfsdctl") || u.argv[1] != "threads" ||
       !isNumberIn(u.argv[2], 0, kNfsdMaxThreads)))
    return "argv [<sbin or bin>/nfsdctl, threads, <count 0.." + std::to_string(kNfsdMaxThreads) +
           ">]";
  return "";
}

// Undo step `n` (from 1) of the record `file`, read and checked.
Undo readStep(const YAML::Node& s, std::size_t n, const std::string& file) {
  const std::string step = file + ": undo step " + std::to_string(n);
  Undo u;
  std::string kindName;
  try {
    auto str = [&s](const char* key) { return s[key] ? s[key].as<std::string>() : ""; };
    kindName = str("kind");
    u.path = str("path");
    u.existed = s["existed"] && s["existed"].as<bool>();
    u.backup = str("backup");
    u.before = str("before");
    u.name = str("name");
    if (s["argv"]) u.argv = s["argv"].as<std::vector<std::string>>();
    if (const YAML::Node writes = s["writes"]) {
      for (const auto& w : writes)
        u.writes.push_back({w["replaced"].as<std::string>(), w["wrote"].as<std::string>()});
    }
    if (const YAML::Node keys = s["keys"]) {
      u.perKey = true;
      for (const auto& k : keys) {
        ConfKey c{k["section"].as<std::string>(), k["key"].as<std::string>(), std::nullopt,
                  std::nullopt};
        if (k["before"]) c.before = k["before"].as<std::string>();
        if (k["after"]) c.after = k["after"].as<std::string>();
        u.keys.push_back(std::move(c));
      }
    }
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(step + " (line " + std::to_string(e.mark.line + 1) +
                             "): a field has the wrong type: " + e.msg);
  }
  const std::optional<UndoKind> kind = undoKindNamed(kindName);
  if (!kind) {
    throw std::runtime_error(step + ": unknown kind '" + shownInput(kindName) +
                             "' (expected file, kernel, listener, module, command or threads)");
  }
  u.kind = *kind;
  if (const std::string expected = unlikeApply(u); !expected.empty()) {
    throw std::runtime_error(step + " (" + undoKindName(u.kind) +
                             (u.path.empty() ? "" : " " + shownInput(u.path)) + "): expected " +
                             expected + "; not an undo step apply writes, so nothing was changed");
  }
  return u;
}

}  // namespace

std::string textDigest(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64: offset basis, then per byte
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

const char* undoKindName(UndoKind kind) {
  for (const auto& [k, name] : kUndoKindNames) {
    if (k == kind) return name;
  }
  return "?";
}

// Rollback writes and runs what the record says, so a hand-edited one must
// not name a file, kernel value, listener or program apply never touches,
// nor a value apply would never have read or written there.
std::string unlikeApply(const Undo& u) {
  switch (u.kind) {
    case UndoKind::File:
      return unlikeFileStep(u);
    case UndoKind::Kernel:
      return unlikeKernelStep(u);
    case UndoKind::Listener:
      return unlikeListenerStep(u);
    default:
      return unlikeCommandStep(u);
  }
}

// Reads and checks the whole record before anything is undone or added to it;
// nullopt when there is none. Throws naming the file (and line) and what was expected.
std::optional<Record> loadRecord(const HostPaths& paths) {
  const std::string file = paths.display(HostPaths::kLastApply);
  auto text = readHostFile(paths, HostPaths::kLastApply);
  if (!text) return std::nullopt;
  YAML::Node doc;
  try {
    doc = YAML::Load(*text);
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(file + ": line " + std::to_string(e.mark.line + 1) + ", column " +
                             std::to_string(e.mark.column + 1) +
                             ": unreadable apply record: " + e.msg);
  }
  if (!doc.IsMap() || !doc["undo"] || !doc["undo"].IsSequence()) {
    throw std::runtime_error(file + ": not an apply record (no 'undo' list)");
  }
  Record r;
  try {
    r.appliedAt = doc["applied_at"] ? doc["applied_at"].as<std::string>() : "?";
    r.config = doc["config"] ? doc["config"].as<std::string>() : "";
    if (const YAML::Node later = doc["later_applies"]) {
      for (const auto& l : later) {
        r.laterApplies.push_back({l["at"].as<std::string>(), l["config"].as<std::string>()});
      }
    }
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(
        file + ": line " + std::to_string(e.mark.line + 1) +
        ": applied_at, config and later_applies (at, config) must be strings: " + e.msg);
  }
  std::size_t n = 0;
  for (const auto& s : doc["undo"]) r.steps.push_back(readStep(s, ++n, file));
  return r;
}

// Writes the undo record (last-apply.yaml), atomically.
void writeRecord(const HostPaths& paths, const Record& record) {
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "applied_at" << YAML::Value << record.appliedAt << YAML::Key
    << "config" << YAML::Value << record.config;
  if (!record.laterApplies.empty()) {
    e << YAML::Key << "later_applies" << YAML::Value << YAML::BeginSeq;
    for (const auto& [at, config] : record.laterApplies) {
      e << YAML::Flow << YAML::BeginMap << YAML::Key << "at" << YAML::Value << at << YAML::Key
        << "config" << YAML::Value << config << YAML::EndMap;
    }
    e << YAML::EndSeq;
  }
  e << YAML::Key << "undo" << YAML::Value << YAML::BeginSeq;
  for (const auto& u : record.steps) {
    e << YAML::BeginMap << YAML::Key << "kind" << YAML::Value << undoKindName(u.kind);
    if (!u.path.empty()) e << YAML::Key << "path" << YAML::Value << u.path;
    if (u.kind == UndoKind::File) {
      e << YAML::Key << "existed" << YAML::Value << u.existed;
      if (u.existed) e << YAML::Key << "backup" << YAML::Value << u.backup;
      if (u.perKey) {
        e << YAML::Key << "keys" << YAML::Value << YAML::BeginSeq;
        for (const auto& k : u.keys) {
          e << YAML::Flow << YAML::BeginMap << YAML::Key << "section" << YAML::Value << k.section
            << YAML::Key << "key" << YAML::Value << k.key;
          if (k.before)
            e << YAML::Key << "before" << YAML::Value << YAML::DoubleQuoted << *k.before;
          if (k.after) e << YAML::Key << "after" << YAML::Value << YAML::DoubleQuoted << *k.after;
          e << YAML::EndMap;
        }
        e << YAML::EndSeq;
      }
      if (!u.writes.empty()) {
        e << YAML::Key << "writes" << YAML::Value << YAML::BeginSeq;
        for (const auto& w : u.writes) {
          e << YAML::Flow << YAML::BeginMap << YAML::Key << "replaced" << YAML::Value
            << YAML::DoubleQuoted << w.replaced << YAML::Key << "wrote" << YAML::Value
            << YAML::DoubleQuoted << w.wrote << YAML::EndMap;
        }
        e << YAML::EndSeq;
      }
    }
    if (u.kind == UndoKind::Kernel)
      e << YAML::Key << "before" << YAML::Value << YAML::DoubleQuoted << u.before;
    if (!u.name.empty()) e << YAML::Key << "name" << YAML::Value << u.name;
    if (!u.argv.empty()) {
      e << YAML::Key << "argv" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (const auto& a : u.argv) e << a;
      e << YAML::EndSeq;
    }
    e << YAML::EndMap;
  }
  e << YAML::EndSeq << YAML::EndMap;
  writeHostFile(paths, HostPaths::kLastApply, std::string(e.c_str()) + "\n", fs::perms(0600));
}

}  // namespace nfsrdma::server
