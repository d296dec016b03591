// The files the benchmark's commands read that a user or another program
// wrote: a saved compare JSON (--results, --baseline), `link --json` output
// (--link-json), fio's JSON, the clients' logs (`aggregate`). Each is read
// through here and nowhere else, so that every one of them is bounded: a
// path must name a regular file (a FIFO would block, a device such as
// /dev/zero never ends) of at most its kind's size, checked on the opened
// file before a byte is read and again while reading (it may grow). Standard
// input is the one input that may be a pipe (`kubectl logs | aggregate`):
// it is bounded by the same size while it is read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/UniqueFd.h"

namespace nfsrdma::bench {

// What an input is, for its errors ("a compare JSON"), and its size limit.
struct InputKind {
  std::string_view what;
  std::uint64_t maxBytes = 0;
};

// Opens path for reading: a regular file of at most kind.maxBytes. Throws
// std::runtime_error naming the path, what was expected and what was found:
// "/dev/zero: a character device; expected a regular file, a JSON file of
// at most 256 MiB (268435456 bytes)", "big.json: 300000000 bytes; expected a
// JSON file of at most 256 MiB (268435456 bytes)", "x.json: cannot open: No
// such file or directory".
UniqueFd openInputFile(const std::string& path, const InputKind& kind);

// The whole of path, opened as openInputFile does; also an error when the
// file grows past the limit while it is read.
std::string readInputFile(const std::string& path, const InputKind& kind);

// The lines of a log: a file opened by openInputFile, or standard input.
// Lines end at '\n' (the last one may lack it). A line longer than
// maxLineBytes, or more than kind.maxBytes in all, is an error naming the
// source and the line.
class InputLines {
 public:
  // path "-": standard input (any kind of file; only the sizes bound it).
  InputLines(const std::string& path, const InputKind& kind, std::size_t maxLineBytes);

  // The next line without its '\n'; false after the last.
  bool next(std::string& line);
  // The line number of the line next() gave last (1 for the first).
  std::size_t lineNumber() const { return lineNumber_; }
  // "stdin" or the path.
  const std::string& source() const { return source_; }

 private:
  bool fill();

  UniqueFd fd_;
  std::string source_;
  InputKind kind_;
  std::size_t maxLine_;
  std::string buffer_;
  std::size_t begin_ = 0;    // of the unread part of buffer_
  std::size_t scanned_ = 0;  // buffer_ up to here holds no '\n' after begin_
  std::uint64_t readBytes_ = 0;
  std::size_t lineNumber_ = 0;
  bool eof_ = false;
};

}  // namespace nfsrdma::bench
