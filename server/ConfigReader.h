// ConfigReader: how the config file is read, strictly and with a position
// in every error. The file is bounded (a regular file of at most 1 MiB;
// never a FIFO or device, which are refused without reading), it is one YAML
// document whose quotes all close, and each node is read as the type its key
// wants or refused at "file:line:column". ServerConfig.cpp reads the keys
// with it; ConfigHostChecks.cpp reports at the entry it checks.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "server/ServerConfig.h"

namespace nfsrdma::server {

// Reads YAML nodes of one config file (`source`, for messages); every
// refusal is a ConfigError at the node's position.
class ConfigReader {
 public:
  explicit ConfigReader(std::string source) : source_(std::move(source)) {}

  // Throws ConfigError "source:line:column: msg".
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& msg) const;
  [[noreturn]] void fail(const SourceMark& m, const std::string& msg) const;
  static SourceMark mark(const YAML::Node& n) { return {n.Mark().line + 1, n.Mark().column + 1}; }

  void requireMap(const YAML::Node& n, const std::string& what) const;
  // A mapping of only `allowed` keys, each written once.
  void requireKeys(const YAML::Node& n, const std::string& what,
                   const std::vector<std::string>& allowed) const;
  std::string scalar(const YAML::Node& n, const std::string& what) const;
  // true/yes/on or false/no/off, in any case.
  bool boolean(const YAML::Node& n, const std::string& what) const;
  // A whole number in min..max; `rule` names where the range comes from.
  uint64_t number(const YAML::Node& n, const std::string& what, uint64_t min, uint64_t max,
                  const std::string& rule = "") const;
  std::string oneOf(const YAML::Node& n, const std::string& what,
                    const std::vector<std::string>& allowed) const;

 private:
  std::string source_;
};

// The config file's text. A missing or unreadable file, a directory, a FIFO
// or device, and a file over 1 MiB are ConfigErrors naming it.
std::string readConfigText(const std::string& name);

// The one YAML document in `text`, every quoted scalar in it closed; a YAML
// syntax error, a second document or a quote left open is a ConfigError
// where it starts.
YAML::Node loadOneDocument(const ConfigReader& r, const std::string& text);

}  // namespace nfsrdma::server
