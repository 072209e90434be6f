#include "fleetreap/cli/wiring.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "fleetreap/escalation/scope.h"
#include "fleetreap/report/terminal.h"
#include "fleetreap/transport/local_transport.h"
#include "fleetreap/transport/proxy_pacer.h"
#include "fleetreap/transport/ssh_jump.h"
#include "fleetreap/version.h"

namespace fleetreap {

FleetPlanRequest FleetPlanRequestFor(const Options& options) {
  FleetPlanRequest request;
  request.local = options.local;
  request.hosts = options.hosts;
  request.limit = options.limit;
  request.nodes = options.nodes;
  request.exclude = options.exclude;
  request.playbook = options.playbook;
  request.become = options.become;
  request.command_timeout = options.command_timeout;
  return request;
}

FleetSettings FleetSettingsFor(const Options& options) {
  FleetSettings settings;
  settings.forks = std::max(options.forks, 1);
  // --local runs one host on this machine: on a thread, as before fibers.
  settings.fanout = options.fanout_threads || options.local ? Fanout::kThreads : Fanout::kFibers;
  settings.command_timeout = options.command_timeout;
  settings.host_timeout = options.host_timeout;
  settings.deadline = options.deadline;
  settings.retries = std::max(options.retries, 0);
  settings.dry_run = options.dry_run;
  settings.extra_protect = options.protect;
  return settings;
}

Environment ProcessEnvironment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t eq = text.find('=');
    if (eq != std::string::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
}

Status RunScopeFor(const Options& options, const Environment& env, Scope* scope) {
  *scope = options.scope;
  if (scope->gpus || !scope->cgroup.empty() || !options.local) return Status::Ok();
  // A Slurm prolog or epilog runs with the job's SLURM_JOB_ID and outside
  // any step; an srun task (a fleet-wide run) has a SLURM_STEP_ID and acts
  // on the whole node, or on --gpus / --cgroup.
  auto job = env.find("SLURM_JOB_ID");
  if (env.count("SLURM_STEP_ID") || job == env.end() || job->second.empty()) return Status::Ok();
  auto gpus = env.find("SLURM_JOB_GPUS");
  Scope slurm;
  Status status = SlurmScope(job->second, gpus == env.end() ? "" : gpus->second, &slurm);
  slurm.spare_pods = options.scope.spare_pods;
  *scope = slurm;
  return status;
}

SshTransportOptions SshOptionsFor(const Host& host, const Options& options) {
  SshTransportOptions ssh;
  ssh.name = host.name;
  ssh.address = host.address.empty() ? host.name : host.address;
  ssh.port = host.port;
  ssh.user = host.user.empty() ? options.user : host.user;
  if (!host.identity_file.empty()) ssh.identity_files.push_back(host.identity_file);
  if (!options.identity.empty() && options.identity != host.identity_file) {
    ssh.identity_files.push_back(options.identity);
  }
  ssh.known_hosts = options.known_hosts;
  ssh.host_key_policy = options.host_key_policy;
  ssh.use_agent = !options.no_agent;
  ssh.connect_timeout = options.connect_timeout;
  ssh.use_ssh_config = options.ssh_config || !options.ssh_config_file.empty();
  ssh.ssh_config_file = options.ssh_config_file;
  return ssh;
}

std::string HostKeyPolicyWarning(const Options& options) {
  if (options.local || options.host_key_policy != HostKeyPolicy::kOff) return "";
  return "--host-key-policy off: host keys are NOT checked, so anyone on the network "
         "path can pose as any host, read what fleetreap sends and forge what it "
         "reports (with --become, as root); each host's offered key is recorded in "
         "the JSON report as host_key_fingerprint";
}

TransportFactory MakeTransportFactory(const Options& options, const CommandLog* log) {
  // Shared by every host of the run: one connection per ProxyJump bastion,
  // and the pacing of proxies to the same ProxyCommand.
  auto jumps = std::make_shared<SshJumps>();
  auto pacer = std::make_shared<ProxyPacer>();
  return [&options, log, jumps, pacer](const Host& host) -> std::unique_ptr<Transport> {
    std::unique_ptr<Transport> transport;
    if (options.local) {
      transport = std::make_unique<LocalTransport>();
    } else {
      SshTransportOptions ssh = SshOptionsFor(host, options);
      ssh.jumps = jumps;
      ssh.proxy_pacer = pacer;
      transport = std::make_unique<SshTransport>(std::move(ssh));
    }
    if (log != nullptr) transport = log->Wrap(host.name, std::move(transport));
    return transport;
  };
}

ProgressStyle ProgressStyleFor(const Options& options, std::FILE* stream) {
  ProgressStyle style;
  style.live = IsTerminal(stream);
  style.color = ShouldUseColorFor(stream, options.color);
  style.dry_run = options.dry_run;
  style.width = TerminalWidth(stream);
  return style;
}

ReportFiles ReportFilesFor(const Options& options) {
  ReportFiles files;
  files.json = options.json;
  files.junit = options.junit;
  files.summary_md = options.summary_md;
  files.failed_hosts = options.failed_hosts;
  files.drain_reasons = options.drain_reasons;
  files.metrics = options.metrics;
  files.html = options.html;
  return files;
}

std::string JournalPathFor(const Options& options) {
  if (options.journal == "none") return "";
  if (!options.journal.empty()) return options.journal;
  if (options.json.empty() || options.json == "-") return "";
  return options.json + ".journal";
}

void SetRunMetadata(const Options& options, const std::string& playbook_name, RunReport* report) {
  report->tool_version = FLEETREAP_VERSION;
  report->playbook = playbook_name;
  report->host_key_policy = options.local ? "" : HostKeyPolicyName(options.host_key_policy);
}

RunReport RunHeaderFor(const Options& options, const std::string& playbook_name,
                       const Scope& scope) {
  RunReport header;
  SetRunMetadata(options, playbook_name, &header);
  header.dry_run = options.dry_run;
  header.scope = scope;
  header.start_time = std::chrono::system_clock::now();
  return header;
}

void RaiseDescriptorLimit(int hosts_in_flight) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t wanted = static_cast<rlim_t>(hosts_in_flight) * 4 + 256;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace fleetreap
