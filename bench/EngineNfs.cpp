// The nfs engine: our client's asynchronous READ/WRITE. Each slot resubmits
// from its own completion on the client's I/O thread (no hand-off to the job
// thread per operation, the cost the anchor measures); the job thread only
// starts the slots and waits. Writes are UNSTABLE and COMMITted by finish(),
// as an application's write()+fsync() over a kernel mount would be.
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <stdexcept>

#include "bench/Engine.h"
#include "client/Client.h"

namespace nfsrdma::bench {
namespace {

class NfsEngine final : public Engine {
 public:
  explicit NfsEngine(const TargetSpec& t) {
    ClientOptions o = t.nfs;
    client_ = Client::connect(o);
  }

  std::vector<std::uint64_t> open(const std::vector<std::string>& files, bool create) override {
    std::vector<std::uint64_t> sizes;
    for (const auto& name : files) {
      OpenFlags flags;
      flags.read = true;
      flags.write = true;
      flags.create = create;
      files_.push_back(client_->open(name, flags));
      sizes.push_back(client_->fstat(files_.back()).size);
    }
    return sizes;
  }

  void run(JobDriver& d) override {
    const std::size_t maxIo = client_->maxIoSize();
    struct Slot {
      IoRequest req;
      std::size_t pieces = 0;  // outstanding sub-requests
      std::size_t bytes = 0;
      std::string error;
    };
    std::vector<Slot> slots(d.slots());
    std::mutex mu;
    std::condition_variable cv;
    std::uint32_t active = d.slots();

    std::function<void(std::uint32_t)> submit;
    auto finishSlot = [&] {
      std::lock_guard lock(mu);
      if (--active == 0) cv.notify_all();
    };
    // One sub-request done; the last one completes the slot's request.
    auto piece = [&](std::uint32_t i, std::size_t want, const IoResult& r) {
      Slot& s = slots[i];
      bool last = false;
      {
        std::lock_guard lock(mu);
        if (r.error) {
          if (s.error.empty()) s.error = r.error.message();
        } else if (r.bytes != want) {
          if (s.error.empty()) {
            s.error = std::string(directionName(s.req.op)) + " at " + std::to_string(s.req.offset) + ": " +
                      std::to_string(r.bytes) + " of " + std::to_string(want) + " bytes (short)";
          }
        } else {
          s.bytes += r.bytes;
        }
        last = --s.pieces == 0;
      }
      if (!last) return;
      d.complete(s.req, s.bytes, s.error);
      submit(i);
    };
    submit = [&](std::uint32_t i) {
      Slot& s = slots[i];
      if (!d.next(i, s.req)) {
        finishSlot();
        return;
      }
      const std::size_t n = s.req.buf.size();
      {
        std::lock_guard lock(mu);
        s.pieces = (n + maxIo - 1) / maxIo;
        s.bytes = 0;
        s.error.clear();
      }
      const OpenFile& f = files_[s.req.file];
      for (std::size_t pos = 0; pos < n; pos += maxIo) {
        const std::size_t len = std::min(maxIo, n - pos);
        auto part = s.req.buf.subspan(pos, len);
        auto cb = [&piece, i, len](const IoResult& r) { piece(i, len, r); };
        if (s.req.op == IoDirection::Read) {
          client_->preadAsync(f, part, s.req.offset + pos, cb);
        } else {
          client_->pwriteAsync(f, part, s.req.offset + pos, StableHow::kUnstable, cb);
        }
      }
    };
    d.start();
    for (std::uint32_t i = 0; i < d.slots(); ++i) submit(i);
    std::unique_lock lock(mu);
    if (cv.wait_until(lock, d.hardStop(), [&] { return active == 0; })) return;
    // The client's own call timeouts fire long before this; the last guard.
    // Callbacks still reference this frame, so fail them by closing the
    // connection and wait for them before returning.
    lock.unlock();
    client_->close();
    lock.lock();
    if (!cv.wait_for(lock, std::chrono::seconds(30), [&] { return active == 0; })) {
      std::fprintf(stderr, "nfsrdma-bench: nfs requests outstanding after close; aborting\n");
      std::abort();
    }
    throw std::runtime_error("nfs: requests still outstanding after the run's grace period");
  }

  void finish() override {
    for (auto& f : files_) client_->close(f);  // COMMIT, then CLOSE
    files_.clear();
    client_->close();
  }

 private:
  std::unique_ptr<Client> client_;
  std::vector<OpenFile> files_;
};

}  // namespace

std::unique_ptr<Engine> makeNfsEngine(const TargetSpec& target) { return std::make_unique<NfsEngine>(target); }

}  // namespace nfsrdma::bench
