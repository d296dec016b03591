// NfsConf: edits /etc/nfs.conf one key at a time. The file belongs to the
// admin and to nfs-utils; we own only a few keys in [nfsd]. So the editor
// keeps the text as lines and rewrites only the line holding a key we set:
// every other byte (comments, blank lines, other sections, spacing, a
// missing final newline) comes out exactly as it went in.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nfsrdma::server {

class NfsConf {
 public:
  explicit NfsConf(std::string_view text);

  // The value of `key` in the first `[section]` (names and keys compare
  // case-insensitively, as nfs-utils does); the last assignment wins.
  // Commented-out lines ("# threads=8") do not count.
  std::optional<std::string> get(std::string_view section, std::string_view key) const;

  // Sets `key` = `value`: rewrites the value of its last assignment in place
  // (keeping the spacing around '='), else adds "key=value" after the
  // section's last non-blank line, else appends the section. Returns whether
  // the text changed.
  bool set(std::string_view section, std::string_view key, std::string_view value);

  // Removes every assignment of `key` in the section; returns whether the
  // text changed.
  bool remove(std::string_view section, std::string_view key);

  std::string text() const;

 private:
  struct Range {
    std::size_t begin, end;  // line indexes: header line, one past the last line
  };
  std::optional<Range> findSection(std::string_view section) const;
  std::vector<std::size_t> findKey(const Range& r, std::string_view key) const;

  std::vector<std::string> lines_;  // each with its '\n' unless it is a last line without one
};

}  // namespace nfsrdma::server
