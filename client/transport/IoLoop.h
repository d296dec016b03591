// One I/O thread serving the descriptors of one or more connections: TCP
// sockets, and RDMA completion channels and connection-manager events.
//
// Every connection runs on an IoLoop: its own by default, or one shared
// by several connections of a trunk (nconnect) when the host has fewer
// cores than connections. A shared loop takes the replies of all its
// connections in one wakeup, as one connection takes a batch of replies,
// where a thread per connection would wake for one or two replies each and
// pay a poll() and a context switch for them. Each connection keeps its own
// socket, receive buffer, corked sends and RPC table: the loop shares the
// thread, not the state, and takes no lock on the I/O path (members join
// and leave through a command queue the loop applies between wakeups).
//
// Reply pacing (coalescing) is the loop's: with many calls in flight over
// all its connections it waits a little after a batch so that the next
// wakeup takes several replies at once, like a NIC's interrupt moderation.
#pragma once

#include <poll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/transport/NumaPlacement.h"
#include "util/UniqueFd.h"

namespace nfsrdma::transport {

class IoLoop {
 public:
  // A connection served by the loop; every call comes from the loop's thread.
  class Member {
   public:
    virtual ~Member() = default;
    virtual int pollFd() const = 0;  // -1: nothing to wait for (a failed connection still ticks)
    virtual short pollEvents() const = 0;  // POLLIN, and POLLOUT while bytes wait to be sent
    virtual void onEvents(short revents) = 0;
    virtual void onTick() = 0;
    // For pacing: replies delivered since last asked, calls in flight, and
    // whether a large record is half received (then nobody waits).
    virtual std::size_t takeReplies() = 0;
    virtual std::size_t callsInFlight() const = 0;
    virtual bool inLargeRecord() const = 0;
    // After a round of callbacks, for a member that asked (flushAfterRound).
    virtual void onRoundEnd() {}
  };

  IoLoop();   // starts the thread; throws NfsException when the eventfd cannot be made
  ~IoLoop();  // stops the thread; every member must have left

  IoLoop(const IoLoop&) = delete;
  IoLoop& operator=(const IoLoop&) = delete;

  void add(Member& m);
  // When it returns the loop no longer touches m (from the loop's own
  // thread: at once, the current round skips it).
  void remove(Member& m);
  void wake();
  bool onThread() const { return std::this_thread::get_id() == threadId_.load(); }
  void setCoalescing(bool on) { coalesce_.store(on); }
  // numa=auto: the loop's thread moves to the CPUs of node (nullopt: 'what'
  // has none, and it stays where it is), between two rounds. The latest
  // request wins: a shared loop's connections normally share their NIC.
  void place(std::optional<int> node, std::string what);
  // Where the thread runs; empty detail: no placement applied yet.
  NumaPlacement placement() const;

  // Loop thread only. inRound(): inside a round of event callbacks, where a
  // member may cork a send made for it from another member's callback and
  // ask to flush it when the round ends (m->onRoundEnd()).
  bool inRound() const { return inRound_; }
  void flushAfterRound(Member& m) { flushing_.push_back(&m); }
  // How many rounds this thread's loop has served (0 on any other thread):
  // what tells two calls made in the same round.
  static std::uint64_t currentRound() { return tlsRound_; }

 private:
  struct Command {
    Member* member;
    bool add;
  };
  void run();
  void applyCommands();
  void serve(const std::vector<pollfd>& fds);
  void drop(Member* m);
  void tick();
  std::chrono::microseconds pacing();

  UniqueFd wakeFd_;
  std::thread thread_;
  std::atomic<std::thread::id> threadId_{};
  std::atomic<bool> stop_{false};
  std::atomic<bool> coalesce_{true};

  std::mutex commandMu_;  // add/remove only, never on the I/O path
  std::condition_variable applied_;
  std::vector<Command> commands_;
  std::uint64_t appliedRounds_ = 0;  // commandMu_
  std::atomic<bool> commandsPending_{false};
  struct PlaceRequest {
    std::optional<int> node;
    std::string what;
  };
  std::optional<PlaceRequest> placeRequest_;  // commandMu_
  mutable std::mutex placementMu_;
  NumaPlacement placement_;  // placementMu_

  // Loop thread only.
  std::vector<Member*> members_;
  std::vector<Member*> serving_;   // this round's, a removed one nulled
  std::vector<Member*> flushing_;  // asked for onRoundEnd(), a removed one nulled
  bool inRound_ = false;
  static thread_local std::uint64_t tlsRound_;
  std::chrono::steady_clock::time_point nextTick_;
  double replyGapMicros_ = 0;  // moving average of the time between replies, all members
  std::chrono::steady_clock::time_point lastBatch_{};
};

}  // namespace nfsrdma::transport
