"""cte-ycsb end to end (ycsb/): load and run of YCSB's workloads with the redis binding against
cte-server and against Debian's redis-server, and with the cte binding against cte-server over
TCP, the Unix socket and shared memory. Checks the report YCSB prints (its lines, Return=OK
counts equal to the operation counts), the -s status lines, the throttle, and that the records
are in the server as YCSB's Java binding stores them: a hash per key with field0..field9 and
the key in the _indices sorted set with its Java String.hashCode() as score (redis binding); a
fixed-layout blob per key, scans through TLIST's ordered form (cte binding). cte-ycsb is found beside
CTE_SERVER (build/ycsb/cte-ycsb) unless CTE_YCSB names it."""
import os
import re
import subprocess
import time

import pytest

from conftest import CTE_SERVER, ROOT, SANITIZE

YCSB = os.environ.get("CTE_YCSB") or os.path.join(os.path.dirname(os.path.abspath(CTE_SERVER)),
                                                 "ycsb", "cte-ycsb")
WORKLOADS = ROOT / "ycsb" / "workloads"
RECORDS = 200
OPS = 400
TIMEOUT = 300 if SANITIZE else 120

pytestmark = pytest.mark.skipif(not os.path.exists(YCSB), reason="no cte-ycsb at %s" % YCSB)


def ycsb(phase, workload, args, threads=2, check=True):
    """Runs cte-ycsb; returns (exit status, stdout, stderr)."""
    cmd = [YCSB, phase, "-P", str(WORKLOADS / ("workload" + workload)),
           "-p", "recordcount=%d" % RECORDS, "-p", "operationcount=%d" % OPS,
           "-threads", str(threads)] + list(args)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    out, err = p.stdout.decode(), p.stderr.decode()
    if check:
        assert p.returncode == 0, "%s\n--- stdout ---\n%s\n--- stderr ---\n%s" % (cmd, out, err)
    return p.returncode, out, err


LINE = re.compile(r"^\[([A-Za-z_%-]+)\], ([^,]+), (\S+)$")


def report(out):
    """The report as {section: {metric: value}}; every line must have YCSB's shape."""
    sections = {}
    for line in out.splitlines():
        if line == "Data integrity is enabled.":  # YCSB prints it on stdout too
            continue
        m = LINE.match(line)
        assert m, "not a report line: %r" % line
        sections.setdefault(m.group(1), {})[m.group(2)] = m.group(3)
    return sections


def check_report(rep, ops_by_section, threads=2):
    """[OVERALL] and one section per operation: Operations, the latency lines, and Return=OK
    equal to Operations (nothing failed)."""
    assert int(rep["OVERALL"]["RunTime(ms)"]) >= 0
    assert float(rep["OVERALL"]["Throughput(ops/sec)"]) > 0
    assert int(rep["CLEANUP"]["Operations"]) == threads
    total = 0
    for name in ops_by_section:
        sec = rep.get(name)
        assert sec, "no [%s] section in %r" % (name, sorted(rep))
        n = int(sec["Operations"])
        for metric in ("AverageLatency(us)", "MinLatency(us)", "MaxLatency(us)",
                       "95thPercentileLatency(us)", "99thPercentileLatency(us)"):
            assert metric in sec, (name, metric)
        assert int(sec["MinLatency(us)"]) <= int(sec["95thPercentileLatency(us)"]) <= \
            int(sec["99thPercentileLatency(us)"]) <= int(sec["MaxLatency(us)"])
        if name != "READ-MODIFY-WRITE":  # YCSB measures it, its read and update report status
            assert sec.get("Return=OK") == str(n), (name, sec)
        assert not [k for k in sec if k.startswith("Return=") and k != "Return=OK"], sec
        total += n
    failed = [s for s in rep if s.endswith("-FAILED")]
    assert not failed, failed
    return total


def java_hash(s):
    """String.hashCode() of an ASCII string."""
    h = 0
    for c in s:
        h = (31 * h + ord(c)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def fnv64(v):
    h = 0xCBF29CE484222325
    for _ in range(8):
        h ^= v & 0xFF
        h = (h * 1099511628211) & 0xFFFFFFFFFFFFFFFF
        v >>= 8
    h = h - (1 << 64) if h >= 1 << 63 else h
    return abs(h)


def keys():
    return {"user%d" % fnv64(i) for i in range(RECORDS)}


# Which sections a run of each workload reports (operations of its mix).
RUN_SECTIONS = {
    "a": ["READ", "UPDATE"], "b": ["READ", "UPDATE"], "c": ["READ"], "d": ["READ", "INSERT"],
    "e": ["SCAN", "INSERT"], "f": ["READ", "UPDATE", "READ-MODIFY-WRITE"],
}


def run_ops(rep, workload):
    """Operations a run did: RMW's read and update are also counted under READ and UPDATE."""
    sections = [s for s in RUN_SECTIONS[workload] if s in rep]
    n = check_report(rep, sections)
    if "READ-MODIFY-WRITE" in rep:
        n -= 2 * int(rep["READ-MODIFY-WRITE"]["Operations"])
    return n


def redis_args(server):
    return ["-db", "redis", "-p", "redis.host=127.0.0.1", "-p", "redis.port=%d" % server.port]


def check_redis_records(server):
    with server.conn() as c:
        assert c.py("DBSIZE") == RECORDS + 1
        assert c.py("ZCARD", "_indices") == RECORDS
        stored = {k.decode() for k in c.py("KEYS", "user*")}
        assert stored == keys(), "the keys are user + FNV-64 of 0..recordcount-1"
        for key in ("user6284781860667377211", "user8517097267634966620", "user1820151046732198393"):
            flat = c.py("HGETALL", key)
            h = dict(zip(flat[::2], flat[1::2]))
            assert sorted(h) == [b"field%d" % i for i in range(10)], h
            for v in h.values():
                assert len(v) == 100 and all(32 <= b <= 127 for b in v), v
            assert float(c.py("ZSCORE", "_indices", key)) == java_hash(key)
        assert float(c.py("ZSCORE", "_indices", "user6284781860667377211")) == -594971599


@pytest.mark.parametrize("target", ["cte-server", "redis-server"])
def test_redis_binding_loads_and_runs_workload_a_as_ycsb_does(target, request):
    server = request.getfixturevalue("cte_server" if target == "cte-server" else "redis_server")
    _, out, err = ycsb("load", "a", redis_args(server))
    rep = report(out)
    assert check_report(rep, ["INSERT"]) == RECORDS
    check_redis_records(server)
    _, out, err = ycsb("run", "a", redis_args(server))
    rep = report(out)
    assert check_report(rep, ["READ", "UPDATE"]) == OPS
    check_redis_records(server)  # updates rewrite fields, add nothing
    assert "Starting test." in err


def test_redis_binding_sends_what_jedis_sends(cte_server):
    """MONITOR on the server shows the commands of one insert, read, update and scan."""
    args = redis_args(cte_server)
    mon = cte_server.conn()
    mon.send("MONITOR")
    assert mon.read_reply()[0].val == b"OK"
    ycsb("load", "e", args + ["-p", "recordcount=1", "-p", "insertcount=1"], threads=1)
    ycsb("run", "e", args + ["-p", "recordcount=1", "-p", "operationcount=1", "-p",
                             "scanproportion=1", "-p", "insertproportion=0", "-p",
                             "maxscanlength=5", "-p", "minscanlength=5"], threads=1)
    ycsb("run", "a", args + ["-p", "recordcount=1", "-p", "operationcount=2", "-p",
                             "readproportion=0", "-p", "updateproportion=1"], threads=1)
    seen = []
    mon.settimeout(10)
    while len(seen) < 6:
        line = mon.read_reply()[0].val.decode()
        words = re.findall(r'"((?:[^"\\]|\\.)*)"', line)
        if words and words[0] not in ("MONITOR",):
            seen.append(words)
    mon.close()
    key = "user6284781860667377211"
    assert seen[0][:2] == ["HMSET", key] and len(seen[0]) == 22
    assert [seen[0][2 + 2 * i] for i in range(10)] == ["field%d" % i for i in range(10)]
    assert seen[1] == ["ZADD", "_indices", "-5.94971599E8", key]
    assert seen[2] == ["ZRANGEBYSCORE", "_indices", "-5.94971599E8", "+inf", "limit", "0", "5"]
    assert seen[3] == ["HGETALL", key]
    assert seen[4][:2] == ["HMSET", key] and len(seen[4]) == 4 and seen[4][2].startswith("field")


def test_status_lines_and_the_throttle(cte_server):
    """-s prints YCSB's status line (every status.interval s); -target spreads the operations."""
    ycsb("load", "c", redis_args(cte_server))
    t0 = time.time()
    _, out, err = ycsb("run", "c", redis_args(cte_server) + ["-s", "-target", "200", "-p",
                                                              "status.interval=1"])
    elapsed = time.time() - t0
    assert elapsed >= 1.8, "400 operations at 200/s take 2 s, not %.2f" % elapsed
    rep = report(out)
    assert int(rep["OVERALL"]["RunTime(ms)"]) >= 1800
    assert check_report(rep, ["READ"]) == OPS
    status = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3} \d+ sec: \d+ operations; ")
    lines = [l for l in err.splitlines() if status.match(l)]
    assert len(lines) >= 3, err
    assert re.search(r"\d+ sec: \d+ operations; [\d.]+ current ops/sec; est completion in \d+ "
                     r"seconds \[READ: Count=\d+, Max=\d+, Min=\d+, Avg=[\d.]+, 90=\d+, 99=\d+, "
                     r"99\.9=\d+, 99\.99=\d+\]", err), err
    assert re.search(r" %d operations; " % OPS, lines[-1]), lines[-1]


def test_bad_settings_are_refused_with_a_reason(cte_server):
    for args, why in ((["-p", "requestdistribution=bogus"], "Unknown request distribution"),
                      (["-p", "fieldcount=0"], "fieldcount"),
                      (["-db", "mongodb"], "Unknown DB mongodb"),
                      (["-p", "redis.port=99999"], "redis.port"),
                      (["-p", "cte.depth=0", "-db", "cte"], "cte.depth")):
        rc, out, err = ycsb("run", "a", redis_args(cte_server) + args, check=False)
        assert rc == 2 and why in err, (args, rc, err)
    rc, out, err = ycsb("run", "a", ["-db", "redis", "-p", "redis.port=1"], check=False)
    assert rc == 1 and "cannot connect" in err, err


def cte_uri(server, transport):
    if transport == "tcp":
        return "tcp://127.0.0.1:%d" % server.port
    return "%s:%s" % (transport, server.unixsocket)


def cte_args(server, transport):
    return ["-db", "cte", "-p", "cte.uri=" + cte_uri(server, transport)]


def cte_index(c):
    """The cte binding's record keys in key order, from TLIST's ordered form (which scans use):
    checked to be sorted, to be every name of the tag but the layout blob, and the only index
    there is (the binding keeps no keys of its own beside the tag)."""
    names = [b.decode() for b in c.py("TLIST", "usertable", "FROM", "", "COUNT", 1 << 40)]
    assert names == sorted(names)
    assert sorted(b.decode() for b in c.py("TLIST", "usertable")) == names
    assert "_ycsb_layout" in names
    assert c.py("KEYS", "_ycsb*") == []
    return [k for k in names if k != "_ycsb_layout"]


def check_cte_records(server, inserted):
    with server.conn() as c:
        assert c.py("TLEN", "usertable") == inserted + 1  # and the layout blob
        index = cte_index(c)
        assert len(index) == inserted
        assert keys() <= set(index)
        for key in ("user6284781860667377211", "user1820151046732198393"):
            blob = c.py("TGET", "usertable", key)
            assert blob[:4] == b"\xffYC\x01", blob[:4]
            assert len(blob) == 1004 and all(32 <= b <= 127 for b in blob[4:]), blob
        layout = c.py("TGET", "usertable", "_ycsb_layout")
        assert layout == b"cte-ycsb record layout 3: head 4, fieldcount 10, slot 100, header 0\n"
        # binary records: the search index leaves them out (it holds the layout blob's text)
        info = c.py("INFO", "search").decode()
        assert re.search(r"^search_documents:1\r?$", info, re.M), info


@pytest.mark.parametrize("transport", ["tcp", "unix", "shm"])
def test_cte_binding_loads_and_runs_workload_a(cte_server, transport):
    args = cte_args(cte_server, transport)
    _, out, _ = ycsb("load", "a", args)
    assert check_report(report(out), ["INSERT"]) == RECORDS
    check_cte_records(cte_server, RECORDS)
    # the scrambled zipfian's favourite: keynum fnv(0) % itemcount (recordcount + 1 here)
    favourite = "user%d" % fnv64(fnv64(0) % (RECORDS + 1))
    with cte_server.conn() as c:
        before = c.py("TGET", "usertable", favourite)
    _, out, _ = ycsb("run", "a", args)
    assert check_report(report(out), ["READ", "UPDATE"]) == OPS
    check_cte_records(cte_server, RECORDS)
    with cte_server.conn() as c:
        after = c.py("TGET", "usertable", favourite)
    assert len(after) == 1004
    # it got updates (1 in 26 operations, half of them updates): some fields changed, in place
    field = lambda b, i: b[4 + 100 * i:4 + 100 * i + 100]
    changed = [i for i in range(10) if field(before, i) != field(after, i)]
    assert changed, "the zipfian favourite got updates"


def test_cte_binding_updates_in_place_with_variable_field_lengths(cte_server):
    """With fieldlengthdistribution=uniform each field carries its length in a 4-byte header;
    reads return exactly what was written (dataintegrity verifies every field read)."""
    args = cte_args(cte_server, "tcp") + ["-p", "dataintegrity=true"]
    _, out, _ = ycsb("load", "a", args)
    check_report(report(out), ["INSERT"])
    _, out, _ = ycsb("run", "a", args)
    rep = report(out)
    check_report(rep, ["READ", "UPDATE", "VERIFY"])
    assert int(rep["VERIFY"]["Return=OK"]) == int(rep["READ"]["Operations"])
    args = cte_args(cte_server, "tcp") + ["-p", "table=vt", "-p", "fieldlengthdistribution=uniform",
                                          "-p", "minfieldlength=10", "-p", "fieldlength=50"]
    ycsb("load", "b", args)
    _, out, _ = ycsb("run", "b", args + ["-p", "readallfields=false"])
    check_report(report(out), ["READ", "UPDATE"])
    with cte_server.conn() as c:
        blob = c.py("TGET", "vt", "user6284781860667377211")
        assert len(blob) == 4 + 10 * 54
        for i in range(10):
            n = int.from_bytes(blob[4 + 54 * i:4 + 54 * i + 4], "little")
            assert 10 <= n <= 50, (i, n)
        # the layout is checked: a run with another shape is refused
    rc, out, err = ycsb("run", "b", cte_args(cte_server, "tcp") + ["-p", "table=vt"], check=False)
    assert rc == 1 and "another layout" in err, err


def monitor_lines(server, run):
    """The MONITOR lines of cte-server while run() runs, as lists of arguments."""
    import socket
    mon = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    mon.sendall(b"MONITOR\r\n")
    buf = b""
    while b"\r\n" not in buf:
        buf += mon.recv(65536)
    assert buf.startswith(b"+OK"), buf
    buf = buf[buf.index(b"\r\n") + 2:]
    run()
    with server.conn() as c:
        c.py("ECHO", "monitor-end")
    while b'"monitor-end"' not in buf:
        buf += mon.recv(65536)
    mon.close()
    lines = []
    for line in buf.decode().split("\r\n"):
        if line.startswith("+") and "] " in line:
            lines.append(re.findall(r'"((?:[^"\\]|\\.)*)"', line.split("] ", 1)[1]))
    return lines


def test_cte_binding_scans_read_the_next_keys_in_order(cte_server):
    """Every scan is one TLIST usertable FROM <start> COUNT <n + 1> and then reads exactly the
    n keys from its start key on, in key order (fewer when the start is near the end)."""
    args = cte_args(cte_server, "tcp")
    ycsb("load", "e", args)
    with cte_server.conn() as c:
        index = cte_index(c)
    assert len(index) == RECORDS
    scans = []

    def run():
        ycsb("run", "e", args + ["-p", "scanproportion=1", "-p", "insertproportion=0",
                                 "-p", "operationcount=60"], threads=1)

    for cmd in monitor_lines(cte_server, run):
        if cmd[0] == "TLIST":
            assert cmd[1] == "usertable" and cmd[2] == "FROM" and cmd[4] == "COUNT", cmd
            scans.append({"start": cmd[3], "count": int(cmd[5]) - 1, "read": []})
        elif cmd[0] == "TGET" and scans:
            scans[-1]["read"].append(cmd[2])
        assert not cmd[0].startswith("Z"), cmd  # no index of the binding's own
    assert len(scans) == 60
    short = 0
    for sc in scans:
        assert 1 <= sc["count"] <= 100, sc  # workload e: maxscanlength 100, uniform
        want = [k for k in index if k >= sc["start"]][:sc["count"]]
        assert sc["read"] == want, sc
        short += len(want) < sc["count"]
    assert short < len(scans)


BINDINGS = ["redis>cte-server", "redis>redis-server", "cte>tcp", "cte>shm"]


@pytest.mark.parametrize("workload", sorted(RUN_SECTIONS))
@pytest.mark.parametrize("binding", BINDINGS)
def test_every_workload_with_every_binding(workload, binding, request):
    db, where = binding.split(">")
    if db == "redis":
        server = request.getfixturevalue("redis_server" if where == "redis-server" else "cte_server")
        args = redis_args(server)
    else:
        server = request.getfixturevalue("cte_server")
        args = cte_args(server, where)
    _, out, _ = ycsb("load", workload, args)
    assert check_report(report(out), ["INSERT"]) == RECORDS
    _, out, _ = ycsb("run", workload, args)
    rep = report(out)
    assert run_ops(rep, workload) == OPS
    inserted = RECORDS + int(rep.get("INSERT", {}).get("Operations", 0))
    with server.conn() as c:
        if db == "redis":
            assert c.py("ZCARD", "_indices") == inserted
        else:
            assert len(cte_index(c)) == inserted
            assert c.py("TLEN", "usertable") == inserted + 1


def test_compare_prints_the_table_and_draws_the_chart(tmp_path):
    """ycsb/compare at a tiny scale: its own servers, every configuration, a table row per
    phase with a ratio per configuration, and the SVG chart."""
    build = os.path.dirname(os.path.abspath(CTE_SERVER))
    svg = tmp_path / "chart.svg"
    p = subprocess.run([str(ROOT / "ycsb" / "compare"), "--build", build, "--ycsb", YCSB,
                        "--records", "200", "--ops", "200", "--scan-ops", "20", "--rounds", "1",
                        "--threads", "2", "--workloads", "a,e", "--skip-aof", "--svg", str(svg)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    out, err = p.stdout.decode(), p.stderr.decode()
    assert p.returncode == 0, out + err
    assert re.search(r"^\| load \| [\d,]+ \| [\d,]+ \([\d.]+\) \| [\d,]+ \([\d.]+\) \| [\d,]+ "
                     r"\([\d.]+\) \|$", out, re.M), out
    for row in ("A 50/50 read/update", "E short scans", "used_memory after the load"):
        assert "| %s |" % row in out, out
    assert re.search(r"^\| E short scans \| SCAN \| [\d,]+ \| [\d,]+ \| [\d,]+ \| [\d,]+ \|$",
                     out, re.M), out
    assert len(re.findall(r"round 1/1: \S+ +(load|a|e) ", err)) == 12, err
    chart = svg.read_text()
    assert chart.startswith("<svg") and chart.count("<title>") == 3 * 3, chart
