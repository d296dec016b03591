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

double processCpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto secs = [](const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; };
  return secs(ru.ru_utime) + secs(ru.ru_stime);
}

ReadMeasurement failedOrMedianByCpu(std::vector<ReadMeasurement> runs) {
  const auto failed =
      std::find_if(runs.begin(), runs.end(), [](const auto& m) { return !m.error.empty(); });
  if (failed != runs.end()) return *failed;
  std::sort(runs.begin(), runs.end(), [](const ReadMeasurement& a, const ReadMeasurement& b) {
    return a.cpuMicrosPerOp() < b.cpuMicrosPerOp();
  });
  return runs[runs.size() / 2];
}

namespace {

using Clock = std::chrono::steady_clock;

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

// One run of our client's driver: the queue's buffers and slots, the
// counters their completions add to (on the client's I/O thread), and the
// count of slots, or groups, still resubmitting themselves.
class NfsrdmaReads {
 public:
  NfsrdmaReads(Client& client, const OpenFile& file, const ReadWorkload& w);
  NfsrdmaReads(const NfsrdmaReads&) = delete;
  NfsrdmaReads& operator=(const NfsrdmaReads&) = delete;

  // Every slot (or group) goes out; each resubmits itself from its
  // completion until the deadline.
  void start(Clock::time_point deadline);
  // Returns once the last slot or group has stopped.
  void waitForAll();
  // The operations and bytes counted, and the first failure's text.
  void addTo(ReadMeasurement& m) const;

 private:
  struct SlotState {
    std::atomic<std::size_t> left{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<bool> failed{false};
  };

  bool whole(const IoResult& r, std::uint64_t at, std::size_t asked);
  void retire();
  void submitSlot(std::uint32_t i);
  void slotPieceDone(std::uint32_t i, std::uint64_t at, std::size_t len, const IoResult& r);
  void submitGroup(std::uint32_t g);
  void groupReadDone(std::uint32_t g, std::uint64_t at, const IoResult& r);

  Client& client_;
  const OpenFile& file_;
  const ReadWorkload& w_;
  OffsetSource offsets_;
  std::vector<std::vector<std::uint8_t>> buffers_;
  std::vector<std::uint64_t> rng_;
  std::vector<SlotState> slots_;
  // A block larger than the server's I/O size is read as several READs in
  // flight together (as the kernel client splits at rsize); the block
  // counts as one operation when all of them are back.
  const std::size_t piece_;
  const std::size_t pieces_;
  // Vectored: the queue is cut into groups of perGroup_ slots; each group
  // is one COMPOUND and resubmits itself when all its reads are back.
  const std::uint32_t perGroup_;
  const std::uint32_t groups_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::uint32_t active_ = 0;
  std::atomic<std::uint64_t> ops_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::string error_;
  Clock::time_point deadline_;
};

NfsrdmaReads::NfsrdmaReads(Client& client, const OpenFile& file, const ReadWorkload& w)
    : client_(client),
      file_(file),
      w_(w),
      offsets_(w),
      buffers_(w.queueDepth, std::vector<std::uint8_t>(w.blockSize)),
      rng_(w.queueDepth),
      slots_(w.queueDepth),
      piece_(std::min<std::size_t>(w.blockSize, client.maxIoSize())),
      pieces_((w.blockSize + piece_ - 1) / piece_),
      perGroup_(pieces_ == 1 ? static_cast<std::uint32_t>(
                                   std::min<std::size_t>({w.readsPerCompound, w.queueDepth,
                                                          client.maxReadsPerCompound(w.blockSize)}))
                             : 1),
      groups_((w.queueDepth + perGroup_ - 1) / perGroup_) {
  for (std::uint32_t i = 0; i < w.queueDepth; ++i) rng_[i] = w.seed * 0x9E3779B97F4A7C15ULL + i + 1;
}

void NfsrdmaReads::start(Clock::time_point deadline) {
  deadline_ = deadline;
  if (perGroup_ > 1) {
    active_ = groups_;
    for (std::uint32_t g = 0; g < groups_; ++g) submitGroup(g);
  } else {
    active_ = w_.queueDepth;
    for (std::uint32_t i = 0; i < w_.queueDepth; ++i) submitSlot(i);
  }
}

void NfsrdmaReads::waitForAll() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return active_ == 0; });
}

void NfsrdmaReads::addTo(ReadMeasurement& m) const {
  m.ops = ops_.load();
  m.bytes = bytes_.load();
  m.error = error_;
}

// Whether r read all `asked` bytes at `at`. A short read counts as a
// failure, as in the libnfs driver, never as a whole block; the first
// failure's text is kept.
bool NfsrdmaReads::whole(const IoResult& r, std::uint64_t at, std::size_t asked) {
  if (!r.error && r.bytes == asked) return true;
  std::lock_guard lock(mu_);
  if (error_.empty())
    error_ = r.error ? r.error.message() : shortReadText("nfsrdma", at, r.bytes, asked);
  return false;
}

// A slot or group that stops resubmitting itself.
void NfsrdmaReads::retire() {
  std::lock_guard lock(mu_);
  if (--active_ == 0) cv_.notify_all();
}

void NfsrdmaReads::submitSlot(std::uint32_t i) {
  const std::uint64_t base = offsets_.next(rng_[i]);
  slots_[i].left.store(pieces_);
  slots_[i].bytes.store(0);
  slots_[i].failed.store(false);
  for (std::size_t p = 0; p < pieces_; ++p) {
    const std::size_t len = std::min(piece_, w_.blockSize - p * piece_);
    const std::uint64_t at = base + p * piece_;
    client_.preadAsync(file_, std::span(buffers_[i]).subspan(p * piece_, len), at,
                       [this, i, at, len](const IoResult& r) { slotPieceDone(i, at, len, r); });
  }
}

void NfsrdmaReads::slotPieceDone(std::uint32_t i, std::uint64_t at, std::size_t len,
                                 const IoResult& r) {
  SlotState& slot = slots_[i];
  if (whole(r, at, len)) {
    slot.bytes.fetch_add(r.bytes, std::memory_order_relaxed);
  } else {
    slot.failed.store(true);
  }
  if (slot.left.fetch_sub(1) != 1) return;  // not the last piece
  bool again = false;
  if (!slot.failed.load()) {
    ops_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(slot.bytes.load(), std::memory_order_relaxed);
    again = Clock::now() < deadline_;
  }
  if (again) {
    submitSlot(i);
  } else {
    retire();
  }
}

void NfsrdmaReads::submitGroup(std::uint32_t g) {
  const std::uint32_t first = g * perGroup_;
  const std::uint32_t count = std::min(perGroup_, w_.queueDepth - first);
  std::array<Client::ReadVector, Client::kMaxReadsPerCompound> reads{};
  slots_[first].left.store(count);
  slots_[first].failed.store(false);
  for (std::uint32_t k = 0; k < count; ++k) {
    reads[k] = {std::span(buffers_[first + k]), offsets_.next(rng_[first + k])};
  }
  std::array<std::uint64_t, Client::kMaxReadsPerCompound> at{};
  for (std::uint32_t k = 0; k < count; ++k) at[k] = reads[k].offset;
  client_.preadvAsync(
      file_, std::span(reads.data(), count),
      [this, g, at](std::size_t k, const IoResult& r) { groupReadDone(g, at[k], r); });
}

// The group's state is kept in its first slot.
void NfsrdmaReads::groupReadDone(std::uint32_t g, std::uint64_t at, const IoResult& r) {
  SlotState& group = slots_[g * perGroup_];
  if (whole(r, at, w_.blockSize)) {
    ops_.fetch_add(1, std::memory_order_relaxed);
    bytes_.fetch_add(r.bytes, std::memory_order_relaxed);
  } else {
    group.failed.store(true);
  }
  if (group.left.fetch_sub(1) != 1) return;  // not the group's last read
  if (!group.failed.load() && Clock::now() < deadline_) {
    submitGroup(g);
  } else {
    retire();
  }
}

}  // namespace

ReadMeasurement runNfsrdmaReads(Client& client, const std::string& file, const ReadWorkload& w) {
  ReadMeasurement m;
  m.client = "nfsrdma";
  OpenFile f = client.open(file, {});
  NfsrdmaReads reads(client, f, w);
  const double cpu0 = processCpuSeconds();
  const auto t0 = Clock::now();
  reads.start(t0 + w.runtime);
  reads.waitForAll();
  m.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  m.cpuSeconds = processCpuSeconds() - cpu0;
  reads.addTo(m);
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
  const double cpu0 = processCpuSeconds();
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
  m.cpuSeconds = processCpuSeconds() - cpu0;
  m.ops = run.ops;
  m.bytes = run.bytes;
  m.error = run.error;
  nfs_close(nfs.get(), fh);
  return m;
}

}  // namespace nfsrdma::bench
