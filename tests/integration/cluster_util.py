"""Cluster-mode helpers shared by the cluster tests (test_cluster.py, test_cluster_bus.py):
start N cte-servers with cluster-enabled yes on free ports (client and bus port both picked
free, and kept across restarts so that the other nodes still find a restarted node), give
them slots, join them with CLUSTER MEET and wait for the cluster to agree.

    from cluster_util import cluster_factory, ClusterNode, wait_for, ...

    def test_x(cluster_factory):
        nodes = cluster_factory(3)                # 3 fresh nodes, stopped after the test
        meet_all(nodes); assign_slots_evenly(nodes); wait_cluster_ok(nodes)

Every node's own options can be passed as extra_args ("--cluster-node-timeout", "500").
"""
import os
import tempfile
import time

import pytest

from conftest import CTE_SERVER, R, Server, free_port

SLOTS = 16384


class ClusterNode(Server):
    """A cte-server with cluster-enabled yes. Unlike Server, a restart (start(same_dir=True))
    keeps the client and bus ports, as a real node restarted from its nodes.conf does."""

    def __init__(self, extra_args=(), env=None, name="cte-cluster-node", port=None,
                 bus_port=None, files=None):
        """port, bus_port: fixed ports (default: free ones picked at start); files: {name:
        text} written into the node's fresh directory before it starts (a nodes.conf)."""
        super().__init__("cte", CTE_SERVER, extra_args, env=env, name=name)
        self.port = port
        self.bus_port = bus_port
        self.files = dict(files or {})

    def argv(self):
        return super().argv() + ["--cluster-enabled", "yes", "--cluster-port",
                                 str(self.bus_port)]

    def _fresh_dir(self):
        self.tmpdir = tempfile.mkdtemp(prefix="cte-it-cluster-")
        for fname, text in self.files.items():
            with open(os.path.join(self.tmpdir, fname), "w") as f:
                f.write(text)

    def _ports_fixed(self):
        """Given, or kept from the last run (a restart finds its nodes.conf's ports)."""
        return self.port is not None and self.bus_port is not None

    def _pick_ports(self):
        self.port = free_port()
        self.bus_port = free_port()
        while self.bus_port == self.port:
            self.bus_port = free_port()

    # --- shortcuts -----------------------------------------------------------------------

    def call(self, *args):
        """One command on a fresh raw connection; returns the R reply."""
        with self.conn() as c:
            return c.call(*args)

    def py(self, *args):
        with self.conn() as c:
            return c.py(*args)

    def node_id(self):
        r = self.call("CLUSTER", "MYID")
        assert r.kind == "$", r
        return r.val.decode()

    def info(self):
        """CLUSTER INFO as a dict of str -> str."""
        r = self.call("CLUSTER", "INFO")
        assert r.kind in ("$", "="), r
        text = r.val.decode()
        if r.kind == "=":  # RESP3 verbatim: "txt:" prefix
            text = text[4:]
        return dict(line.split(":", 1) for line in text.split("\r\n") if ":" in line)

    def nodes(self):
        """CLUSTER NODES as a list of dicts: id, addr, flags (list), master, ping_sent,
        pong_recv, epoch, link, slots (list of words)."""
        r = self.call("CLUSTER", "NODES")
        assert r.kind in ("$", "="), r
        text = r.val.decode()
        if r.kind == "=":
            text = text[4:]
        out = []
        for line in text.splitlines():
            f = line.split(" ")
            out.append({"id": f[0], "addr": f[1], "flags": f[2].split(","), "master": f[3],
                        "ping_sent": int(f[4]), "pong_recv": int(f[5]), "epoch": int(f[6]),
                        "link": f[7], "slots": f[8:]})
        return out

    def config_path(self):
        return os.path.join(self.tmpdir, "nodes.conf")


def start_nodes(n, extra_args=()):
    """n fresh cluster nodes (not joined, no slots)."""
    nodes = []
    try:
        for i in range(n):
            nodes.append(ClusterNode(extra_args, name="cluster-node-%d" % i).start())
    except Exception:
        stop_nodes(nodes, check=False)
        raise
    return nodes


def stop_nodes(nodes, check=True):
    """SIGTERM every node still running; with check, a clean exit is asserted."""
    errors = []
    for s in nodes:
        if s.proc is None or s.proc.poll() is not None:
            s.cleanup()
            continue
        try:
            s.stop(check=check)
        except AssertionError as e:
            errors.append(str(e))
            s.cleanup()
    if errors:
        raise AssertionError("\n".join(errors))


def wait_for(pred, timeout=10.0, interval=0.05, what="condition"):
    """Polls pred() until it returns a true value (returned), else fails after timeout."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = pred()
            if last:
                return last
        except (OSError, ConnectionError) as e:
            last = e
        time.sleep(interval)
    raise AssertionError("timed out after %.1f s waiting for %s (last: %r)" %
                         (timeout, what, last))


def slot_ranges(n):
    """16384 slots split into n contiguous ranges: [(start, end), ...]."""
    per, extra = divmod(SLOTS, n)
    out, start = [], 0
    for i in range(n):
        end = start + per - 1 + (1 if i < extra else 0)
        out.append((start, end))
        start = end + 1
    return out


def assign_slots_evenly(nodes):
    """ADDSLOTSRANGE: node i gets the i-th of len(nodes) contiguous ranges. Returns them."""
    ranges = slot_ranges(len(nodes))
    for node, (a, b) in zip(nodes, ranges):
        r = node.call("CLUSTER", "ADDSLOTSRANGE", a, b)
        assert r == R("+", b"OK"), r
    return ranges


def meet_all(nodes):
    """Every other node MEETs the first one (the bus spreads the rest)."""
    first = nodes[0]
    for node in nodes[1:]:
        r = node.call("CLUSTER", "MEET", "127.0.0.1", first.port, first.bus_port)
        assert r == R("+", b"OK"), r


def wait_cluster_ok(nodes, timeout=20.0):
    """Waits until every node knows all the others and says cluster_state:ok."""
    def ok():
        for node in nodes:
            info = node.info()
            if info.get("cluster_state") != "ok" or \
                    int(info.get("cluster_known_nodes", 0)) != len(nodes):
                return False
        return True
    wait_for(ok, timeout=timeout, what="cluster_state:ok on %d nodes" % len(nodes))


def slot_owner_port(nodes, slot):
    """The client port of the node that serves slot, as the first node's CLUSTER SLOTS says."""
    for entry in nodes[0].py("CLUSTER", "SLOTS"):
        if entry[0] <= slot <= entry[1]:
            return entry[2][1]
    return None


@pytest.fixture
def cluster_factory():
    """factory(n, extra_args=()) -> n fresh cluster nodes; all stopped (clean exit checked)
    after the test, unless the test stopped or killed them itself."""
    started = []

    def factory(n, extra_args=()):
        nodes = start_nodes(n, extra_args)
        started.extend(nodes)
        return nodes

    yield factory
    stop_nodes(started, check=True)


def crc16(data):
    """CRC16-XMODEM, bit by bit: an implementation independent of the server's table."""
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def keyslot(key):
    if isinstance(key, str):
        key = key.encode()
    s = key.find(b"{")
    if s >= 0:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    return crc16(key) % SLOTS
