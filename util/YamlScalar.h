// YAML scalars as Kubernetes reads them back. kubectl reads YAML 1.1
// (sigs.k8s.io/yaml over go-yaml), where a plain yes, on, ~, 0x10 or 120
// is a bool, a null or a number, and [fe80::1] a list: a string that could
// read as anything but itself is double-quoted, where a double-quoted
// scalar is always the string it spells. One rule for every YAML the
// project writes (the kube manifests, the mount plan's PersistentVolume).
#pragma once

#include <string>
#include <string_view>

namespace nfsrdma::util {

// True when a plain scalar of this text could read back as anything but
// this string: empty; a YAML 1.1 bool, null or special float word in any
// case (y n yes no on off true false null ~ none nan inf .); a start like
// a number's (a digit, + . or a - that is not an option's, as in "-np" or
// "--target") or '='; any character beyond letters, digits and -_./=+
// (so ': ', ' #', brackets, quotes, commas and spaces are all quoted).
bool yamlNeedsQuotes(std::string_view text);

// text between double quotes: " and \ escaped, control bytes as \xNN.
std::string yamlDoubleQuoted(std::string_view text);

// text plain when it reads back as itself, else yamlDoubleQuoted(text).
std::string yamlScalar(std::string_view text);

}  // namespace nfsrdma::util
