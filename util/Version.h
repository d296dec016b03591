// The build's version: the project's version (CMakeLists.txt's project())
// and the commit of the source tree it was built from, taken at build time.
// Only the generated Version.cpp (cmake/WriteVersion.cmake) holds them, so a
// new commit recompiles that one file; nothing that includes this header
// changes. --version prints versionText() and every JSON document the tools
// write carries it: a figure names the build that made it.
#pragma once

#include <string_view>

namespace nfsrdma::util {

// "0.1.0".
std::string_view projectVersion();
// 12 hex digits of the commit, with "-dirty" when tracked files differed
// from it; "unknown" when the tree was no git repository (a tarball) or
// git was missing.
std::string_view commitId();
// "0.1.0 (commit 7af4c7b5a2cc)", "0.1.0 (commit 7af4c7b5a2cc-dirty)" or
// "0.1.0 (commit unknown)".
std::string_view versionText();

}  // namespace nfsrdma::util
