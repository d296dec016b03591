// The libnfs engine: libnfs's asynchronous pread/pwrite over NFSv4.0, with
// the caller's poll loop libnfs's async API expects, one context per job.
// A request goes to libnfs whole when it is within the server's maximum
// READ/WRITE; a larger one is split at that maximum into calls in flight at
// once, as the kernel client splits at rsize and the nfs engine at its
// maximum I/O, so both engines put the same bytes on the wire.
#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "bench/file/engines/Engine.h"
#include "client/Client.h"
#include "util/ErrnoText.h"

extern "C" {
#include <nfsc/libnfs.h>
}

namespace nfsrdma::bench {
namespace {

// The largest reply libnfs 4.0.0 takes: a 2 MiB READ fails its context
// ("nfs_service failed") even from a server that allows it, so 1 MiB is the
// most libnfs itself can do per call.
constexpr std::size_t kLibnfsLargestIo = 1U << 20;

class LibnfsEngine final : public Engine {
 public:
  explicit LibnfsEngine(const TargetSpec& t) : nfs_(nfs_init_context(), nfs_destroy_context) {
    if (!nfs_) throw std::runtime_error("libnfs: nfs_init_context failed");
    if (nfs_set_version(nfs_.get(), 4) != 0) {
      throw std::runtime_error(std::string("libnfs: NFSv4: ") + nfs_get_error(nfs_.get()));
    }
    nfs_set_uid(nfs_.get(), static_cast<int>(t.nfs.uid));
    nfs_set_gid(nfs_.get(), static_cast<int>(t.nfs.gid));
    const std::string url = "nfs://" + t.nfs.host + t.nfs.exportPath +
                            "?version=4&nfsport=" + std::to_string(t.nfs.port);
    std::unique_ptr<nfs_url, decltype(&nfs_destroy_url)> parsed(
        nfs_parse_url_dir(nfs_.get(), url.c_str()), nfs_destroy_url);
    if (!parsed)
      throw std::runtime_error("libnfs: cannot parse " + url + ": " + nfs_get_error(nfs_.get()));
    if (nfs_mount(nfs_.get(), parsed->server, parsed->path) != 0) {
      throw std::runtime_error("libnfs: mount " + url + ": " + nfs_get_error(nfs_.get()));
    }
    url_ = url;
    learnMaximums(t);
  }

  // libnfs 4.0.0 learns no maximum over NFSv4: nfs_get_readmax() and
  // nfs_get_writemax() are 0, and a pread or pwrite goes out as one READ or
  // WRITE that the server answers short past its maximum. The split is then
  // ours, at the server's maximum (FATTR4_MAXREAD/MAXWRITE and its session
  // limits) as our client reads it, and at most libnfs's own largest I/O
  // (the anchor's libnfs row runs this engine too). Never a guess below it: a
  // 4 KiB floor here once cut every 128 KiB read into 32 RPCs and made
  // libnfs look ten times slower than it is.
  void learnMaximums(const TargetSpec& t) {
    maxRead_ = nfs_get_readmax(nfs_.get());
    maxWrite_ = nfs_get_writemax(nfs_.get());
    if (maxRead_ == 0 || maxWrite_ == 0) {
      ClientOptions o = t.nfs;
      o.queueDepth = 1;
      auto probe = Client::connect(o);
      const std::size_t serverMax = probe->maxIoSize();
      probe->close();
      if (maxRead_ == 0) maxRead_ = serverMax;
      if (maxWrite_ == 0) maxWrite_ = serverMax;
    }
    maxRead_ = std::min(maxRead_, kLibnfsLargestIo);
    maxWrite_ = std::min(maxWrite_, kLibnfsLargestIo);
  }

  ~LibnfsEngine() override {
    // Destroying the context may call back pending requests: they must find
    // their slots alive and do nothing.
    cancelled_ = true;
    for (nfsfh* fh : files_) nfs_close(nfs_.get(), fh);
    nfs_.reset();
  }

  std::vector<std::uint64_t> open(const std::vector<std::string>& files, bool create) override {
    std::vector<std::uint64_t> sizes;
    for (const auto& name : files) {
      nfsfh* fh = nullptr;
      const std::string path = "/" + name;
      int rc = nfs_open(nfs_.get(), path.c_str(), O_RDWR, &fh);
      if (rc != 0 && create) rc = nfs_create(nfs_.get(), path.c_str(), O_RDWR | O_CREAT, 0644, &fh);
      if (rc != 0)
        throw std::runtime_error("libnfs: open " + url_ + path + ": " + nfs_get_error(nfs_.get()));
      files_.push_back(fh);
      nfs_stat_64 st{};
      if (nfs_fstat64(nfs_.get(), fh, &st) != 0) {
        throw std::runtime_error("libnfs: fstat " + path + ": " + nfs_get_error(nfs_.get()));
      }
      sizes.push_back(st.nfs_size);
    }
    return sizes;
  }

  struct Slot;
  struct Piece {
    Slot* slot;
    std::size_t want;
    std::size_t pos;
  };
  struct Slot {
    LibnfsEngine* self;
    JobDriver* d;
    std::uint32_t index;
    IoRequest req;
    std::vector<Piece> pieces;
    std::size_t outstanding = 0;
    std::size_t bytes = 0;
    std::string error;
    bool done = false;
  };

  static void onPiece(int status, nfs_context*, void* data, void* priv) {
    auto& p = *static_cast<Piece*>(priv);
    Slot& s = *p.slot;
    if (s.self->cancelled_) return;
    if (status < 0) {
      if (s.error.empty())
        s.error = std::string("libnfs ") + directionName(s.req.op) + ": " +
                  static_cast<const char*>(data);
    } else if (static_cast<std::size_t>(status) != p.want) {
      if (s.error.empty()) {
        s.error = std::string("libnfs ") + directionName(s.req.op) + " at " +
                  std::to_string(s.req.offset + p.pos) + ": " + std::to_string(status) + " of " +
                  std::to_string(p.want) + " bytes (short)";
      }
    } else {
      if (s.req.op == IoDirection::Read) std::memcpy(s.req.buf.data() + p.pos, data, p.want);
      s.bytes += p.want;
    }
    if (--s.outstanding == 0) {
      s.d->complete(s.req, s.bytes, s.error);
      s.self->submit(s);
    }
  }

  void submit(Slot& s) {
    if (!s.d->next(s.index, s.req)) {
      s.done = true;
      --active_;
      return;
    }
    const std::size_t n = s.req.buf.size();
    const std::size_t maxIo = s.req.op == IoDirection::Read ? maxRead_ : maxWrite_;
    s.pieces.clear();
    for (std::size_t pos = 0; pos < n; pos += maxIo)
      s.pieces.push_back({&s, std::min(maxIo, n - pos), pos});
    s.outstanding = s.pieces.size();
    s.bytes = 0;
    s.error.clear();
    // Copy: a failing call completes the slot, which may refill s.pieces.
    const std::size_t count = s.pieces.size();
    for (std::size_t k = 0; k < count; ++k) {
      Piece& p = s.pieces[k];
      nfsfh* fh = files_[s.req.file];
      const std::uint64_t off = s.req.offset + p.pos;
      const int rc = s.req.op == IoDirection::Read
                         ? nfs_pread_async(nfs_.get(), fh, off, p.want, onPiece, &p)
                         : nfs_pwrite_async(nfs_.get(), fh, off, p.want, s.req.buf.data() + p.pos,
                                            onPiece, &p);
      if (rc != 0) {
        // libnfs does not call back after a failed queueing: complete here.
        const std::string why = std::string("libnfs queue ") + directionName(s.req.op) + ": " +
                                nfs_get_error(nfs_.get());
        if (s.error.empty()) s.error = why;
        const std::size_t unsent = count - k;
        s.outstanding -= unsent;
        if (s.outstanding == 0) {
          s.d->complete(s.req, s.bytes, s.error);
          s.done = true;
          --active_;
        }
        return;
      }
    }
  }

  void run(JobDriver& d) override {
    slots_.clear();
    slots_.resize(d.slots());
    auto& slots = slots_;
    for (std::uint32_t i = 0; i < d.slots(); ++i) {
      slots[i].self = this;
      slots[i].d = &d;
      slots[i].index = i;
      slots[i].pieces.reserve(8);
    }
    active_ = d.slots();
    d.start();
    for (auto& s : slots) submit(s);
    while (active_ > 0) {
      if (BenchClock::now() > d.hardStop()) {
        throw std::runtime_error("libnfs: replies still missing after the run's grace period");
      }
      pollfd pfd{nfs_get_fd(nfs_.get()), static_cast<short>(nfs_which_events(nfs_.get())), 0};
      const int rc = ::poll(&pfd, 1, 100);
      if (rc < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error(std::string("poll: ") + util::errnoText(errno));
      }
      if (nfs_service(nfs_.get(), pfd.revents) < 0) {
        throw std::runtime_error(std::string("libnfs: ") + nfs_get_error(nfs_.get()));
      }
    }
  }

  void commit() override {
    for (nfsfh* fh : files_) {
      if (nfs_fsync(nfs_.get(), fh) != 0) {
        throw std::runtime_error(std::string("libnfs: fsync: ") + nfs_get_error(nfs_.get()));
      }
    }
  }

  void finish() override {
    for (nfsfh* fh : files_) {
      if (nfs_fsync(nfs_.get(), fh) != 0) {
        throw std::runtime_error(std::string("libnfs: fsync: ") + nfs_get_error(nfs_.get()));
      }
      nfs_close(nfs_.get(), fh);
    }
    files_.clear();
  }

 private:
  bool cancelled_ = false;
  std::vector<Slot> slots_;  // outlives nfs_: late callbacks land here
  std::unique_ptr<nfs_context, decltype(&nfs_destroy_context)> nfs_;
  std::vector<nfsfh*> files_;
  std::string url_;
  std::size_t maxRead_ = 1U << 20;
  std::size_t maxWrite_ = 1U << 20;
  std::uint32_t active_ = 0;
};

}  // namespace

std::unique_ptr<Engine> makeLibnfsEngine(const TargetSpec& target) {
  return std::make_unique<LibnfsEngine>(target);
}

}  // namespace nfsrdma::bench
