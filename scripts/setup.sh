#!/usr/bin/env bash
# Installs what fleetreap needs, from Debian 12 packages:
#   scripts/setup.sh demo   what scripts/demo.sh needs: the build of fleetreap
#                           and the simulator's tools, and what a simulated
#                           host runs (sshd, tini, sudo): 23 packages
#   scripts/setup.sh        (or "test") that and what the tests, lint and
#                           packaging need on top (clang, clang-tidy, Chromium,
#                           ansible-core, ClusterShell, Slurm, rpm, lintian, ...)
# Idempotent and quiet when everything is there; never starts or enables the
# machine's own sshd (the simulated fleet runs its own sshd processes).
set -euo pipefail

what=${1:-test}
case $what in
  demo | test) ;;
  *) echo "setup: unknown set '$what' (demo or test)" >&2; exit 64 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config
  libssh-dev libboost-program-options-dev libyaml-cpp-dev nlohmann-json3-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev  # GoogleTest: the build's configure step asks for it
  openssh-server openssh-client psmisc procps tini sudo python3 util-linux iproute2 coreutils
)
if [ "$what" = test ]; then
  packages+=(
    ccache clang libclang-rt-14-dev python3-jsonschema
    clang-format clang-tidy shellcheck  # scripts/lint.sh: formatting, clang-tidy, shellcheck (clang-tidy brings run-clang-tidy)
    python3-prometheus-client  # tests only: the exposition format's reference parser (tests/integration/test_metrics.py)
    chromium  # tests only: the headless browser that renders --html (tests/integration/test_html.py)
    ansible-core  # tests only: the oracle of tests/integration/test_ansible_compat.py
    clustershell  # tests only: nodeset -e, the oracle of --nodes (test_nodeset_compat.py)
    slurmctld slurmd slurm-client munge  # tests only: the real Slurm of the simulated fleet (never started as the machine's services)
    rpm lintian zsh groff-base man-db cpio  # the .rpm (rpmbuild), and tests/checks/package_test.py: lintian, man pages, zsh completion
  )
fi

# Tests only: Debian's kubectl (kubernetes-client) for the client-side check
# of contrib/k8s/, unpacked into a private directory, never installed (it
# conflicts with other kubectl packages on /usr/bin/kubectl).
kube_dir=/var/cache/fleetreap-test/kubernetes-client
if [ "$what" = test ] && [ ! -x "$kube_dir/usr/bin/kubectl" ] && [ "$(id -u)" -eq 0 ]; then
  kube_tmp=$(mktemp -d)
  if (cd "$kube_tmp" && { apt-get download -qq kubernetes-client >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1; apt-get download -qq kubernetes-client >/dev/null 2>&1; }; } &&
      mkdir -p "$kube_dir.new" && dpkg-deb -x kubernetes-client_*.deb "$kube_dir.new"); then
    rm -rf "$kube_dir" && mv "$kube_dir.new" "$kube_dir"
  else
    echo "setup: could not fetch Debian's kubernetes-client (tests/integration/test_contrib_k8s.py skips)" >&2
  fi
  rm -rf "$kube_tmp" "$kube_dir.new"
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi

had_sshd=0
dpkg-query -W -f='${Status}' openssh-server 2>/dev/null | grep -q 'ok installed' && had_sshd=1

echo "setup: installing ${missing[*]}" >&2
# policy-rc.d keeps package scripts from starting services while we install.
created_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod +x /usr/sbin/policy-rc.d
  created_policy=1
fi
trap 'if [ $created_policy -eq 1 ]; then rm -f /usr/sbin/policy-rc.d; fi' EXIT

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

if [ $had_sshd -eq 0 ]; then
  # A machine that had no sshd before gets none now: Debian's ssh.service
  # refuses to start while this file exists, and the unit is not enabled.
  touch /etc/ssh/sshd_not_to_be_run
  if command -v deb-systemd-helper >/dev/null; then
    deb-systemd-helper disable ssh.service ssh.socket >/dev/null 2>&1 || true
  fi
fi
echo "setup: done" >&2
