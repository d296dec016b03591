// HostRoot: the host files the shared checks read (sysfs, procfs,
// configfs), below one root: "/" on the live host, a staged tree in tests
// and under --root. Read only: nothing here writes, so a read that a link
// in a staged tree sends elsewhere changes nothing (the server's own files
// go through server/HostPaths, which confines every component).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace nfsrdma::hostcheck {

class HostRoot {
 public:
  explicit HostRoot(std::filesystem::path root = "/") : root_(std::move(root)) {}

  // An absolute host path ("/sys/class/net") inside the root.
  std::filesystem::path at(const std::filesystem::path& hostPath) const;
  bool exists(const std::filesystem::path& hostPath) const;
  // A file's text, trimmed of surrounding white space; nullopt when it
  // cannot be read (absent, or refused as sysfs refuses some attributes).
  std::optional<std::string> read(const std::filesystem::path& hostPath) const;
  // A whole number read from a file; nullopt when absent or not a number.
  std::optional<long long> readNumber(const std::filesystem::path& hostPath) const;
  // A directory's entry names, sorted ("10" after "9" where all are
  // numbers); empty when the directory is absent.
  std::vector<std::string> list(const std::filesystem::path& hostPath) const;
  bool isLiveHost() const { return root_ == "/"; }

 private:
  std::filesystem::path root_;
};

// s without leading and trailing blanks and newlines.
std::string trimmedText(const std::string& s);

}  // namespace nfsrdma::hostcheck
