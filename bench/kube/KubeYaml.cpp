#include "bench/kube/KubeYaml.h"

#include <string>

#include "util/YamlScalar.h"

namespace nfsrdma::bench::kube::yaml {

YAML::Emitter& str(YAML::Emitter& e, std::string_view text) {
  const std::string s(text);
  if (util::yamlNeedsQuotes(text)) return e << YAML::DoubleQuoted << s;
  return e << s;
}

void field(YAML::Emitter& e, std::string_view k, std::string_view value) {
  key(e, k);
  str(e, value);
}

void number(YAML::Emitter& e, std::string_view k, std::int64_t value) {
  key(e, k);
  e << value;
}

void flag(YAML::Emitter& e, std::string_view k, bool value) {
  key(e, k);
  e << YAML::TrueFalseBool << value;
}

void key(YAML::Emitter& e, std::string_view k) {
  e << YAML::Key;
  str(e, k);
  e << YAML::Value;
}

void beginMap(YAML::Emitter& e, std::string_view k, std::string_view comment) {
  key(e, k);
  if (!comment.empty()) e << YAML::Comment(std::string(comment));
  e << YAML::BeginMap;
}

}  // namespace nfsrdma::bench::kube::yaml
