// ProxyPacer: paces the ProxyCommands of one run that go through the same
// proxy. Each "ssh -W" behind a ProxyCommand is an unauthenticated connection
// to the bastion until it has logged in, and OpenSSH's sshd drops a growing
// share of those past its MaxStartups start value (10 by default): at
// --forks 64 most would be reset. So at most "limit" proxies with the same
// command wait for their host's banner at once (the banner comes through
// only once the proxy has logged in), and a proxy the bastion dropped at
// startup is retried after a jittered pause (ProxyRetryPause). Thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

namespace fleetreap {

/// OpenSSH's MaxStartups start value.
inline constexpr int kProxyStartups = 10;
/// How many times a proxy dropped at startup is started, in all.
inline constexpr int kProxyAttempts = 5;

/// True when what a proxy printed before it ended says its bastion dropped
/// the connection before the login: sshd's MaxStartups resets it during the
/// banner exchange ("kex_exchange_identification: read: Connection reset by
/// peer", "... Connection closed by remote host").
bool IsStartupDrop(const std::string& proxy_stderr);

/// The pause before the next start after "attempt" (1, 2, ...) drops: 100 ms
/// doubled per attempt, at most 1.6 s, and "random" (any 32 bits) picks a
/// point in its upper half, so proxies dropped together come back apart.
std::chrono::milliseconds ProxyRetryPause(int attempt, uint32_t random);

class ProxyPacer {
 public:
  explicit ProxyPacer(int limit = kProxyStartups) : limit_(limit) {}
  ProxyPacer(const ProxyPacer&) = delete;
  ProxyPacer& operator=(const ProxyPacer&) = delete;

  /// A place among the "limit" proxies of one command; released when it is
  /// destroyed or Release()d. Move-only.
  class Slot {
   public:
    Slot() = default;
    ~Slot() { Release(); }
    Slot(Slot&& other) noexcept : pacer_(other.pacer_), key_(std::move(other.key_)) {
      other.pacer_ = nullptr;
    }
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    void Release();
    bool held() const { return pacer_ != nullptr; }

   private:
    friend class ProxyPacer;
    ProxyPacer* pacer_ = nullptr;
    std::string key_;
  };

  /// Waits for a place among the proxies of "command" (as written, before
  /// its %-tokens are expanded) until "deadline". False, and no slot, when
  /// the deadline passed first.
  bool Acquire(const std::string& command, std::chrono::steady_clock::time_point deadline,
               Slot* slot);

  /// How many proxies of "command" hold a place now.
  int InFlight(const std::string& command);

 private:
  void Return(const std::string& command);

  const int limit_;
  std::mutex mutex_;
  std::condition_variable freed_;
  std::map<std::string, int> in_flight_;
};

}  // namespace fleetreap
