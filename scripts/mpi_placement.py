#!/usr/bin/env python3
"""Where MPI ranks run: one rank per physical core, from the vCPU pairs that slow
each other down (hyperthreads of one core, which a virtual machine's guest cannot
see: it shows every vCPU as a core of one thread).

The pairs come from the measurement of bench/topology/cpu_topology_probe.cpp
(--probe FILE: its --pairs JSON) or are given (--pairs 0:16,1:17 with --cpus).
From the probe, vCPUs a and b are siblings when each is the other's lowest ratio
(the two together run at that share of their rates alone) and that ratio is
below --threshold (0.75: two hyperthreads of one core share its FMA ports and
measure about 0.5; two cores about 1).

A physical core is a sibling group (a vCPU without a sibling is a core alone),
cores in the order of their lowest vCPU. Rank r of P gets the cores
[K r / P, K (r + 1) / P) of the K cores and the first --per-rank vCPUs of them,
one per core before any second sibling: with one vCPU a rank, P ranks on P
distinct cores spread over the machine; with more, whole cores per rank.

Writes an Open MPI rankfile (--rankfile FILE; run with
`mpirun -np P --rankfile FILE --mca rmaps_rank_file_physical 1`, vCPU numbers as
the OS numbers them) and prints the pairs, the cores and the vCPUs of the ranks
(`cpu-set:`, usable as `mpirun --cpu-set LIST --bind-to core` for one vCPU a rank,
or as bench/mpi_placement_probe.sh's bandwidth thread order).

  scripts/mpi_placement.py --probe pairs.json --ranks 8 --rankfile rf8
  scripts/mpi_placement.py --cpus 0-31 --pairs 0:16,1:17 --ranks 2 --per-rank 4
Exit 2 for a placement that cannot be made (more ranks than cores, or a rank's
vCPUs not fitting its cores).
"""
import argparse
import json
import os
import sys


def parse_cpu_list(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]."""
    cpus = []
    for item in text.split(","):
        if not item:
            continue
        first, _, last = item.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def parse_pairs(text):
    """'0:16,1:17' -> [(0, 16), (1, 17)]."""
    pairs = []
    for item in text.split(","):
        if item:
            a, b = item.split(":")
            pairs.append((int(a), int(b)))
    return pairs


def sibling_pairs(cpus, ratio, threshold):
    """The mutual-lowest pairs below threshold of a probe's ratio matrix, as (low, high) vCPUs."""
    n = len(cpus)
    lowest = [min((b for b in range(n) if b != a), key=lambda b: ratio[a][b]) if n > 1 else a for a in range(n)]
    return sorted((cpus[a], cpus[b]) for a, b in enumerate(lowest)
                  if a < b and lowest[b] == a and ratio[a][b] < threshold)


def unsteady_cpus(cpus, ratio, threshold):
    """{vCPU: how many others it measured below threshold with}, for those with more than one.
    Fixed two-way hyperthreading gives each vCPU one such partner: more says that the vCPUs
    are not pinned to fixed host cores, and the pairs are those of the moment measured."""
    n = len(cpus)
    counts = {cpus[a]: sum(1 for b in range(n) if b != a and ratio[a][b] < threshold) for a in range(n)}
    return {c: k for c, k in counts.items() if k > 1}


def physical_cores(cpus, pairs):
    """The vCPUs grouped by core (siblings together), groups in the order of their lowest vCPU."""
    group_of = {c: [c] for c in cpus}
    for a, b in pairs:
        if a not in group_of or b not in group_of:
            raise ValueError(f"pair {a}:{b} names a vCPU outside {','.join(map(str, cpus))}")
        if group_of[a] is group_of[b]:
            continue
        merged = sorted(group_of[a] + group_of[b])
        for c in merged:
            group_of[c] = merged
    cores = {id(g): g for g in group_of.values()}
    return sorted(cores.values(), key=lambda g: g[0])


def place_ranks(cores, ranks, per_rank=1):
    """Each rank's vCPUs: its share of the cores, one vCPU a core before any second sibling."""
    if ranks < 1 or per_rank < 1:
        raise ValueError("ranks and vCPUs per rank must be at least 1")
    if ranks > len(cores):
        raise ValueError(f"{ranks} ranks but {len(cores)} physical cores: a rank without a core of its own")
    placement = []
    for r in range(ranks):
        mine = cores[len(cores) * r // ranks:len(cores) * (r + 1) // ranks]
        by_sibling = [core[k] for k in range(max(len(core) for core in mine)) for core in mine if k < len(core)]
        if per_rank > len(by_sibling):
            raise ValueError(f"rank {r} needs {per_rank} vCPUs but its {len(mine)} cores have {len(by_sibling)}")
        placement.append(sorted(by_sibling[:per_rank]))
    return placement


def rankfile_text(placement, host="localhost"):
    return "".join(f"rank {r}={host} slot={','.join(map(str, cpus))}\n" for r, cpus in enumerate(placement))


def load_probe(path, threshold):
    """The probe's vCPUs, its sibling pairs, and its unsteady vCPUs (unsteady_cpus)."""
    with open(path) as f:
        probe = json.load(f)
    cpus, ratio = probe["cpus"], probe["ratio"]
    return cpus, sibling_pairs(cpus, ratio, threshold), unsteady_cpus(cpus, ratio, threshold)


def placement_mpirun_args(probe_path, ranks, per_rank, layout_ranks, directory, threshold=0.75):
    """The mpirun options that run `ranks` ranks where the first `ranks` of a
    max(ranks, layout_ranks)-rank placement from the probe go (a rankfile written
    in `directory`); prints where they go on stderr."""
    cpus, pairs, _ = load_probe(probe_path, threshold)
    placement = place_ranks(physical_cores(cpus, pairs), max(ranks, layout_ranks), per_rank)[:ranks]
    path = os.path.join(directory, "rankfile.%d" % ranks)
    with open(path, "w") as f:
        f.write(rankfile_text(placement))
    print("P=%d placed on vCPUs %s" % (ranks, " ".join(",".join(map(str, c)) for c in placement)), file=sys.stderr)
    return ["--rankfile", path, "--mca", "rmaps_rank_file_physical", "1"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--probe", help="the JSON of uot_cpu_topology_probe --pairs")
    p.add_argument("--threshold", type=float, default=0.75, help="a sibling pair's ratio is below this")
    p.add_argument("--cpus", help="the vCPUs, e.g. 0-31 (with --pairs; default: the probe's)")
    p.add_argument("--pairs", help="sibling pairs instead of a probe, e.g. 0:16,1:17")
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--per-rank", type=int, default=1, help="vCPUs per rank (its threads)")
    p.add_argument("--host", default="localhost", help="the rankfile's host name")
    p.add_argument("--rankfile", help="write the Open MPI rankfile here")
    args = p.parse_args(argv)
    if bool(args.probe) == bool(args.pairs is not None):
        p.error("give one of --probe and --pairs")
    unsteady = {}
    if args.probe:
        cpus, pairs, unsteady = load_probe(args.probe, args.threshold)
        if args.cpus:
            keep = set(parse_cpu_list(args.cpus))
            cpus = [c for c in cpus if c in keep]
            pairs = [(a, b) for a, b in pairs if a in keep and b in keep]
    else:
        if not args.cpus:
            p.error("--pairs needs --cpus")
        cpus, pairs = parse_cpu_list(args.cpus), parse_pairs(args.pairs)
    try:
        cores = physical_cores(cpus, pairs)
        placement = place_ranks(cores, args.ranks, args.per_rank)
    except ValueError as e:
        print(f"mpi_placement: {e}", file=sys.stderr)
        return 2
    print("pairs: " + (" ".join(f"{a}:{b}" for a, b in pairs) or "none"))
    print(f"cores: {len(cores)} of {len(cpus)} vCPUs")
    if unsteady:
        print("unsteady: " + " ".join(f"{c}:{k}" for c, k in sorted(unsteady.items())) +
              " (vCPU:partners below the threshold; more than one: not a fixed topology)")
    for r, rank_cpus in enumerate(placement):
        print(f"rank {r}: vCPUs {','.join(map(str, rank_cpus))}")
    print("cpu-set: " + ",".join(str(c) for rank_cpus in placement for c in rank_cpus))
    if args.rankfile:
        with open(args.rankfile, "w") as f:
            f.write(rankfile_text(placement, args.host))
    return 0


if __name__ == "__main__":
    sys.exit(main())
