// replay_sshd: one SSH server process for benchmarks, light enough to stand
// in for thousands of hosts on a 2-core machine. It listens on
// 0.0.0.0:PORT, and a client reaches "host" 127.P.X.Y: the second byte of
// the local address the client dialled (getsockname) picks the host's
// profile, a directory of recorded replies under RECORDINGS:
//
//   127.201.X.Y  clean      127.202.X.Y  incident
//   127.203.X.Y  unreachable (the connection is reset before the banner)
//   127.204.X.Y  slow       (the clean replies, each after --slow-ms)
//
// Any login is accepted ("none" authentication). Each exec request is
// matched by step, not by bytes: the step headers the command prints
// (z 'scan 1', z 'signal 1', ...) joined by '+' name the recording
// RECORDINGS/PROFILE/STEPS.out (stdout, bytes as a real host sent them) and
// STEPS.rc (exit status, default 0). A step with no recording exits 97 with
// one line on stderr, so the controller's verdict for that host is wrong and
// the bench says so.
//
// A thread per session, each with blocking libssh and its own ssh_event (one
// ssh_event shared by thousands of non-blocking sessions dropped a few
// sessions at 20 at once); the main thread only accepts.
//
//   replay_sshd --host-key FILE --recordings DIR [--port 0] [--slow-ms 2000]
//
// Prints "port N" on stdout once listening; runs until SIGTERM or SIGINT.
#include <arpa/inet.h>
#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using SteadyClock = std::chrono::steady_clock;

// A step sent more than once in a session: STEPS, STEPS@2 ... STEPS@4
// (record_replies.py MAX_OCCURRENCES).
constexpr int kMaxOccurrences = 4;

struct Reply {
  std::string out;
  int rc = 0;
};

volatile sig_atomic_t g_stop = 0;

std::map<std::string, std::map<std::string, Reply>> g_profiles;  // profile -> steps -> reply
std::chrono::milliseconds g_slow{2000};

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path, std::ios::binary);
  *ok = static_cast<bool>(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The step headers a fleetreap step script prints, in order: "scan+shm+scan"
// (the script as the command's here-document spells it: z 'scan 1').
std::string StepsOf(const std::string& command) {
  static const std::string kOpen = "z '";
  std::string steps;
  size_t at = 0;
  while ((at = command.find(kOpen, at)) != std::string::npos) {
    at += kOpen.size();
    size_t end = at;
    while (end < command.size() && command[end] >= 'a' && command[end] <= 'z') ++end;
    // "scan 1" closed by its quote: a record like z 'kmsg 1:' is not a step.
    // Only the steps' own headers: a record such as "shmh 1" is not one.
    static const std::set<std::string> kStepWords = {"scan", "signal", "shm", "stop"};
    if (end > at && command.compare(end, 3, " 1'") == 0 &&
        kStepWords.count(command.substr(at, end - at)) > 0) {
      steps += (steps.empty() ? "" : "+") + command.substr(at, end - at);
    }
  }
  return steps;
}

struct Session;

struct Pending {
  SteadyClock::time_point due;
  ssh_channel channel;
  Session* session;
  const Reply* reply;
  std::string error;
};

struct Session {
  ssh_session ssh = nullptr;
  std::string profile;
  bool slow = false;
  ssh_channel_callbacks_struct channel_cb{};
  ssh_server_callbacks_struct server_cb{};
  std::vector<Pending>* queue = nullptr;
  std::map<std::string, int> sent;  // steps -> how many times this session sent them
};

int OnExec(ssh_session, ssh_channel channel, const char* command, void* userdata) {
  auto* s = static_cast<Session*>(userdata);
  Pending p{SteadyClock::now() + (s->slow ? g_slow : std::chrono::milliseconds(0)), channel, s,
            nullptr, ""};
  std::string steps = StepsOf(command);
  const auto& replies = g_profiles.at(s->profile);
  // The session's Nth such step: the latest recording STEPS@K, K <= N.
  const int n = ++s->sent[steps];
  auto found = replies.end();
  for (int k = std::min(n, kMaxOccurrences); k >= 1 && found == replies.end(); --k) {
    found = replies.find(k == 1 ? steps : steps + "@" + std::to_string(k));
  }
  if (found == replies.end()) {
    p.error = "replay_sshd: no recording of step '" + steps + "' for profile " + s->profile + "\n";
  } else {
    p.reply = &found->second;
  }
  s->queue->push_back(std::move(p));
  return 0;
}

ssh_channel OnChannelOpen(ssh_session ssh, void* userdata) {
  auto* s = static_cast<Session*>(userdata);
  ssh_channel channel = ssh_channel_new(ssh);
  s->channel_cb.userdata = s;
  s->channel_cb.channel_exec_request_function = OnExec;
  ssh_callbacks_init(&s->channel_cb);
  ssh_set_channel_callbacks(channel, &s->channel_cb);
  return channel;
}

int OnAuthNone(ssh_session, const char*, void*) { return SSH_AUTH_SUCCESS; }
int OnAuthKey(ssh_session, const char*, ssh_key, char, void*) { return SSH_AUTH_SUCCESS; }

std::string LocalProfile(int fd) {
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0) return "";
  unsigned second = (ntohl(local.sin_addr.s_addr) >> 16) & 0xff;
  switch (second) {
    case 201: return "clean";
    case 202: return "incident";
    case 203: return "unreachable";
    case 204: return "slow";
    default: return "";
  }
}

void Send(Pending& p) {
  if (p.reply != nullptr) {
    if (!p.reply->out.empty()) {
      ssh_channel_write(p.channel, p.reply->out.data(), static_cast<uint32_t>(p.reply->out.size()));
    }
    ssh_channel_request_send_exit_status(p.channel, p.reply->rc);
  } else {
    ssh_channel_write_stderr(p.channel, p.error.data(), static_cast<uint32_t>(p.error.size()));
    ssh_channel_request_send_exit_status(p.channel, 97);
  }
  ssh_channel_send_eof(p.channel);
  ssh_channel_close(p.channel);
}

bool LoadRecordings(const std::string& dir) {
  static const char* kSteps[] = {
      "scan", "signal", "signal+scan+shm", "scan+shm+scan", "scan+shm", "shm+scan", "shm", "stop"};
  for (const char* profile : {"clean", "incident"}) {
    for (const char* steps : kSteps) {
      for (int k = 1; k <= kMaxOccurrences; ++k) {
        std::string name = k == 1 ? steps : std::string(steps) + "@" + std::to_string(k);
        std::string base = dir + "/" + profile + "/" + name;
        bool ok = false;
        std::string out = ReadFile(base + ".out", &ok);
        if (!ok) continue;
        bool rc_ok = false;
        std::string rc = ReadFile(base + ".rc", &rc_ok);
        g_profiles[profile][name] = Reply{out, rc_ok ? std::atoi(rc.c_str()) : 0};
      }
    }
  }
  g_profiles["slow"] = g_profiles["clean"];
  return !g_profiles["clean"].empty() && !g_profiles["incident"].empty();
}

// One session, on its own thread: the key exchange, then its channels'
// requests until the client closes it. Replies that must wait (slow) sit in
// the session's queue, ordered by nothing but their due time.
void Serve(std::unique_ptr<Session> s) {
  std::vector<Pending> queue;
  s->slow = s->profile == "slow";
  s->queue = &queue;
  s->server_cb.userdata = s.get();
  s->server_cb.auth_none_function = OnAuthNone;
  s->server_cb.auth_pubkey_function = OnAuthKey;
  s->server_cb.channel_open_request_session_function = OnChannelOpen;
  ssh_callbacks_init(&s->server_cb);
  ssh_set_server_callbacks(s->ssh, &s->server_cb);
  ssh_set_auth_methods(s->ssh, SSH_AUTH_METHOD_NONE | SSH_AUTH_METHOD_PUBLICKEY);
  if (ssh_handle_key_exchange(s->ssh) != SSH_OK) {
    ssh_free(s->ssh);
    return;
  }
  ssh_event event = ssh_event_new();
  ssh_event_add_session(event, s->ssh);
  while (!g_stop) {
    int rc = ssh_event_dopoll(event, queue.empty() ? 1000 : 10);
    auto now = SteadyClock::now();
    // Sending can run libssh's callbacks (an exec request joins the
    // queue), so each due reply leaves the queue before it is sent.
    for (size_t i = 0; i < queue.size();) {
      if (queue[i].due <= now) {
        Pending due = std::move(queue[i]);
        queue[i] = std::move(queue.back());
        queue.pop_back();
        Send(due);
      } else {
        ++i;
      }
    }
    int status = ssh_get_status(s->ssh);
    if (rc == SSH_ERROR || ssh_is_connected(s->ssh) == 0 ||
        (status & (SSH_CLOSED | SSH_CLOSED_ERROR)) != 0) {
      if (std::getenv("REPLAY_SSHD_DEBUG") != nullptr && (status & SSH_CLOSED_ERROR) != 0) {
        std::fprintf(stderr, "replay_sshd: %s session: %s\n", s->profile.c_str(),
                     ssh_get_error(s->ssh));
      }
      break;
    }
  }
  ssh_event_remove_session(event, s->ssh);
  ssh_event_free(event);
  ssh_disconnect(s->ssh);
  ssh_free(s->ssh);
}

}  // namespace

int main(int argc, char** argv) {
  std::string host_key, recordings;
  int port = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--host-key")
      host_key = argv[i + 1];
    else if (flag == "--recordings")
      recordings = argv[i + 1];
    else if (flag == "--port")
      port = std::atoi(argv[i + 1]);
    else if (flag == "--slow-ms")
      g_slow = std::chrono::milliseconds(std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "replay_sshd: unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  if (host_key.empty() || recordings.empty() || !LoadRecordings(recordings)) {
    std::fprintf(stderr,
                 "replay_sshd: needs --host-key FILE and --recordings DIR "
                 "(DIR/clean/scan.out, DIR/incident/scan.out, ...)\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  signal(SIGTERM, [](int) { g_stop = 1; });
  signal(SIGINT, [](int) { g_stop = 1; });
  ssh_init();
  if (std::getenv("REPLAY_SSHD_DEBUG") != nullptr) ssh_set_log_level(SSH_LOG_WARNING);
  ssh_bind bind = ssh_bind_new();
  ssh_bind_options_set(bind, SSH_BIND_OPTIONS_BINDADDR, "0.0.0.0");
  ssh_bind_options_set(bind, SSH_BIND_OPTIONS_BINDPORT, &port);
  ssh_bind_options_set(bind, SSH_BIND_OPTIONS_HOSTKEY, host_key.c_str());
  if (ssh_bind_listen(bind) != SSH_OK) {
    std::fprintf(stderr, "replay_sshd: listen: %s\n", ssh_get_error(bind));
    return 1;
  }
  // libssh listens with a backlog of 10: thousands of clients dialling at
  // once would complete the TCP handshake and never see a banner.
  listen(ssh_bind_get_fd(bind), 65535);
  sockaddr_in bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(ssh_bind_get_fd(bind), reinterpret_cast<sockaddr*>(&bound), &bound_len);
  std::printf("port %d\n", ntohs(bound.sin_port));
  std::fflush(stdout);

  int listen_fd = ssh_bind_get_fd(bind);
  size_t accepted = 0;
  while (!g_stop) {
    pollfd pfd{listen_fd, POLLIN, 0};
    if (poll(&pfd, 1, 200) <= 0 || (pfd.revents & POLLIN) == 0) continue;
    auto s = std::make_unique<Session>();
    s->ssh = ssh_new();
    if (ssh_bind_accept(bind, s->ssh) != SSH_OK) {
      ssh_free(s->ssh);
      continue;
    }
    ++accepted;
    s->profile = LocalProfile(ssh_get_fd(s->ssh));
    if (s->profile.empty() || s->profile == "unreachable") {
      linger reset{1, 0};  // closed with a RST, before the banner
      setsockopt(ssh_get_fd(s->ssh), SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
      ssh_free(s->ssh);
      continue;
    }
    std::thread(Serve, std::move(s)).detach();
  }
  std::fprintf(stderr, "replay_sshd: %zu connections accepted\n", accepted);
  ssh_bind_free(bind);
  ssh_finalize();
  return 0;
}
