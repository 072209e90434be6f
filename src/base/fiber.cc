#include "fleetreap/base/fiber.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <deque>
#include <map>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define FLEETREAP_ASAN_FIBERS 1
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__SANITIZE_THREAD__)
#define FLEETREAP_TSAN_FIBERS 1
#include <sanitizer/tsan_interface.h>
#endif

namespace fleetreap {

#if defined(FLEETREAP_ASAN_FIBERS) || defined(FLEETREAP_TSAN_FIBERS)
const size_t FiberLoop::kDefaultStackBytes = size_t{1024} * 1024;
#else
const size_t FiberLoop::kDefaultStackBytes = size_t{256} * 1024;
#endif

namespace {

using TimePoint = std::chrono::steady_clock::time_point;

struct Fiber {
  std::function<void()> body;
  ucontext_t context{};
  void* map = nullptr;  // guard page, then the stack
  size_t map_bytes = 0;
  bool done = false;
  bool failed = false;
  bool waiting = false;  // in WaitForFd or SleepUntil, not yet woken
  int revents = 0;
  std::multimap<TimePoint, Fiber*>::iterator timer;
  bool has_timer = false;
#if defined(FLEETREAP_TSAN_FIBERS)
  void* tsan_fiber = nullptr;
#endif
};

int MillisUntil(TimePoint deadline) {
  // Compared before subtracting: a deadline of TimePoint::min() (already
  // past) would overflow the difference.
  const TimePoint now = std::chrono::steady_clock::now();
  if (deadline <= now) return 0;
  const auto left = deadline - now;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

// poll() on the calling thread, through EINTR, until "deadline".
int BlockingPoll(int fd, short events, TimePoint deadline) {
  pollfd pfd{fd, events, 0};
  while (true) {
    const int timeout = deadline == TimePoint::max() ? -1 : MillisUntil(deadline);
    const int ready = poll(&pfd, 1, timeout);
    if (ready > 0) return pfd.revents;
    if (ready == 0) return 0;
    if (errno != EINTR) return -1;
  }
}

}  // namespace

struct FiberLoopState {
  size_t stack_bytes = 0;
  int epoll_fd = -1;
  std::deque<Fiber*> ready;
  std::vector<std::unique_ptr<Fiber>> unstarted;
  size_t live = 0;
  size_t failed = 0;
  Fiber* current = nullptr;
  ucontext_t loop_context{};
  std::multimap<TimePoint, Fiber*> timers;
#if defined(FLEETREAP_ASAN_FIBERS)
  const void* loop_stack_bottom = nullptr;
  size_t loop_stack_size = 0;
#endif
#if defined(FLEETREAP_TSAN_FIBERS)
  void* tsan_loop_fiber = nullptr;
#endif

  bool Start(Fiber* fiber);
  void SwitchTo(Fiber* fiber);
  void SwitchToLoop(Fiber* fiber);
  void Wake(Fiber* fiber, int revents);
  void WaitUntil(Fiber* fiber, TimePoint deadline);
  void PollOnce();
  void Destroy(Fiber* fiber);
};

namespace {

thread_local FiberLoopState* t_loop = nullptr;  // while Run runs on this thread
thread_local int t_no_waits = 0;

void Trampoline() {
  FiberLoopState* loop = t_loop;
  Fiber* fiber = loop->current;
#if defined(FLEETREAP_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(nullptr, &loop->loop_stack_bottom, &loop->loop_stack_size);
#endif
  try {
    fiber->body();
  } catch (...) {
    fiber->failed = true;
  }
  fiber->body = nullptr;
  fiber->done = true;
  t_loop->SwitchToLoop(fiber);  // never returns
}

}  // namespace

bool FiberLoopState::Start(Fiber* fiber) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t stack = (stack_bytes + page - 1) / page * page;
  fiber->map_bytes = stack + page;
  void* map = mmap(nullptr, fiber->map_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
  if (map == MAP_FAILED) return false;
  fiber->map = map;
  if (mprotect(map, page, PROT_NONE) != 0 || getcontext(&fiber->context) != 0) return false;
  fiber->context.uc_stack.ss_sp = static_cast<char*>(map) + page;
  fiber->context.uc_stack.ss_size = stack;
  fiber->context.uc_link = nullptr;
  makecontext(&fiber->context, Trampoline, 0);
#if defined(FLEETREAP_TSAN_FIBERS)
  fiber->tsan_fiber = __tsan_create_fiber(0);
#endif
  return true;
}

void FiberLoopState::SwitchTo(Fiber* fiber) {
  current = fiber;
#if defined(FLEETREAP_ASAN_FIBERS)
  void* fake_stack = nullptr;
  __sanitizer_start_switch_fiber(&fake_stack, fiber->context.uc_stack.ss_sp,
                                 fiber->context.uc_stack.ss_size);
#endif
#if defined(FLEETREAP_TSAN_FIBERS)
  __tsan_switch_to_fiber(fiber->tsan_fiber, 0);
#endif
  swapcontext(&loop_context, &fiber->context);
#if defined(FLEETREAP_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr);
#endif
  current = nullptr;
  if (fiber->done) Destroy(fiber);
}

void FiberLoopState::SwitchToLoop(Fiber* fiber) {
#if defined(FLEETREAP_ASAN_FIBERS)
  void* fake_stack = nullptr;
  // A fiber that ended leaves for good: ASan may drop its fake stack.
  __sanitizer_start_switch_fiber(fiber->done ? nullptr : &fake_stack, loop_stack_bottom,
                                 loop_stack_size);
#endif
#if defined(FLEETREAP_TSAN_FIBERS)
  __tsan_switch_to_fiber(tsan_loop_fiber, 0);
#endif
  swapcontext(&fiber->context, &loop_context);
#if defined(FLEETREAP_ASAN_FIBERS)
  __sanitizer_finish_switch_fiber(fake_stack, &loop_stack_bottom, &loop_stack_size);
#endif
}

void FiberLoopState::Destroy(Fiber* fiber) {
  if (fiber->failed) ++failed;
#if defined(FLEETREAP_TSAN_FIBERS)
  if (fiber->tsan_fiber != nullptr) __tsan_destroy_fiber(fiber->tsan_fiber);
#endif
  if (fiber->map != nullptr) munmap(fiber->map, fiber->map_bytes);
  delete fiber;
  --live;
}

void FiberLoopState::Wake(Fiber* fiber, int revents) {
  if (!fiber->waiting) return;
  fiber->waiting = false;
  fiber->revents = revents;
  if (fiber->has_timer) {
    timers.erase(fiber->timer);
    fiber->has_timer = false;
  }
  ready.push_back(fiber);
}

void FiberLoopState::WaitUntil(Fiber* fiber, TimePoint deadline) {
  fiber->waiting = true;
  fiber->revents = 0;
  if (deadline != TimePoint::max()) {
    fiber->timer = timers.emplace(deadline, fiber);
    fiber->has_timer = true;
  }
  SwitchToLoop(fiber);
}

// Waits for the first descriptor or timer due, and wakes their fibers.
void FiberLoopState::PollOnce() {
  int timeout = timers.empty() ? -1 : MillisUntil(timers.begin()->first);
  epoll_event events[256];
  const int count = epoll_wait(epoll_fd, events, 256, timeout);
  for (int i = 0; i < count; ++i) {
    Wake(static_cast<Fiber*>(events[i].data.ptr), static_cast<int>(events[i].events));
  }
  const TimePoint now = std::chrono::steady_clock::now();
  while (!timers.empty() && timers.begin()->first <= now) {
    Fiber* fiber = timers.begin()->second;
    timers.erase(timers.begin());
    fiber->has_timer = false;
    Wake(fiber, 0);
  }
}

FiberLoop::FiberLoop(size_t stack_bytes) : impl_(std::make_unique<FiberLoopState>()) {
  impl_->stack_bytes = stack_bytes;
  impl_->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
}

FiberLoop::~FiberLoop() {
  for (Fiber* fiber : impl_->ready) delete fiber;  // spawned, never run
  if (impl_->epoll_fd >= 0) close(impl_->epoll_fd);
}

void FiberLoop::Spawn(std::function<void()> body) {
  auto* fiber = new Fiber;
  fiber->body = std::move(body);
  impl_->ready.push_back(fiber);
  ++impl_->live;
}

size_t FiberLoop::Run() {
  FiberLoopState& loop = *impl_;
  FiberLoopState* outer = t_loop;
  t_loop = &loop;
#if defined(FLEETREAP_TSAN_FIBERS)
  loop.tsan_loop_fiber = __tsan_get_current_fiber();
#endif
  while (loop.live > 0) {
    while (!loop.ready.empty()) {
      Fiber* fiber = loop.ready.front();
      loop.ready.pop_front();
      if (fiber->map == nullptr && !loop.Start(fiber)) {
        fiber->failed = true;
        loop.Destroy(fiber);
        continue;
      }
      loop.SwitchTo(fiber);
    }
    if (loop.live > 0) loop.PollOnce();
  }
  t_loop = outer;
  const size_t failed = loop.failed;
  loop.failed = 0;
  return failed;
}

bool InFiber() { return t_loop != nullptr && t_loop->current != nullptr && t_no_waits == 0; }

int WaitForFd(int fd, short events, TimePoint deadline) {
  if (!InFiber() || t_loop->epoll_fd < 0) return BlockingPoll(fd, events, deadline);
  if (deadline <= std::chrono::steady_clock::now()) {
    return BlockingPoll(fd, events, TimePoint::min());
  }
  FiberLoopState* loop = t_loop;
  Fiber* fiber = loop->current;
  epoll_event event{};
  event.events = (events & POLLIN ? EPOLLIN : 0u) | (events & POLLOUT ? EPOLLOUT : 0u);
  event.data.ptr = fiber;
  if (epoll_ctl(loop->epoll_fd, EPOLL_CTL_ADD, fd, &event) != 0) {
    // Not pollable by epoll (a regular file) or already watched: poll it.
    return BlockingPoll(fd, events, deadline);
  }
  loop->WaitUntil(fiber, deadline);
  epoll_ctl(loop->epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
  return fiber->revents;
}

void SleepUntil(TimePoint until) {
  if (!InFiber()) {
    std::this_thread::sleep_until(until);
    return;
  }
  if (until <= std::chrono::steady_clock::now()) return;
  t_loop->WaitUntil(t_loop->current, until);
}

void RunOffLoop(const std::function<void()>& work) {
  const int done = InFiber() ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK) : -1;
  if (done < 0) {
    work();
    return;
  }
  // The thread inherits the loop thread's signal mask (RunFleet blocks
  // SIGINT and the like there); join() orders its writes before ours.
  std::thread helper([&work, done] {
    work();
    const uint64_t one = 1;
    while (write(done, &one, sizeof one) < 0 && errno == EINTR) {
    }
  });
  uint64_t count = 0;
  while (read(done, &count, sizeof count) != static_cast<ssize_t>(sizeof count)) {
    WaitForFd(done, POLLIN, TimePoint::max());
  }
  helper.join();
  close(done);
}

NoFiberWaits::NoFiberWaits() { ++t_no_waits; }

NoFiberWaits::~NoFiberWaits() { --t_no_waits; }

}  // namespace fleetreap
