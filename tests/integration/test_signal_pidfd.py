"""Signals through pidfds, end to end on the simulated fleet: on a host with
perl (perl-base, as on every Debian and Ubuntu host) every TERM and KILL of
the vLLM incident goes through a pidfd (the report's pidfd_sent equals
term_sent + kill_sent); on a host whose perl is removed the same ladder
falls back to kill(1) with the same verdict and pidfd_sent 0. Each signal
leaves one audit line either way. Needs root and the built sim tools.
"""

import unittest

from fleet_case import FleetCase, by_name, run_json
from simfleet import HostSpec
from test_audit import log_lines


class SignalPidfdTest(FleetCase):
    PREFIX = "pidfdtest-"
    SPECS = [HostSpec("pidfd01", scenario="vllm_incident"),
             HostSpec("pidfd02", scenario="vllm_incident")]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The removal lands in pidfd02's /usr/bin overlay, never in this
        # machine's /usr/bin.
        cls.fleet.exec("pidfd02", "rm -f /usr/bin/perl /usr/bin/perl5*", check=True)
        cls.rc, cls.report = run_json(cls.fleet, playbook="vllm.yaml")
        cls.hosts = by_name(cls.report)

    def signals(self, name):
        return [l for l in log_lines(self.fleet, name)
                if l.get("run") == self.report["run_id"] and l["action"] in ("term", "kill")]

    def test_signals_go_through_pidfds_where_perl_is(self):
        self.assertEqual(self.rc, 0, self.report)
        host = self.hosts["pidfd01"]
        self.assertEqual(host["status"], "clean", host)
        sent = host["term_sent"] + host["kill_sent"]
        self.assertGreater(sent, 0, host)
        self.assertEqual(host["pidfd_sent"], sent, host)
        self.assertEqual(len(self.signals("pidfd01")), sent)

    def test_without_perl_kill_signals_with_the_same_verdict(self):
        host = self.hosts["pidfd02"]
        self.assertNotEqual(self.fleet.exec("pidfd02", "test -e /usr/bin/perl").returncode, 0)
        self.assertEqual(host["status"], "clean", host)
        sent = host["term_sent"] + host["kill_sent"]
        self.assertGreater(sent, 0, host)
        self.assertEqual(host["pidfd_sent"], 0, host)
        self.assertEqual(len(self.signals("pidfd02")), sent)
        self.assertEqual(sent, self.hosts["pidfd01"]["term_sent"] + self.hosts["pidfd01"]["kill_sent"])


if __name__ == "__main__":
    unittest.main()
