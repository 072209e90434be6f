// The ansible_* variable names ansible-core 2.14 knows (connection, become,
// interpreter and inventory variables, from its ssh, local and paramiko
// connection plugins, the sudo/su become plugins and the magic variables),
// and the check that warns about a name one or two edits away from one of
// them (ansible_hots), which Ansible would silently take as a new variable.
// Pure functions; thread-safe.
#include <algorithm>
#include <string>
#include <vector>

#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {
namespace {

constexpr const char* kAnsibleNames[] = {
    "ansible_host",
    "ansible_ssh_host",
    "ansible_port",
    "ansible_ssh_port",
    "ansible_user",
    "ansible_ssh_user",
    "ansible_password",
    "ansible_ssh_pass",
    "ansible_ssh_password",
    "ansible_private_key_file",
    "ansible_ssh_private_key_file",
    "ansible_connection",
    "ansible_timeout",
    "ansible_ssh_timeout",
    "ansible_ssh_common_args",
    "ansible_ssh_extra_args",
    "ansible_scp_extra_args",
    "ansible_sftp_extra_args",
    "ansible_ssh_args",
    "ansible_ssh_executable",
    "ansible_ssh_pipelining",
    "ansible_pipelining",
    "ansible_ssh_retries",
    "ansible_ssh_transfer_method",
    "ansible_scp_if_ssh",
    "ansible_host_key_checking",
    "ansible_ssh_host_key_checking",
    "ansible_ssh_use_tty",
    "ansible_control_path",
    "ansible_control_path_dir",
    "ansible_become",
    "ansible_become_user",
    "ansible_become_method",
    "ansible_become_pass",
    "ansible_become_password",
    "ansible_become_exe",
    "ansible_become_flags",
    "ansible_sudo",
    "ansible_sudo_user",
    "ansible_sudo_pass",
    "ansible_sudo_exe",
    "ansible_sudo_flags",
    "ansible_su",
    "ansible_su_user",
    "ansible_su_pass",
    "ansible_su_exe",
    "ansible_su_flags",
    "ansible_python_interpreter",
    "ansible_shell_type",
    "ansible_shell_executable",
    "ansible_group_priority",
    "ansible_network_os",
    "ansible_remote_tmp",
    "ansible_module_compression",
    "ansible_facts",
    "ansible_play_hosts",
    "ansible_limit",
    "ansible_check_mode",
    "ansible_winrm_transport",
    "ansible_winrm_scheme",
    "ansible_winrm_server_cert_validation",
    "ansible_paramiko_host_key_checking",
    "ansible_paramiko_look_for_keys",
    "ansible_ssh_private_key",
    "ansible_httpapi_port",
    "ansible_httpapi_use_ssl",
    "ansible_docker_extra_args",
    "ansible_kubectl_namespace",
    "ansible_async_dir",
    "ansible_distribution",
    "ansible_os_family",
    "ansible_hostname",
    "ansible_fqdn",
};

// Damerau-Levenshtein distance (adjacent transpositions count one), capped
// at "cap" + 1.
size_t EditDistance(const std::string& a, const std::string& b, size_t cap) {
  const size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > cap) return cap + 1;
  std::vector<std::vector<size_t>> d(n + 1, std::vector<size_t>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::string AnsibleNameTypo(const std::string& name) {
  if (name.rfind("ansible_", 0) != 0) return "";
  std::string best;
  size_t best_distance = 3;
  for (const char* known : kAnsibleNames) {
    if (name == known) return "";
    size_t distance = EditDistance(name, known, 2);
    if (distance < best_distance) {
      best_distance = distance;
      best = known;
    }
  }
  if (best.empty()) return "";
  return name + " is not a variable Ansible knows; did you mean " + best + "?";
}

}  // namespace inventory_internal
}  // namespace fleetreap
