// Writes the seed corpus of fuzz_reply_decoder into the directory given as
// the only argument (normally tests/fuzz/corpus/fuzz_reply_decoder).
#include <cstdio>
#include <fstream>
#include <string>

#include "tests/fuzz/ReplyCorpus.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  for (const auto& seed : nfsrdma::fuzz::replySeeds()) {
    std::ofstream f(dir + "/" + seed.name, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(seed.input.data()),
            static_cast<std::streamsize>(seed.input.size()));
    if (!f) {
      std::fprintf(stderr, "cannot write %s/%s\n", dir.c_str(), seed.name.c_str());
      return 1;
    }
  }
  return 0;
}
