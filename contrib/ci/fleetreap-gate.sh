#!/bin/sh
# fleetreap-gate.sh: the fleetreap step of a pre-rollout CI job, shared by
# contrib/ci/github-actions.yml and contrib/ci/gitlab-ci.yml.
#
# Empties the GPUs of every host in the inventory and exits with fleetreap's
# own code (0 every host clean; 1 a reached host is not clean; 2 a host
# unreachable or failed; 3 both; 64/65 bad flags or inventory), so a
# non-zero exit fails the job and the rollout job that needs it never starts.
#
# Inputs (environment; paths, as GitLab's "File" variables give them):
#   FLEETREAP_INVENTORY     Ansible inventory (YAML or INI)            required
#   FLEETREAP_SSH_KEY       private key for the hosts (--identity)     required
#   FLEETREAP_KNOWN_HOSTS   known_hosts with the hosts' keys           required
#   FLEETREAP_OUT           report directory (default: fleetreap-out)
#   FLEETREAP_BIN           the binary (default: fleetreap on PATH)
#   FLEETREAP_ARGS          extra flags, split on spaces (--limit, --playbook, --become ...)
# Outputs in FLEETREAP_OUT: report.json, junit.xml, summary.md,
# failed-hosts.txt (re-run with --limit @failed-hosts.txt), exit-code.
set -u
set -f   # FLEETREAP_ARGS is split on spaces, never globbed (--limit 'gpu0*')

out=${FLEETREAP_OUT:-fleetreap-out}
bin=${FLEETREAP_BIN:-fleetreap}
for var in FLEETREAP_INVENTORY FLEETREAP_SSH_KEY FLEETREAP_KNOWN_HOSTS; do
  eval "value=\${$var:-}"
  if [ -z "$value" ] || [ ! -r "$value" ]; then
    echo "fleetreap-gate: $var must name a readable file (from the CI's secrets)" >&2
    exit 64
  fi
done
mkdir -p "$out" || exit 70
# The key is a secret: private permissions, as ssh requires.
chmod 600 "$FLEETREAP_SSH_KEY" 2>/dev/null

# shellcheck disable=SC2086  # FLEETREAP_ARGS is a list of flags
"$bin" --hosts "$FLEETREAP_INVENTORY" --identity "$FLEETREAP_SSH_KEY" \
  --known-hosts "$FLEETREAP_KNOWN_HOSTS" --host-key-policy strict --no-agent --color never \
  --json "$out/report.json" --junit "$out/junit.xml" --summary-md "$out/summary.md" \
  --failed-hosts "$out/failed-hosts.txt" ${FLEETREAP_ARGS:-}
rc=$?
echo "$rc" > "$out/exit-code"
exit "$rc"
