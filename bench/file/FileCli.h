// The command line of `nfsrdma-bench file`, `compare` and `anchor`: parsing
// argv, --help, output paths. The workload options themselves (declaration,
// help, default, rule) are bench/job/WorkloadOptions.h's.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "bench/job/WorkloadOptions.h"

namespace nfsrdma::bench {

// Parses argv (after the subcommand word) into vm. A word that is not an
// option is an error naming it (and serverOption, the option that takes a
// server, when it looks like a URL or path). Throws tool::UsageError for
// every word it cannot parse (Boost's errors, with Boost's text).
void storeOptions(int argc, char** argv, const boost::program_options::options_description& opts,
                  boost::program_options::variables_map& vm, const char* serverOption);
// storeOptions, then, when --help was given, prints "usage: nfsrdma-bench
// COMMAND [options]" and the options and returns true.
bool parseOptionsOrHelp(int argc, char** argv,
                        const boost::program_options::options_description& opts,
                        const char* command, const char* serverOption);
// Before a run: the directory an output file (--json, --html) goes to
// exists and is writable, so a long run does not end in "cannot write".
// "" and "-" (stdout) pass. Throws std::invalid_argument naming the option.
void checkOutputPath(const std::string& path, const char* option);
// True when stderr is a terminal: the live progress line is shown then only.
bool progressWanted();

}  // namespace nfsrdma::bench
