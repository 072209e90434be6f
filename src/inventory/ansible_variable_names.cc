// The ansible_* variable names ansible-core 2.14 knows (connection, become,
// interpreter and inventory variables, from its ssh, local and paramiko
// connection plugins, the sudo/su become plugins and the magic variables),
// and the check that warns about a name one or two edits away from one of
// them (ansible_hots), which Ansible would silently take as a new variable.
// Pure functions; thread-safe.
#include <iterator>
#include <string>
#include <vector>

#include "fleetreap/base/closest_name.h"
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

}  // namespace

std::string AnsibleNameTypo(const std::string& name) {
  if (name.rfind("ansible_", 0) != 0) return "";
  static const std::vector<std::string> known(std::begin(kAnsibleNames), std::end(kAnsibleNames));
  const std::string best = ClosestName(name, known);
  if (best.empty() || best == name) return "";
  return name + " is not a variable Ansible knows; did you mean " + best + "?";
}

}  // namespace inventory_internal
}  // namespace fleetreap
