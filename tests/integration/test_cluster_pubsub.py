"""PUBLISH in cluster mode (server/cluster/bus.c, docs/cluster-bus.md): a PUBLISH on any node
reaches the SUBSCRIBE and PSUBSCRIBE subscribers of every node, exactly once, and its reply
counts only the receivers of the node it ran on (Redis's clusterPropagatePublish); redis-py's
RedisCluster pub/sub works across nodes. One 3-node cluster for the whole file."""
import random
import socket
import struct

import pytest

import cluster_util
from cluster_util import assign_slots_evenly, meet_all, stop_nodes, wait_cluster_ok, wait_for
from conftest import CTE_KIND, R


@pytest.fixture(scope="module")
def nodes():
    ns = cluster_util.start_nodes(3)
    try:
        meet_all(ns)
        assign_slots_evenly(ns)
        wait_cluster_ok(ns)

        def all_connected():
            for n in ns:
                lines = n.py("CLUSTER", "NODES").decode().splitlines()
                if len(lines) != 3 or any(line.split()[7] != "connected" for line in lines):
                    return False
            return True
        wait_for(all_connected, 15, what="every node connected to every other")
        yield ns
    finally:
        stop_nodes(ns)


def subscriber(node, kind, name):
    """A redis-py PubSub on node, subscribed (kind "subscribe" or "psubscribe") to name."""
    p = node.redis().pubsub(ignore_subscribe_messages=True)
    getattr(p, kind)(name)
    assert p.get_message(timeout=5) is None  # the confirmation, ignored
    return p


def messages(p, first=3.0, more=0.3):
    """The messages p receives: the first within `first` seconds, then any more until none
    comes for `more` seconds."""
    out = []
    m = p.get_message(timeout=first)
    while m is not None:
        out.append(m)
        m = p.get_message(timeout=more)
    return out


def test_publish_reaches_channel_and_pattern_subscribers_on_other_nodes_once(nodes):
    n1, n2, n3 = nodes
    s1 = subscriber(n1, "subscribe", "news")
    s2 = subscriber(n2, "psubscribe", "ne*")
    try:
        r3 = n3.redis()
        assert r3.publish("news", "from three") == 0  # nobody on node 3
        assert messages(s1) == [{"type": "message", "pattern": None, "channel": b"news",
                                 "data": b"from three"}]
        assert messages(s2) == [{"type": "pmessage", "pattern": b"ne*", "channel": b"news",
                                 "data": b"from three"}]
        # on node 1 the reply counts its own subscriber; node 2's still gets it once
        assert n1.redis().publish("news", "from one") == 1
        assert [m["data"] for m in messages(s1)] == [b"from one"]
        assert [m["data"] for m in messages(s2)] == [b"from one"]
        # from a script and from MULTI as well
        assert r3.eval("return redis.call('PUBLISH', ARGV[1], ARGV[2])", 0, "news", "lua") == 0
        pipe = r3.pipeline(transaction=True)
        pipe.publish("news", "multi")
        assert pipe.execute() == [0]
        assert [m["data"] for m in messages(s1)] == [b"lua", b"multi"]
        assert [m["data"] for m in messages(s2)] == [b"lua", b"multi"]
        # a channel nobody matches reaches nobody, anywhere
        assert r3.publish("other", "x") == 0
        assert messages(s1, 0.3) == [] and messages(s2, 0.3) == []
    finally:
        s1.close()
        s2.close()


def test_binary_and_large_messages_arrive_intact(nodes):
    n1, n2, n3 = nodes
    s1 = subscriber(n1, "subscribe", b"bin\0chan")
    try:
        odd = b"a\r\nb\0c\xff" * 3
        assert n3.redis().publish(b"bin\0chan", odd) == 0
        assert [m["data"] for m in messages(s1)] == [odd]
        big = bytes(random.getrandbits(8) for _ in range(100 * 1024))
        assert n2.redis().publish(b"bin\0chan", big) == 0
        got = messages(s1)
        assert len(got) == 1 and got[0]["data"] == big
    finally:
        s1.close()


def test_resp3_subscriber_gets_pushes_from_other_nodes(nodes):
    n1, n2, n3 = nodes
    with n1.conn() as c:
        c.call("HELLO", "3")
        conf = c.call("SUBSCRIBE", "r3chan")
        assert conf.kind == ">" and conf.val[0] == R("$", b"subscribe"), conf
        c.call("PSUBSCRIBE", "r3*")
        assert n2.redis().publish("r3chan", "hello") == 0
        got = [c.read_reply()[0], c.read_reply()[0]]
        assert sorted(repr(g) for g in got) == sorted(repr(g) for g in [
            R(">", [R("$", b"message"), R("$", b"r3chan"), R("$", b"hello")]),
            R(">", [R("$", b"pmessage"), R("$", b"r3*"), R("$", b"r3chan"),
                    R("$", b"hello")])]), got
        # and nothing more: a PING's answer comes next
        assert c.call("PING") == R("+", b"PONG")


def test_redis_py_cluster_pattern_publish(nodes):
    """As redis-py's tests/test_pubsub.py test_pattern_publish, on RedisCluster."""
    from redis.cluster import RedisCluster
    rc = RedisCluster(host="127.0.0.1", port=nodes[0].port)
    try:
        p = rc.pubsub()
        p.psubscribe("f*")
        m = p.get_message(timeout=5)
        assert m["type"] == "psubscribe" and m["channel"] == b"f*"
        rc.publish("foo", "test message")
        m = p.get_message(timeout=5)
        assert m == {"type": "pmessage", "pattern": b"f*", "channel": b"foo",
                     "data": b"test message"}
        # from every node in turn, whichever the pubsub connection is on
        for n in rc.get_nodes():
            rc.get_redis_connection(n).publish("foo", n.name)
            m = p.get_message(timeout=5)
            assert m is not None and m["data"] == n.name.encode(), (n.name, m)
        assert p.get_message(timeout=0.3) is None
        p.close()
    finally:
        rc.close()


# ---- cte-server only: the bus's wire format is ours ----

BUS_HDR_LEN = 2472


def bus_message(msg_type, sender, port, bus_port, body=b""):
    """A message of docs/cluster-bus.md from a primary without slots."""
    h = b"CTEb" + struct.pack(">HHIHH", 1, msg_type, BUS_HDR_LEN + len(body), 0, 1)
    h += sender.encode() + b"\0" * 40 + struct.pack(">QQHHI", 0, 0, port, bus_port, 0)
    h += b"\0" * 48 + b"\0" * 2048 + b"\0" * 256
    assert len(h) == BUS_HDR_LEN
    return h + body


@pytest.mark.skipif(CTE_KIND != "cte", reason="the bus's wire format is ours")
def test_a_publish_from_an_unknown_sender_is_dropped(nodes):
    n1 = nodes[0]
    s1 = subscriber(n1, "subscribe", "ghostly")
    try:
        fake = "%040x" % random.getrandbits(160)
        body = struct.pack(">II", 7, 5) + b"ghostly" + b"boo!!"
        with socket.create_connection(("127.0.0.1", n1.bus_port), timeout=5) as s:
            s.sendall(bus_message(6, fake, 1, 2, body) + bus_message(2, fake, 1, 2))
            # the PING after it is answered: the PUBLISH was read, decoded, and dropped
            hdr = b""
            while len(hdr) < 12:
                chunk = s.recv(12 - len(hdr))
                assert chunk, "the link was closed"
                hdr += chunk
            assert struct.unpack(">H", hdr[6:8])[0] == 3
        assert messages(s1, 0.3) == []
        info = n1.info()
        assert int(info["cluster_stats_messages_publish_received"]) >= 1
    finally:
        s1.close()
