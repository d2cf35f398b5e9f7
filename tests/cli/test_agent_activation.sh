#!/usr/bin/env bash
# numalotd started the way systemd starts it from numalotd.socket (socket
# activation: the listening socket passed as descriptor 3 with LISTEN_PID
# and LISTEN_FDS), with only the capabilities numalotd.service leaves it
# and no new privileges: it serves that socket, binds a user's threads and
# hands the user's report over as the user, leaves the socket in place
# when it exits, and the next connection starts the next agent on it.
set -u
N=${NUMALOT:-build/numalot}
D=${NUMALOTD:-$(dirname "$N")/numalotd}
W=${WORKLOAD:-build/numalot-workload}
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1 || ! command -v python3 >/dev/null; then
	echo "skip: needs root, a user nobody and python3"
	exit 0
fi
T=$(mktemp -d /tmp/numalot-activation.XXXXXX)
chmod 755 "$T"
mkdir -m 777 "$T/pub"
S=$T/run/numalotd.sock
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
hello() { timeout 30 "$N" request --socket="${1:-$S}" '{"v":1,"op":"hello"}' 2>&1; }
agent_of() { sed -n 's/.*"pid":\([0-9]*\).*/\1/p' <<<"$1"; }

# What numalotd.socket and systemd do, in small: bind the socket (0666, in
# a root folder of 0755), and whenever a connection waits and no agent
# runs, start one with the socket as descriptor 3; log how each exits.
cat >"$T/activate.py" <<'EOF'
import os, select, socket, sys
path, log, exits = sys.argv[1], sys.argv[2], sys.argv[3]
os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
os.umask(0o111)
s.bind(path)
s.listen(128)
for _ in range(20):  # as systemd's start limit: no endless restarts
    select.select([s], [], [])
    pid = os.fork()
    if pid == 0:
        if s.fileno() != 3:
            os.dup2(s.fileno(), 3)
        os.set_inheritable(3, True)
        os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS="1",
                          LISTEN_FDNAMES="numalotd.socket")
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(fd, 2)
        os.execvp(sys.argv[4], sys.argv[4:])
    _, st = os.waitpid(pid, 0)
    with open(exits, "a") as f:
        f.write("%d\n" % os.waitstatus_to_exitcode(st))
EOF
# The service's capability bounding set (etc/numalotd.service.in) and
# NoNewPrivileges=, where setpriv can give them.
unit=$(dirname "${BASH_SOURCE[0]}")/../../etc/numalotd.service.in
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr ' ' '\n' |
	sed -n 's/^CAP_\(.*\)/+\L\1/p' | paste -sd, -)
confine=()
if command -v setpriv >/dev/null && [ -n "$caps" ]; then
	confine=(setpriv --bounding-set=-all,"$caps" --inh-caps=-all --no-new-privs)
else
	echo "skip: no setpriv (util-linux): the agent runs with every capability"
fi
python3 "$T/activate.py" "$S" "$T/agent.log" "$T/exits" "${confine[@]}" "$D" \
	--socket="$S" --idle-exit=2 --log-level=debug &
pids+=($!)
for _ in $(seq 50); do [ -S "$S" ] && break; sleep 0.05; done
check "the socket is there before any agent" test -S "$S" -a ! -s "$T/agent.log"
r=$(hello)
a1=$(agent_of "$r")
check "the first connection starts an agent, which answers it" test -n "$a1"
check "the agent serves the socket it was passed" grep -q "serving $S, passed by systemd" "$T/agent.log"
check "...and binds nothing itself (no lock of its own)" test ! -e "$S.serving"

# nobody's process, registered by root as slurmstepd does: the paper's
# profile pins its threads at take-over.
su nobody -s /bin/sh -c "echo \$\$ >'$T/pub/w.pid'; exec '$PWD/$W' --threads 3 --seconds 20" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 500); do [ -s "$T/pub/w.pid" ] && break; sleep 0.02; done
wp=$(cat "$T/pub/w.pid")
pids+=($wp)
sleep 0.2
all=$(awk '/Cpus_allowed_list/ {print $2}' /proc/$wp/status)
"$N" request --socket="$S" "{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":$(id -u nobody),\"pid\":$wp,\"policy\":\"lbma\",\"cpus\":\"$all\",\"period\":0.2,\"report\":\"$T/pub/r.json\",\"params\":{\"profile\":\"paper\"}}" >"$T/reg" 2>&1
check "root registers nobody's task through the passed socket" grep -q '"ok":true' "$T/reg"
if [ ${#confine[@]} -gt 0 ]; then
	want=$("${confine[@]}" grep -E '^(CapBnd|CapEff|NoNewPrivs):' /proc/self/status)
	check "the agent has only the service's capabilities ($caps), no new privileges" \
		test "$(grep -E '^(CapBnd|CapEff|NoNewPrivs):' /proc/"$a1"/status)" = "$want"
fi
pinned=0
for _ in $(seq 200); do
	sleep 0.1
	[ "$(nproc)" -eq 1 ] && pinned=1 && break
	[ "$(pinned_threads "$wp")" -gt 0 ] && pinned=1 && break
done
check "...and binds nobody's threads" test $pinned -eq 1

[ -n "$a1" ] && kill -TERM "$a1"
for _ in $(seq 600); do [ -s "$T/exits" ] && break; sleep 0.05; done
check "SIGTERM: the agent exits 0" test "$(head -1 "$T/exits")" = 0
check "...hands the report over as nobody" test "$(stat -c %U "$T/pub/r.json" 2>/dev/null)" = nobody
check "...gives the threads their affinity back" test "$(threads_not_on "$wp" "$all")" -eq 0
check "...and leaves the socket to systemd" test -S "$S"
r=$(hello)
a2=$(agent_of "$r")
check "the next connection starts a new agent on the same socket" test -n "$a2" -a "$a2" != "$a1"
kill "$wp" 2>/dev/null
for _ in $(seq 600); do [ "$(wc -l <"$T/exits" 2>/dev/null || echo 0)" -ge 2 ] && break; sleep 0.05; done
check "an idle agent exits (idle_exit) and leaves the socket" test "$(wc -l <"$T/exits")" -eq 2 -a -S "$S"
r=$(hello)
check "...and the socket starts another" test -n "$(agent_of "$r")"

# Not what numalotd takes: two sockets, or a descriptor 3 that is not a
# listening socket. It says so and exits non-zero.
LISTEN_PID=$$ LISTEN_FDS=2 python3 -c "
import os, socket, subprocess, sys
a = socket.socket(socket.AF_UNIX); a.bind('$T/x1'); a.listen()
b = socket.socket(socket.AF_UNIX); b.bind('$T/x2'); b.listen()
a = os.dup(a.fileno()); b = os.dup(b.fileno())
os.dup2(a, 3); os.dup2(b, 4)
pid = os.fork()
if pid == 0:
    os.environ.update(LISTEN_PID=str(os.getpid()), LISTEN_FDS='2')
    os.execv('$D', ['$D', '--socket=$T/x1'])
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
" 2>"$T/two.err"
rc=$?
check "two sockets passed: numalotd refuses them (exit $rc)" test $rc -ne 0
check "...saying it takes exactly one" grep -q "exactly one" "$T/two.err"

# systemd's own tool, where it is installed.
if command -v systemd-socket-activate >/dev/null; then
	systemd-socket-activate -l "$T/run/sa.sock" -- "$D" \
		--socket="$T/run/sa.sock" --idle-exit=1 >/dev/null 2>"$T/sa.log" &
	pids+=($!)
	for _ in $(seq 50); do [ -S "$T/run/sa.sock" ] && break; sleep 0.05; done
	r=$(hello "$T/run/sa.sock")
	check "systemd-socket-activate: the agent answers" test -n "$(agent_of "$r")"
	check "...on the socket systemd-socket-activate passed" grep -q "passed by systemd" "$T/sa.log"
else
	echo "skip: systemd-socket-activate is not installed (package systemd)"
fi
[ $fails -eq 0 ] || tail -20 "$T/agent.log"
[ $fails -eq 0 ]
