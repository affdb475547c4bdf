#!/usr/bin/python3
"""Server CPU of EVALSHA running N commands vs the same N commands sent directly.

Usage: tools/bench-scripting.py PORT PID [N] [CALLS]
Sends CALLS EVALSHA calls of a cached script that runs N INCRs (pipelined 100 calls at a time),
then CALLS*N INCRs sent directly (pipelined 100*N at a time), and prints the server process's
CPU time (user+sys, from /proc/PID/stat) for each and their ratio. Same client, same
connection; the server must be otherwise idle."""
import os
import sys
import time

import redis


def cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    port, pid = int(sys.argv[1]), int(sys.argv[2])
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    calls = int(sys.argv[4]) if len(sys.argv) > 4 else 20000
    r = redis.Redis(port=port)
    sha = r.script_load("for i = 1, %d do redis.call('INCR', KEYS[1]) end return 1" % n)
    batch = 100

    def run(send_one, per_batch, total):
        c0, t0 = cpu(pid), time.time()
        done = 0
        while done < total:
            p = r.pipeline(transaction=False)
            for _ in range(min(per_batch, total - done)):
                send_one(p)
            p.execute()
            done += per_batch
        return cpu(pid) - c0, time.time() - t0

    ev_cpu, ev_wall = run(lambda p: p.evalsha(sha, 1, "k"), batch, calls)
    dir_cpu, dir_wall = run(lambda p: p.incr("k"), batch * n, calls * n)
    print("N=%d calls=%d: EVALSHA cpu %.2fs (wall %.2fs), direct cpu %.2fs (wall %.2fs), "
          "ratio %.2f" % (n, calls, ev_cpu, ev_wall, dir_cpu, dir_wall, ev_cpu / dir_cpu))


if __name__ == "__main__":
    main()
