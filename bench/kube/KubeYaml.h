// Scalars for yaml-cpp's emitter as Kubernetes reads them back. kubectl
// reads YAML 1.1 (sigs.k8s.io/yaml over go-yaml), where a plain yes, on,
// 0x10 or 120 is a bool or a number; yaml-cpp writes a std::string plain
// unless it must quote it for YAML's syntax, so a ConfigMap value "120" or a
// storage class "on" would arrive as the wrong type. Every string written
// through str() is double-quoted unless it is plainly a string.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string_view>

namespace nfsrdma::bench::kube::yaml {

// The string, double-quoted when util::yamlNeedsQuotes (util/YamlScalar.h).
YAML::Emitter& str(YAML::Emitter& e, std::string_view text);
// key: "value" in the current map (distinct names: a const char* or an
// int would otherwise pick the bool overload).
void field(YAML::Emitter& e, std::string_view key, std::string_view value);
void number(YAML::Emitter& e, std::string_view key, std::int64_t value);
void flag(YAML::Emitter& e, std::string_view key, bool value);
// key: followed by a block (a map or a list the caller opens).
void key(YAML::Emitter& e, std::string_view key);
// key: and a map the caller fills and ends (EndMap), with the comment
// (when given) after the key, where it explains the whole block.
void beginMap(YAML::Emitter& e, std::string_view key, std::string_view comment = {});

}  // namespace nfsrdma::bench::kube::yaml
