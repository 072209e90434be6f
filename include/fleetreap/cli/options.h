// Options: everything the command line sets, as plain values. Parsed by
// cli.cc (Boost.Program_options); turned into the library's settings by
// wiring.h. Only src/cli/ and src/main.cc see it.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/model/scope.h"
#include "fleetreap/transport/host_key_policy.h"

namespace fleetreap {

struct Options {
  // selection
  std::vector<std::string> hosts;  // --hosts / -i, repeatable: sources in order
  std::string limit;               // --limit
  bool list_hosts = false;         // --list-hosts
  bool local = false;              // --local: this machine, no SSH
  std::string nodes;               // --nodes NODESET: hosts in no inventory
  std::string exclude;             // --exclude NODESET: left out of the selection
  bool show_config = false;        // --show-config

  // connection
  int forks = 64;
  bool fanout_threads = false;  // --fanout threads: a thread per host in flight
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds command_timeout{60000};
  std::chrono::milliseconds host_timeout{0};  // 0: none
  std::chrono::milliseconds deadline{0};      // 0: none
  int retries = 2;
  std::string user;         // --user, default for hosts without one
  std::string identity;     // --identity
  std::string known_hosts;  // --known-hosts, default ~/.ssh/known_hosts
  HostKeyPolicy host_key_policy = HostKeyPolicy::kStrict;
  bool ssh_config = false;      // --ssh-config (or --ssh-config-file)
  std::string ssh_config_file;  // --ssh-config-file, "" = ~/.ssh/config
  bool become = false;          // --become
  bool no_agent = false;        // --no-agent

  // waves (wave_plan.h)
  int canary = 0;        // --canary N: a first wave of N hosts
  std::string waves;     // --waves 1,10%,100%
  std::string wave_by;   // --wave-by VAR: waves of whole units of a host variable
  std::string max_fail;  // --max-fail N|P%

  // escalation
  std::string playbook;  // --playbook, "" = built-in default
  bool dry_run = false;
  std::vector<std::string> protect;  // --protect, repeatable
  /// --gpus LIST, --cgroup PATH and --spare-pods as parsed (source "flags"
  /// when one is given); wiring's RunScopeFor adds a Slurm job's scope.
  Scope scope;

  // output
  std::string json;           // --json FILE or -
  std::string junit;          // --junit FILE
  std::string summary_md;     // --summary-md FILE
  std::string log_dir;        // --log-dir DIR
  std::string failed_hosts;   // --failed-hosts FILE
  std::string drain_reasons;  // --drain-reasons FILE: "HOST REASON" lines
  std::string metrics;        // --metrics FILE: Prometheus textfile
  std::string html;           // --html FILE: one self-contained page
  std::string journal;        // --journal FILE, "" = beside --json, "none" = no journal
  bool no_redact = false;     // --no-redact: keep secrets in command lines
  bool quiet = false;
  int verbosity = 0;           // -v, -vv
  std::string color = "auto";  // --color auto|always|never

  // fleetreap sweep
  std::chrono::milliseconds sweep_interval{600000};  // --interval
  int sweep_rounds = 0;                              // --rounds, 0: until SIGTERM

  // fleetreap merge REPORT.json...
  std::vector<std::string> merge_reports;
  std::string merge_expect;  // --expect FILE: hosts whose reports must be there
};

}  // namespace fleetreap
