// NfsConf: edits /etc/nfs.conf one key at a time. The file belongs to the
// admin and to nfs-utils; we own only a few keys in [nfsd]. So the editor
// keeps the text as lines and rewrites only the value of a key we set:
// every other byte (comments, blank lines, other sections, spacing, an
// inline comment after the value, a missing final newline) comes out
// exactly as it went in.
//
// Lines are read the way nfs-utils' conffile.c (conf_parse, conf_parse_line)
// reads them: a line ending in '\' continues on the next one; '#' or ';'
// first on a line makes it a comment; a value ends at '#' or ';' unless it
// is quoted ("16" or '16'); sections of the same name merge and the last
// assignment of a key wins; an empty value ("threads=") sets nothing; a last
// line without a newline is ignored. nfs-utils reads the whole file but
// parses it only up to its first NUL byte (conf_parse stops at strlen), so
// the editor does too: the bytes from the NUL on are kept as they are and
// never parsed or edited, and the line the NUL cuts short is a last line
// without a newline.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/HostPaths.h"

namespace nfsrdma::server {

class NfsConf {
 public:
  explicit NfsConf(std::string_view text);

  // The value nfs-utils reads for `key` in `[section]` from this file alone
  // (includes and nfs.conf.d are not followed: see EffectiveNfsConf). Names
  // and keys compare case-insensitively; every `[section]` of the file
  // counts and the last assignment wins. Quotes and inline comments are
  // stripped.
  std::optional<std::string> get(std::string_view section, std::string_view key) const;

  // Sets `key` = `value`. When the last assignment of `key` already means
  // `value` (see nfsConfSameValue) nothing changes. Otherwise its value token
  // alone is replaced (spacing, quotes and an inline comment are kept); with
  // no assignment, "key=value" is added after the last non-blank line of
  // the last `[section]`, else the section is appended. Returns whether the
  // text changed.
  bool set(std::string_view section, std::string_view key, std::string_view value);

  // Removes every assignment of `key` in `[section]`; returns whether the
  // text changed.
  bool remove(std::string_view section, std::string_view key);

  std::string text() const;

  // Where the text stops for nfs-utils: the line holding the first NUL byte
  // (1-based) and how many bytes from it on nfs-utils never reads.
  struct Cut {
    std::size_t line = 0;
    std::size_t ignoredBytes = 0;
  };
  std::optional<Cut> cutAtNul() const;

  // One `key = value` line as nfs-utils parses it (include lines too).
  struct Assignment {
    std::string section;             // as written, without the argument
    std::optional<std::string> arg;  // [section "arg"]
    std::string key, value;          // value unquoted, inline comment stripped
    std::size_t line = 0;            // 1-based line where the assignment starts
  };
  // Every assignment in file order. `section`: the section in force at the
  // start (an included file inherits the includer's), nullopt for none.
  std::vector<Assignment> assignments(const std::optional<std::string>& section = std::nullopt,
                                      const std::optional<std::string>& arg = std::nullopt) const;

 private:
  std::vector<std::string> lines_;  // each with its '\n' unless it is a last line without one
  std::string afterNul_;            // from the first NUL byte on: kept, never parsed
};

// Whether nfs-utils reads the value `have` as the setting `want`: the same
// text, or, when `want` is a yes/no word (y, n, yes, no, true, false, on,
// off, t, f), a word conf_get_bool reads as the same truth (1 and 0 too).
bool nfsConfSameValue(std::string_view have, std::string_view want);

// Where the value nfs-utils uses for a key comes from.
struct NfsConfOrigin {
  std::string value;
  std::string file;                // host path
  std::size_t line = 0;            // 1-based
  std::string includedFrom;        // "/etc/nfs.conf:12" when read through `include`
  std::optional<std::string> arg;  // set: the assignment was in [section "arg"]
};

// The configuration as nfs-utils (conf_init_file) reads it: /etc/nfs.conf,
// following `include = FILE` (or `include = -FILE`, optional) where it
// appears, then the *.conf files of /etc/nfs.conf.d in versionsort order
// (names starting with '.' skipped), each file overriding the ones before.
// The last assignment of a key wins.
//
// Each file is read as conf_readfile (support/nfs/conffile.c, nfs-utils
// 2.6.2) reads it: after its links, a directory or a socket cannot be read
// and is skipped (a warning); a regular file is read, and parsed up to its
// first NUL byte (a warning says how much is never read). What nfs-utils
// reads cannot be known, and is a refusal, for a FIFO (opening it blocks
// until something writes to it: nfsconf and the NFS server's start hang), a
// character or block device (its bytes are read as configuration), an
// include that leads back to a file it came through (nfs-utils follows
// includes without a limit, so it recurses until its stack runs out:
// nfsconf dies of a segmentation fault), and a chain of more than
// kMaxIncludeDepth includes, which is not followed here. An nfs.conf.d entry
// that is a FIFO itself is refused too: nfs-utils skips it by its directory
// entry's type, where the file system reports one, and opens it where not.
class EffectiveNfsConf {
 public:
  // `nfsConf`: the text of /etc/nfs.conf to assume (the current one, or the
  // one a plan would write); nullopt when there is none.
  EffectiveNfsConf(const HostPaths& paths, const std::optional<std::string>& nfsConf);

  // The last assignment of `key` in `[section]`, or in `[section "arg"]`
  // (nfs-utils lets one replace the other; get(section, key) then finds
  // nothing, so origin->arg is set). nullopt: nothing sets the key.
  std::optional<NfsConfOrigin> get(std::string_view section, std::string_view key) const;

  // What nfs-utils warns about and skips (an include it cannot read), or
  // never reads (the bytes after a NUL), one line each.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Where what nfs-utils reads cannot be known (see above), one line each
  // naming the file (and line) and what was expected. get() answers for
  // what was read; with any refusal that answer is not what nfs-utils uses.
  const std::vector<std::string>& refusals() const { return refusals_; }

  // How many includes deep a chain is followed (nfs-utils has no limit).
  static constexpr std::size_t kMaxIncludeDepth = 16;

 private:
  struct Binding {
    std::string section, key;
    NfsConfOrigin origin;
  };
  // How a file was reached: the section in force where it is read, and the
  // include lines that led to it ("/etc/nfs.conf:12"), outermost first.
  struct Reach {
    std::optional<std::string> section, arg;
    std::vector<std::string> files;  // the files those include lines are in, then this one
    std::vector<std::string> lines;  // "file:line" of each include on the way
  };
  void load(const HostPaths& paths, const std::string& hostPath, const std::string& text,
            const Reach& reach);
  void include(const HostPaths& paths, const std::string& hostPath, const NfsConf::Assignment& a,
               const Reach& reach);
  // The text nfs-utils reads from an include target or an nfs.conf.d file,
  // or nullopt (a warning or a refusal says why) when it reads none.
  // `named`: the file as messages name it; `optional`: no warning when absent.
  std::optional<std::string> readAsNfsUtils(const HostPaths& paths, const std::string& hostPath,
                                            const std::string& named, bool optional);

  std::vector<Binding> bindings_;  // in the order nfs-utils applies them
  std::vector<std::string> warnings_;
  std::vector<std::string> refusals_;
};

}  // namespace nfsrdma::server
