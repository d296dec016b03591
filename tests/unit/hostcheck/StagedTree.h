// StagedTree: a temporary --root tree for hostcheck's tests (files written
// by host path, removed with the tree), and the look-up of one check by name.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "hostcheck/DoctorCheck.h"
#include "hostcheck/HostRoot.h"

namespace nfsrdma::hostcheck::testing {

class StagedTree {
 public:
  StagedTree() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "nfsrdma-hostcheck-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root = tmpl;
  }
  ~StagedTree() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }
  StagedTree(const StagedTree&) = delete;
  StagedTree& operator=(const StagedTree&) = delete;

  // Writes text at the host path ("/sys/class/net/eth0/mtu"), making its directories.
  void write(const std::string& hostPath, const std::string& text) const {
    const auto p = root / std::filesystem::path(hostPath).relative_path();
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void mkdir(const std::string& hostPath) const {
    std::filesystem::create_directories(root / std::filesystem::path(hostPath).relative_path());
  }
  HostRoot host() const { return HostRoot(root); }

  // rxe0 port 1 on eth0: ACTIVE, Ethernet, a RoCE v1 and a RoCE v2 GID
  // of 10.0.0.1, and the netdev's mtu.
  void roceDevice(unsigned netdevMtu = 1500, const std::string& dev = "rxe0",
                  const std::string& netdev = "eth0",
                  const std::string& ipHex = "0a00:0001") const {
    const std::string p = "/sys/class/infiniband/" + dev + "/ports/1/";
    write(p + "state", "4: ACTIVE\n");
    write(p + "link_layer", "Ethernet\n");
    write(p + "gids/0", "fe80:0000:0000:0000:0000:0000:0000:0001\n");
    write(p + "gid_attrs/types/0", "IB/RoCE v1\n");
    write(p + "gid_attrs/ndevs/0", netdev + "\n");
    for (const char* idx : {"1", "2"}) {
      write(p + "gids/" + idx, "0000:0000:0000:0000:0000:ffff:" + ipHex + "\n");
      write(p + "gid_attrs/types/" + std::string(idx),
            std::string(idx) == "1" ? "RoCE v2\n" : "IB/RoCE v1\n");
      write(p + "gid_attrs/ndevs/" + std::string(idx), netdev + "\n");
    }
    write(p + "gids/3", "0000:0000:0000:0000:0000:0000:0000:0000\n");
    write("/sys/class/net/" + netdev + "/mtu", std::to_string(netdevMtu) + "\n");
  }

  std::filesystem::path root;
};

// The one check named `name`; fails the test when there is none or several.
inline DoctorCheck checkNamed(const CheckList& list, const std::string& name) {
  const DoctorCheck* found = nullptr;
  int count = 0;
  for (const auto& c : list.checks()) {
    if (c.name == name) {
      found = &c;
      ++count;
    }
  }
  if (count != 1) {
    ADD_FAILURE() << count << " checks named '" << name << "' in:\n" << renderDoctor(list.checks());
    return {};
  }
  return *found;
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace nfsrdma::hostcheck::testing
