#include "bench/anchor/ReadDrivers.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

extern "C" {
#include <nfsc/libnfs.h>
}

namespace nfsrdma::bench {
namespace {

using Clock = std::chrono::steady_clock;

double cpuNow() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

// Offsets for one queue slot: random blocks from a per-slot xorshift, or a
// shared sequential cursor.
class OffsetSource {
 public:
  explicit OffsetSource(const ReadWorkload& w) : w_(w), blocks_(w.fileSize / w.blockSize) {}
  std::uint64_t next(std::uint64_t& state) {
    if (w_.random) {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return (state % blocks_) * w_.blockSize;
    }
    return (cursor_.fetch_add(1, std::memory_order_relaxed) % blocks_) * w_.blockSize;
  }

 private:
  const ReadWorkload& w_;
  const std::uint64_t blocks_;
  std::atomic<std::uint64_t> cursor_{0};
};

std::string shortReadText(const char* client, std::uint64_t offset, std::size_t got, std::size_t asked) {
  return std::string(client) + " pread at offset " + std::to_string(offset) + ": " + std::to_string(got) +
         " bytes back, " + std::to_string(asked) + " asked";
}

}  // namespace

ReadMeasurement runNfsrdmaReads(Client& client, const std::string& file, const ReadWorkload& w) {
  ReadMeasurement m;
  m.client = "nfsrdma";
  OpenFile f = client.open(file, {});
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::uint32_t active = 0;
    std::atomic<std::uint64_t> ops{0};
    std::atomic<std::uint64_t> bytes{0};
    std::string error;
    Clock::time_point deadline;
    // Whether r read all `asked` bytes at `at`. A short read counts as a
    // failure, as in the libnfs driver, never as a whole block; the first
    // failure's text is kept.
    bool whole(const IoResult& r, std::uint64_t at, std::size_t asked) {
      if (!r.error && r.bytes == asked) return true;
      std::lock_guard lock(mu);
      if (error.empty())
        error = r.error ? r.error.message() : shortReadText("nfsrdma", at, r.bytes, asked);
      return false;
    }
    // A slot or group that stops resubmitting itself.
    void retire() {
      std::lock_guard lock(mu);
      if (--active == 0) cv.notify_all();
    }
  } s;
  OffsetSource offsets(w);
  std::vector<std::vector<std::uint8_t>> buffers(w.queueDepth, std::vector<std::uint8_t>(w.blockSize));
  std::vector<std::uint64_t> rng(w.queueDepth);
  for (std::uint32_t i = 0; i < w.queueDepth; ++i) rng[i] = w.seed * 0x9E3779B97F4A7C15ULL + i + 1;

  // A block larger than the server's I/O size is read as several READs in
  // flight together (as the kernel client splits at rsize); the block counts
  // as one operation when all of them are back.
  const std::size_t piece = std::min<std::size_t>(w.blockSize, client.maxIoSize());
  const std::size_t pieces = (w.blockSize + piece - 1) / piece;
  struct SlotState {
    std::atomic<std::size_t> left{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<bool> failed{false};
  };
  std::vector<SlotState> slots(w.queueDepth);

  // Each slot resubmits itself from its completion until the deadline.
  std::function<void(std::uint32_t)> submit = [&](std::uint32_t i) {
    const std::uint64_t base = offsets.next(rng[i]);
    slots[i].left.store(pieces);
    slots[i].bytes.store(0);
    slots[i].failed.store(false);
    for (std::size_t p = 0; p < pieces; ++p) {
      const std::size_t len = std::min(piece, w.blockSize - p * piece);
      client.preadAsync(f, std::span(buffers[i]).subspan(p * piece, len), base + p * piece,
                        [&, i, len, at = base + p * piece](const IoResult& r) {
                          if (s.whole(r, at, len)) {
                            slots[i].bytes.fetch_add(r.bytes, std::memory_order_relaxed);
                          } else {
                            slots[i].failed.store(true);
                          }
                          if (slots[i].left.fetch_sub(1) != 1) return;  // not the last piece
                          bool again = false;
                          if (!slots[i].failed.load()) {
                            s.ops.fetch_add(1, std::memory_order_relaxed);
                            s.bytes.fetch_add(slots[i].bytes.load(), std::memory_order_relaxed);
                            again = Clock::now() < s.deadline;
                          }
                          if (again) {
                            submit(i);
                          } else {
                            s.retire();
                          }
                        });
    }
  };
  // Vectored: the queue is cut into groups of readsPerCompound slots; each
  // group is one COMPOUND and resubmits itself when all its reads are back.
  const std::uint32_t per =
      pieces == 1 ? static_cast<std::uint32_t>(std::min<std::size_t>(
                        {w.readsPerCompound, w.queueDepth, client.maxReadsPerCompound(w.blockSize)}))
                  : 1;
  const std::uint32_t groups = (w.queueDepth + per - 1) / per;
  std::function<void(std::uint32_t)> submitGroup = [&](std::uint32_t g) {
    const std::uint32_t first = g * per;
    const std::uint32_t count = std::min(per, w.queueDepth - first);
    std::array<Client::ReadVector, Client::kMaxReadsPerCompound> reads{};
    slots[first].left.store(count);
    slots[first].failed.store(false);
    for (std::uint32_t k = 0; k < count; ++k) {
      reads[k] = {std::span(buffers[first + k]), offsets.next(rng[first + k])};
    }
    std::array<std::uint64_t, Client::kMaxReadsPerCompound> at{};
    for (std::uint32_t k = 0; k < count; ++k) at[k] = reads[k].offset;
    client.preadvAsync(f, std::span(reads.data(), count),
                       [&, g, first, at](std::size_t k, const IoResult& r) {
                         if (s.whole(r, at[k], w.blockSize)) {
                           s.ops.fetch_add(1, std::memory_order_relaxed);
                           s.bytes.fetch_add(r.bytes, std::memory_order_relaxed);
                         } else {
                           slots[first].failed.store(true);
                         }
                         if (slots[first].left.fetch_sub(1) != 1)
                           return;  // not the group's last read
                         if (!slots[first].failed.load() && Clock::now() < s.deadline) {
                           submitGroup(g);
                         } else {
                           s.retire();
                         }
                       });
  };
  const double cpu0 = cpuNow();
  const auto t0 = Clock::now();
  s.deadline = t0 + w.runtime;
  if (per > 1) {
    s.active = groups;
    for (std::uint32_t g = 0; g < groups; ++g) submitGroup(g);
  } else {
    s.active = w.queueDepth;
    for (std::uint32_t i = 0; i < w.queueDepth; ++i) submit(i);
  }
  {
    std::unique_lock lock(s.mu);
    s.cv.wait(lock, [&] { return s.active == 0; });
  }
  m.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  m.cpuSeconds = cpuNow() - cpu0;
  m.ops = s.ops.load();
  m.bytes = s.bytes.load();
  m.error = s.error;
  client.close(f);
  return m;
}

namespace {

struct LibnfsRun {
  nfs_context* nfs = nullptr;
  nfsfh* fh = nullptr;
  const ReadWorkload* w = nullptr;
  OffsetSource* offsets = nullptr;
  Clock::time_point deadline;
  std::uint32_t active = 0;
  std::uint64_t ops = 0;
  std::uint64_t bytes = 0;
  std::string error;
  struct Slot;
  // A block larger than the server's maximum READ goes out as several
  // preads in flight together, as our driver splits at its maximum I/O size.
  struct Piece {
    Slot* slot;
    std::size_t at;   // offset in the block
    std::size_t len;  // bytes asked for
  };
  struct Slot {
    LibnfsRun* run;
    std::uint64_t rng;
    std::vector<std::uint8_t> buf;
    std::vector<Piece> pieces;
    std::uint64_t offset = 0;  // of the block in flight
    std::size_t left = 0;      // pieces still in flight
    bool failed = false;
  };
  std::vector<Slot> slots;
};

void libnfsSubmit(LibnfsRun::Slot& slot);

// One piece back: the block counts as one operation when all its pieces are
// back whole; an error or a short read fails the run.
void libnfsDone(int status, nfs_context*, void* data, void* priv) {
  auto& piece = *static_cast<LibnfsRun::Piece*>(priv);
  LibnfsRun::Slot& slot = *piece.slot;
  LibnfsRun& run = *slot.run;
  if (status < 0 || static_cast<std::size_t>(status) != piece.len) {
    if (run.error.empty()) {
      run.error = status < 0 ? std::string("libnfs pread: ") + static_cast<const char*>(data)
                             : shortReadText("libnfs", slot.offset + piece.at, static_cast<std::size_t>(status),
                                             piece.len);
    }
    slot.failed = true;
  } else {
    std::memcpy(slot.buf.data() + piece.at, data, piece.len);
  }
  if (--slot.left > 0) return;
  if (slot.failed) {
    --run.active;
    return;
  }
  ++run.ops;
  run.bytes += slot.buf.size();
  if (Clock::now() < run.deadline) {
    libnfsSubmit(slot);
  } else {
    --run.active;
  }
}

void libnfsSubmit(LibnfsRun::Slot& slot) {
  LibnfsRun& run = *slot.run;
  slot.offset = run.offsets->next(slot.rng);
  slot.left = slot.pieces.size();
  slot.failed = false;
  for (std::size_t i = 0; i < slot.pieces.size(); ++i) {
    LibnfsRun::Piece& piece = slot.pieces[i];
    if (nfs_pread_async(run.nfs, run.fh, slot.offset + piece.at, piece.len, libnfsDone, &piece) != 0) {
      if (run.error.empty()) run.error = std::string("libnfs pread_async: ") + nfs_get_error(run.nfs);
      slot.failed = true;
      // The pieces never sent will not call back: end the block once the
      // ones already sent are back (or now, when none was).
      slot.left -= slot.pieces.size() - i;
      if (slot.left == 0) --run.active;
      return;
    }
  }
}

}  // namespace

ReadMeasurement runLibnfsReads(const std::string& host, std::uint16_t port, const std::string& exportPath,
                               const std::string& file, const ReadWorkload& w, std::size_t maxRead) {
  ReadMeasurement m;
  m.client = "libnfs";
  // Declared before the context: destroying a context with reads still out
  // (after an error or the hard stop) calls their callbacks, which use these.
  LibnfsRun run;
  OffsetSource offsets(w);
  std::unique_ptr<nfs_context, decltype(&nfs_destroy_context)> nfs(nfs_init_context(), nfs_destroy_context);
  if (!nfs) throw std::runtime_error("libnfs: nfs_init_context failed");
  const std::string url = "nfs://" + host + joinPath(exportPath, file) + "?version=4&nfsport=" + std::to_string(port);
  std::unique_ptr<nfs_url, decltype(&nfs_destroy_url)> parsed(nfs_parse_url_full(nfs.get(), url.c_str()),
                                                               nfs_destroy_url);
  if (!parsed) throw std::runtime_error("libnfs: cannot parse " + url + ": " + nfs_get_error(nfs.get()));
  if (nfs_mount(nfs.get(), parsed->server, parsed->path) != 0) {
    throw std::runtime_error("libnfs: mount " + url + ": " + nfs_get_error(nfs.get()));
  }
  nfsfh* fh = nullptr;
  if (nfs_open(nfs.get(), parsed->file, O_RDONLY, &fh) != 0) {
    throw std::runtime_error("libnfs: open " + url + ": " + nfs_get_error(nfs.get()));
  }
  run.nfs = nfs.get();
  run.fh = fh;
  run.w = &w;
  run.offsets = &offsets;
  const std::size_t serverMax = maxRead > 0 ? maxRead : nfs_get_readmax(nfs.get());
  const std::size_t piece = std::min<std::size_t>({w.blockSize, serverMax > 0 ? serverMax : kLibnfsLargestIo, kLibnfsLargestIo});
  run.slots.resize(w.queueDepth);
  for (std::uint32_t i = 0; i < w.queueDepth; ++i) {
    LibnfsRun::Slot& slot = run.slots[i];
    slot.run = &run;
    slot.rng = w.seed * 0x9E3779B97F4A7C15ULL + i + 1;
    slot.buf.resize(w.blockSize);
    for (std::size_t at = 0; at < w.blockSize; at += piece) {
      slot.pieces.push_back({&slot, at, std::min<std::size_t>(piece, w.blockSize - at)});
    }
  }
  const double cpu0 = cpuNow();
  const auto t0 = Clock::now();
  run.deadline = t0 + w.runtime;
  run.active = w.queueDepth;
  for (auto& slot : run.slots) libnfsSubmit(slot);
  // The caller's event loop, as libnfs's async API expects; bounded by the
  // runtime plus a grace period for the last replies.
  const auto hardStop = run.deadline + std::chrono::seconds(30);
  while (run.active > 0) {
    if (Clock::now() > hardStop) {
      run.error = "libnfs: replies still missing 30 s after the run ended";
      break;
    }
    pollfd pfd{nfs_get_fd(nfs.get()), static_cast<short>(nfs_which_events(nfs.get())), 0};
    const int rc = ::poll(&pfd, 1, 100);
    if (rc < 0) {
      if (errno == EINTR) continue;
      run.error = std::string("poll: ") + std::strerror(errno);
      break;
    }
    if (nfs_service(nfs.get(), pfd.revents) < 0) {
      run.error = std::string("libnfs: ") + nfs_get_error(nfs.get());
      break;
    }
  }
  m.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  m.cpuSeconds = cpuNow() - cpu0;
  m.ops = run.ops;
  m.bytes = run.bytes;
  m.error = run.error;
  nfs_close(nfs.get(), fh);
  return m;
}

}  // namespace nfsrdma::bench
