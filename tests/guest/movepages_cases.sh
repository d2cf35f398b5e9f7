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
