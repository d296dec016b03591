// urlKeys(), the one table of nfs:// URL keys: what fromUrl parses is what
// the table names, each key once, and the README's URL line (near "URLs
// follow libnfs's shape") lists every one of them.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>

#include "client/ClientOptions.h"
#include "client/Error.h"

namespace nfsrdma {
namespace {

std::string errorOf(const std::string& url) {
  try {
    (void)ClientOptions::fromUrl(url);
  } catch (const NfsException& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(UrlKeys, EachKeyOnceWithAValueShapeAndHelp) {
  std::set<std::string_view> names;
  for (const UrlKey& k : urlKeys()) {
    EXPECT_TRUE(names.insert(k.name).second) << k.name << " is in the table twice";
    EXPECT_FALSE(k.value.empty()) << k.name;
    EXPECT_FALSE(k.help.empty()) << k.name;
    EXPECT_NE(k.apply, nullptr) << k.name;
  }
  EXPECT_EQ(names.size(), 18U);
}

// The parser knows a key exactly when the table has it: a table key is
// never "unknown", and the error for an unknown one lists the table.
TEST(UrlKeys, TheParserTakesTheTablesKeys) {
  const std::string unknown = errorOf("nfs://srv/e?colour=red");
  for (const UrlKey& k : urlKeys()) {
    const std::string name(k.name);
    EXPECT_EQ(errorOf("nfs://srv/e?" + name + "=").find("unknown option"), std::string::npos)
        << name;
    EXPECT_NE(unknown.find(name), std::string::npos) << name << " missing from: " << unknown;
  }
}

// The line of README.md that gives the URL grammar.
std::string readmeUrlLine() {
  std::ifstream in(NFSRDMA_README);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("URLs follow libnfs's shape") != std::string::npos) return line;
  }
  return {};
}

TEST(UrlKeys, TheReadmesUrlLineListsEveryKey) {
  const std::string line = readmeUrlLine();
  ASSERT_FALSE(line.empty()) << NFSRDMA_README
                             << " has no line with \"URLs follow libnfs's shape\"";
  for (const UrlKey& k : urlKeys()) {
    // "?key=" or "&key=": "timeout=" inside "busy-timeout=" does not count.
    const std::string name(k.name);
    const bool listed = line.find("?" + name + "=") != std::string::npos ||
                        line.find("&" + name + "=") != std::string::npos;
    EXPECT_TRUE(listed) << name << "= is missing from README.md's URL line: " << line;
  }
}

}  // namespace
}  // namespace nfsrdma
