#include "bench/tune/ServerKnobs.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "client/mount/MountPlan.h"

namespace nfsrdma::bench {
namespace {

constexpr const char* kThreads = "nfsd.threads";
constexpr const char* kMaxRequests = "svcrdma.max_requests";
constexpr const char* kUndoRecord = "/var/lib/nfsrdma/last-apply.yaml";

std::optional<std::uint32_t> numberIn(const std::string& text) {
  std::uint32_t v = 0;
  const char* end = text.data() + text.size();
  while (end > text.data() && (end[-1] == '\n' || end[-1] == ' ')) --end;
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::optional<std::uint32_t> readValue(ServerHost& host, const char* file) {
  const hostcheck::CommandResult r = host.run({"cat", file});
  if (r.exitStatus != 0) return std::nullopt;
  return numberIn(r.output);
}

// The server knobs the setting moves from their start, by name.
std::map<std::string, std::string> serverChanges(const std::vector<Knob>& knobs,
                                                 const Setting& setting) {
  std::map<std::string, std::string> out;
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    if (isServerKnob(knobs[i].name) && setting.at(i) != knobs[i].start)
      out[knobs[i].name] = knobs[i].levels.at(setting[i]);
  }
  return out;
}

std::string failure(const std::string& what, const hostcheck::CommandResult& r) {
  return what + " exited " + std::to_string(r.exitStatus) + ": " + r.output;
}

}  // namespace

hostcheck::CommandResult ServerHost::run(const std::vector<std::string>& argv) {
  if (prefix_.empty()) return runner_.run(argv);
  // The prefix gets one word, the command line its shell is to run (ssh
  // hands its words to the remote shell joined, so each is quoted twice).
  std::string line;
  for (const auto& a : argv) line += (line.empty() ? "" : " ") + mount::shellQuote(a);
  return runner_.run({"sh", "-c", prefix_ + " " + mount::shellQuote(line)});
}

std::string ServerHost::where() const {
  return prefix_.empty() ? "on this host" : "through '" + prefix_ + "'";
}

ServerStart readServerStart(ServerHost& host) {
  return {readValue(host, "/proc/fs/nfsd/threads"),
          readValue(host, "/proc/sys/sunrpc/svc_rdma/max_requests")};
}

void addServerKnobs(KnobSpace& space, const ServerStart& start, bool rdma,
                    const std::string& whyNot) {
  if (!whyNot.empty()) {
    space.leftAlone.push_back({kThreads, whyNot});
    space.leftAlone.push_back({kMaxRequests, whyNot});
    return;
  }
  if (start.threads && *start.threads > 0) {
    space.knobs.push_back(numericKnob(kThreads, {1, 4, 8, 16, 32, 64}, *start.threads));
  } else {
    space.leftAlone.push_back({kThreads, "knfsd is not running there (/proc/fs/nfsd/threads)"});
  }
  if (!rdma) {
    space.leftAlone.push_back({kMaxRequests, "svcrdma's credits: RDMA only"});
  } else if (start.maxRequests) {
    space.knobs.push_back(numericKnob(kMaxRequests, {32, 64, 128, 256}, *start.maxRequests));
  } else {
    space.leftAlone.push_back({kMaxRequests, "svcrdma is not loaded there"});
  }
}

std::string serverConfigVariant(const std::string& configText, const std::vector<Knob>& knobs,
                                const Setting& setting) {
  YAML::Node root;
  try {
    root = YAML::Load(configText);
  } catch (const YAML::Exception& e) {
    throw std::invalid_argument("--server-config: not YAML: " + std::string(e.what()));
  }
  if (!root.IsMap()) throw std::invalid_argument("--server-config: expected a YAML mapping");
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    const std::string& level = knobs[i].levels.at(setting.at(i));
    if (knobs[i].name == kThreads) root["nfsd"]["threads"] = std::stoul(level);
    if (knobs[i].name == kMaxRequests) root["tuning"]["max_requests"] = std::stoul(level);
  }
  YAML::Emitter out;
  out << root;
  return std::string(out.c_str()) + "\n";
}

std::string serverFragment(const std::vector<Knob>& knobs, const Setting& setting,
                           const Setting& start) {
  std::string nfsd, tuning;
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    if (setting.at(i) == start.at(i)) continue;
    const std::string& level = knobs[i].levels[setting[i]];
    if (knobs[i].name == kThreads) nfsd = "nfsd:\n  threads: " + level + "\n";
    if (knobs[i].name == kMaxRequests) tuning = "tuning:\n  max_requests: " + level + "\n";
  }
  return nfsd + tuning;
}

ServerSession::ServerSession(ServerHost& host, std::string configText)
    : host_(host), config_(std::move(configText)) {
  const hostcheck::CommandResult v = host_.run({"nfsrdma-server", "--version"});
  if (v.exitStatus != 0) {
    throw std::runtime_error("nfsrdma-server does not run " + host_.where() + ": " + v.output);
  }
  reapply_ = host_.run({"test", "-e", kUndoRecord}).exitStatus == 0;
  const hostcheck::CommandResult temp = host_.run({"mktemp", "-t", "nfsrdma-tune.XXXXXXXX"});
  if (temp.exitStatus != 0) throw std::runtime_error(failure("mktemp " + host_.where(), temp));
  path_ = temp.output.substr(0, temp.output.find('\n'));
  try {
    checkPlan();
  } catch (...) {
    host_.run({"rm", "-f", path_});  // the destructor does not run for a constructor that throws
    throw;
  }
}

void ServerSession::checkPlan() {
  write(config_);
  const hostcheck::CommandResult plan = host_.run({"nfsrdma-server", "plan", path_});
  if (plan.exitStatus != 0) {
    throw std::runtime_error(failure("nfsrdma-server plan " + path_, plan) +
                             "(the --server-config as it stands would be refused)");
  }
  if (reapply_ && plan.output.find("No changes: the host already matches") == std::string::npos) {
    throw std::runtime_error(
        std::string("the server was set up by an nfsrdma-server apply (") + kUndoRecord +
        ") and differs from --server-config now (plan lists changes): tune puts such a server "
        "back by rollback and applying the config again, which would leave it as this config "
        "says, not as it found it; give the config it was applied from\n" +
        plan.output);
  }
}

void ServerSession::write(const std::string& text) {
  const hostcheck::CommandResult r = host_.run(
      {"sh", "-c", "umask 077 && cat > \"$0\" <<'NFSRDMA_TUNE_EOF'\n" + text + "NFSRDMA_TUNE_EOF\n",
       path_});
  if (r.exitStatus != 0) throw std::runtime_error(failure("writing " + path_, r));
}

void ServerSession::use(const std::vector<Knob>& knobs, const Setting& setting) {
  // Compared by knob name, not as settings: the search's knobs and
  // --versus' are different lists (with the same starts: the server's now).
  std::map<std::string, std::string> changes = serverChanges(knobs, setting);
  if (changes == (inEffect_ ? *inEffect_ : std::map<std::string, std::string>{})) return;
  write(serverConfigVariant(config_, knobs, setting));
  const hostcheck::CommandResult r = host_.run({"nfsrdma-server", "apply", path_});
  // Recorded before the check: a failed apply may have changed some of it.
  inEffect_ = std::move(changes);
  ++applies_;
  if (r.exitStatus != 0) throw ServerChangeFailed(failure("nfsrdma-server apply", r));
}

std::string ServerSession::finish(bool keep) {
  finished_ = true;
  struct RemoveTemp {
    ServerHost& host;
    const std::string& path;
    ~RemoveTemp() { host.run({"rm", "-f", path}); }
  } removeTemp{host_, path_};
  if (!inEffect_) return "the server was not changed";
  if (keep && reapply_) {
    // The record holds the user's own apply too: rollback would undo both.
    return "the server keeps the recommendation (applied " + host_.where() +
           "); applying --server-config there puts its values back (`nfsrdma-server rollback` "
           "would also undo the apply that was there before tune)";
  }
  if (keep) {
    return "the server keeps the recommendation (applied " + host_.where() +
           "); `nfsrdma-server rollback` there undoes it";
  }
  const hostcheck::CommandResult r = host_.run({"nfsrdma-server", "rollback"});
  if (r.exitStatus != 0) {
    throw std::runtime_error(failure("nfsrdma-server rollback", r) +
                             "(the undo record stays on the server: run `nfsrdma-server rollback` "
                             "there to finish it)");
  }
  std::string done = "the server is as it began: " + std::to_string(applies_) +
                     " applies rolled back (nfsrdma-server rollback " + host_.where() + ")";
  if (!reapply_) return done;
  write(config_);
  const hostcheck::CommandResult again = host_.run({"nfsrdma-server", "apply", path_});
  if (again.exitStatus != 0) {
    throw std::runtime_error(
        failure("nfsrdma-server apply of --server-config after the rollback", again) +
        "(apply it again there to put the server back)");
  }
  return done + ", then --server-config applied again, as it was before tune";
}

ServerSession::~ServerSession() {
  if (finished_) return;
  try {
    std::fprintf(stderr, "nfsrdma-bench tune: %s\n", finish(false).c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nfsrdma-bench tune: %s\n", e.what());
  }
}

}  // namespace nfsrdma::bench
