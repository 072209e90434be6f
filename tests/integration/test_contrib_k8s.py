"""contrib/k8s/ and --spare-pods.

Manifests: no cluster runs here, so Debian's kubectl 1.20 (kubernetes-client,
unpacked by scripts/setup.sh into /var/cache/fleetreap-test/kubernetes-client,
never installed) checks what it can offline: `kubectl set env --local -f F
-o json` decodes each workload into kubectl's typed Go structs (batch/v1 Job,
apps/v1 DaemonSet) and prints it back. A wrong type (hostPID: "yes"), an
unknown apiVersion or kind fail the decode; a field the structs do not have
(a typo, hostPid, a field of a newer Kubernetes) is dropped, so the test
requires every field of the file to come back with its value. `kubectl label
--local` parses the Namespace. Server-side validation (required fields,
admission, Pod Security) needs an API server and is not checked. Then the
manifests' own rules: host PID namespace, privileged, /dev, read-only
/sys/fs/cgroup, the reports volume, `--local --spare-pods`, and the node
affinity evaluated against every state of the GPU Operator's
nvidia.com/gpu-driver-upgrade-state label.

--spare-pods end to end: `fleetreap --local --spare-pods` run inside
simulated Kubernetes GPU nodes (the GPU Operator's agents in pod containers,
a serving pod on GPU 5, orphaned workers outside any pod), from a pod cgroup
as the DaemonSet runs it, checked against the fleet's ground truth. Needs root,
writable cgroups, FLEETREAP_BIN and FLEETREAP_SIM_BIN_DIR.
"""

import copy
import json
import os
import subprocess
import tempfile
import unittest

import yaml

from fleet_case import SOURCE, FleetCase, needs_cgroups, run_local
import host_setup
from scenarios import scenario
from simfleet import HostSpec

K8S_DIR = os.path.join(SOURCE, "contrib", "k8s")
KUBECTL = "/var/cache/fleetreap-test/kubernetes-client/usr/bin/kubectl"
MANIFESTS = ("fleetreap-daemonset.yaml", "fleetreap-job.yaml", "fleetreap-sweep-daemonset.yaml")
UPGRADE_LABEL = "nvidia.com/gpu-driver-upgrade-state"
# NVIDIA/k8s-operator-libs pkg/upgrade/consts.go (the GPU Operator sets the
# driver name "gpu"): "" is UpgradeStateUnknown (not processed, or upgrades
# disabled), upgrade-done the end; every other state is an upgrade in
# progress, or failed.
UPGRADE_STATES_IDLE = ("", "upgrade-done")
UPGRADE_STATES_BUSY = ("upgrade-required", "cordon-required", "wait-for-jobs-required",
                       "pod-deletion-required", "drain-required",
                       "node-maintenance-required", "post-maintenance-required",
                       "pod-restart-required", "validation-required", "uncordon-required",
                       "upgrade-failed")
CHECK_VAR = "FLEETREAP_KUBECTL_CHECK"


def documents(name):
    with open(os.path.join(K8S_DIR, name)) as f:
        return [d for d in yaml.safe_load_all(f.read().replace("NODE", "gpu-node-01")) if d]


def pod_spec(doc):
    return doc["spec"]["template"]["spec"]


def missing_fields(given, decoded, path=""):
    """The fields of 'given' that 'decoded' lacks or changed; a zero value
    may be absent (Go's omitempty)."""
    if isinstance(given, dict):
        if not isinstance(decoded, dict):
            return [path or "/"]
        out = []
        for key, value in given.items():
            if key not in decoded:
                if value not in ("", 0, False, [], {}, None):
                    out.append(f"{path}/{key}")
                continue
            out += missing_fields(value, decoded[key], f"{path}/{key}")
        return out
    if isinstance(given, list):
        if not isinstance(decoded, list) or len(decoded) < len(given):
            return [path]
        return [p for i, v in enumerate(given)
                for p in missing_fields(v, decoded[i], f"{path}[{i}]")]
    return [] if given == decoded else [f"{path}: {given!r} came back as {decoded!r}"]


def node_matches(terms, labels):
    """requiredDuringScheduling node affinity: any term, all its expressions."""
    def expression(e):
        key, op, values = e["key"], e["operator"], e.get("values", [])
        if op == "In":
            return key in labels and labels[key] in values
        if op == "NotIn":
            return key not in labels or labels[key] not in values
        if op == "Exists":
            return key in labels
        if op == "DoesNotExist":
            return key not in labels
        raise AssertionError(f"operator {op} not handled")
    return any(all(expression(e) for e in t["matchExpressions"]) for t in terms)


@unittest.skipUnless(os.access(KUBECTL, os.X_OK),
                     f"no {KUBECTL} (scripts/setup.sh unpacks Debian's kubernetes-client)")
class KubectlTest(unittest.TestCase):
    def kubectl_decode(self, doc):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(doc, f)
            f.flush()
            if "template" in doc.get("spec", {}):
                argv = [KUBECTL, "set", "env", "--local", "-f", f.name, f"{CHECK_VAR}=1",
                        "-o", "json"]
            else:
                argv = [KUBECTL, "label", "--local", "-f", f.name, f"{CHECK_VAR}=1", "-o", "json"]
            proc = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                                  timeout=60, env={"PATH": "/usr/bin:/bin",
                                                   "HOME": "/nonexistent",
                                                   "KUBECONFIG": "/dev/null"})
        return proc, (json.loads(proc.stdout) if proc.returncode == 0 else None)

    def test_kubectl_decodes_every_field(self):
        self.assertIn("v1.20", subprocess.run([KUBECTL, "version", "--client", "--short"],
                                              capture_output=True, text=True).stdout)
        for name in MANIFESTS:
            for doc in documents(name):
                with self.subTest(manifest=name, kind=doc["kind"]):
                    proc, decoded = self.kubectl_decode(doc)
                    self.assertEqual(proc.returncode, 0, proc.stderr)
                    if "template" in doc.get("spec", {}):
                        for c in pod_spec(decoded)["containers"]:
                            c["env"] = [e for e in c["env"] if e["name"] != CHECK_VAR]
                    else:
                        del decoded["metadata"]["labels"][CHECK_VAR]
                    self.assertEqual(missing_fields(doc, decoded), [])

    def test_the_check_catches_typos_types_and_versions(self):
        job = documents("fleetreap-job.yaml")[0]
        typo = copy.deepcopy(job)
        spec = typo["spec"]["template"]["spec"]
        spec["hostPid"] = spec.pop("hostPID")
        proc, decoded = self.kubectl_decode(typo)
        self.assertEqual(proc.returncode, 0)
        self.assertIn("/spec/template/spec/hostPid", missing_fields(typo, decoded))
        bad_type = copy.deepcopy(job)
        bad_type["spec"]["backoffLimit"] = "zero"
        self.assertNotEqual(self.kubectl_decode(bad_type)[0].returncode, 0)
        bad_version = copy.deepcopy(job)
        bad_version["apiVersion"] = "batch/v9"
        proc, _ = self.kubectl_decode(bad_version)
        self.assertIn('no kind "Job" is registered for version "batch/v9"', proc.stderr)


class ManifestRulesTest(unittest.TestCase):
    def test_what_fleetreap_needs_on_the_node(self):
        for name in MANIFESTS:
            workload = documents(name)[-1]
            spec = pod_spec(workload)
            with self.subTest(manifest=name):
                self.assertIs(spec["hostPID"], True)
                self.assertIs(spec["hostNetwork"], True)     # the node's hostname in reports
                self.assertIs(spec["automountServiceAccountToken"], False)
                (container,) = spec["containers"]
                self.assertIs(container["securityContext"]["privileged"], True)
                command = " ".join(container["args"])
                if name == "fleetreap-sweep-daemonset.yaml":
                    # Report only: the sweep subcommand, /dev/shm read-only.
                    self.assertIn("fleetreap sweep --local --spare-pods --interval", command)
                else:
                    self.assertIn("fleetreap --local --spare-pods", command)
                mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
                volumes = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
                self.assertEqual(volumes[mounts["/dev"]["name"]], "/dev")
                self.assertEqual(volumes[mounts["/dev/shm"]["name"]], "/dev/shm")
                self.assertEqual(volumes[mounts["/sys/fs/cgroup"]["name"]], "/sys/fs/cgroup")
                self.assertIs(mounts["/sys/fs/cgroup"]["readOnly"], True)
                if name == "fleetreap-sweep-daemonset.yaml":
                    self.assertIs(mounts["/dev/shm"]["readOnly"], True)
                    metrics = command.split("--metrics ")[1].split()[0]
                    self.assertEqual(volumes[mounts[os.path.dirname(metrics)]["name"]],
                                     os.path.dirname(metrics))
                self.assertEqual(volumes[mounts["/var/log/fleetreap"]["name"]],
                                 "/var/log/fleetreap")
                labels = workload["spec"]["template"]["metadata"]["labels"]
                if workload["kind"] == "DaemonSet":
                    self.assertEqual(workload["spec"]["selector"]["matchLabels"], labels)
                    self.assertIn("readinessProbe", container)
                else:
                    self.assertEqual(spec["restartPolicy"], "Never")
                    self.assertEqual(workload["spec"]["backoffLimit"], 0)
        namespace = documents("fleetreap-daemonset.yaml")[0]
        self.assertEqual(namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
                         "privileged")

    def test_nodes_mid_driver_upgrade_are_left_alone(self):
        for name in MANIFESTS:
            terms = pod_spec(documents(name)[-1])["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            gpu = {"nvidia.com/gpu.present": "true"}
            with self.subTest(manifest=name):
                self.assertTrue(node_matches(terms, gpu))
                self.assertFalse(node_matches(terms, {}))       # not a GPU node
                for state in UPGRADE_STATES_IDLE:
                    self.assertTrue(node_matches(terms, {**gpu, UPGRADE_LABEL: state}), state)
                for state in UPGRADE_STATES_BUSY:
                    self.assertFalse(node_matches(terms, {**gpu, UPGRADE_LABEL: state}), state)


SERVING_POD = "llm-serve-7d9f8b6c5-x2x4q"


def orphans(h):
    """4 orphaned vLLM workers on GPUs 0-3 in root's login session (started
    over SSH, their launcher gone): host.jobs["orphans"]."""
    pids = h.workload(gpus="0-3", mib=70000, title="VLLM::Worker_TP%d", detach=True,
                      visible="0-3")
    h.host.jobs["orphans"] = {"cgroup": host_setup.session_cgroup(0), "gpus": "0-3",
                              "user": "root", "parent": None,
                              "workers": sorted(p for k, p in pids.items() if k != "parent")}


@scenario
def k8s_gpu_node(h):
    """A Kubernetes GPU node: the GPU Operator's agents in their pod
    containers, a serving pod on GPU 5, and 4 orphaned workers on GPUs 0-3
    outside any pod."""
    h.all_daemons(container_root=True)
    h.k8s_pod(SERVING_POD, gpus="5", mib=61440)
    orphans(h)


@scenario
def k8s_drained_node(h):
    """The same node after `kubectl drain`: the serving pod is gone (its
    sandbox too), the operator's agents stay (DaemonSets), the orphans stay."""
    h.all_daemons(container_root=True)
    orphans(h)


@needs_cgroups
class SparePodsTest(FleetCase):
    PREFIX = "k8s-"
    SPECS = [HostSpec("node", scenario="k8s_gpu_node", bystanders=10),
             HostSpec("drained", scenario="k8s_drained_node", bystanders=10)]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.before = cls.fleet.ground_truth()

    def local_run(self, host):
        """fleetreap --local --spare-pods as the DaemonSet's pod runs it: in a
        pod container's cgroup of the node."""
        return run_local(self.fleet, host, "--spare-pods", "--command-timeout", "8s",
                         timeout=240,
                         cgroup=host_setup.pod_cgroup(host, "fleetreap-x7k2p", "fleetreap"))

    def assert_daemons_untouched(self, truth, host):
        self.assertEqual(len(truth["daemons"]), len(host_setup.DAEMONS))
        fates = {h["pid"]: h["fate"] for h in host["holders"]}
        for name, daemon in truth["daemons"].items():
            self.assertTrue(daemon["alive"], name)
            self.assertEqual(fates.get(daemon["pid"]), "protected", name)

    def test_pods_are_spared_orphans_reaped(self):
        rc, report = self.local_run("node")
        host = report["hosts"][0]
        truth = self.fleet.ground_truth()["node"]
        self.assertEqual(report["scope"]["spare_pods"], True)
        self.assertEqual(report["scope"]["description"], "Kubernetes pods spared")
        # The serving pod's worker is alive and was never signalled.
        pod = truth["jobs"][f"pod:{SERVING_POD}"]
        self.assertEqual(pod["workers_alive"], pod["workers"])
        self.assertEqual(pod["processes"],
                         self.before["node"]["jobs"][f"pod:{SERVING_POD}"]["processes"])
        uid = host_setup.pod_uid("node", SERVING_POD)
        in_pod = [h for h in host["holders"] if h["owner"]["pod_uid"] == uid]
        self.assertTrue(in_pod)
        for h in in_pod:
            self.assertEqual(h["fate"], "out_of_scope")
            self.assertEqual(h["out_of_scope"], f"owned by Kubernetes pod UID {uid} (--spare-pods)")
        # The orphans outside any pod are gone.
        orphans = self.before["node"]["jobs"]["orphans"]["workers"]
        alive = {p["pid"] for p in truth["gpu_processes"]}
        self.assertEqual(alive & set(orphans), set())
        fates = {h["pid"]: h["fate"] for h in host["holders"]}
        self.assertTrue({fates[p] for p in orphans} <= {"terminated", "killed"})
        self.assert_daemons_untouched(truth, host)
        # GPU 5 is still the pod's: the node is not empty, so not clean.
        states = {g["index"]: g["state"] for g in host["gpus_after"]}
        self.assertEqual(states[5], "busy")
        self.assertLessEqual({states[i] for i in (0, 1, 2, 3, 4, 6, 7)},
                             {"clean", "protected_only"})
        self.assertEqual((rc, host["status"]), (1, "dirty"))

    def test_a_drained_node_ends_clean(self):
        rc, report = self.local_run("drained")
        host = report["hosts"][0]
        truth = self.fleet.ground_truth()["drained"]
        self.assertEqual((rc, host["status"]), (0, "clean"), host["error_message"])
        self.assertEqual(truth["gpu_processes"], [])
        self.assert_daemons_untouched(truth, host)
        self.assertTrue(truth["clean"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
