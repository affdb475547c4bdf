"""INFO commandstats times each call alone: not the idle time before it, not the script code
around a redis.call, while the commands of one pipelined batch share clock reads (a call
starts where the previous call of the batch ended). Holds against Redis 7.0 as well."""
import time

from conftest import R


def cmdstat(c, name):
    info = c.call("INFO", "commandstats").val.decode()
    for line in info.split("\r\n"):
        if line.startswith("cmdstat_%s:" % name):
            return dict((k, float(v)) for k, v in
                        (kv.split("=") for kv in line.split(":", 1)[1].split(",")))
    return None


def test_idle_time_between_batches_is_not_counted(cte_server):
    with cte_server.conn() as c:
        assert c.call("CONFIG", "RESETSTAT") == R("+", b"OK")
        for _ in range(3):
            assert c.call("INCR", "n").kind == ":"
            time.sleep(0.2)
        st = cmdstat(c, "incr")
        assert st["calls"] == 3
        assert st["usec"] < 50000, st  # 0.4 s of idle time went by between them


def test_a_pipelined_batch_counts_every_call_within_its_wall_time(cte_server):
    with cte_server.conn() as c:
        assert c.call("CONFIG", "RESETSTAT") == R("+", b"OK")
        n = 2000
        t0 = time.monotonic()
        c.send_raw(b"".join(b"*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n" for _ in range(n)))
        for i in range(n):
            assert c.read_reply()[0] == R(":", i + 1)
        wall_us = (time.monotonic() - t0) * 1e6
        st = cmdstat(c, "incr")
        assert st["calls"] == n
        assert 0 <= st["usec"] <= wall_us, (st, wall_us)


def test_script_code_around_a_call_is_not_the_call_s_time(cte_server):
    script = """
redis.call('INCR', KEYS[1])
local x = 0
for i = 1, 3000000 do x = x + i end
redis.call('INCR', KEYS[1])
return x
"""
    with cte_server.conn() as c:
        assert c.call("CONFIG", "RESETSTAT") == R("+", b"OK")
        assert c.call("EVAL", script, "1", "s").kind == ":"
        ev, incr = cmdstat(c, "eval"), cmdstat(c, "incr")
        assert incr["calls"] == 2
        assert ev["usec"] > 5 * incr["usec"], (ev, incr)
