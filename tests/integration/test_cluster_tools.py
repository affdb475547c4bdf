"""The cluster tooling end to end: tools/cluster (start, status, kill -9, restart, stop) and
cte-ycsb's redis binding with redis.cluster=true (slot routing, MOVED/ASK during a
`redis-cli --cluster reshard`), against 3-node clusters of Debian's redis-server and of
cte-server. cte-ycsb is found beside CTE_SERVER (build/ycsb/cte-ycsb) unless
CTE_YCSB names it."""
import os
import re
import subprocess
import threading
import time

import pytest
import redis

from conftest import CTE_KIND, CTE_SERVER, REDIS_CLI, REDIS_SERVER, ROOT

TOOL = str(ROOT / "tools" / "cluster")
YCSB = os.environ.get("CTE_YCSB") or os.path.join(os.path.dirname(os.path.abspath(CTE_SERVER)),
                                                 "ycsb", "cte-ycsb")
WORKLOAD = str(ROOT / "ycsb" / "workloads" / "workloada")
NODE_TIMEOUT = 1000  # ms
RECORDS = 3000


def tool(*args, check=True, timeout=90):
    p = subprocess.run(["/usr/bin/python3", TOOL] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    if check:
        assert p.returncode == 0, "tools/cluster %s: exit %d\n%s\n%s" % (
            " ".join(map(str, args)), p.returncode, p.stdout, p.stderr)
    return p


def server_args(kind):
    if kind == "redis":
        return ["--server", "redis", "--bin", REDIS_SERVER, "--aof"]
    return ["--server", CTE_KIND, "--bin", CTE_SERVER]


def errorstat(client, name):
    """errorstat_<name>'s count ("count=N", which redis-py may have parsed into a dict)."""
    v = client.info("errorstats").get("errorstat_" + name, "count=0")
    return int(v["count"] if isinstance(v, dict) else v.split("=")[1])


class Cluster:
    def __init__(self, kind, d, addrs):
        self.kind, self.dir = kind, d
        self.ports = [int(a.rsplit(":", 1)[1]) for a in addrs]

    def client(self, i):
        return redis.Redis(port=self.ports[i], socket_timeout=10)

    def info(self, i):
        raw = self.client(i).execute_command("CLUSTER", "INFO").decode()
        return dict(l.split(":", 1) for l in raw.splitlines() if ":" in l)

    def dbsizes(self):
        return [self.client(i).dbsize() for i in range(len(self.ports))]

    def redirects(self):
        """MOVED + ASK replies the nodes sent (INFO errorstats)."""
        return sum(errorstat(self.client(i), e) for i in range(len(self.ports))
                   for e in ("MOVED", "ASK"))


@pytest.fixture(scope="module", params=["redis", "cte"])
def cluster(request, tmp_path_factory):
    kind = request.param
    args = server_args(kind)
    d = tmp_path_factory.mktemp("cluster-" + kind)
    p = tool("start", 3, "--dir", d, "--node-timeout", NODE_TIMEOUT, *args)
    addrs = p.stdout.split()
    assert len(addrs) == 3 and all(re.fullmatch(r"127\.0\.0\.1:\d+", a) for a in addrs), p.stdout
    yield Cluster(kind, d, addrs)
    tool("stop", "--dir", d, "--clean", check=False)


def ycsb(phase, port, *props, threads=2, timeout=120, extra=()):
    argv = [YCSB, phase, "-P", WORKLOAD, "-db", "redis", "-p", "redis.port=%d" % port,
            "-p", "redis.cluster=true", "-p", "recordcount=%d" % RECORDS, "-threads",
            str(threads)] + list(extra)
    for p in props:
        argv += ["-p", p]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, "%s\n%s\n%s" % (argv, p.stdout, p.stderr[-3000:])
    return p.stdout


def returns(out):
    """{(section, status): count} from the report's Return= lines."""
    got = {}
    for m in re.finditer(r"^\[([A-Z-]+)\], Return=(\w+), (\d+)$", out, re.M):
        got[(m.group(1), m.group(2))] = int(m.group(3))
    return got


def assert_all_ok(out, ops):
    r = returns(out)
    assert not [k for k in r if k[1] != "OK" or k[0].endswith("-FAILED")], out
    assert sum(v for k, v in r.items() if k[0] != "VERIFY") == ops, out  # VERIFY: checks


def test_status_lists_every_node_up_and_ok(cluster):
    p = tool("status", "--dir", cluster.dir)
    lines = [l for l in p.stdout.splitlines() if not l.startswith("#")]
    assert len(lines) == 3
    for i, line in enumerate(lines):
        assert line.startswith("%d 127.0.0.1:%d " % (i + 1, cluster.ports[i])), line
        assert " up cluster_state=ok known_nodes=3 " in line, line
    for i in range(3):
        info = cluster.info(i)
        assert info["cluster_state"] == "ok" and info["cluster_slots_assigned"] == "16384"


@pytest.mark.skipif(not os.path.exists(YCSB), reason="no cte-ycsb at %s" % YCSB)
def test_ycsb_cluster_load_and_run_have_no_failure(cluster):
    for i in range(3):
        cluster.client(i).flushall()
    assert_all_ok(ycsb("load", cluster.ports[1]), RECORDS)
    sizes = cluster.dbsizes()
    assert sum(sizes) == RECORDS + 1, sizes  # and _indices, on one slot's node
    assert all(s > RECORDS // 5 for s in sizes), sizes  # spread by slot
    rc = redis.RedisCluster(host="127.0.0.1", port=cluster.ports[0], socket_timeout=10)
    assert rc.zcard("_indices") == RECORDS
    rc.close()
    assert_all_ok(ycsb("run", cluster.ports[2], "operationcount=3000"), 3000)


@pytest.mark.skipif(not os.path.exists(YCSB), reason="no cte-ycsb at %s" % YCSB)
def test_ycsb_run_during_a_reshard_loses_nothing(cluster):
    for i in range(3):
        cluster.client(i).flushall()
    assert_all_ok(ycsb("load", cluster.ports[0]), RECORDS)
    ids = [cluster.client(i).execute_command("CLUSTER", "MYID").decode() for i in range(2)]
    before = cluster.redirects()
    out = {}

    def run():
        out["run"] = ycsb("run", cluster.ports[0], "operationcount=40000",
                          "maxexecutiontime=30")
    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.3)
    rs = subprocess.run([REDIS_CLI, "--cluster", "reshard", "127.0.0.1:%d" % cluster.ports[0],
                         "--cluster-from", ids[0], "--cluster-to", ids[1],
                         "--cluster-slots", "1000", "--cluster-yes", "--cluster-pipeline", "50"],
                        capture_output=True, text=True, timeout=60)
    t.join(90)
    assert rs.returncode == 0 and "[ERR]" not in rs.stdout, rs.stdout[-2000:] + rs.stderr
    assert_all_ok(out["run"], 40000)
    assert sum(cluster.dbsizes()) == RECORDS + 1
    for i in range(3):
        assert cluster.info(i)["cluster_state"] == "ok"
    assert cluster.redirects() > before  # the run did follow redirects
    # every key where the map says: a fresh load with another seed node overwrites in place
    assert_all_ok(ycsb("load", cluster.ports[2]), RECORDS)
    assert sum(cluster.dbsizes()) == RECORDS + 1


@pytest.mark.skipif(not os.path.exists(YCSB), reason="no cte-ycsb at %s" % YCSB)
def test_ycsb_follows_ask_during_a_migration_and_moved_after_it(cluster):
    """One slot migrated by hand (SETSLOT IMPORTING/MIGRATING, MIGRATE KEYS): every read of
    its keys gets -ASK from the old owner and must succeed on the new one after ASKING; once
    the slot is assigned (SETSLOT NODE), the old owner answers -MOVED."""
    for i in range(3):
        cluster.client(i).flushall()
    assert_all_ok(ycsb("load", cluster.ports[0], "dataintegrity=true"), RECORDS)
    c = [cluster.client(i) for i in range(3)]
    ids = [x.execute_command("CLUSTER", "MYID").decode() for x in c]
    slot = c[0].execute_command("CLUSTER", "KEYSLOT", "user6284781860667377211")  # record 0
    src = next(i for i in range(3) if c[i].execute_command("CLUSTER", "COUNTKEYSINSLOT", slot))
    dst = (src + 1) % 3
    c[dst].execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src])
    c[src].execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst])
    keys = c[src].execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    assert keys
    c[src].execute_command("MIGRATE", "127.0.0.1", cluster.ports[dst], "", 0, 5000, "KEYS",
                           *keys)
    read_all = ("readproportion=1", "updateproportion=0", "requestdistribution=sequential",
                "operationcount=%d" % RECORDS, "dataintegrity=true")
    ask = errorstat(c[src], "ASK")
    assert_all_ok(ycsb("run", cluster.ports[0], *read_all), RECORDS)
    assert errorstat(c[src], "ASK") - ask >= len(keys)
    # a run that read the map before the slot is assigned: two passes over the records at
    # 2000 reads/s, the slot assigned to dst 0.8 s in, so the second pass meets -MOVED
    moved = errorstat(c[src], "MOVED")
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("run", ycsb(
        "run", cluster.ports[0], *(read_all[:-2] + ("operationcount=%d" % (2 * RECORDS),
                                                   "dataintegrity=true")),
        extra=["-target", "2000"])))
    t.start()
    time.sleep(0.8)
    for x in c:
        x.execute_command("CLUSTER", "SETSLOT", slot, "NODE", ids[dst])
    t.join(60)
    assert_all_ok(out["run"], 2 * RECORDS)
    assert errorstat(c[src], "MOVED") > moved
    assert sum(cluster.dbsizes()) == RECORDS + 1


def test_kill_fails_the_cluster_and_restart_recovers_the_node(cluster):
    c = cluster.client(2)
    key = next(k for k in ("k%d" % i for i in range(1000))
               if c.execute_command("CLUSTER", "KEYSLOT", k) > 10922)
    c.set(key, "kept")  # in the AOF before the reply (written, fsync aside: kill -9 keeps it)
    p = tool("kill", 3, "--dir", cluster.dir)
    assert "killed 127.0.0.1:%d" % cluster.ports[2] in p.stdout
    t0 = time.time()
    while cluster.info(0)["cluster_state"] != "fail" and time.time() - t0 < 10:
        time.sleep(0.05)
    took = time.time() - t0
    assert cluster.info(0)["cluster_state"] == "fail"
    assert took <= 2 * NODE_TIMEOUT / 1000 + 1.0, took
    st = tool("status", "--dir", cluster.dir, check=False)
    assert st.returncode == 1 and re.search(r"^3 \S+ pid=\d+ down ", st.stdout, re.M), st.stdout
    tool("restart", 3, "--dir", cluster.dir)
    tool("status", "--dir", cluster.dir)
    assert cluster.client(2).get(key) == b"kept"


@pytest.mark.skipif(not os.path.exists(YCSB), reason="no cte-ycsb at %s" % YCSB)
def test_ycsb_retries_through_a_node_restart(cluster):
    """Node 3 killed and restarted (from its AOF) during a run: cte-ycsb's commands for its
    slots are retried until it is back, and every read finds its record intact."""
    for i in range(3):
        cluster.client(i).flushall()
    assert_all_ok(ycsb("load", cluster.ports[0], "dataintegrity=true"), RECORDS)
    time.sleep(0.2)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("run", ycsb(
        "run", cluster.ports[0], "readproportion=1", "updateproportion=0",
        "requestdistribution=sequential", "operationcount=%d" % (2 * RECORDS),
        "dataintegrity=true", extra=["-target", "2000"])))
    t.start()
    time.sleep(0.5)
    tool("kill", 3, "--dir", cluster.dir)
    time.sleep(0.3)
    tool("restart", 3, "--dir", cluster.dir)
    t.join(60)
    assert_all_ok(out["run"], 2 * RECORDS)
    assert sum(cluster.dbsizes()) == RECORDS + 1


def test_one_node_cluster_and_stop_clean(tmp_path):
    args = server_args("redis")
    d = tmp_path / "one"
    p = tool("start", 1, "--dir", d, *args)
    port = int(p.stdout.split()[0].rsplit(":", 1)[1])
    try:
        st = tool("status", "--dir", d).stdout
        assert "slots=0-16383" in st, st
        assert tool("kill", "nosuchnode", "--dir", d, check=False).returncode == 2
        again = tool("start", 1, "--dir", d, *args, check=False)
        assert again.returncode == 1 and "already holds a running cluster" in again.stderr
    finally:
        tool("stop", "--dir", d, "--clean")
    assert not d.exists()
    with pytest.raises(redis.ConnectionError):
        redis.Redis(port=port, socket_timeout=2).ping()
