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
  return counterFileValue(*text);
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

std::vector<fs::path> ThreadCounters::statFiles() {
  if (pid_.empty()) {
    findNfsdThreads();
    return nfsdStats_;
  }
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root_ / "proc" / pid_ / "task", ec)) {
    if (files.size() < kMaxThreads) files.push_back(e.path() / "stat");
  }
  return files;
}

// What a counter of a thread added since the last reading: all of it for
// a thread started since; nothing at the first reading (what the threads
// used before the cell is not the cell's).
std::uint64_t ThreadCounters::since(const std::map<std::string, std::uint64_t>& last,
                                    const std::string& thread, std::uint64_t now) const {
  const auto before = last.find(thread);
  if (before != last.end()) return now - std::min(before->second, now);
  return first_ ? 0 : now;
}

void ThreadCounters::count(const fs::path& stat, Tally& t) const {
  const auto s = statOf(stat);
  if (!s) return;  // the thread ended between the listing and the read
  const std::string key = stat.parent_path().filename().string();
  const std::uint64_t ticks = s->utime + s->stime;
  const std::uint64_t used = since(last_, key, ticks);
  t.busiest = std::max(t.busiest, used);
  t.added += used;
  t.ticks[key] = ticks;
  if (t.waits) {
    // The same rule for the run-queue wait; the longest of the interval.
    const auto w = runQueueWaitMs(stat);
    t.waits = w.has_value();
    if (w) {
      t.longestWait = std::max(t.longestWait, since(lastWait_, key, *w));
      t.waited[key] = *w;
    }
  }
  ++t.threads;
  // nfsd threads wait for work in TASK_IDLE ("I"); any other state is a
  // thread serving a request (running, or waiting on the disk or the wire).
  t.busy += s->state != 'I' ? 1U : 0U;
}

std::optional<NamedValues> ThreadCounters::read() {
  Tally t;
  t.waits = !pid_.empty();
  for (const auto& f : statFiles()) count(f, t);
  if (t.threads == 0) return std::nullopt;
  last_ = std::move(t.ticks);
  lastWait_ = std::move(t.waited);
  first_ = false;
  busiest_ += t.busiest;
  ticks_ += t.added;
  NamedValues out;
  const auto put = [&](const char* n, std::uint64_t v) {
    out.values.emplace_back(n, static_cast<std::int64_t>(v));
  };
  if (pid_.empty()) {
    put("threads", t.threads);
    put("busy", t.busy);
  } else {
    put("busiest_ticks", busiest_);
    put("threads", t.threads);
    if (t.waits) {
      longestWait_ += t.longestWait;
      put("longest_wait_ms", longestWait_);
    }
  }
  put("ticks", ticks_);
  put("hz", static_cast<std::uint64_t>(hz_));
  return out;
}

}  // namespace nfsrdma::counters
