#!/usr/bin/env python3
"""The model beside the real kernel, one setup (tests/guest/model_cases.sh;
docs/machine-model.md, "The model beside the real kernel").

    beside.py NAME KERNEL.watch MODEL.json [NUMALOT_REPORT.json]
              [--checks=locality,moved,t90|none]

KERNEL.watch is tests/guest/locality.py's output on the guest's kernel,
MODEL.json `numalot sim --timeline --report` of the same setup (its
processes in the watch's order). A numalot run's real report, when given,
says what numalot moved there.

Prints a "# row:" line for the table, then TAP lines, each a check that the
two agree on a robust quantity, within FACTOR (5) where it is a time or an
amount (docs/machine-model.md, "The model beside the real kernel", says
why 5):
- final locality (at the kernel's last sample, the model at that time),
  each process: at most 0.15 apart;
- pages moved at all (more than a quarter of the processes' pages: a few
  pages move on a real kernel whenever the scheduler moves a thread during
  its first touch) in both or in neither; where both, the amounts within
  FACTOR;
- 90% local for good (from when it stayed so to the end of the watch) in
  both or in neither; where both, the times within FACTOR, each counted
  as at least 0.7 s: the watch's samples come every
  0.6-0.7 s in the emulated guest, so a kernel time is known to that much.
--checks names the checks made (default all; none: the row only).
Exits 1 when a check failed.
"""
import json
import sys

FACTOR = 5.0
LOCALITY_GAP = 0.15
MOVED_SHARE = 0.25
TIME_FLOOR = 0.7
PAGE = 4096


def loc(pages, nodes):
    total = sum(pages)
    if not total or not nodes:
        return 0.0
    return sum(min(pages[n] / total, nodes.count(n) / len(nodes))
               for n in range(len(pages)))


def main(argv):
    checks = {"locality", "moved", "t90"}
    for a in [a for a in argv if a.startswith("--checks=")]:
        checks = set(a.split("=", 1)[1].split(",")) - {"none"}
        argv.remove(a)
    name, kfile, mfile = argv[:3]
    k = json.load(open(kfile))
    m = json.load(open(mfile))
    real = json.load(open(argv[3])) if len(argv) > 3 else None
    t_end = k["t"]
    # The kernel, per process: its final pages by node and threads' nodes.
    kprocs = list(k["processes"].values())
    nn = 1 + max([int(n) for p in kprocs for n in p["pages"]] +
                 [n for p in kprocs for n in p["thread_nodes"]] + [0])
    kloc, kpages = [], 0
    for p in kprocs:
        pages = [p["pages"].get(str(n), 0) for n in range(nn)]
        kloc.append(loc(pages, p["thread_nodes"]))
        kpages += sum(pages)
    kmoved = k["migrated_all_pages"] * PAGE
    # The model: its timeline up to the kernel's watch's length.
    tl = m["timeline"]
    upto = [s for s in tl if s["t"] <= t_end + 1e-9] or tl[:1]
    last = upto[-1]
    mloc = [p["locality"] for p in last["processes"]]
    mthreads = [p["thread_nodes"] for p in last["processes"]]
    mpages = sum(sum(p["pages_per_node"]) for p in last["processes"])
    mmoved = last["pages_migrated_bytes"] + last.get("pages_moved_bytes", 0)
    # From when it stayed 90% local, within the kernel's watch (as
    # locality.py's t90).
    mt90 = None
    for s in upto:
        w = sum(sum(p["pages_per_node"]) for p in s["processes"])
        ok = w and sum(p["locality"] * sum(p["pages_per_node"])
                       for p in s["processes"]) / w >= 0.9
        if not ok:
            mt90 = None
        elif mt90 is None:
            mt90 = s["t"]
    kt90 = k["t90"]
    mib = 1 << 20
    numalot = ""
    if real:
        moved = sum(p["pages"]["moved_bytes"] for p in real["processes"])
        numalot = f"; numalot moved {moved / mib:.0f} MiB"

    def fmt_t(t):
        return "never" if t is None else f"{t:.1f} s"

    print(f"# row: {name} | kernel: locality {k['first']} -> "
          f"{', '.join(f'{x:.2f}' for x in kloc)}, 90% at {fmt_t(kt90)}, "
          f"{kmoved / mib:.0f} MiB moved, threads on "
          f"{[p['thread_nodes'] for p in kprocs]}{numalot} | model: "
          f"{', '.join(f'{x:.2f}' for x in mloc)}, 90% at {fmt_t(mt90)}, "
          f"{mmoved / mib:.0f} MiB moved, threads on {mthreads} "
          f"(watched {t_end:.1f} s)")
    fails = 0

    def check(ok, what, kind):
        nonlocal fails
        if kind not in checks:
            return
        print(("ok" if ok else "not ok") + f" - model beside kernel, {name}: {what}")
        fails += not ok

    same = len(kloc) == len(mloc)
    check(same and all(abs(a - b) <= LOCALITY_GAP for a, b in zip(kloc, mloc)),
          "final locality within %.2f (kernel %s, model %s)" % (
              LOCALITY_GAP, [round(x, 2) for x in kloc],
              [round(x, 2) for x in mloc]), "locality")
    kmv = kmoved > MOVED_SHARE * kpages * PAGE
    mmv = mmoved > MOVED_SHARE * mpages * PAGE
    ratio = (max(kmoved, mmoved) / min(kmoved, mmoved)
             if kmv and mmv and min(kmoved, mmoved) > 0 else 1)
    check(kmv == mmv and ratio <= FACTOR,
          "pages moved in both or neither, within %gx (kernel %.0f MiB, "
          "model %.0f MiB)" % (FACTOR, kmoved / mib, mmoved / mib), "moved")
    if kt90 is None or mt90 is None:
        tr = 1 if kt90 is None and mt90 is None else float("inf")
    else:
        a, b = max(kt90, TIME_FLOOR), max(mt90, TIME_FLOOR)
        tr = max(a, b) / min(a, b)
    check(tr <= FACTOR, "90%% local in both or neither, within %gx "
          "(kernel %s, model %s)" % (FACTOR, fmt_t(kt90), fmt_t(mt90)), "t90")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
