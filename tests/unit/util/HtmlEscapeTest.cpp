// htmlEscape (util/HtmlEscape.h): the five characters HTML gives meaning to,
// in element text and in attributes of either quote.
#include <gtest/gtest.h>

#include "util/HtmlEscape.h"

namespace nfsrdma::util {
namespace {

TEST(HtmlEscape, EscapesAllFiveCharacters) {
  EXPECT_EQ(htmlEscape("&"), "&amp;");
  EXPECT_EQ(htmlEscape("<"), "&lt;");
  EXPECT_EQ(htmlEscape(">"), "&gt;");
  EXPECT_EQ(htmlEscape("\""), "&quot;");
  EXPECT_EQ(htmlEscape("'"), "&#39;");
  EXPECT_EQ(htmlEscape("<a title='x' href=\"y\">&</a>"),
            "&lt;a title=&#39;x&#39; href=&quot;y&quot;&gt;&amp;&lt;/a&gt;");
}

TEST(HtmlEscape, LeavesEverythingElseByteForByte) {
  EXPECT_EQ(htmlEscape(""), "");
  EXPECT_EQ(htmlEscape("server's cache"), "server&#39;s cache");
  EXPECT_EQ(htmlEscape("4k-randread 12.5 MiB/s — ok\n\t"), "4k-randread 12.5 MiB/s — ok\n\t");
  EXPECT_EQ(htmlEscape("&amp;"), "&amp;amp;");  // escaped once more: text is never taken as markup
}

}  // namespace
}  // namespace nfsrdma::util
