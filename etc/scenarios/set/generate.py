#!/usr/bin/env python3
"""Write the evaluation scenario set (docs/scenarios.md, docs/evaluation.md).

The set is a fixed table, not a random draw: every scenario below is there
for a reason given in its description, and together they cover 2-, 4- and
8-node machines (with and without SMT), 1 to 4 co-scheduled processes of 2
to 32 threads, homogeneous and heterogeneous mixes of the four workload
kinds, first-touch, master and interleave placements, and staggered starts.
No randomness is involved, so there is no seed: running this again gives
the same files byte for byte (tests/cli/test_bench_cli.sh checks that the
committed files match).

    etc/scenarios/set/generate.py [OUTPUT_DIR]     (default: this folder)
"""
import json
import os
import sys

# Machines. SLIT distances as firmware reports them; the model turns them
# into latencies with remote_factor (docs/machine-model.md).
M2 = {"topology": "numa:2 core:8 pu:1", "distances": [[10, 21], [21, 10]]}
M2SMT = {"topology": "numa:2 core:8 pu:2", "distances": [[10, 21], [21, 10]]}
# Four sockets on a ring (each socket reaches two in one hop).
M4 = {
    "topology": "numa:4 core:8 pu:1",
    "distances": [
        [10, 16, 22, 16],
        [16, 10, 16, 22],
        [22, 16, 10, 16],
        [16, 22, 16, 10],
    ],
}
# Two sockets of four NUMA nodes each (as a two-socket server in NPS4 mode
# reports: 12 within a socket, 32 across).
M8 = {
    "topology": "numa:8 core:8 pu:1",
    "distances": [
        [10 if i == j else 12 if i // 4 == j // 4 else 32 for j in range(8)]
        for i in range(8)
    ],
}
# Four packages of two sub-NUMA nodes, SMT-2.
M8SMT = {
    "topology": "pack:4 numa:2 core:4 pu:2",
    "distances": [
        [10, 12, 20, 20, 30, 30, 20, 20],
        [12, 10, 20, 20, 30, 30, 20, 20],
        [20, 20, 10, 12, 20, 20, 30, 30],
        [20, 20, 12, 10, 20, 20, 30, 30],
        [30, 30, 20, 20, 10, 12, 20, 20],
        [30, 30, 20, 20, 12, 10, 20, 20],
        [20, 20, 30, 30, 20, 20, 10, 12],
        [20, 20, 30, 30, 20, 20, 12, 10],
    ],
}

LIKE = {"compute": "ep", "stream": "mg", "latency": "cg", "mixed": "ft"}


def p(kind, threads, placement="first-touch", start=0, name=None):
    d = {"name": name or "%s%d" % (LIKE[kind], threads), "kind": kind,
         "threads": threads}
    if placement != "first-touch":
        d["placement"] = placement
    if start:
        d["start_s"] = start
    return d


ALL = ["compute", "stream", "latency", "mixed"]

# name, machine, description, processes
SET = [
    # --- 2 nodes x 8 cores ---------------------------------------------
    ("n2-ep16", M2,
     "Homogeneous and placement-neutral: 16 compute-bound threads fill the "
     "machine. Nothing to gain; a policy should do no harm.",
     [p("compute", 16)]),
    ("n2-cg8-master", M2,
     "One latency-bound process, 8 threads, data initialised by the master "
     "thread: fork balancing spreads the threads 4 + 4, so half start away "
     "from their data while free cores sit next to it.",
     [p("latency", 8, "master")]),
    ("n2-mg8-ft8", M2,
     "Heterogeneous pair filling the machine: bandwidth-bound and mixed, "
     "first-touch.",
     [p("stream", 8), p("mixed", 8)]),
    ("n2-cg8-cg8-master-stagger", M2,
     "Two latency-bound processes with master initialisation, the second "
     "starting 4 s later into a half-busy machine.",
     [p("latency", 8, "master", name="cg8a"),
      p("latency", 8, "master", start=4, name="cg8b")]),
    ("n2-mix4x4-interleave", M2,
     "One of each kind, 4 threads each, all interleaved: locality cannot "
     "be gained by moving threads, only contention shuffled.",
     [p(k, 4, "interleave") for k in ALL]),
    ("n2-mg6-mg6-stagger", M2,
     "Two streaming processes, 6 threads each, first-touch, the second 3 s "
     "later; 4 cores stay free.",
     [p("stream", 6, name="mg6a"), p("stream", 6, start=3, name="mg6b")]),
    ("n2-over-3x8", M2,
     "Oversubscribed: 24 threads on 16 cores (mixed first-touch, latency "
     "master, compute first-touch).",
     [p("mixed", 8), p("latency", 8, "master"), p("compute", 8)]),
    ("n2smt-cg16-ep16", M2SMT,
     "SMT-2 machine, full: a latency-bound and a compute-bound process, "
     "16 threads each, first-touch.",
     [p("latency", 16), p("compute", 16)]),
    ("n2-cg4-ep12", M2,
     "A small latency-bound process with master initialisation next to a "
     "large compute-bound one.",
     [p("latency", 4, "master"), p("compute", 12)]),
    # --- 4 nodes x 8 cores ---------------------------------------------
    ("n4-mix4x8", M4,
     "The paper's heterogeneous case: one process of each kind, 8 threads "
     "each, first-touch, filling 4 nodes.",
     [p(k, 8) for k in ALL]),
    ("n4-mg16-mg16-master", M4,
     "Two bandwidth-bound processes of 16 threads, master initialisation: "
     "each process's data on one node.",
     [p("stream", 16, "master", name="mg16a"),
      p("stream", 16, "master", name="mg16b")]),
    ("n4-cg12-ft12-ep8", M4,
     "Three placements at once: latency-bound master, mixed first-touch, "
     "compute-bound interleave.",
     [p("latency", 12, "master"), p("mixed", 12), p("compute", 8,
                                                    "interleave")]),
    ("n4-ft32", M4,
     "One 32-thread mixed process, first-touch: high locality already.",
     [p("mixed", 32)]),
    ("n4-cg4x4-master-stagger", M4,
     "Four small latency-bound processes with master initialisation, "
     "starting 2 s apart; half the cores stay free.",
     [p("latency", 4, "master", start=2 * i, name="cg4%s" % "abcd"[i])
      for i in range(4)]),
    ("n4-mg16-cg16-interleave", M4,
     "Bandwidth- and latency-bound, 16 threads each, interleaved.",
     [p("stream", 16, "interleave"), p("latency", 16, "interleave")]),
    ("n4-ep16-mg8-cg8-stagger", M4,
     "Compute-bound first, then a streaming (2 s) and a latency-bound (4 s) "
     "process, first-touch.",
     [p("compute", 16), p("stream", 8, start=2), p("latency", 8, start=4)]),
    ("n4-mix4x6-master", M4,
     "One process of each kind, 6 threads each, master initialisation; 8 "
     "cores free.",
     [p(k, 6, "master") for k in ALL]),
    ("n4-cg2-mg2-master", M4,
     "Two tiny processes (2 threads each) with master initialisation on an "
     "almost idle machine.",
     [p("latency", 2, "master"), p("stream", 2, "master")]),
    # --- 8 nodes x 8 cores ---------------------------------------------
    ("n8-mix4x16", M8,
     "One process of each kind, 16 threads each, first-touch, filling two "
     "4-node sockets.",
     [p(k, 16) for k in ALL]),
    ("n8-cg32-cg32-master", M8,
     "Two 32-thread latency-bound processes with master initialisation: "
     "each has its data on one node and threads on all eight.",
     [p("latency", 32, "master", name="cg32a"),
      p("latency", 32, "master", name="cg32b")]),
    ("n8-mg8x4-master-stagger", M8,
     "Four streaming processes of 8 threads, master initialisation, "
     "starting 3 s apart.",
     [p("stream", 8, "master", start=3 * i, name="mg8%s" % "abcd"[i])
      for i in range(4)]),
    ("n8-mg32-interleave", M8,
     "One 32-thread streaming process, interleaved over 8 nodes, half the "
     "cores free.",
     [p("stream", 32, "interleave")]),
    ("n8-ft24-cg16-ep8", M8,
     "Mixed first-touch, latency-bound master and compute-bound "
     "interleave, 48 threads on 64 cores.",
     [p("mixed", 24), p("latency", 16, "master"), p("compute", 8,
                                                    "interleave")]),
    ("n8-mix4x12-master-stagger", M8,
     "One process of each kind, 12 threads each, master initialisation, "
     "starting 2 s apart.",
     [p(k, 12, "master", start=2 * i) for i, k in enumerate(ALL)]),
    ("n8-ep32-mg32", M8,
     "Compute- and bandwidth-bound, 32 threads each, first-touch, full "
     "machine.",
     [p("compute", 32), p("stream", 32)]),
    ("n8smt-mix4x8", M8SMT,
     "SMT-2, 4 packages x 2 sub-NUMA nodes: one process of each kind, 8 "
     "threads each, first-touch (32 threads on 32 cores, 64 hardware "
     "threads).",
     [p(k, 8) for k in ALL]),
]


# The paper's scenario classes: NPB-like processes placed with numactl
# (docs/scenarios.md, "The paper's classes"). Process i of n on a machine
# of nn nodes x 8 cores; threads: a node's cores, or the machine's cores
# shared out when there are more processes than nodes.
MIX = ["latency", "stream", "mixed", "compute"]
CLASSES = {
    "direct": ("threads and memory bound to the same node (--cpunodebind=i "
               "--membind=i): local already, nothing to gain; a policy "
               "should do no harm.",
               lambda i, nn: {"cpunodebind": i % nn, "membind": i % nn}),
    "ind": ("threads bound to node i+1, memory to node i (--cpunodebind="
            "i+1 --membind=i): every access remote, and the kernel may move "
            "neither.",
            lambda i, nn: {"cpunodebind": (i + 1) % nn, "membind": i % nn}),
    "interleave": ("threads bound to node i, memory interleaved over all "
                   "nodes (--cpunodebind=i --interleave=all).",
                   lambda i, nn: {"cpunodebind": i % nn,
                                  "interleave": "0-%d" % (nn - 1)}),
    "spread": ("threads left to the scheduler over every node, memory bound "
               "to node i (--membind=i): the kernel's NUMA balancing skips "
               "bound memory.",
               lambda i, nn: {"membind": i % nn}),
}


def paper_set():
    out = []
    for cls, (what, bind) in CLASSES.items():
        for tag, machine, nn in (("n2", M2, 2), ("n4", M4, 4),
                                 ("n8", M8, 8)):
            for n in range(1, 5):
                threads = 8 if n <= nn else 8 * nn // n
                procs = []
                for i in range(n):
                    d = p(MIX[i], threads, name="%s%d" % (
                        LIKE[MIX[i]], threads))
                    d.update(bind(i, nn))
                    procs.append(d)
                name = "paper-%s-%s-%dp" % (cls, tag, n)
                desc = ("The paper's '%s' class: %d NPB-like process%s "
                        "(%s), %s" % (cls, n, "es" if n > 1 else "",
                                      ", ".join(MIX[:n]), what))
                out.append((name, machine, desc, procs, cls))
    return out


def dump(obj, indent=1):
    """JSON with tabs, short arrays and process objects on one line."""
    tab = "\t" * indent
    if not isinstance(obj, (dict, list)):
        return json.dumps(obj)
    if isinstance(obj, dict) and "kind" in obj:
        return json.dumps(obj)
    if isinstance(obj, list) and all(not isinstance(x, (dict, list))
                                     for x in obj):
        return json.dumps(obj)
    if isinstance(obj, dict):
        items = ["%s%s: %s" % (tab, json.dumps(k), dump(v, indent + 1))
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + "\t" * (indent - 1) + "}"
    items = ["%s%s" % (tab, dump(v, indent + 1)) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + "\t" * (indent - 1) + "]"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.abspath(__file__))
    names = set()
    every = [s + (None,) for s in SET] + paper_set()
    for name, machine, desc, procs, cls in every:
        assert name not in names, name
        names.add(name)
        assert 1 <= len(procs) <= 4 and all(2 <= q["threads"] <= 32
                                            for q in procs), name
        sc = {"name": name, "description": desc}
        if cls:
            sc["class"] = cls
        sc.update({"machine": machine, "processes": procs})
        with open(os.path.join(out, name + ".json"), "w") as f:
            f.write(dump(sc) + "\n")
    print("wrote %d scenarios to %s" % (len(every), out))


if __name__ == "__main__":
    main()
