// Text for an HTML (or SVG) page: element content and attribute values,
// whichever quote the attribute uses.
#pragma once

#include <string>
#include <string_view>

namespace nfsrdma::util {

// s with & < > " ' as &amp; &lt; &gt; &quot; &#39;; every other byte as it is.
std::string htmlEscape(std::string_view s);

}  // namespace nfsrdma::util
