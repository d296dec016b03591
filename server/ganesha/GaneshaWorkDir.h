// GaneshaWorkDir: the one directory an embedded nfs-ganesha keeps its config,
// log, pid file, stdout and NFSv4 recovery state in. It is one nfsrdma made
// (a temporary one, or the caller's, created when absent) or one that is empty
// and only its owner may write, so nothing of anyone else's is overwritten;
// every file in it is made afresh without following a link, so nothing
// outside it is written through one. A temporary one records which process
// made it, so that when that process is killed (nothing removes it then) a
// later start can tell it is a leftover and remove it.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "util/UniqueFd.h"

namespace nfsrdma::server {

// What a work directory holds: the config, ganesha's log, its pid (-p: the
// sweep reads it to tell whether the ganesha of an ended run still runs), its
// stdout and stderr, the NFSv4 recovery state, and the record of the run.
inline constexpr const char* kGaneshaConfigFileName = "ganesha.conf";
inline constexpr const char* kGaneshaLogFileName = "ganesha.log";
inline constexpr const char* kGaneshaPidFileName = "ganesha.pid";
inline constexpr const char* kGaneshaStdoutFileName = "ganesha.stdout";
inline constexpr const char* kGaneshaRecoveryDirName = "recovery";
inline constexpr const char* kGaneshaRunRecordName = "nfsrdma-run";

struct GaneshaWorkDir {
  std::filesystem::path path;  // absolute
  UniqueFd fd;                 // the directory, open: files are made relative to it
  bool temporary = false;      // made by makeTemporaryGaneshaWorkDir; removed on stop
};

// A new directory nfsrdma-ganesha-<our pid>-XXXXXX (mode 0700) in `parent`,
// holding the record sweepEndedGaneshaWorkDirs reads. Throws
// std::runtime_error naming the directory and the errno text.
GaneshaWorkDir makeTemporaryGaneshaWorkDir(const std::filesystem::path& parent);

// `dir` as the work directory: made (with its parents) when absent; when it
// exists, it must be a directory owned by us and writable by no one else
// (another user could plant a link there where ganesha writes), and empty or
// holding only what an earlier run of ours put there (its record among it:
// a server restarted in place keeps its recovery state), with neither that
// run nor its ganesha still running. Records this run in it. Throws
// std::runtime_error naming the directory and what was expected.
GaneshaWorkDir useGivenGaneshaWorkDir(const std::filesystem::path& dir);

// Makes `name` in the work directory an empty regular file (removing one that
// was there) without following a link, and returns it open for writing.
// Throws std::runtime_error naming the file and the errno text.
UniqueFd makeWorkFile(const GaneshaWorkDir& dir, const std::string& name, mode_t mode = 0644);

// Writes `contents` as the file `name` (made as makeWorkFile makes it).
void writeWorkFile(const GaneshaWorkDir& dir, const std::string& name, const std::string& contents);

// Makes the subdirectory `name` unless it already is one (not a link).
void makeWorkSubdir(const GaneshaWorkDir& dir, const std::string& name);

// Removes from `parent` each work directory of a run that ended without
// removing it: named nfsrdma-ganesha-<pid>-XXXXXX exactly, a directory (not
// a link) owned by us, whose record names that pid in this boot and this PID
// namespace, with that pid and the ganesha pid in its pid file no longer
// running (a running one, even an unrelated process that reuses the pid,
// keeps it). Returns one line saying what it removed and what it could not,
// or "" when it found nothing. Never throws.
std::string sweepEndedGaneshaWorkDirs(const std::filesystem::path& parent) noexcept;

}  // namespace nfsrdma::server
