#include "bench/file/FileCli.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "util/ErrnoText.h"
#include "util/ToolCli.h"

namespace po = boost::program_options;

namespace nfsrdma::bench {

void storeOptions(int argc, char** argv, const po::options_description& opts, po::variables_map& vm,
                  const char* serverOption) {
  // Boost drops a word that is no option when no positional options are
  // declared: `file nfs://host/export` would benchmark the embedded server.
  po::options_description all;
  all.add(opts);
  all.add_options()("nfsrdma-stray-argument", po::value<std::vector<std::string>>());
  po::positional_options_description stray;
  stray.add("nfsrdma-stray-argument", -1);
  tool::parseOrUsageError([&] {
    po::store(po::command_line_parser(argc, argv).options(all).positional(stray).run(), vm);
  });
  if (vm.count("nfsrdma-stray-argument") != 0) {
    const std::string word = vm["nfsrdma-stray-argument"].as<std::vector<std::string>>().front();
    std::string message =
        "unexpected argument '" + word + "': every setting is an option (see --help)";
    if (word.find("://") != std::string::npos || word.find('/') != std::string::npos) {
      message += std::string("; a server or directory is given with ") + serverOption;
    }
    throw tool::UsageError(message);
  }
  tool::parseOrUsageError([&] { po::notify(vm); });
}

bool parseOptionsOrHelp(int argc, char** argv, const po::options_description& opts,
                        const char* command, const char* serverOption) {
  po::variables_map vm;
  storeOptions(argc, argv, opts, vm, serverOption);
  if (vm.count("help") == 0) return false;
  std::cout << "usage: nfsrdma-bench " << command << " [options]\n" << opts;
  return true;
}

void checkOutputPath(const std::string& path, const char* option) {
  if (path.empty() || path == "-") return;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? "." : parent.string();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw std::invalid_argument(std::string(option) + " " + path + ": directory " + dir +
                                " does not exist");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw std::invalid_argument(std::string(option) + " " + path + ": cannot write in " + dir +
                                ": " + util::errnoText(errno));
  }
}

bool progressWanted() {
  return ::isatty(STDERR_FILENO) == 1;
}

}  // namespace nfsrdma::bench
