// printf-style formatting into a std::string, for the reports' figures
// ("%.1f", "%+.1f%%"): one helper for every report, of any length.
#pragma once

#include <string>

namespace nfsrdma::bench {

__attribute__((format(printf, 1, 2))) std::string fmt(const char* format, ...);

}  // namespace nfsrdma::bench
