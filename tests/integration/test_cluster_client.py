"""The cluster client of libcte and python/cte (cte.Cluster; docs/libcte.md, docs/python.md).

Two 3-node clusters, each created with `redis-cli --cluster create`:
  - redis_cluster: Debian redis-server nodes. Generic routing by slot, -MOVED after a slot
    moved (CLUSTER SETSLOT + MIGRATE), -ASK during a migration, pipelines over every node, and
    the C client's tests (test_integration_cluster_client, run against the same cluster).
  - cte_cluster: cte-server nodes (cluster-enabled yes): the tag calls through the cluster,
    and TQUERY/TSEARCH merged over the nodes equal to one node holding the same data.
"""
import os
import random
import socket
import subprocess
import threading
import sys
import time

import pytest

from conftest import (CTE_KIND, CTE_SERVER, REDIS_CLI, REDIS_SERVER, ROOT, SANITIZE, NeedMore,
                      RespConn, Server, free_port, parse_reply, start_cte)

BUILD = os.path.dirname(os.path.abspath(CTE_SERVER))
C_TEST = os.environ.get("CTE_CLUSTER_C_TEST") or \
    os.path.join(BUILD, "client", "test_integration_cluster_client")

os.environ.setdefault("CTE_BUILD_DIR", BUILD)
sys.path.insert(0, str(ROOT / "python"))
cte, CTE_IMPORT_ERROR = None, ""
if SANITIZE and "CTE_PYTHON_ASAN" not in os.environ:
    # an ASan build's extension aborts a Python without the ASan runtime preloaded
    # (test_python_cte.py explains): the C tests still run
    CTE_IMPORT_ERROR = "ASan build"
else:
    try:
        import cte
    except ImportError as e:  # python/cte not built (no Python headers)
        CTE_IMPORT_ERROR = str(e)
if os.environ.get("CTE_PYTHON_ASAN"):  # the preload served this process, not the servers
    for _k in ("LD_PRELOAD", "ASAN_OPTIONS", "PYTHONMALLOC"):
        os.environ.pop(_k, None)

needs_py = pytest.mark.skipif(cte is None, reason="python/cte does not import here: %s" %
                              CTE_IMPORT_ERROR)


def _call(port, *args):
    with RespConn(port=port, timeout=10.0) as c:
        r = c.call(*args)
    if r.kind == "-":
        raise RuntimeError("%s on port %d: %s" % (args[0], port, r.val.decode()))
    return r.val


def _cluster_ok(nodes):
    for s in nodes:
        info = _call(s.port, "CLUSTER", "INFO").decode()
        if "cluster_state:ok" not in info or "cluster_slots_assigned:16384" not in info:
            return False
        if _call(s.port, "CLUSTER", "SLOTS") is None:
            return False
    return True


def _start_nodes(kind, binary, n=3):
    nodes = []
    try:
        for i in range(n):
            bus = free_port()
            args = ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-port", str(bus), "--cluster-node-timeout", "5000"]
            nodes.append(Server(kind, binary, args, name="%s-node%d" % (kind, i)).start())
            nodes[-1].bus_port = bus
    except BaseException:
        for s in nodes:
            s.stop(check=False)
        raise
    return nodes


def _create(nodes, timeout=60):
    """redis-cli --cluster create (no replicas), then waits until every node sees all slots."""
    addrs = ["127.0.0.1:%d" % s.port for s in nodes]
    p = subprocess.run([REDIS_CLI, "--cluster", "create", *addrs, "--cluster-yes"],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("redis-cli --cluster create failed:\n%s%s" % (p.stdout, p.stderr))
    deadline = time.time() + timeout
    while not _cluster_ok(nodes):
        if time.time() > deadline:
            raise RuntimeError("the cluster did not reach cluster_state:ok")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def redis_cluster():
    if not os.path.exists(REDIS_SERVER) or not os.path.exists(REDIS_CLI):
        pytest.skip("no redis-server / redis-cli")
    nodes = _start_nodes("redis", REDIS_SERVER)
    try:
        _create(nodes)
        yield nodes
    finally:
        for s in nodes:
            s.stop(check=False)


@pytest.fixture(scope="module")
def cte_cluster():
    """3 cte-server nodes in a cluster made by redis-cli --cluster create."""
    if CTE_KIND != "cte":
        pytest.skip("CTE_KIND is not cte")
    nodes = _start_nodes("cte", CTE_SERVER)
    try:
        _create(nodes, timeout=60)
        yield nodes
    finally:
        for s in nodes:
            s.stop(check=False)


def seeds_of(nodes):
    return ["tcp://127.0.0.1:%d" % s.port for s in nodes]


def node_ids(nodes):
    """port -> node id, from CLUSTER NODES."""
    out = {}
    for line in _call(nodes[0].port, "CLUSTER", "NODES").decode().splitlines():
        f = line.split()
        port = int(f[1].split("@")[0].rsplit(":", 1)[1])
        out[port] = f[0]
    return out


def slot_owner(nodes, slot):
    for start, end, who, *_ in _slots(nodes[0].port):
        if start <= slot <= end:
            return next(s for s in nodes if s.port == who[1])
    raise AssertionError("slot %d not served" % slot)


def _slots(port):
    with RespConn(port=port) as c:
        r = c.call("CLUSTER", "SLOTS")
    return [(e.val[0].val, e.val[1].val, (e.val[2].val[0].val.decode(), e.val[2].val[1].val))
            for e in r.val]


def keyslot(nodes, key):
    return _call(nodes[0].port, "CLUSTER", "KEYSLOT", key)


def move_slot(nodes, slot, src, dst, keys=None, finish=True):
    """Redis Cluster's resharding steps for one slot: IMPORTING on dst, MIGRATING on src,
    MIGRATE of keys (all of the slot's when None), then (finish) SETSLOT NODE everywhere."""
    ids = node_ids(nodes)
    _call(dst.port, "CLUSTER", "SETSLOT", slot, "IMPORTING", ids[src.port])
    _call(src.port, "CLUSTER", "SETSLOT", slot, "MIGRATING", ids[dst.port])
    if keys is None:
        keys = _call(src.port, "CLUSTER", "GETKEYSINSLOT", slot, 1000)
        keys = [k.val for k in keys]
    if keys:
        _call(src.port, "MIGRATE", "127.0.0.1", dst.port, "", 0, 5000, "KEYS", *keys)
    if finish:
        for s in nodes:
            _call(s.port, "CLUSTER", "SETSLOT", slot, "NODE", ids[dst.port])


# ---- the C client (tests/integration/test_cluster_client.c) ----

def test_c_client_against_redis_cluster(redis_cluster):
    if not os.path.exists(C_TEST):
        pytest.skip("%s not built (Criterion missing?)" % C_TEST)
    env = dict(os.environ, CTE_CLUSTER_SEEDS=",".join(seeds_of(redis_cluster)),
               CTE_CLUSTER_KIND="redis")
    p = subprocess.run([C_TEST, "--jobs", "1"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_c_client_against_cte_cluster(cte_cluster):
    if not os.path.exists(C_TEST):
        pytest.skip("%s not built (Criterion missing?)" % C_TEST)
    env = dict(os.environ, CTE_CLUSTER_SEEDS=",".join(seeds_of(cte_cluster)),
               CTE_CLUSTER_KIND="cte")
    p = subprocess.run([C_TEST, "--jobs", "1"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


# ---- python/cte against the Redis cluster: generic routing ----

@needs_py
def test_generic_commands_land_on_the_owning_node(redis_cluster):
    with cte.Cluster(seeds_of(redis_cluster)[:1]) as cl:
        assert sorted(p for _, p in cl.primaries()) == sorted(s.port for s in redis_cluster)
        keys = ["key:%d" % i for i in range(200)]
        for k in keys:
            assert cl.command("SET", k, k.upper()) == "OK"
        for k in keys:
            assert cl.command("GET", k) == k.upper().encode()
        # each key is where CLUSTER KEYSLOT says, and only there
        for k in keys[:20]:
            owner = slot_owner(redis_cluster, keyslot(redis_cluster, k))
            assert _call(owner.port, "GET", k) == k.upper().encode()
        assert cl.command("PING") == "PONG"  # no key: any node


@needs_py
def test_errors_are_raised_with_the_servers_message(redis_cluster):
    with cte.Cluster(seeds_of(redis_cluster)) as cl:
        cl.command("SET", "errkey", "x")
        with pytest.raises(cte.WrongTypeError):
            cl.command("LPUSH", "errkey", "y")
        with pytest.raises(cte.ResponseError, match="CROSSSLOT"):
            cl.command("MSET", "a1", "1", "b2", "2")
    with pytest.raises(cte.AddressError):
        cte.Cluster(["unix:/tmp/nope.sock"])
    with pytest.raises(cte.ConnectionError):
        cte.Cluster(["tcp://127.0.0.1:%d" % free_port()])


@needs_py
def test_every_node_gets_the_seeds_password(redis_cluster):
    for s in redis_cluster:
        _call(s.port, "CONFIG", "SET", "requirepass", "pw 1")
    try:
        seed = "tcp://:pw%%201@127.0.0.1:%d" % redis_cluster[0].port
        with cte.Cluster(seed) as cl:
            for i in range(60):  # keys on every node: each connection opened with AUTH
                assert cl.command("SET", "auth:%d" % i, i) == "OK"
            assert cl.command("GET", "auth:59") == b"59"
        with pytest.raises(cte.AuthenticationError):
            cte.Cluster("tcp://127.0.0.1:%d" % redis_cluster[0].port)
    finally:
        for s in redis_cluster:
            with RespConn(port=s.port) as c:
                c.call("AUTH", "pw 1")
                c.call("CONFIG", "SET", "requirepass", "")


@needs_py
def test_moved_after_a_reshard_is_followed(redis_cluster):
    with cte.Cluster(seeds_of(redis_cluster)) as cl:
        key = "moved:{%d}" % random.randrange(1 << 30)
        cl.command("SET", key, "v1")
        slot = keyslot(redis_cluster, key)
        src = slot_owner(redis_cluster, slot)
        dst = next(s for s in redis_cluster if s is not src)
        move_slot(redis_cluster, slot, src, dst)
        # the client's map still names src: src answers MOVED, the client follows and learns
        assert cl.command("GET", key) == b"v1"
        assert cl.command("SET", key, "v2") == "OK"
        assert _call(dst.port, "GET", key) == b"v2"
        move_slot(redis_cluster, slot, dst, src)  # and back, through a MOVED again
        assert cl.command("GET", key) == b"v2"


@needs_py
def test_ask_during_a_migration_is_followed(redis_cluster):
    with cte.Cluster(seeds_of(redis_cluster)) as cl:
        tag = "{ask%d}" % random.randrange(1 << 30)
        k1, k2, k3 = tag + "a", tag + "b", tag + "c"
        cl.command("SET", k1, "one")
        cl.command("SET", k2, "two")
        slot = keyslot(redis_cluster, k1)
        src = slot_owner(redis_cluster, slot)
        dst = next(s for s in redis_cluster if s is not src)
        move_slot(redis_cluster, slot, src, dst, keys=[k1], finish=False)
        try:
            assert cl.command("GET", k1) == b"one"  # moved already: ASK, ASKING on dst
            assert cl.command("GET", k2) == b"two"  # still on src
            assert cl.command("SET", k3, "three") == "OK"  # new key: ASK to dst
            with RespConn(port=dst.port) as c:
                c.call("ASKING")
                assert c.call("GET", k3).val == b"three"
            # pipelined requests follow ASK too
            assert cl.pipeline().command("GET", k1).command("GET", k2).execute() == \
                [b"one", b"two"]
        finally:
            move_slot(redis_cluster, slot, src, dst, keys=None, finish=True)
        assert cl.command("GET", k2) == b"two"


@needs_py
def test_clusterdown_is_retried_until_the_slot_is_served_again(redis_cluster):
    with cte.Cluster(seeds_of(redis_cluster)) as cl:
        key = "down:{%d}" % random.randrange(1 << 30)
        cl.command("SET", key, "up")
        slot = keyslot(redis_cluster, key)
        owner = slot_owner(redis_cluster, slot)
        _call(owner.port, "CLUSTER", "DELSLOTS", slot)
        with RespConn(port=owner.port) as c:  # the owner answers CLUSTERDOWN now
            deadline = time.time() + 10
            while not (c.call("GET", key).kind == "-" and
                       c.call("GET", key).val.startswith(b"CLUSTERDOWN")):
                assert time.time() < deadline
                time.sleep(0.02)
        t = threading.Timer(0.3, _call, (owner.port, "CLUSTER", "ADDSLOTS", slot))
        t.start()
        try:
            t0 = time.time()
            assert cl.command("GET", key) == b"up"  # backed off and retried meanwhile
            assert time.time() - t0 >= 0.2
        finally:
            t.join()
        # the same through a pipeline (asynchronous requests parked and re-sent)
        _call(owner.port, "CLUSTER", "DELSLOTS", slot)
        t = threading.Timer(0.3, _call, (owner.port, "CLUSTER", "ADDSLOTS", slot))
        t.start()
        try:
            assert cl.pipeline().command("GET", key).command("GET", key).execute() == \
                [b"up", b"up"]
        finally:
            t.join()


@needs_py
def test_pipeline_spreads_over_every_node_and_keeps_order(redis_cluster):
    with cte.Cluster(seeds_of(redis_cluster)) as cl:
        p = cl.pipeline()
        for i in range(500):
            p.command("SET", "pipe:%d" % i, i)
        assert len(p) == 500
        assert p.execute() == ["OK"] * 500
        for i in range(500):
            p.command("INCR", "pipe:%d" % i)
        p.command("LPUSH", "pipe:7", "x")  # WRONGTYPE in the middle: an instance, in place
        replies = p.execute(raise_on_error=False)
        assert replies[:500] == list(range(1, 501))
        assert isinstance(replies[500], cte.WrongTypeError)
        with pytest.raises(cte.WrongTypeError):
            cl.pipeline().command("LPUSH", "pipe:7", "x").execute()
        owners = {slot_owner(redis_cluster, keyslot(redis_cluster, "pipe:%d" % i)).port
                  for i in range(500)}
        assert len(owners) == 3


@needs_py
def test_pipeline_after_a_reshard_follows_moved(redis_cluster):
    with cte.Cluster(seeds_of(redis_cluster)) as cl:
        keys = ["pm:{%d}" % i for i in range(40)]
        cl.pipeline()
        p = cl.pipeline()
        for k in keys:
            p.command("SET", k, k)
        p.execute()
        slot = keyslot(redis_cluster, keys[0])
        src = slot_owner(redis_cluster, slot)
        dst = next(s for s in redis_cluster if s is not src)
        move_slot(redis_cluster, slot, src, dst)
        for k in keys:
            p.command("GET", k)
        assert p.execute() == [k.encode() for k in keys]


# ---- python/cte against cte-server nodes: tags and merged queries ----

def assert_same_hits(got, want):
    """TSEARCH results: the same (tag, blob) in the same order, scores within 1e-12."""
    assert [(t, b) for t, b, _ in got] == [(t, b) for t, b, _ in want]
    assert [s for _, _, s in got] == pytest.approx([s for _, _, s in want], rel=1e-12)
    assert got, "no hits: the comparison would prove nothing"


def _fill(client_like, tags=12, blobs=5, seed=7):
    rnd = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta"]
    for t in range(tags):
        tag = client_like.tag("tag%02d" % t)
        for b in range(blobs):
            text = " ".join(rnd.choice(words) for _ in range(rnd.randrange(3, 30)))
            tag.put_blob("blob%d" % b, text.encode())


@needs_py
def test_tag_calls_through_the_cte_cluster(cte_cluster):
    with cte.Cluster(seeds_of(cte_cluster)) as cl:
        for i in range(30):
            t = cl.tag("t%d" % i)
            assert t.put_blob("b", b"hello %d" % i) == len(b"hello %d" % i)
        for i in range(30):
            t = cl.tag("t%d" % i)
            assert t.get_blob("b") == b"hello %d" % i
            assert t.get_blob_size("b") == len(b"hello %d" % i)
            assert t.get_contained_blobs() == ["b"]
            with t.get_blob_view("b") as v:
                assert bytes(v) == b"hello %d" % i
        assert cl.tag("t3").del_blob("b") is True
        with pytest.raises(cte.NotFoundError):
            cl.tag("t3").get_blob("b")


@needs_py
def test_merged_queries_equal_one_node(cte_cluster):
    for s in cte_cluster:  # the other tests' blobs would count in N and df
        _call(s.port, "FLUSHALL")
    single = start_cte()
    try:
        with cte.Cluster(seeds_of(cte_cluster)) as cl, \
                cte.Client("tcp://127.0.0.1:%d" % single.port) as one:
            _fill(cl)
            _fill(one)
            assert cl.tag_query("tag.*") == one.tag_query("tag.*")
            assert cl.tag_query("tag0.*", 4) == one.tag_query("tag0.*", 4)
            assert cl.blob_query("tag.*", "blob[13]") == one.blob_query("tag.*", "blob[13]")
            assert cl.blob_query("tag.*", ".*", 7) == one.blob_query("tag.*", ".*", 7)
            # oldest first (blobs written in name order, so equal mtimes agree with one node's
            # creation order)
            assert cl.blob_query("tag.*", ".*", since=0) == one.blob_query("tag.*", ".*", since=0)
            assert cl.blob_query("tag.*", ".*", 9, since=0) == \
                one.blob_query("tag.*", ".*", 9, since=0)
            # TSEARCH in two phases: one node's hits, order and scores
            for q, k in (("alpha omega", 1000), ("alpha omega", 5), ("kappa", 7),
                         ("sigma theta nothere", 10)):
                assert_same_hits(cl.search(q, k=k), one.search(q, k=k))
            assert_same_hits(cl.search("alpha", k=3, tag_regex="tag0[2-5]"),
                             one.search("alpha", k=3, tag_regex="tag0[2-5]"))
            assert cl.search("nothere") == []
            # RESP3 nodes: maps for TINFO, doubles for scores; the same merged answers
            with cte.Cluster([a + "?resp=3" for a in seeds_of(cte_cluster)]) as cl3:
                assert cl3.blob_query("tag.*", ".*", since=0) == \
                    one.blob_query("tag.*", ".*", since=0)
                assert_same_hits(cl3.search("alpha omega", k=9), one.search("alpha omega", k=9))
                assert cl3.tag_query("tag.*", 5) == one.tag_query("tag.*", 5)
    finally:
        single.stop()


@needs_py
def test_one_node_cte_cluster_serves_tags_and_merged_queries():
    """A cte-server with cluster mode and every slot (no bus needed): the Cluster's tag calls,
    queries (the window path asks TINFO) and pipelines give what a Client gives."""
    if CTE_KIND != "cte":
        pytest.skip("CTE_KIND is not cte")
    node = _start_nodes("cte", CTE_SERVER, n=1)[0]
    try:
        _call(node.port, "CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        addr = "tcp://127.0.0.1:%d" % node.port
        with cte.Cluster(addr) as cl, cte.Client(addr) as one:
            assert cl.primaries() == [("127.0.0.1", node.port)]
            _fill(cl, tags=6, blobs=3)
            assert cl.tag("tag01").get_blob("blob2") == one.tag("tag01").get_blob("blob2")
            assert cl.tag_query("tag.*") == one.tag_query("tag.*")
            assert cl.blob_query("tag.*", ".*", 5) == one.blob_query("tag.*", ".*", 5)
            assert cl.blob_query("tag.*", ".*", since=0) == one.blob_query("tag.*", ".*", since=0)
            assert cl.search("alpha beta", k=7) == one.search("alpha beta", k=7)
            p = cl.pipeline().put_blob("tag01", "new", b"xyz").get_blob("tag01", "new")
            assert p.execute() == [3, b"xyz"]
    finally:
        node.stop(check=False)


def _resp(port, *args):
    with RespConn(port=port, timeout=10.0) as c:
        return c.py(*args)


def test_tsearch_with_global_stats_scores_as_one_node():
    """TSEARCH's two phases on three standalone nodes holding a third of the blobs each:
    STATS summed over the nodes, then GLOBALSTATS, give every hit the score one node holding
    them all gives, so the merged best-k equals its best-k (the cluster client does this)."""
    if CTE_KIND != "cte":
        pytest.skip("CTE_KIND is not cte")
    nodes = [start_cte(name="shard%d" % i) for i in range(3)]
    single = start_cte(name="whole")
    try:
        rnd = random.Random(5)
        words = ["alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "rho"]
        for i in range(150):
            text = " ".join(rnd.choice(words) for _ in range(rnd.randrange(1, 25)))
            for port in (nodes[i % 3].port, single.port):
                _resp(port, "TPUT", "t%03d" % i, "b", 0, text)
        q = "gamma omega rho nothere"
        docs = tokens = 0
        df = {}
        for s in nodes:
            n, t, terms = _resp(s.port, "TSEARCH", q, "STATS")
            docs, tokens = docs + n, tokens + t
            for k in range(0, len(terms), 2):
                df[terms[k]] = df.get(terms[k], 0) + terms[k + 1]
        one_n, one_t, one_terms = _resp(single.port, "TSEARCH", q, "STATS")
        assert (docs, tokens) == (one_n, one_t)
        assert df == dict(zip(one_terms[::2], one_terms[1::2]))
        glob = ["GLOBALSTATS", docs, tokens, len(df)]
        for term, d in df.items():
            glob += [term, d]
        hits = []
        for s in nodes:
            hits += _resp(s.port, "TSEARCH", q, "LIMIT", 20, "WITHSCORES", *glob)
        want = _resp(single.port, "TSEARCH", q, "LIMIT", 20, "WITHSCORES")
        score = {(t, b): float(sc) for t, b, sc in want}
        for t, b, sc in hits:
            if (t, b) in score:
                assert float(sc) == pytest.approx(score[(t, b)], rel=1e-12)
        hits.sort(key=lambda h: (-round(float(h[2]), 9), h[0], h[1]))
        assert [(t, b) for t, b, _ in hits[:20]] == [(t, b) for t, b, _ in want]
        # without GLOBALSTATS a shard's scores are its own (what the two phases fix)
        local = _resp(nodes[0].port, "TSEARCH", q, "LIMIT", 3, "WITHSCORES")
        assert any(float(sc) != pytest.approx(score.get((t, b), -1), rel=1e-9)
                   for t, b, sc in local)
        # bad GLOBALSTATS: Redis-style errors, nothing searched
        for bad in (["GLOBALSTATS", 0, 5, 0], ["GLOBALSTATS", 5, 5, 3, b"gamma", 1],
                    ["GLOBALSTATS", 5, -1, 0], ["GLOBALSTATS", 5, 5, 99999]):
            with RespConn(port=nodes[0].port) as c:
                assert c.call("TSEARCH", q, *bad).kind == "-"
    finally:
        for s in nodes + [single]:
            s.stop()


@needs_py
def test_tag_calls_follow_moved_and_ask_on_cte_nodes(cte_cluster):
    """A slot moved with CLUSTER SETSLOT while it has no keys (no MIGRATE needed): a tag
    created during the migration goes to the importing node through -ASK, and after
    SETSLOT NODE the client, whose map still names the old owner, follows -MOVED."""
    with cte.Cluster(seeds_of(cte_cluster)) as cl:
        tag = "{mv%d}t" % random.randrange(1 << 30)
        slot = keyslot(cte_cluster, tag)
        src = slot_owner(cte_cluster, slot)
        dst = next(s for s in cte_cluster if s is not src)
        assert cl.tag(tag).get_contained_blobs() == []  # routed to src, nothing there
        move_slot(cte_cluster, slot, src, dst, keys=[], finish=False)
        try:
            assert cl.tag(tag).put_blob("b", b"during") == 6  # ASK, ASKING on dst
            with RespConn(port=dst.port) as c:
                c.call("ASKING")
                assert c.call("TGET", tag, "b").val == b"during"
            p = cl.pipeline().put_blob(tag, "c", b"piped").get_blob(tag, "b")
            assert p.execute() == [5, b"during"]  # asynchronous requests follow ASK too
        finally:
            ids = node_ids(cte_cluster)
            for s in cte_cluster:
                _call(s.port, "CLUSTER", "SETSLOT", slot, "NODE", ids[dst.port])
        assert cl.tag(tag).get_blob("b") == b"during"  # MOVED, then the map reloaded
        assert sorted(cl.tag(tag).get_contained_blobs()) == ["b", "c"]
        assert cl.tag_query(tag.replace("{", "\\{").replace("}", "\\}")) == [tag]


class FakeNode:
    """A TCP server answering every request from a table (command name -> raw RESP reply,
    default +OK), for replies a real cluster never sends."""

    def __init__(self, replies):
        self.replies = replies
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.talkers = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn = self.sock.accept()[0]
            except OSError:
                return
            t = threading.Thread(target=self._talk, args=(conn,), daemon=True)
            self.talkers.append(t)
            t.start()

    def _talk(self, conn):
        buf = b""
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                while True:
                    try:
                        r, pos = parse_reply(buf, 0)
                    except NeedMore:
                        break
                    buf = buf[pos:]
                    name = r.val[0].val.upper() if r.val else b""
                    conn.sendall(self.replies.get(name, b"+OK\r\n"))

    def close(self):
        """Stops accepting (shutdown wakes the accept) and waits for every thread; call it
        after the clients closed their connections."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        for t in [self.thread] + self.talkers:
            t.join(timeout=10)


def _slots_reply(*ranges):
    out = b"*%d\r\n" % len(ranges)
    for start, end, host, port in ranges:
        out += b"*3\r\n:%d\r\n:%d\r\n*2\r\n$%d\r\n%s\r\n:%d\r\n" % (
            start, end, len(host), host, port)
    return out


@needs_py
@pytest.mark.parametrize("slots", [
    b"+OK\r\n",                                           # not an array
    b"*1\r\n*2\r\n:0\r\n:5\r\n",                           # too short a range
    _slots_reply((5, 2, b"127.0.0.1", 7000)),               # start after end
    _slots_reply((0, 16384, b"127.0.0.1", 7000)),           # past the last slot
    _slots_reply((0, 10, b"127.0.0.1", 0)),                 # port 0
    _slots_reply((0, 10, b"h" * 300, 7000)),                # host too long
    b"*1\r\n*3\r\n:0\r\n:1\r\n:7\r\n",                     # node not an array
    b"-ERR This instance has cluster support disabled\r\n",
])
def test_a_malformed_slot_map_fails_the_open_cleanly(slots):
    node = FakeNode({b"CLUSTER": slots})
    try:
        with pytest.raises(cte.Error):
            cte.Cluster("tcp://127.0.0.1:%d" % node.port, timeout=5)
    finally:
        node.close()


@needs_py
def test_redirects_to_nowhere_and_garbage_redirects_are_errors():
    dead = free_port()
    node = FakeNode({})
    node.replies[b"CLUSTER"] = _slots_reply((0, 16383, b"127.0.0.1", node.port))
    node.replies[b"GET"] = b"-MOVED 1234 127.0.0.1:%d\r\n" % dead
    node.replies[b"SET"] = b"-MOVED 99999 127.0.0.1:1\r\n"  # slot out of range: no redirect
    node.replies[b"INCR"] = b"-ASK 12 nohostport\r\n"
    node.replies[b"DEL"] = b"-MOVED 12 127.0.0.1:%d\r\n" % node.port  # back to itself
    try:
        with cte.Cluster("tcp://127.0.0.1:%d" % node.port, timeout=5) as cl:
            with pytest.raises(cte.ConnectionError, match=str(dead)):
                cl.command("GET", "k")
            with pytest.raises(cte.ResponseError, match="MOVED 99999"):
                cl.command("SET", "k", "v")
            with pytest.raises(cte.ResponseError, match="ASK 12 nohostport"):
                cl.command("INCR", "k")
            t0 = time.time()
            with pytest.raises(cte.ResponseError, match="MOVED 12"):
                cl.command("DEL", "k")  # at most 16 attempts, then the last error
            assert time.time() - t0 < 5
            with pytest.raises(cte.ConnectionError):
                cl.pipeline().command("GET", "k").execute()
            assert cl.command("PING") == "OK"  # still usable
    finally:
        node.close()
