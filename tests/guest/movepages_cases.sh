#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): tests/cli/test_real_pages.sh
# on a real kernel with several NUMA nodes, the kernel's NUMA balancing
# off so that numalot alone moves the pages (on one node that test skips).
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
echo 0 >/proc/sys/kernel/numa_balancing 2>/dev/null
NUMALOT=$B/numalot WORKLOAD=$B/numalot-workload \
	bash tests/cli/test_real_pages.sh
# Page moves take the sampled (hot) pages first (tests/unit/real/counters/test_hot.c;
# its last case skips on one node, here it runs).
if out=$("$B/tests/test_hot" 2>&1); then
	echo "ok - page moves take a process's sampled hot pages first"
else
	echo "$out" | tail -20
	echo "not ok - page moves take a process's sampled hot pages first"
fi
