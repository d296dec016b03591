#include <algorithm>
#include <stdexcept>
#include <system_error>

#include "counters/CpuStat.h"
#include "counters/HostCounters.h"
#include "counters/TextFields.h"

namespace nfsrdma::counters {
namespace fs = std::filesystem;

namespace {

// A host runs thousands of threads at most; a reading stops there.
constexpr std::size_t kMaxThreads = 4096;

std::optional<TaskStat> statOf(const fs::path& file) {
  const auto text = readSmallFile(file);
  if (!text) return std::nullopt;  // the thread ended between the listing and the read
  try {
    return parseTaskStat(*text);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
}

// A thread's time waiting on a run queue for a CPU, in ms
// (/proc/PID/task/TID/schedstat: "run_ns wait_ns timeslices",
// fs/proc/base.c; present with CONFIG_SCHED_INFO).
std::optional<std::uint64_t> runQueueWaitMs(const fs::path& stat) {
  const auto text = readSmallFile(stat.parent_path() / "schedstat");
  if (!text) return std::nullopt;
  const std::string_view line = std::string_view(*text).substr(0, text->find('\n'));
  const auto words = splitWords(line);
  if (words.size() < 2) return std::nullopt;
  const auto ns = wholeNumber<std::uint64_t>(words[1]);
  if (!ns) return std::nullopt;
  return *ns / 1000000;
}

std::optional<std::int64_t> nfsdThreadCount(const fs::path& root) {
  const auto text = readSmallFile(root / "proc/fs/nfsd/threads");
  if (!text) return std::nullopt;
  std::string_view t = *text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.remove_suffix(1);
  return wholeNumber<std::int64_t>(t);
}

}  // namespace

ThreadCounters::ThreadCounters(fs::path root, std::string pid, long hz)
    : root_(std::move(root)), pid_(std::move(pid)), hz_(hz) {}

// nfsd's threads are kernel threads named "nfsd"; /proc is scanned only
// when their number changed, as a scan reads every process's stat.
void ThreadCounters::findNfsdThreads() {
  const auto count = nfsdThreadCount(root_);
  // Scanned once per count: a host without nfsd (no threads file, or 0)
  // never pays for a scan of every process.
  if (count == nfsdCount_) return;
  nfsdCount_ = count;
  nfsdStats_.clear();
  if (!count || *count <= 0) return;
  std::error_code ec;
  std::size_t seen = 0;
  for (const auto& e : fs::directory_iterator(root_ / "proc", ec)) {
    const std::string name = e.path().filename().string();
    if (++seen > kMaxThreads * 16 || !wholeNumber<std::uint32_t>(name)) continue;
    const auto s = statOf(e.path() / "stat");
    if (s && s->comm == "nfsd" && nfsdStats_.size() < kMaxThreads)
      nfsdStats_.push_back(e.path() / "stat");
  }
  std::sort(nfsdStats_.begin(), nfsdStats_.end());
}

std::optional<NamedValues> ThreadCounters::read() {
  std::vector<fs::path> files;
  if (pid_.empty()) {
    findNfsdThreads();
    files = nfsdStats_;
  } else {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root_ / "proc" / pid_ / "task", ec)) {
      if (files.size() < kMaxThreads) files.push_back(e.path() / "stat");
    }
  }
  std::uint64_t added = 0, busiestNow = 0, threads = 0, busy = 0, longestWait = 0;
  bool waits = !pid_.empty();
  std::map<std::string, std::uint64_t> now, nowWait;
  for (const auto& f : files) {
    const auto s = statOf(f);
    if (!s) continue;
    const std::uint64_t t = s->utime + s->stime;
    const std::string key = f.parent_path().filename().string();
    // A thread seen before adds what it used since; one started since the
    // last reading adds all it used; at the first reading nothing is added
    // (what the threads used before the cell is not the cell's).
    const auto before = last_.find(key);
    const std::uint64_t prev =
        before != last_.end() ? std::min(before->second, t) : (first_ ? t : 0);
    busiestNow = std::max(busiestNow, t - prev);
    added += t - prev;
    now[key] = t;
    if (waits) {
      // The same rule as the ticks: what a thread waited since the last
      // reading, the longest of them summed per interval.
      const auto w = runQueueWaitMs(f);
      waits = w.has_value();
      if (w) {
        const auto seen = lastWait_.find(key);
        const std::uint64_t from =
            seen != lastWait_.end() ? std::min(seen->second, *w) : (first_ ? *w : 0);
        longestWait = std::max(longestWait, *w - from);
        nowWait[key] = *w;
      }
    }
    ++threads;
    // nfsd threads wait for work in TASK_IDLE ("I"); any other state is a
    // thread serving a request (running, or waiting on the disk or the wire).
    busy += s->state != 'I' ? 1U : 0U;
  }
  if (threads == 0) return std::nullopt;
  last_ = std::move(now);
  lastWait_ = std::move(nowWait);
  first_ = false;
  busiest_ += busiestNow;
  ticks_ += added;
  NamedValues out;
  const auto put = [&](const char* n, std::uint64_t v) {
    out.values.emplace_back(n, static_cast<std::int64_t>(v));
  };
  if (pid_.empty()) {
    put("threads", threads);
    put("busy", busy);
  } else {
    put("busiest_ticks", busiest_);
    put("threads", threads);
    if (waits) {
      longestWait_ += longestWait;
      put("longest_wait_ms", longestWait_);
    }
  }
  put("ticks", ticks_);
  put("hz", static_cast<std::uint64_t>(hz_));
  return out;
}

}  // namespace nfsrdma::counters
