"""demo_outcome.problems holds a demo run against its design: the designed
run gives no problem, and each way a run can differ gives its own line
(the demo once said "3 is the expected exit code" after fleetreap had
exited 1 because the fleet never came up). Synthetic reports and ground
truths; no fleet, no root. The real demo: scripts/demo.sh.
"""

import copy
import unittest

import demo_outcome
import scenarios


def designed():
    """A report and a ground truth as the designed run leaves them."""
    hosts, truth = [], {}
    for name, scenario in scenarios.DEMO:
        status = demo_outcome.expected_status(scenario)
        hosts.append({"name": name, "status": status, "summary": "...",
                      "error_message": "refused" if status == "unreachable" else None})
        truth[name] = {"clean": True, "gpu_processes": [], "protected_missing": [],
                       "shm_remaining": [], "ghost_gpus": [2] if status == "dirty" else []}
    return {"exit_code": 3, "hosts": hosts}, truth


class DemoOutcomeTest(unittest.TestCase):
    def test_the_designed_run_has_no_problem(self):
        report, truth = designed()
        self.assertEqual(demo_outcome.problems(3, report, truth), [])
        self.assertEqual(demo_outcome.summary(truth),
                         "as designed: fleetreap exited 3 = 1 (gpu08 dirty: GPU 2's ghost memory "
                         "needs a GPU reset, gpu05 not ready: GPUs empty, its restarter lives "
                         "on) + 2 (gpu09 unreachable); the other 6 hosts are clean, by its "
                         "report and by their own /proc")

    def test_each_difference_is_one_line(self):
        def host(report, name):
            return next(h for h in report["hosts"] if h["name"] == name)

        def dirty_gpu03(report, truth):
            host(report, "gpu03").update(status="dirty", summary="GPU 0 busy")

        def gpu02_still_holds(report, truth):
            truth["gpu02"].update(clean=False, gpu_processes=[{"pid": 7}])

        def daemon_killed(report, truth):
            truth["gpu06"]["protected_missing"] = ["nv-hostengine"]

        def ghost_held(report, truth):
            truth["gpu08"]["gpu_processes"] = [{"pid": 9}]

        def gpu09_missing(report, truth):
            report["hosts"] = [h for h in report["hosts"] if h["name"] != "gpu09"]

        rows = [
            (dirty_gpu03, 3, ["gpu03 (ignore_term): fleetreap says dirty (GPU 0 busy), the "
                              "design says clean"]),
            (gpu02_still_holds, 3, ["gpu02 (vllm_incident): not clean after the run by the "
                                    "ground truth (gpu_procs=1, shm=[])"]),
            (daemon_killed, 3, ["gpu06 (protected_daemons): protected daemons gone: "
                                "['nv-hostengine']"]),
            (ghost_held, 3, ["gpu08 (ghost_memory): the ground truth shows no ghost memory "
                             "alone (gpu_procs=1, ghost_gpus=[2])"]),
            (gpu09_missing, 3, ["gpu09 (unreachable): not in fleetreap's report"]),
            (None, 1, ["fleetreap exited 1, the design says 3"]),
        ]
        for change, code, want in rows:
            with self.subTest(change=change and change.__name__, code=code):
                report, truth = copy.deepcopy(designed())
                if change:
                    change(report, truth)
                self.assertEqual(demo_outcome.problems(code, report, truth), want)

    def test_no_report_at_all(self):
        _, truth = designed()
        self.assertEqual(demo_outcome.problems(64, None, truth),
                         ["fleetreap exited 64, the design says 3",
                          "fleetreap wrote no JSON report"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
