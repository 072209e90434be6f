// The flag tables of cli_flags.h.
#include "cli_flags.h"

#include "cli_output.h"
#include "fleetreap/cli/wave_flags.h"

namespace po = boost::program_options;

namespace fleetreap {
namespace cli_internal {
namespace {

// The flag tables keep one flag per line, as --help prints them, a
// function per section of --help.
// clang-format off
po::options_description SelectionFlags(Options* o) {
  po::options_description selection("Selection", kHelpWidth, kHelpWidth / 2);
  selection.add_options()
      ("hosts,i", po::value(&o->hosts)->value_name("SOURCE")->composing(),
       "Ansible inventory as ansible -i takes it (repeatable): YAML, INI, a directory, a script, "
       "ansible-inventory --list JSON, a plugin file, h1,h2,; slurm:PARTITION (sinfo)")
      ("limit,l", po::value(&o->limit)->value_name("PATTERN"),
       "Ansible host pattern: groups, globs, ~regex, g[0], ',' ':' '&' '!'; ranges, @FILE")
      ("list-hosts", po::bool_switch(&o->list_hosts),
       "print the selected hosts and exit (-v: all settings, --json -: JSON)")
      ("local", po::bool_switch(&o->local),
       "run the escalation on this machine, without SSH (epilog, DaemonSet)")
      ("nodes,w", po::value(&o->nodes)->value_name("NODESET"),
       "hosts in no inventory, ClusterShell node sets as clush -w: 'gpu[01-08],login1'")
      ("exclude,x", po::value(&o->exclude)->value_name("NODESET"),
       "leave these hosts out of the selection, as clush -x: 'gpu[03,05]'")
      ("show-config", po::bool_switch(&o->show_config),
       "print each effective setting and where it came from, and exit");
  return selection;
}

// The connection's flags: how many hosts and how long, then the SSH login.
void AddSshFlags(po::options_description* connection, Options* o, RawFlags* raw) {
  connection->add_options()
      ("user,u", po::value(&o->user)->value_name("USER"),
       "login user for hosts that set none (default: local user)")
      ("identity", po::value(&o->identity)->value_name("FILE"),
       "private key (the inventory's key file wins for its hosts); Ansible's "
       "--private-key is read as this")
      ("known-hosts", po::value(&o->known_hosts)->value_name("FILE"),
       "your known_hosts file, the one accept-new writes (default "
       "~/.ssh/known_hosts); /etc/ssh/ssh_known_hosts is read too")
      ("host-key-policy", po::value(&raw->host_key_policy)->value_name("POLICY"),
       "strict | accept-new | off (default strict)")
      ("no-agent", po::bool_switch(&o->no_agent),
       "never ask ssh-agent for keys")
      ("ssh-config", po::bool_switch(&o->ssh_config),
       "read ~/.ssh/config (User, Port, IdentityFile, ProxyJump, ProxyCommand)")
      ("ssh-config-file", po::value(&o->ssh_config_file)->value_name("FILE"),
       "read this OpenSSH config instead (implies --ssh-config)")
      ("become,b", po::bool_switch(&o->become),
       "run host commands under sudo -n");
}

po::options_description ConnectionFlags(Options* o, RawFlags* raw) {
  po::options_description connection("Connection", kHelpWidth, kHelpWidth / 2);
  connection.add_options()
      ("forks,f", po::value(&o->forks)->value_name("N")->default_value(64),
       "hosts in flight at once")
      ("fanout", po::value(&raw->fanout)->value_name("HOW"),
       "fibers (default: a few loop threads carry every host in flight) or threads "
       "(one thread per host in flight, --forks at most 4096)")
      ("connect-timeout", po::value(&raw->connect_timeout)->value_name("DUR"),
       "TCP, banner, key exchange and authentication, ssh-agent included "
       "(default 10s)")
      ("command-timeout", po::value(&raw->command_timeout)->value_name("DUR"),
       "each remote command, also enforced on the host (default 60s)")
      ("host-timeout", po::value(&raw->host_timeout)->value_name("DUR"),
       "the whole escalation on one host (default: none)")
      ("deadline", po::value(&raw->deadline)->value_name("DUR"),
       "the whole run (default: none)")
      ("retries", po::value(&o->retries)->value_name("N")->default_value(2),
       "retries of transient connection errors, with backoff");
  AddSshFlags(&connection, o, raw);
  return connection;
}

po::options_description WaveFlags(Options* o) {
  po::options_description waves("Waves", kHelpWidth, kHelpWidth / 2);
  waves.add_options()
      ("canary", po::value(&o->canary)->value_name("N"),
       "a first wave of N hosts (N units with --wave-by), then the rest")
      ("waves", po::value(&o->waves)->value_name("SIZES"),
       "run in waves of these sizes, as Ansible's serial: 1,10%,100% (the last repeats)")
      ("wave-by", po::value(&o->wave_by)->value_name("VAR"),
       "waves of whole units of this host variable (rack): sizes count its values; "
       "one value a wave by default")
      ("max-fail", po::value(&o->max_fail)->value_name("N|P%"),
       "start no further wave once more than N hosts failed, or more than P% of a wave "
       "(failed: not clean, unreachable included); needs --canary, --waves or --wave-by");
  return waves;
}

po::options_description EscalationFlags(Options* o, RawFlags* raw) {
  po::options_description escalation("Escalation", kHelpWidth, kHelpWidth / 2);
  escalation.add_options()
      ("playbook,p", po::value(&o->playbook)->value_name("FILE"),
       "playbook YAML (default: the built-in playbooks/default.yaml)")
      ("dry-run,n", po::bool_switch(&o->dry_run),
       "inspect only; report what would be signalled and removed (Ansible's -C, "
       "--check)")
      ("protect", po::value(&o->protect)->value_name("NAME|PATH")->composing(),
       "never signal this executable (repeatable), on top of the defaults")
      ("gpus", po::value(&raw->gpus)->value_name("LIST"),
       "act only on holders whose GPUs are all in LIST (0,2,4-7: nvidia-smi indexes;"
       " minor:0-3: device minors, the N of /dev/nvidiaN)")
      ("cgroup", po::value(&raw->cgroup)->value_name("PATH"),
       "act only on processes in this cgroup subtree (/system.slice/x.service)")
      ("spare-pods", po::bool_switch(&o->scope.spare_pods),
       "never act on a process that a Kubernetes pod owns (its cgroup names the pod)");
  return escalation;
}

po::options_description OutputFlags(Options* o) {
  po::options_description output("Output", kHelpWidth, kHelpWidth / 2);
  AddReportFlags(output.add_options(), o);
  output.add_options()
      ("log-dir", po::value(&o->log_dir)->value_name("DIR"),
       "write one log per host: every command, exit code, output")
      ("quiet,q", po::bool_switch(&o->quiet), "only the final table and errors")
      (",v", "more log detail on stderr; -vv for debug");
  return output;
}

po::options_description GeneralFlags() {
  po::options_description general("General", kHelpWidth, kHelpWidth / 2);
  general.add_options()
      ("help,h", "print this help and exit")
      ("version,V", "print the version, the commit and the libraries' versions");
  return general;
}

// clang-format on

}  // namespace

po::options_description Describe(Options* o, RawFlags* raw) {
  po::options_description all(kHelpWidth, kHelpWidth / 2);
  all.add(SelectionFlags(o))
      .add(ConnectionFlags(o, raw))
      .add(WaveFlags(o))
      .add(EscalationFlags(o, raw))
      .add(OutputFlags(o))
      .add(GeneralFlags());
  return all;
}

}  // namespace cli_internal
}  // namespace fleetreap
