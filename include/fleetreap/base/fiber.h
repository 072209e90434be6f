// Fiber: many cooperative tasks on one thread. A FiberLoop runs stackful
// fibers (ucontext, small mmap'ed stacks with a guard page) on the thread
// that calls Run(): a fiber runs until it waits for a descriptor
// (WaitForFd) or for a time (SleepUntil), and the loop then runs another
// one, polling (epoll) the descriptors the fibers wait on and keeping their
// deadlines in a timer heap. Code written as blocking calls runs unchanged
// in a fiber, provided its waits go through WaitForFd and SleepUntil.
//
// Outside a fiber (or inside a NoFiberWaits scope) WaitForFd is poll() and
// SleepUntil is std::this_thread::sleep_until: the same code blocks its
// thread, as it did before fibers.
//
// Thread-safety: a FiberLoop belongs to one thread: Spawn before Run or from
// one of its own fibers, Run on that thread. Its fibers never move to another
// thread. A fiber must not wait (WaitForFd, SleepUntil) while it holds a lock
// another fiber of the same loop may take: that other fiber would block the
// thread, and the holder would never run again (NoFiberWaits makes the waits
// inside such a section block the thread instead).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace fleetreap {

struct FiberLoopState;  // fiber.cc's

class FiberLoop {
 public:
  /// "stack_bytes": each fiber's stack, rounded up to pages (a guard page
  /// below it is added). Only the pages a fiber touches become resident.
  explicit FiberLoop(size_t stack_bytes = kDefaultStackBytes);
  ~FiberLoop();
  FiberLoop(const FiberLoop&) = delete;
  FiberLoop& operator=(const FiberLoop&) = delete;

  /// Adds a fiber that will call "body" once, on the loop's thread. An
  /// exception that leaves "body" ends that fiber only (counted in Run's
  /// result). Call before Run or from a fiber of this loop.
  void Spawn(std::function<void()> body);

  /// Runs every fiber until all have ended, including those spawned while
  /// it runs. Returns how many ended by an exception. A stack that cannot be
  /// mapped counts as a fiber that failed.
  size_t Run();

  /// 256 KiB (1 MiB under AddressSanitizer and ThreadSanitizer, whose
  /// frames are larger).
  static const size_t kDefaultStackBytes;

 private:
  std::unique_ptr<FiberLoopState> impl_;
};

/// True when the calling code runs in a fiber of a FiberLoop and no
/// NoFiberWaits scope is open on this thread.
bool InFiber();

/// Waits until "fd" is ready for "events" (poll's POLLIN, POLLOUT) or
/// "deadline" passes. Returns poll's revents (POLLIN, POLLOUT, POLLERR,
/// POLLHUP...) when ready, 0 at the deadline, -1 with errno on a poll error.
/// In a fiber only this fiber waits; elsewhere it is poll().
int WaitForFd(int fd, short events, std::chrono::steady_clock::time_point deadline);

/// Returns at "until" (at once when it has passed). In a fiber only this
/// fiber waits; elsewhere the thread sleeps.
void SleepUntil(std::chrono::steady_clock::time_point until);

/// Runs "work" to its end. In a fiber it runs on a thread of its own while
/// only this fiber waits (for code that blocks, or holds locks across its
/// waits: there it is not in a fiber, so its waits block that thread);
/// elsewhere it runs on the calling thread. "work" must not throw.
void RunOffLoop(const std::function<void()>& work);

/// While one is alive on a thread, InFiber() is false there and the waits
/// above block the thread: for code that holds a lock across its waits, or
/// that must not let another fiber of its loop run in the middle.
class NoFiberWaits {
 public:
  NoFiberWaits();
  ~NoFiberWaits();
  NoFiberWaits(const NoFiberWaits&) = delete;
  NoFiberWaits& operator=(const NoFiberWaits&) = delete;
};

}  // namespace fleetreap
