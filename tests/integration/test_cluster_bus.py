"""The cluster bus (server/cluster/bus.c, docs/cluster-bus.md) between real cte-server nodes:
membership from one MEET each, epochs, redis-cli --cluster create and check, a restart from
nodes.conf, failure detection after kill -9 within 2 x cluster-node-timeout and recovery on
restart, and garbage on the bus port.

Nodes come from cluster_util (free client and bus ports, kept across restarts). With
CTE_TEST_PORT_RANGE="lo-hi" set, the ports are picked free in that range instead.
"""
import os
import random
import signal
import socket
import struct
import subprocess
import time

import pytest

import cluster_util
from cluster_util import ClusterNode, stop_nodes, wait_for
from conftest import CTE_KIND, REDIS_CLI

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="the bus's wire format is ours")

NODE_TIMEOUT = 2000  # ms: fail detection is measured against 2 x this
BUS_MAGIC = b"CTEb"
BUS_HDR_LEN = 2472


def _port_in_range():
    lo, hi = (int(x) for x in os.environ["CTE_TEST_PORT_RANGE"].split("-"))
    for _ in range(1000):
        p = random.randint(lo, hi)
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.bind(("127.0.0.1", p))
            return p
        except OSError:
            pass
        finally:
            s.close()
    raise RuntimeError("no free port in %d-%d" % (lo, hi))


if os.environ.get("CTE_TEST_PORT_RANGE"):
    cluster_util.free_port = _port_in_range


class Node(ClusterNode):
    """A cluster node with this file's timeout and an AOF written at every command."""

    def __init__(self):
        super().__init__(["--cluster-node-timeout", str(NODE_TIMEOUT), "--appendonly", "yes",
                          "--appendfsync", "always"], name="bus-node")

    def cmd(self, *args):
        return self.py(*args)

    def myid(self):
        return self.node_id()

    def flags_by_id(self):
        """CLUSTER NODES as {id: flags}."""
        return {n["id"]: n["flags"] for n in self.nodes()}


def all_ok(nodes):
    return all(n.info()["cluster_state"] == "ok" for n in nodes)


def start_nodes(n):
    nodes = []
    try:
        for _ in range(n):
            nodes.append(Node().start())
    except Exception:
        stop_nodes(nodes, check=False)
        raise
    return nodes


def _raw_nodes(n):
    """CLUSTER NODES as {id: fields}: id, addr, flags, master, ping-sent, pong-recv,
    config-epoch, link-state, slots..."""
    return {line.split()[0]: line.split() for line in
            n.cmd("CLUSTER", "NODES").decode().splitlines()}


def converged(nodes, count):
    """Every node lists count nodes, none in handshake or without address, all connected,
    with the same config epoch and slots for every node, and one current epoch."""
    views = []
    for n in nodes:
        v = _raw_nodes(n)
        if len(v) != count:
            return False
        for f in v.values():
            if set(f[2].split(",")) & {"handshake", "noaddr", "fail", "fail?"} or \
                    f[7] != "connected":
                return False
        views.append({nid: (f[6], tuple(f[8:])) for nid, f in v.items()})
    epochs = {n.info()["cluster_current_epoch"] for n in nodes}
    return len(epochs) == 1 and all(v == views[0] for v in views)


# ----------------------------------------------------------------------------------------


def test_three_nodes_meet_once_each_and_converge():
    a, b, c = nodes = start_nodes(3)
    try:
        assert a.cmd("CLUSTER", "MEET", "127.0.0.1", b.port, b.bus_port) == b"OK"
        assert c.cmd("CLUSTER", "MEET", "127.0.0.1", a.port, a.bus_port) == b"OK"
        wait_for(lambda: converged(nodes, 3), 15, what="3 nodes to know each other")
        # every node serves a third of the slots; all of them learn the map, and the equal
        # config epochs (0) are resolved into distinct ones, with one current epoch
        for n, (lo, hi) in zip(nodes, [(0, 5460), (5461, 10922), (10923, 16383)]):
            assert n.cmd("CLUSTER", "ADDSLOTSRANGE", lo, hi) == b"OK"
        wait_for(lambda: all(n.info()["cluster_state"] == "ok" for n in nodes), 15,
                 what="cluster_state:ok everywhere")

        def distinct_epochs():
            if not converged(nodes, 3):
                return False
            eps = [int(f[6]) for f in _raw_nodes(a).values()]
            return len(set(eps)) == 3 and eps
        eps = wait_for(distinct_epochs, 15, what="distinct config epochs")
        cur = {int(n.info()["cluster_current_epoch"]) for n in nodes}
        assert cur == {max(eps)}, (cur, eps)
        slots = [n.cmd("CLUSTER", "SLOTS") for n in nodes]
        assert sorted(map(repr, slots[0])) == sorted(map(repr, slots[1])) \
            == sorted(map(repr, slots[2]))
        # the bus counts its messages
        info = a.info()
        assert int(info["cluster_stats_messages_ping_sent"]) > 0
        assert int(info["cluster_stats_messages_pong_received"]) > 0
        assert int(info["cluster_stats_messages_meet_sent"]) >= 1
        assert int(c.info()["cluster_stats_messages_meet_sent"]) >= 1
        # CLUSTER LINKS: a link to and from each other node, with Redis 7.0's fields
        links = a.cmd("CLUSTER", "LINKS")
        peers = {b.myid(), c.myid()}
        got = set()
        for link in links:
            link = {k.decode(): v for k, v in zip(link[::2], link[1::2])} \
                if isinstance(link, list) else {k.decode(): v for k, v in link.items()}
            assert set(link) == {"direction", "node", "create-time", "events",
                                 "send-buffer-allocated", "send-buffer-used"}
            assert link["node"].decode() in peers
            assert abs(link["create-time"] - time.time() * 1000) < 60000
            got.add((link["direction"], link["node"].decode()))
        assert got == {(d, p) for d in (b"to", b"from") for p in peers}
    finally:
        stop_nodes(nodes)


@pytest.fixture(scope="module")
def created():
    """Three nodes made into a cluster by redis-cli --cluster create."""
    nodes = start_nodes(3)
    try:
        addrs = ["127.0.0.1:%d" % n.port for n in nodes]
        r = subprocess.run([REDIS_CLI, "--cluster", "create"] + addrs + ["--cluster-yes"],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        wait_for(lambda: all(n.info()["cluster_state"] == "ok" for n in nodes), 15,
                 what="cluster_state:ok after create")
        yield nodes
    finally:
        stop_nodes(nodes)


def cluster_check(node):
    r = subprocess.run([REDIS_CLI, "--cluster", "check", "127.0.0.1:%d" % node.port],
                       capture_output=True, text=True, timeout=30)
    return r.returncode == 0 and "[OK] All 16384 slots covered." in r.stdout and \
        "[ERR]" not in r.stdout and "[WARNING]" not in r.stdout, r.stdout + r.stderr


def test_redis_cli_cluster_create_then_check(created):
    ok, out = cluster_check(created[0])
    assert ok, out
    wait_for(lambda: converged(created, 3), 10, what="the same view everywhere")


def test_garbage_on_the_bus_port_is_refused(created):
    a = created[0]
    size0 = a.log_size()
    version2 = BUS_MAGIC + struct.pack(">HHI", 2, 2, BUS_HDR_LEN) + b"\0" * 64
    huge = BUS_MAGIC + struct.pack(">HHI", 1, 2, 0xFFFFFFF0) + b"\0" * 64
    # (the wrong version first: refusals are logged at most once a second)
    payloads = [version2, os.urandom(4096), b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", huge,
                b"*1\r\n$4\r\nPING\r\n",
                BUS_MAGIC + struct.pack(">HHI", 1, 9, BUS_HDR_LEN),        # unknown type
                BUS_MAGIC + struct.pack(">HHI", 1, 2, BUS_HDR_LEN) + b"\xff" * BUS_HDR_LEN]
    for p in payloads:
        s = socket.create_connection(("127.0.0.1", a.bus_port), timeout=5)
        try:
            s.sendall(p)
        except OSError:
            pass  # already closed by the server: fine
        s.settimeout(5)
        try:
            data = s.recv(65536)
            while data:  # the node may not answer garbage; it must close
                data = s.recv(65536)
        except ConnectionResetError:
            pass
        s.close()
        assert a.cmd("PING") == b"PONG"
    assert "another version of the bus" in a.log_text(size0)
    # a connection that sends nothing is closed after the handshake timeout
    s = socket.create_connection(("127.0.0.1", a.bus_port), timeout=10)
    t0 = time.time()
    try:
        assert s.recv(1) == b""
    except ConnectionResetError:
        pass
    waited = time.time() - t0
    s.close()
    assert waited < max(NODE_TIMEOUT, 1000) / 1000.0 + 2.0, waited
    # the cluster did not notice
    assert all(n.info()["cluster_state"] == "ok" for n in created)
    ok, out = cluster_check(a)
    assert ok, out


def test_a_node_restarted_from_nodes_conf_rejoins(created):
    b = created[1]
    before = _raw_nodes(created[0])
    myid = b.myid()
    b.restart_same_dir()
    assert b.myid() == myid
    wait_for(lambda: converged(created, 3), 15, what="the restarted node back in the view")
    after = _raw_nodes(created[0])
    assert after[myid][8:] == before[myid][8:]  # the same slots
    assert after[myid][6] == before[myid][6]    # the same config epoch
    wait_for(lambda: all(n.info()["cluster_state"] == "ok" for n in created), 15,
             what="cluster_state:ok after the restart")


def bus_message(msg_type, sender, port, bus_port, body=b"", count=0):
    """A message in the bus's wire format (docs/cluster-bus.md), from a primary without
    slots."""
    h = BUS_MAGIC + struct.pack(">HHIHH", 1, msg_type, BUS_HDR_LEN + len(body), count, 1)
    h += sender.encode() + b"\0" * 40 + struct.pack(">QQHHI", 0, 0, port, bus_port, 0)
    h += b"\0" * 48 + b"\0" * 2048 + b"\0" * 256
    assert len(h) == BUS_HDR_LEN
    return h + body


def read_message(s):
    data = b""
    while len(data) < 12:
        chunk = s.recv(65536)
        assert chunk, "closed"
        data += chunk
    assert data[:4] == BUS_MAGIC
    version, msg_type, length = struct.unpack(">HHI", data[4:12])
    while len(data) < length:
        chunk = s.recv(65536)
        assert chunk, "closed"
        data += chunk
    return msg_type, data[:length]


def test_unknown_senders_get_in_only_by_meet(created):
    a = created[0]
    fake = "%040x" % random.getrandbits(160)
    ghost_port = cluster_util.free_port()
    # a PING from a node nobody knows: answered with a PONG, and nothing learned
    with socket.create_connection(("127.0.0.1", a.bus_port), timeout=5) as s:
        s.sendall(bus_message(2, fake, ghost_port, ghost_port + 1))
        msg_type, pong = read_message(s)
        assert msg_type == 3
        assert pong[16:56].decode() == a.myid()
    assert len(a.nodes()) == 3
    # a MEET: a handshake node, which goes when its address does not answer in time
    with socket.create_connection(("127.0.0.1", a.bus_port), timeout=5) as s:
        s.sendall(bus_message(1, fake, ghost_port, ghost_port + 1))
        assert read_message(s)[0] == 3
        hs = [n for n in a.nodes() if "handshake" in n["flags"]]
        assert len(hs) == 1 and hs[0]["addr"].startswith("127.0.0.1:%d@" % ghost_port), hs
    wait_for(lambda: len(a.nodes()) == 3, max(NODE_TIMEOUT, 1000) / 1000.0 + 3,
             what="the handshake to expire")
    assert all_ok(created)


def _key_owned_by(node, prefix):
    ranges = node.cmd("CLUSTER", "SLOTS")
    myport = node.port
    owned = [(r[0], r[1]) for r in ranges if r[2][1] == myport]
    for i in range(100000):
        k = "%s:%d" % (prefix, i)
        slot = node.cmd("CLUSTER", "KEYSLOT", k)
        if any(lo <= slot <= hi for lo, hi in owned):
            return k
    raise AssertionError("no key found")


def test_kill9_fails_the_cluster_within_twice_the_node_timeout_and_recovers(created):
    victim, others = created[2], created[:2]
    keys = {}
    for i in range(5):
        k = _key_owned_by(victim, "k%d" % i)
        assert victim.cmd("SET", k, "v%d" % i) == b"OK"
        keys[k] = b"v%d" % i
    vid = victim.myid()
    victim.kill9()
    t0 = time.time()
    seen = {}
    while len(seen) < len(others) and time.time() - t0 < 4 * NODE_TIMEOUT / 1000.0:
        for n in others:
            if n.port not in seen and n.info()["cluster_state"] == "fail":
                seen[n.port] = time.time() - t0
        time.sleep(0.02)
    print("\nfail detection after kill -9 (node timeout %d ms): %s" %
          (NODE_TIMEOUT, ", ".join("%.2f s" % t for t in sorted(seen.values()))))
    assert len(seen) == len(others), seen
    assert max(seen.values()) < 2 * NODE_TIMEOUT / 1000.0, seen
    for n in others:
        flags = n.flags_by_id()[vid]
        assert "fail" in flags, flags
    # restarted from its nodes.conf and AOF: the cluster is whole again, the keys are there
    t1 = time.time()
    victim.start(same_dir=True)
    assert victim.myid() == vid
    wait_for(lambda: all(n.info()["cluster_state"] == "ok" for n in created),
             6 * NODE_TIMEOUT / 1000.0 + 10, what="cluster_state:ok after the restart")
    print("recovered %.2f s after the restart" % (time.time() - t1))
    for n in others:
        assert not set(n.flags_by_id()[vid]) & {"fail", "fail?"}
    for k, v in keys.items():
        assert victim.cmd("GET", k) == v
    ok, out = cluster_check(created[0])
    assert ok, out


def test_a_node_with_a_stale_slot_map_gets_an_update(created):
    """C is down while A takes one of its slots (SETSLOT IMPORTING + NODE: a new config epoch);
    restarted, C claims the slot with its old epoch: the others send it an UPDATE and C
    gives the slot up."""
    a, b, c = created
    cid, aid = c.myid(), a.myid()
    ranges = [r for r in a.cmd("CLUSTER", "SLOTS") if r[2][1] == c.port]
    slot = next(s for lo, hi, *_ in ranges for s in range(lo, hi + 1)
                if c.cmd("CLUSTER", "COUNTKEYSINSLOT", s) == 0)
    c.signal(signal.SIGTERM)  # (not stop(): that removes its dir)
    assert c.wait_exit() == 0
    assert a.cmd("CLUSTER", "SETSLOT", slot, "IMPORTING", cid) == b"OK"
    assert a.cmd("CLUSTER", "SETSLOT", slot, "NODE", aid) == b"OK"

    def owner_on(n):
        return next((r[2][1] for r in n.cmd("CLUSTER", "SLOTS") if r[0] <= slot <= r[1]), None)
    wait_for(lambda: owner_on(b) == a.port, 10, what="B to learn the new owner")
    c.start(same_dir=True)
    wait_for(lambda: owner_on(c) == a.port, 10, what="C to give the slot up")
    assert int(c.info().get("cluster_stats_messages_update_received", 0)) >= 1, c.info()
    sent = sum(int(n.info().get("cluster_stats_messages_update_sent", 0)) for n in (a, b))
    assert sent >= 1
    wait_for(lambda: all_ok(created) and converged(created, 3),
             6 * NODE_TIMEOUT / 1000.0 + 10, what="cluster_state:ok after the UPDATE")
    ok, out = cluster_check(a)
    assert ok, out
