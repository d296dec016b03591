// StagedHost: a temporary --root tree laid out like a Debian host with one
// soft-RoCE device and a stopped knfsd: /etc (nfs.conf with comments and
// other sections, an admin's /etc/exports), /proc/fs/nfsd control files,
// svc_rdma sysctls, /sys/class/infiniband/rxe0 with a RoCE v2 GID, dpkg
// status, and exportfs. Plus a byte-exact snapshot of the whole tree, for
// "nothing changed" assertions.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

namespace nfsrdma::server::testing {

// A made-up nfs.conf in nfs-utils' dialect: comments, blank lines, several
// sections, odd spacing, commented-out defaults in [nfsd].
inline const char* kSampleNfsConf =
    "#\n"
    "# Site NFS settings (test fixture)\n"
    "#\n"
    "[general]\n"
    "pipefs-directory=/run/rpc_pipefs\n"
    "\n"
    "[exportfs]\n"
    "  debug = 0\n"
    "\n"
    "[nfsd]\n"
    "# debug=0\n"
    "# threads=8\n"
    "; host=\n"
    "lease-time = 90\n"
    "# rdma=n\n"
    "# rdma-port=20049\n"
    "\n"
    "[mountd]\n"
    "# manage-gids=n\n"
    "\tdescriptors = 0\n";

// A server config for the staged host: one export to its RoCE subnet, 16
// threads, NFSv4.1 and 4.2, a 60 s lease, rxe0.
inline const char* kSampleServerConfig =
    "exports:\n"
    "  - path: /srv/nfsrdma/data\n"
    "    clients:\n"
    "      - host: 192.168.100.0/24\n"
    "        insecure: true\n"
    "nfsd:\n"
    "  threads: 16\n"
    "  versions: [\"4.1\", \"4.2\"]\n"
    "  lease_time: 60\n"
    "rdma:\n"
    "  device: rxe0\n";

// A config of one export, the staged /srv/nfsrdma/data, to one client
// `host`, with `extra` (a key of that client, e.g. "squash: all_squash").
inline std::string oneClient(const std::string& host, const std::string& extra = "") {
  return "exports:\n  - path: /srv/nfsrdma/data\n    clients:\n      - host: '" + host + "'\n" +
         (extra.empty() ? "" : "        " + extra + "\n");
}

class StagedHost {
 public:
  StagedHost() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "nfsrdma-root-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root = tmpl;
    write("etc/nfs.conf", kSampleNfsConf);
    write("etc/exports",
          "# admin's own exports, never touched by nfsrdma\n/home 10.0.0.0/8(rw,sync)\n");
    write("proc/fs/nfsd/threads", "0\n");
    write("proc/fs/nfsd/versions", "-2 +3 +4 +4.1 +4.2\n");
    write("proc/fs/nfsd/portlist", "");
    write("proc/fs/nfsd/nfsv4leasetime", "90\n");
    write("proc/fs/nfsd/nfsv4gracetime", "90\n");
    write("proc/sys/sunrpc/svc_rdma/max_requests", "32\n");
    write("proc/sys/sunrpc/svc_rdma/max_req_size", "4096\n");
    write("proc/sys/sunrpc/svc_rdma/max_outbound_read_requests", "16\n");
    write("proc/sys/kernel/osrelease", "6.1.0-test-amd64\n");
    write("lib/modules/6.1.0-test-amd64/modules.dep",
          "kernel/fs/nfsd/nfsd.ko: kernel/net/sunrpc/sunrpc.ko\n"
          "kernel/net/sunrpc/xprtrdma/rpcrdma.ko: kernel/net/sunrpc/sunrpc.ko\n");
    const std::string port = "sys/class/infiniband/rxe0/ports/1/";
    write(port + "state", "4: ACTIVE\n");
    write(port + "link_layer", "Ethernet\n");
    write(port + "gids/0", "fe80:0000:0000:0000:5054:00ff:fe12:3456\n");
    write(port + "gids/1", "0000:0000:0000:0000:0000:ffff:c0a8:6401\n");
    write(port + "gid_attrs/types/0", "RoCE v2\n");
    write(port + "gid_attrs/types/1", "RoCE v2\n");
    write(port + "gid_attrs/ndevs/0", "eth0\n");
    write(port + "gid_attrs/ndevs/1", "eth0\n");
    mkdir("sys/class/net/eth0");
    mkdir("sys/module/sunrpc");
    write("var/lib/dpkg/status",
          "Package: nfs-kernel-server\nStatus: install ok installed\nVersion: 1:2.6.2-4\n\n"
          "Package: rdma-core\nStatus: install ok installed\nVersion: 44.0-2\n\n");
    write("usr/sbin/exportfs", "#!/bin/sh\nexit 0\n");
    ::chmod((root / "usr/sbin/exportfs").c_str(), 0755);
    mkdir("srv/nfsrdma/data");
    mkdir("srv/nfsrdma/scratch");
  }
  StagedHost(const StagedHost&) = delete;
  StagedHost& operator=(const StagedHost&) = delete;
  ~StagedHost() {
    std::error_code ec;
    std::filesystem::remove_all(root, ec);
  }

  void write(const std::string& rel, const std::string& content) const {
    const auto p = root / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
  }
  void mkdir(const std::string& rel) const { std::filesystem::create_directories(root / rel); }
  std::string read(const std::string& rel) const {
    std::ifstream in(root / rel, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }  // A file as the host would report it: the kernel never lists +4.0 in
  // /proc/fs/nfsd/versions (it is implied by +4), whatever was written.
  std::string readAsReported(const std::string& rel) const {
    std::string text = read(rel);
    if (rel != "proc/fs/nfsd/versions") return text;
    for (auto at = text.find(" +4.0"); at != std::string::npos; at = text.find(" +4.0"))
      text.erase(at, 5);
    return text;
  }

  bool exists(const std::string& rel) const { return std::filesystem::exists(root / rel); }

  // Every path under the root -> its bytes ("<dir>" for directories,
  // "<symlink TARGET>" for links, which are not followed, "<special>" for
  // FIFOs, devices and sockets).
  std::map<std::string, std::string> snapshot() const { return snapshotOf(root); }

  static std::map<std::string, std::string> snapshotOf(const std::filesystem::path& top) {
    std::map<std::string, std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(top)) {
      const std::string rel = std::filesystem::relative(e.path(), top).string();
      if (e.is_symlink()) {
        out[rel] = "<symlink " + std::filesystem::read_symlink(e.path()).string() + ">";
      } else if (e.is_directory()) {
        out[rel] = "<dir>";
      } else if (!e.is_regular_file()) {  // a FIFO, device or socket: never opened
        out[rel] = "<special>";
      } else {
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream ss;
        ss << in.rdbuf();
        out[rel] = ss.str();
      }
    }
    return out;
  }

  std::filesystem::path root;
};

}  // namespace nfsrdma::server::testing
