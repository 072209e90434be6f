#!/bin/sh
# fleetreap-gate.sh: the fleetreap step of a pre-rollout CI job, shared by
# github-actions.yml and gitlab-ci.yml. Installed by the package as
# /usr/share/fleetreap/contrib/ci/fleetreap-gate.sh, where the templates
# call it (FLEETREAP_GATE overrides that path).
#
# Empties the GPUs of every host in the inventory (with FLEETREAP_DRY_RUN=1
# only inspects them and prints the plan) and exits with fleetreap's own
# code, so a non-zero exit fails the job and the rollout job that needs it
# never starts:
#   0      every selected host clean (a dry run: every host inspected)
#   1      bit 1: a reached host is not clean (dirty, or not ready)
#   2      bit 2: a host unreachable, failed or never started
#   3      both
#   4-7    bit 4: --max-fail stopped the waves (with bits 1 and 2)
#   64     bad flags (FLEETREAP_ARGS), or a missing secret file
#   65     invalid inventory or playbook
#   70     internal error, or a report could not be written
#   78     unreadable configuration file
#
# Inputs (environment; paths, as GitLab's "File" variables give them):
#   FLEETREAP_INVENTORY     Ansible inventory (YAML or INI)            required
#   FLEETREAP_SSH_KEY       private key for the hosts (--identity)     required
#   FLEETREAP_KNOWN_HOSTS   known_hosts with the hosts' keys           required
#   FLEETREAP_OUT           report directory (default: fleetreap-out)
#   FLEETREAP_BIN           the binary (default: fleetreap on PATH)
#   FLEETREAP_LIMIT         one --limit pattern, passed as it is: h200:&rack_b1
#   FLEETREAP_DRY_RUN       1: --dry-run (inspect, change nothing, print the plan)
#   FLEETREAP_ARGS          extra flags, split into words as a shell splits them:
#                           --limit 'h200:&rack_b1' --playbook "/etc/fleetreap/my vllm.yaml"
#                           (blanks separate words, '...' and "..." group, \ outside
#                           them escapes one character; nothing is expanded or
#                           globbed: $X, $(...), * stay as written)
# Outputs in FLEETREAP_OUT: report.json, junit.xml, summary.md, report.html,
# failed-hosts.txt, exit-code. To re-run only the hosts that were not clean,
# set FLEETREAP_LIMIT=@fleetreap-out/failed-hosts.txt: when that file is
# empty (nothing failed) fleetreap selects no host, says so, and exits 0.
set -u
set -f   # no globbing anywhere (--limit 'gpu0*')

out=${FLEETREAP_OUT:-fleetreap-out}
bin=${FLEETREAP_BIN:-fleetreap}
for var in FLEETREAP_INVENTORY FLEETREAP_SSH_KEY FLEETREAP_KNOWN_HOSTS; do
  eval "value=\${$var:-}"
  if [ -z "$value" ] || [ ! -r "$value" ]; then
    echo "fleetreap-gate: $var must name a readable file (from the CI's secrets)" >&2
    exit 64
  fi
done

# FLEETREAP_ARGS into "$@". xargs splits words with a shell's quotes and
# backslashes and expands nothing; each word comes back on a line of its
# own inside <>, so that an empty word ('') stays a word. A quote left open
# (or a quoted word across lines) is refused, as a shell would refuse it.
set --
args=${FLEETREAP_ARGS:-}
case $args in
  *[![:space:]]*)
    if ! words=$(printf '%s\n' "$args" | xargs printf '<%s>\n' 2>/dev/null); then
      echo "fleetreap-gate: FLEETREAP_ARGS: a quote is not closed: $args" >&2
      exit 64
    fi
    while IFS= read -r word; do
      word=${word#<}
      set -- "$@" "${word%>}"
    done <<WORDS
$words
WORDS
    ;;
esac
if [ -n "${FLEETREAP_LIMIT:-}" ]; then set -- --limit "$FLEETREAP_LIMIT" "$@"; fi
case ${FLEETREAP_DRY_RUN:-} in
  '' | 0) ;;
  1) set -- --dry-run "$@" ;;
  *)
    echo "fleetreap-gate: FLEETREAP_DRY_RUN must be 1 or empty, not '$FLEETREAP_DRY_RUN'" >&2
    exit 64
    ;;
esac

mkdir -p "$out" || exit 70
# The key is a secret: private permissions, as ssh requires.
chmod 600 "$FLEETREAP_SSH_KEY" 2>/dev/null

"$bin" --hosts "$FLEETREAP_INVENTORY" --identity "$FLEETREAP_SSH_KEY" \
  --known-hosts "$FLEETREAP_KNOWN_HOSTS" --host-key-policy strict --no-agent --color never \
  --json "$out/report.json" --junit "$out/junit.xml" --summary-md "$out/summary.md" \
  --html "$out/report.html" --failed-hosts "$out/failed-hosts.txt" "$@"
rc=$?
echo "$rc" > "$out/exit-code"
exit "$rc"
