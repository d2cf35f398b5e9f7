#!/usr/bin/env python3
"""Watch where processes' threads and pages are on a real kernel, for the
model beside the kernel (tests/guest/model_cases.sh, docs/machine-model.md,
"The model beside the real kernel").

    locality.py [--go=FILE] [--unbind] [--pages=N] [--quiet S] [--settle S]
                [--slow S] [--cap S] [--every S] PID...

--go=FILE: creates FILE at its start (numalot-workload --go-file: the
threads, their memory touched, start their walks then; --start-file: the
program starts then); --unbind then lets every thread of the PIDs use
every CPU, once they run (they sat bound until then, so that they start
where a scenario's start_node puts them, not where the scheduler took
them as they woke). --pages=N: then the watch starts
once the PIDs hold N anonymous pages (60 s at most), for workloads that
walk their memory as soon as it is touched: threads that wait, asleep,
are placed anew at each wake-up, and on the 4-node guest's one-CPU
nodes that was across nodes. Polls every
--every seconds (default 0.2), from its start, each PID's
anonymous pages by node (/proc/PID/numa_maps) and the node of the CPU each
of its busy threads last ran on (/proc/PID/task/TID/stat, field 39;
busy: it ran 5% of the time since the last sample, so that a main thread
that only waits for its workers is left out, and one that works as an
OpenMP master does is not). A process's locality is numalot's
report's (docs/report-format.md, pages.locality_*): the sum over nodes of
min(its share of the process's pages there, its share of the threads
there); several processes weigh by their pages.

It stops at the first of: every PID gone; --cap seconds (default 20);
nothing moved (no page changed node, beyond 1% of them) for --settle
seconds (default 1.5) once --quiet seconds (default 3.5) have passed, but
not before --slow seconds (default 10) while pages migrated since its
start and the locality is under 90% (the kernel's next scan pass may come
later). Bounded
polling: the kernel may act any time in the first seconds (its scan delay
and period, 1 s each by default), and a run that moves nothing must say so
after a while.

Prints one JSON object: t (seconds watched), t90 (from when the locality
stayed 0.9 or more to the end, null if it ended below), first and final
locality, the
series [[t, locality], ...], migrated_pages (/proc/vmstat
numa_pages_migrated, NUMA balancing's, over the watch) and
migrated_all_pages (pgmigrate_success: every migration, move_pages(2) and
migratepages(8) included), and for each PID its final pages by node and
its threads' nodes.
"""
import json
import os
import sys
import time


def node_of_cpu():
    m = {}
    base = "/sys/devices/system/node"
    for d in os.listdir(base):
        if d.startswith("node") and d[4:].isdigit():
            with open(f"{base}/{d}/cpulist") as f:
                for part in f.read().strip().split(","):
                    if not part:
                        continue
                    lo, _, hi = part.partition("-")
                    for c in range(int(lo), int(hi or lo) + 1):
                        m[c] = int(d[4:])
    return m


def vmstat():
    v = {}
    with open("/proc/vmstat") as f:
        for line in f:
            k, _, n = line.partition(" ")
            v[k] = int(n)
    return v


def node_free():
    out = {}
    base = "/sys/devices/system/node"
    for d in sorted(os.listdir(base)):
        if d.startswith("node") and d[4:].isdigit():
            with open(f"{base}/{d}/meminfo") as f:
                for line in f:
                    if "MemFree:" in line:
                        out[d[4:]] = int(line.split()[-2]) // 1024
    return out


def pages(pid):
    """Anonymous pages by node, or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/numa_maps") as f:
            text = f.read()
    except OSError:
        return None
    by = {}
    for line in text.splitlines():
        if " anon=" not in line:
            continue
        for w in line.split():
            if w[:1] == "N" and "=" in w and w[1:w.index("=")].isdigit():
                n, c = w[1:].split("=")
                by[int(n)] = by.get(int(n), 0) + int(c)
    return by


TICK = os.sysconf("SC_CLK_TCK")


def threads(pid, cpus):
    """{tid: (node it last ran on, CPU ticks)}, or None when gone."""
    try:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return None
    out = {}
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                s = f.read()
        except OSError:
            continue
        # Fields after the command: state is field 3, utime 14, stime 15,
        # processor 39 (1-based).
        fields = s[s.rindex(")") + 2:].split()
        if fields[0] in "ZX":
            continue
        out[t] = (cpus.get(int(fields[36]), -1),
                  int(fields[11]) + int(fields[12]))
    return out


def busy_nodes(pid, now, before, dt):
    """The nodes of pid's threads that ran 5% of dt since before (all but
    the main thread when none did: a starved sample)."""
    nodes = [n for t, (n, ticks) in now.items()
             if ticks - before.get(t, (n, 0))[1] >= 0.05 * dt * TICK]
    if not nodes:
        nodes = [n for t, (n, _) in now.items() if t != pid or len(now) == 1]
    return nodes


def locality(pg, nodes):
    total = sum(pg.values())
    if not total or not nodes:
        return None
    return sum(min(pg.get(n, 0) / total, nodes.count(n) / len(nodes))
               for n in set(pg) | set(nodes))


def main(argv):
    opts = {"--quiet": 3.5, "--settle": 1.5, "--slow": 10.0, "--cap": 20.0,
            "--every": 0.2, "--pages": 0.0}
    pids, go, unbind = [], None, False
    for a in argv:
        k, eq, v = a.partition("=")
        if a == "--unbind":
            unbind = True
        elif eq and k == "--go":
            go = v
        elif eq and k in opts:
            opts[k] = float(v)
        elif a.isdigit():
            pids.append(int(a))
        else:
            sys.exit(f"locality.py: unknown argument {a!r}")
    cpus = node_of_cpu()
    t_go = time.monotonic()
    if go:
        open(go, "w").close()
    if unbind:
        # Once they run (a sleeping thread is placed anew as it wakes).
        time.sleep(0.2)
        for p in pids:
            for t in os.listdir(f"/proc/{p}/task"):
                try:
                    os.sched_setaffinity(int(t), set(cpus))
                except OSError:
                    pass
    while opts["--pages"] and time.monotonic() < t_go + 60:
        have = [pages(p) for p in pids]
        if None in have or sum(sum(h.values()) for h in have) >= opts["--pages"]:
            break
        time.sleep(0.1)
    v0 = vmstat()
    prev = {p: threads(p, cpus) or {} for p in pids}
    # From the go (from the touch's end with --pages).
    t0 = time.monotonic() if opts["--pages"] else t_go
    t_prev = time.monotonic() - t0
    series, t90, first = [], None, None
    last_pg, last_move = None, 0.0
    final = {}
    while True:
        time.sleep(opts["--every"])
        t = time.monotonic() - t0
        now = {}
        for p in pids:
            pg, th = pages(p), threads(p, cpus)
            if pg is not None and th is not None:
                now[p] = (pg, busy_nodes(p, th, prev[p], t - t_prev))
                prev[p] = th
        t_prev = t
        if not now:
            break
        final = now
        w = sum(sum(pg.values()) for pg, _ in now.values())
        locs = [(locality(pg, n), sum(pg.values())) for pg, n in now.values()]
        if w and all(l is not None for l, _ in locs):
            loc = sum(l * c for l, c in locs) / w
            series.append([round(t, 2), round(loc, 3)])
            if first is None:
                first = loc
            # From when it stayed 90% local (a new thread may start beside
            # its parent, local, and be spread away a moment later).
            if loc < 0.9:
                t90 = None
            elif t90 is None:
                t90 = t
        flat = {(p, n): c for p, (pg, _) in now.items() for n, c in pg.items()}
        if last_pg is not None:
            keys = set(flat) | set(last_pg)
            moved = sum(abs(flat.get(k, 0) - last_pg.get(k, 0)) for k in keys)
            if moved > 0.01 * max(1, sum(flat.values())):
                last_move = t
        last_pg = flat
        if t >= opts["--cap"]:
            break
        # A migration under way that has not reached 90% may wait for
        # the kernel's next scan pass (its period grows once faults are
        # local): up to --slow seconds.
        migrated = vmstat().get("pgmigrate_success", 0) > v0.get(
            "pgmigrate_success", 0)
        waiting = (migrated and series and series[-1][1] < 0.9 and
                   t < opts["--slow"])
        if (t >= opts["--quiet"] and t - last_move >= opts["--settle"] and
                not waiting):
            break
    v1 = vmstat()
    out = {
        "t": round(time.monotonic() - t0, 2),
        "t90": None if t90 is None else round(t90, 2),
        "first": None if first is None else round(first, 3),
        "final": series[-1][1] if series else None,
        "migrated_pages": v1.get("numa_pages_migrated", 0)
        - v0.get("numa_pages_migrated", 0),
        "migrated_all_pages": v1.get("pgmigrate_success", 0)
        - v0.get("pgmigrate_success", 0),
        "ready_s": round(t0 - t_go, 2),
        "vmstat": {k: v1.get(k, 0) - v0.get(k, 0) for k in (
            "numa_hint_faults", "numa_hint_faults_local", "pgmigrate_fail",
            "numa_pte_updates")},
        "node_free_mib": node_free(),
        "processes": {str(p): {"pages": {str(n): c for n, c in sorted(pg.items())},
                               "thread_nodes": nodes}
                      for p, (pg, nodes) in final.items()},
        "series": series,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
