// roundtrip: the nfsrdma client library from outside the tree. Connects to
// the export a URL names, writes a file, reads it back synchronously and
// with asynchronous reads in flight at once, checks the bytes and the size
// the server reports, and removes the file. Exit 0 only when every byte
// came back; otherwise the error names the operation, path and NFS4ERR_.
//
//   roundtrip nfs://127.0.0.1:2049/export[?proto=rdma&...] [FILE]
#include <client/Client.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

namespace {

constexpr std::size_t kChunk = 256 * 1024;
constexpr std::size_t kChunks = 4;

std::vector<std::uint8_t> pattern(std::size_t size) {
  std::vector<std::uint8_t> v(size);
  for (std::size_t i = 0; i < size; ++i)
    v[i] = static_cast<std::uint8_t>((i * 7 + i / 4096) & 0xff);
  return v;
}

// Every chunk read at once with preadAsync; the first error, if any.
std::string readAsync(nfsrdma::Client& client, const nfsrdma::OpenFile& file,
                      std::vector<std::uint8_t>& into) {
  std::mutex m;
  std::condition_variable cv;
  std::size_t done = 0;
  std::string error;
  for (std::size_t c = 0; c < kChunks; ++c) {
    std::span<std::uint8_t> buf(into.data() + c * kChunk, kChunk);
    client.preadAsync(file, buf, c * kChunk, [&](const nfsrdma::IoResult& r) {
      std::lock_guard<std::mutex> lock(m);
      if (r.error && error.empty()) error = r.error.message();
      if (!r.error && r.bytes != kChunk && error.empty()) error = "async read: a short read";
      ++done;
      cv.notify_one();
    });
  }
  std::unique_lock<std::mutex> lock(m);
  cv.wait(lock, [&] { return done == kChunks; });
  return error;
}

int run(const std::string& url, const std::string& name) {
  auto client = nfsrdma::Client::connect(url);
  const std::vector<std::uint8_t> data = pattern(kChunk * kChunks);

  nfsrdma::OpenFlags create;
  create.write = create.create = create.truncate = true;
  nfsrdma::OpenFile file = client->open(name, create);
  client->pwrite(file, data, 0);
  client->close(file);  // COMMIT, then CLOSE: the server has the bytes

  file = client->open(name, nfsrdma::OpenFlags{});
  std::vector<std::uint8_t> back(data.size());
  const std::size_t got = client->pread(file, back, 0);
  if (got != data.size() || back != data) {
    std::fprintf(stderr, "roundtrip: %s: read back %zu bytes that differ from the %zu written\n",
                 client->fullPath(name).c_str(), got, data.size());
    return 1;
  }
  std::fill(back.begin(), back.end(), 0);
  if (const std::string error = readAsync(*client, file, back); !error.empty() || back != data) {
    std::fprintf(stderr, "roundtrip: %s: %s\n", client->fullPath(name).c_str(),
                 error.empty() ? "async reads returned other bytes" : error.c_str());
    return 1;
  }
  client->close(file);

  const nfsrdma::Attributes a = client->stat(name);
  if (a.size != data.size()) {
    std::fprintf(stderr, "roundtrip: %s: the server says %llu bytes, %zu were written\n",
                 client->fullPath(name).c_str(), static_cast<unsigned long long>(a.size),
                 data.size());
    return 1;
  }
  client->unlink(name);
  std::printf(
      "roundtrip: %s: wrote %zu bytes, read them back (1 read, then %zu async reads of "
      "%zu KiB in flight together), size %llu on the server; removed\n",
      client->fullPath(name).c_str(), data.size(), kChunks, kChunk / 1024,
      static_cast<unsigned long long>(a.size));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: roundtrip nfs://HOST[:PORT]/EXPORT[?proto=rdma&...] [FILE]\n");
    return 2;
  }
  try {
    return run(argv[1], argc == 3 ? argv[2] : "roundtrip.dat");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roundtrip: %s\n", e.what());
    return 1;
  }
}
