"""socket-spin-us: after a read from a socket client the loop polls without sleeping for a
while, so a client that waits for each reply has its next request caught without two wake-ups.

INFO stats counts the spins begun (socket_spins), the reads they caught (socket_spin_hits) and
the times a crowded core switched the spin off (spin_crowded). The tests check that a
client sending request after request is caught by the spin, that socket-spin-us 0 never spins,
that a CPU hog sharing the server's core switches the spin off (and the replies stay right), and
that the key is checked and settable like any other.
"""
import os
import subprocess
import sys
import time

import pytest

from conftest import CTE_KIND, CTE_SERVER, R

CTE_BENCH = os.environ.get("CTE_BENCH") or os.path.join(os.path.dirname(CTE_SERVER), "cte-bench")

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server's own statistics")


def stats(server):
    with server.conn() as c:
        info = c.call("INFO", "stats").val.decode()
    out = {}
    for line in info.split("\r\n"):
        if line.startswith(("socket_spin", "spin_crowded")):
            k, v = line.split(":")
            out[k] = int(v)
    return out


def ping_pong(c, n):
    for i in range(n):
        assert c.call("SET", "k", str(i)) == R("+", b"OK")
        assert c.call("GET", "k") == R("$", str(i).encode())


def test_default_and_config(server_factory):
    s = server_factory()
    with s.conn() as c:
        assert c.py("CONFIG", "GET", "socket-spin-us") == [b"socket-spin-us", b"200"]
        assert c.call("CONFIG", "SET", "socket-spin-us", "1001").kind == "-"
        assert c.call("CONFIG", "SET", "socket-spin-us", "-1").kind == "-"
        assert c.py("CONFIG", "GET", "socket-spin-us") == [b"socket-spin-us", b"200"]
        assert c.call("CONFIG", "SET", "socket-spin-us", "0") == R("+", b"OK")
        assert c.py("CONFIG", "GET", "socket-spin-us") == [b"socket-spin-us", b"0"]


def test_back_to_back_requests_are_caught(server_factory):
    # 1 ms windows: a Python client's next request comes some 100 us after its reply
    s = server_factory(["--socket-spin-us", "1000"])
    with s.conn() as c:
        ping_pong(c, 500)
    st = stats(s)
    assert st["socket_spins"] >= 1
    assert st["socket_spin_hits"] >= 250, st


def test_zero_never_spins(server_factory):
    s = server_factory(["--socket-spin-us", "0"])
    with s.conn() as c:
        ping_pong(c, 300)
    st = stats(s)
    assert st["socket_spins"] == 0 and st["socket_spin_hits"] == 0, st
    with s.conn() as c:  # switched on at run time
        assert c.call("CONFIG", "SET", "socket-spin-us", "1000") == R("+", b"OK")
        ping_pong(c, 300)
    assert stats(s)["socket_spin_hits"] >= 100


def pin_with_a_hog(server):
    """Pins every thread of the server to one CPU and starts a busy loop on that CPU."""
    cpu = sorted(os.sched_getaffinity(0))[0]
    for tid in os.listdir("/proc/%d/task" % server.pid):
        os.sched_setaffinity(int(tid), {cpu})
    return subprocess.Popen([sys.executable, "-c", "import os; os.sched_setaffinity(0, {%d})\n"
                             "while True: pass" % cpu])


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_a_hog_on_the_core_switches_the_spin_off(server_factory):
    s = server_factory(["--socket-spin-us", "1000"])
    hog = pin_with_a_hog(s)
    try:
        time.sleep(0.1)
        with s.conn() as c:
            deadline = time.time() + 20
            while time.time() < deadline and stats(s)["spin_crowded"] == 0:
                ping_pong(c, 50)
        assert stats(s)["spin_crowded"] >= 1
    finally:
        hog.kill()
        hog.wait()
    # the spin comes back once the core is free again (it stays off 200 ms)
    time.sleep(0.5)
    with s.conn() as c:
        assert c.call("CONFIG", "RESETSTAT") == R("+", b"OK")
        ping_pong(c, 300)
    st = stats(s)
    assert st["socket_spin_hits"] >= 100, st


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or not os.path.exists(CTE_BENCH),
                    reason="needs sched_setaffinity and cte-bench")
def test_a_hog_on_the_core_puts_shm_segments_to_sleep(server_factory):
    """The shm transport's spin obeys the same rule: its yields meet the hog, its idle segments
    sleep on their eventfd instead, and every get still comes back right (cte-bench compares
    each one byte for byte and exits 1 otherwise)."""
    s = server_factory(["--socket-spin-us", "0", "--shm-enabled", "yes"])
    hog = pin_with_a_hog(s)
    try:
        time.sleep(0.1)
        p = subprocess.run([CTE_BENCH, "--quiet", "--uri", "shm:" + s.unixsocket, "--op", "get",
                            "--size", "4k", "--keys", "100", "--threads", "2", "--depth", "4",
                            "--seconds", "2"], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=120)
        assert p.returncode == 0, p.stderr
        assert stats(s)["spin_crowded"] >= 1
    finally:
        hog.kill()
        hog.wait()
    p = subprocess.run([CTE_BENCH, "--quiet", "--uri", "shm:" + s.unixsocket, "--op", "get",
                        "--size", "4k", "--keys", "100", "--count", "20000"],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
