// `nfsrdma-bench anchor --device DEV`: the dev: engine against fio on the
// same block device, read-only, in one run: 4 KiB random reads at QD32 and
// 128 KiB sequential reads at QD8, alternated three times (ours, fio, ours,
// ...); each side's median round by IOPS is kept, with the ratios, and
// every round's IOPS is printed after it. fio runs at its best (fioOptions;
// bench/README.md says why each option): io_uring with registered buffers
// and files, requests submitted in one batch and completions reaped in
// batches of half the depth, the clock read seldom (--gtod_reduce),
// no map of the blocks read (--norandommap: ours keeps none) and no disk
// statistics thread (--disk_util=0); O_DIRECT, the same depth and block
// size. CPU: ours is this process's (every thread, io_uring's io-wq workers
// included, over the run); fio's is its job's own usr_cpu + sys_cpu, which
// fio takes with getrusage(RUSAGE_SELF) in the job's process (the io-wq
// workers are threads of it) over the job's run, without its start-up.
#pragma once

#include <string>

#include "bench/anchor/AnchorRuns.h"
#include "bench/job/FileProfile.h"
#include "bench/report/Json.h"

namespace nfsrdma::bench {

// fio's --output-format=json of one job: its reads, runtime and its own
// usr_cpu + sys_cpu (its job process's). Throws std::runtime_error naming
// what is missing.
ReadMeasurement fioRunFromJson(const JsonValue& doc);

// fio's options for the anchor's run of the read profile p, all but the
// device, runtime and output: the same block size, depth and O_DIRECT as
// ours, and fio's fastest way to run them.
std::string fioOptions(const FileProfile& p);

// The whole command; the exit status (1 when a run failed).
int runDeviceAnchor(const std::string& device, double runtimeSeconds, const std::string& jsonPath);

}  // namespace nfsrdma::bench
