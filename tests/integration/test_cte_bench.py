"""tools/cte-bench (build/cte-bench, on libcte) against the real server, briefly, over every
transport: tcp://, unix:, shm: (TPUT/TGET) and redis://, redis+unix:, redis+shm: (SET/GET
against cte-server itself, and against Debian's redis-server when it is installed). Each run
must end with a parseable result line with ops > 0 and exit 0; a get of a missing key, a get
that returns other bytes than the puts wrote, a refused connection and bad options must fail
with the documented exit status (1, 1, 1, 2). Behaviour, not speed: the figures are not judged.

CTE_BENCH names the binary; by default it is cte-bench beside CTE_SERVER."""
import os
import re
import subprocess

import pytest

from conftest import CTE_KIND, CTE_SERVER, REDIS_SERVER, SANITIZE, R, free_port

CTE_BENCH = os.environ.get("CTE_BENCH") or os.path.join(os.path.dirname(CTE_SERVER), "cte-bench")
LINE = re.compile(r"^ops/s=(\d+) MB/s=([\d.]+) avg_us=([\d.]+) p99_us=([\d.]+)$")
RUN_TIMEOUT = 120 if SANITIZE else 30

pytestmark = pytest.mark.skipif(not os.path.exists(CTE_BENCH),
                                reason="no cte-bench at %s (build it first)" % CTE_BENCH)


def bench(*args):
    """Runs cte-bench; returns (exit status, stdout, stderr)."""
    p = subprocess.run([CTE_BENCH, "--quiet", *args], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=RUN_TIMEOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def result(out):
    """The figures of the last stdout line, which must be the result line."""
    lines = out.strip().splitlines()
    assert lines, "no output"
    m = LINE.match(lines[-1])
    assert m, "last line is not a result line: %r" % lines[-1]
    return {"ops": int(m.group(1)), "mbs": float(m.group(2)), "avg_us": float(m.group(3)),
            "p99_us": float(m.group(4))}


def uri(server, kind):
    if kind in ("tcp", "redis"):
        return "%s://127.0.0.1:%d" % (kind, server.port)
    return "%s:%s" % (kind, server.unixsocket)


CTE_KINDS = ["tcp", "unix", "shm", "redis", "redis+unix", "redis+shm"]


@pytest.mark.parametrize("kind", CTE_KINDS)
@pytest.mark.parametrize("op", ["put", "get"])
def test_a_short_run_over_each_transport_prints_a_result_line(cte_server, kind, op):
    if CTE_KIND != "cte" and kind not in ("redis", "redis+unix"):
        pytest.skip("TPUT/TGET and shm need cte-server")
    rc, out, err = bench("--uri", uri(cte_server, kind), "--op", op, "--threads", "2",
                         "--depth", "4", "--size", "1k", "--keys", "200", "--seconds", "0.3")
    assert rc == 0, err
    r = result(out)
    assert r["ops"] > 0 and r["mbs"] > 0 and r["avg_us"] > 0 and r["p99_us"] >= r["avg_us"] / 100


def test_puts_write_what_the_server_then_holds(cte_server):
    if CTE_KIND != "cte":
        pytest.skip("needs cte-server")
    rc, out, err = bench("--uri", uri(cte_server, "shm"), "--count", "40", "--keys", "20",
                         "--size", "100", "--depth", "8")
    assert rc == 0, err
    assert result(out)["ops"] > 0
    with cte_server.conn() as c:
        assert c.call("TLEN", "bench") == R(":", 20)
        assert len(c.call("TGET", "bench", "b7").val) == 100
    rc, out, err = bench("--uri", uri(cte_server, "redis"), "--count", "30", "--keys", "30")
    assert rc == 0, err
    with cte_server.conn() as c:
        assert len(c.call("GET", "key:29").val) == 4096


@pytest.mark.parametrize("kind", ["tcp", "shm", "redis+unix"])
def test_a_get_of_a_missing_key_fails_with_exit_1(cte_server, kind):
    if CTE_KIND != "cte" and kind != "redis+unix":
        pytest.skip("needs cte-server")
    rc, out, err = bench("--uri", uri(cte_server, kind), "--op", "get", "--no-load",
                         "--count", "10", "--keys", "5")
    assert rc == 1, (out, err)
    assert "10 gets found no value" in err


def test_a_get_of_other_bytes_fails_with_exit_1(cte_server):
    if CTE_KIND != "cte":
        pytest.skip("needs cte-server")
    rc, _, err = bench("--uri", uri(cte_server, "unix"), "--count", "4", "--keys", "4",
                       "--size", "64")
    assert rc == 0, err
    with cte_server.conn() as c:
        assert c.call("TPUT", "bench", "b2", 10, b"\x00") == R(":", 64)
    for kind in ("unix", "shm"):
        rc, out, err = bench("--uri", uri(cte_server, kind), "--op", "get", "--no-load",
                             "--count", "8", "--keys", "4", "--size", "64")
        assert rc == 1, (out, err)
        assert "2 gets returned a value of the wrong size or contents" in err


def test_an_error_reply_fails_with_exit_1_and_the_servers_message(cte_server):
    if CTE_KIND != "cte":
        pytest.skip("needs cte-server")
    with cte_server.conn() as c:
        assert c.call("SET", "bench", "x") == R("+", b"OK")
    for kind in ("tcp", "shm"):
        rc, _, err = bench("--uri", uri(cte_server, kind), "--count", "5")
        assert rc == 1
        assert "WRONGTYPE" in err, err


def test_against_redis_server_over_tcp_and_its_unix_socket(server_factory):
    if not os.path.exists(REDIS_SERVER):
        pytest.skip("no redis-server at %s" % REDIS_SERVER)
    redis = server_factory(kind="redis")
    for kind in ("redis", "redis+unix"):
        rc, out, err = bench("--uri", uri(redis, kind), "--op", "get", "--threads", "2",
                             "--depth", "8", "--keys", "100", "--seconds", "0.3")
        assert rc == 0, err
        assert result(out)["ops"] > 0


def test_memcpy_prints_the_same_line():
    rc, out, err = bench("--memcpy", "--threads", "2", "--size", "64k", "--count", "500")
    assert rc == 0, err
    r = result(out)
    assert r["ops"] > 0 and r["mbs"] > 0


def test_a_refused_connection_fails_with_exit_1():
    rc, out, err = bench("--uri", "tcp://127.0.0.1:%d" % free_port(), "--count", "1")
    assert rc == 1 and out == ""
    assert "cannot connect" in err


@pytest.mark.parametrize("args", [
    ["--uri", "http://x"], ["--uri", "tcp://127.0.0.1:70000"], ["--uri", "shm:"],
    ["--threads", "0"], ["--depth", "5000"], ["--size", "4q"], ["--op", "del"],
    ["--score", "1.5"], ["--count", "10", "--seconds", "1"], ["--seconds", "0"], ["extra"]])
def test_bad_options_fail_with_exit_2(args):
    rc, out, err = bench(*args)
    assert rc == 2 and out == "", (rc, out, err)
    assert err.strip()
