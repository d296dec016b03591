// YAML scalar quoting (util/YamlScalar.h): one rule for the kube manifests
// and the mount plan's PersistentVolume. A string is plain only when YAML
// 1.1 (what kubectl reads) gives it back as that same string.
#include <gtest/gtest.h>

#include <string>

#include "util/YamlScalar.h"

namespace nfsrdma::util {
namespace {

TEST(YamlScalar, QuotesWhatKubernetesWouldReadAsAnotherType) {
  for (const char* s : {"", "120", "yes", "On", "NULL", "~", "0x10", "1e3", "-1", "-.inf", ".5",
                        "a: b", "$(X)", "---", "self,tcp"}) {
    EXPECT_TRUE(yamlNeedsQuotes(s)) << s;
  }
  for (const char* s : {"--target", "-np", "nfs-client", "rdma/rdma_shared_device_a", "IPC_LOCK",
                        "kubernetes.io/hostname", "Never"}) {
    EXPECT_FALSE(yamlNeedsQuotes(s)) << s;
  }
}

// Every YAML 1.1 bool, null and special float word, in the cases a reader
// takes (the mount plan's list lacked ~, none, nan, inf and ".", and
// compared case-sensitively).
TEST(YamlScalar, QuotesEverySpecialWordInAnyCase) {
  for (const char* w : {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "nan",
                        "inf", "none", "."}) {
    std::string upper;
    for (const char* p = w; *p != '\0'; ++p) upper += static_cast<char>(std::toupper(*p));
    std::string title = w;
    title[0] = static_cast<char>(std::toupper(title[0]));
    for (const std::string& s : {std::string(w), upper, title}) {
      EXPECT_TRUE(yamlNeedsQuotes(s)) << s;
      EXPECT_EQ(yamlScalar(s), "\"" + s + "\"");
    }
  }
  // Words that only contain one stay plain.
  for (const char* s : {"yesterday", "nothing", "online", "offset", "nullable", "info"}) {
    EXPECT_FALSE(yamlNeedsQuotes(s)) << s;
  }
}

TEST(YamlScalar, QuotesNumbersAndYamlSyntax) {
  for (const char* s : {"0",   "1_000", "+1",  "-.5", "2024-01-01", "=",    "=x", "a #b", "a:b",
                        "[x]", "{x}",   "x,y", "'x'", "\"x\"",      "&a",   "*a", "!t",   "|",
                        ">",   "%x",    "@x",  "`x",  "a b",        "x\ty", "-",  "- x",  "? x"}) {
    EXPECT_TRUE(yamlNeedsQuotes(s)) << s;
  }
}

// The mount options and kube names both callers write plain.
TEST(YamlScalar, KeepsOptionsAndNamesPlain) {
  for (const char* s : {"vers=4.2", "proto=rdma", "port=20049", "nosharecache", "noatime",
                        "sec=krb5p", "/mnt/x", "_x", "a+b", "--size=1G", "Ab9"}) {
    EXPECT_FALSE(yamlNeedsQuotes(s)) << s;
    EXPECT_EQ(yamlScalar(s), s);
  }
}

TEST(YamlScalar, DoubleQuotedEscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(yamlDoubleQuoted(""), "\"\"");
  EXPECT_EQ(yamlDoubleQuoted("/a \"b\"\\c"), "\"/a \\\"b\\\"\\\\c\"");
  EXPECT_EQ(yamlDoubleQuoted(std::string("a\nb\x7f", 4)), "\"a\\x0Ab\\x7F\"");
  EXPECT_EQ(yamlScalar("[fe80::1]"), "\"[fe80::1]\"");
}

}  // namespace
}  // namespace nfsrdma::util
