#!/usr/bin/env python3
"""scripts/mpi_placement.py against hand-worked placements: the sibling pairs it reads
from a probe's ratio matrix, the physical cores, each rank's vCPUs and the rankfile
it writes (no MPI needed)."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "mpi_placement.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
import mpi_placement as mp  # noqa: E402


def ratio_matrix(n, low, other=0.98):
    """n x n ratios: `other` everywhere, 1 on the diagonal, low[(a, b)] for the pairs given."""
    m = [[1.0 if a == b else other for b in range(n)] for a in range(n)]
    for (a, b), r in low.items():
        m[a][b] = m[b][a] = r
    return m


class SiblingPairs(unittest.TestCase):
    def test_mutual_lowest_pairs_below_threshold(self):
        ratio = ratio_matrix(4, {(0, 2): 0.52, (1, 3): 0.55})
        self.assertEqual(mp.sibling_pairs([0, 1, 2, 3], ratio, 0.75), [(0, 2), (1, 3)])

    def test_not_mutual_is_not_a_pair(self):
        # 0's lowest is 1, but 1's lowest is 2 (and 2's is 1): only 1:2.
        ratio = ratio_matrix(3, {(0, 1): 0.5, (1, 2): 0.4, (0, 2): 0.9})
        self.assertEqual(mp.sibling_pairs([5, 6, 7], ratio, 0.75), [(6, 7)])

    def test_no_pair_above_threshold(self):
        ratio = ratio_matrix(4, {(0, 1): 0.8, (2, 3): 0.79})
        self.assertEqual(mp.sibling_pairs([0, 1, 2, 3], ratio, 0.75), [])


    def test_several_low_partners_are_unsteady(self):
        # vCPU 0 measured low with 1 and 2: no fixed two-way hyperthreading explains it.
        ratio = ratio_matrix(4, {(0, 1): 0.55, (0, 2): 0.6, (2, 3): 0.7})
        self.assertEqual(mp.unsteady_cpus([0, 1, 2, 3], ratio, 0.75), {0: 2, 2: 2})
        self.assertEqual(mp.unsteady_cpus([0, 1, 2, 3], ratio_matrix(4, {(0, 2): 0.52, (1, 3): 0.55}), 0.75), {})


class Placement(unittest.TestCase):
    cores8 = [[0, 4], [1, 5], [2, 6], [3, 7]]

    def test_cores_from_pairs(self):
        self.assertEqual(mp.physical_cores(list(range(8)), [(0, 4), (5, 1), (2, 6), (3, 7)]), self.cores8)
        self.assertEqual(mp.physical_cores(list(range(6)), [(0, 3)]), [[0, 3], [1], [2], [4], [5]])

    def test_one_vcpu_a_rank_on_distinct_cores_spread(self):
        self.assertEqual(mp.place_ranks(self.cores8, 4), [[0], [1], [2], [3]])
        self.assertEqual(mp.place_ranks(self.cores8, 2), [[0], [2]])
        self.assertEqual(mp.place_ranks(mp.physical_cores(list(range(6)), [(0, 3)]), 2), [[0], [2]])

    def test_hidden_hyperthreads_of_a_32_vcpu_guest(self):
        # Siblings i and i + 16 (16 cores): 8 ranks on every other core, never on two siblings.
        cores = mp.physical_cores(list(range(32)), [(i, i + 16) for i in range(16)])
        self.assertEqual(mp.place_ranks(cores, 8), [[0], [2], [4], [6], [8], [10], [12], [14]])
        self.assertEqual(mp.place_ranks(cores, 2, 16),
                         [list(range(0, 8)) + list(range(16, 24)), list(range(8, 16)) + list(range(24, 32))])

    def test_whole_cores_per_rank(self):
        self.assertEqual(mp.place_ranks(self.cores8, 2, 4), [[0, 1, 4, 5], [2, 3, 6, 7]])
        self.assertEqual(mp.place_ranks(self.cores8, 2, 3), [[0, 1, 4], [2, 3, 6]])
        self.assertEqual(mp.place_ranks(self.cores8, 1, 2), [[0, 1]])

    def test_impossible_placements(self):
        with self.assertRaises(ValueError):
            mp.place_ranks(self.cores8, 5)
        with self.assertRaises(ValueError):
            mp.place_ranks(self.cores8, 2, 5)
        with self.assertRaises(ValueError):
            mp.physical_cores([0, 1], [(0, 2)])


class CommandLine(unittest.TestCase):
    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)

    def test_rankfile_from_pairs(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "rf")
            r = self.run_script("--cpus", "0-7", "--pairs", "0:4,1:5,2:6,3:7", "--ranks", "2", "--per-rank", "2",
                                "--rankfile", path, "--host", "node1")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                self.assertEqual(f.read(), "rank 0=node1 slot=0,1\nrank 1=node1 slot=2,3\n")
            self.assertIn("cpu-set: 0,1,2,3", r.stdout)

    def test_rankfile_from_probe(self):
        with tempfile.TemporaryDirectory() as tmp:
            probe = os.path.join(tmp, "pairs.json")
            with open(probe, "w") as f:
                json.dump({"cpus": [0, 1, 2, 3], "ratio": ratio_matrix(4, {(0, 1): 0.51, (2, 3): 0.6})}, f)
            path = os.path.join(tmp, "rf")
            r = self.run_script("--probe", probe, "--ranks", "2", "--rankfile", path)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("pairs: 0:1 2:3", r.stdout)
            self.assertNotIn("unsteady", r.stdout)
            with open(path) as f:
                self.assertEqual(f.read(), "rank 0=localhost slot=0\nrank 1=localhost slot=2\n")

    def test_unsteady_probe_is_said(self):
        with tempfile.TemporaryDirectory() as tmp:
            probe = os.path.join(tmp, "pairs.json")
            with open(probe, "w") as f:
                json.dump({"cpus": [4, 5, 6], "ratio": ratio_matrix(3, {(0, 1): 0.6, (0, 2): 0.62}, 0.7)}, f)
            r = self.run_script("--probe", probe, "--ranks", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("unsteady: 4:2 5:2 6:2", r.stdout)

    def test_more_ranks_than_cores_exits_2(self):
        r = self.run_script("--cpus", "0-3", "--pairs", "0:2,1:3", "--ranks", "3")
        self.assertEqual(r.returncode, 2)
        self.assertIn("2 physical cores", r.stderr)


if __name__ == "__main__":
    unittest.main()
