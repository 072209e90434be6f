#include "fleetreap/transport/proxy_pacer.h"

#include <algorithm>

#include "fleetreap/base/text.h"

namespace fleetreap {

bool IsStartupDrop(const std::string& proxy_stderr) {
  return Contains(proxy_stderr, "kex_exchange_identification") ||
         Contains(proxy_stderr, "Connection reset by peer") ||
         Contains(proxy_stderr, "Connection closed by remote host") ||
         Contains(proxy_stderr, "banner exchange");
}

std::chrono::milliseconds ProxyRetryPause(int attempt, uint32_t random) {
  const int shift = std::clamp(attempt, 1, 5) - 1;
  const long full = 100L << shift;  // 100, 200, 400, 800, 1600 ms
  const long half = full / 2;
  return std::chrono::milliseconds(half + static_cast<long>(random % (half + 1)));
}

ProxyPacer::Slot& ProxyPacer::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    Release();
    pacer_ = other.pacer_;
    key_ = std::move(other.key_);
    other.pacer_ = nullptr;
  }
  return *this;
}

void ProxyPacer::Slot::Release() {
  if (pacer_ != nullptr) pacer_->Return(key_);
  pacer_ = nullptr;
}

bool ProxyPacer::Acquire(const std::string& command, std::chrono::steady_clock::time_point deadline,
                         Slot* slot) {
  slot->Release();
  std::unique_lock<std::mutex> lock(mutex_);
  if (!freed_.wait_until(lock, deadline, [&] { return in_flight_[command] < limit_; })) {
    return false;
  }
  ++in_flight_[command];
  slot->pacer_ = this;
  slot->key_ = command;
  return true;
}

int ProxyPacer::InFlight(const std::string& command) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_flight_.find(command);
  return it == in_flight_.end() ? 0 : it->second;
}

void ProxyPacer::Return(const std::string& command) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (--in_flight_[command] <= 0) in_flight_.erase(command);
  }
  freed_.notify_all();
}

}  // namespace fleetreap
