"""redis-cli --cluster against cte-server nodes, unchanged: create, check, info, add-node,
rebalance (onto an empty master and off it again with weight 0), del-node and fix (a slot
left half-migrated), with keys and a tag in the moving slots; every key and every blob is
read back after each step."""
import subprocess

import pytest

from cluster_util import cluster_factory, keyslot, wait_cluster_ok, wait_for  # noqa: F401
from conftest import CTE_KIND, REDIS_CLI

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="cluster tests need cte-server")

KEYS = 2000


def cli(*args, timeout=120):
    p = subprocess.run([REDIS_CLI] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, "redis-cli %s: exit %d\n%s\n%s" % (
        " ".join(map(str, args)), p.returncode, p.stdout[-3000:], p.stderr[-3000:])
    return p.stdout


def agreed(n):
    """--cluster check from n reports no error: the nodes agree about the configuration (as
    with Redis, a node just added learns the slot map by gossip within a second or two)."""
    p = subprocess.run([REDIS_CLI, "--cluster", "check", addr(n)], capture_output=True,
                       text=True, timeout=60)
    return p.returncode == 0 and "[ERR]" not in p.stdout


def addr(n):
    return "127.0.0.1:%d" % n.port


def owner(nodes, key):
    """The node that serves key's slot, by every node's CLUSTER SLOTS agreeing."""
    slot = keyslot(key)
    for n in nodes:
        for r in n.py("CLUSTER", "SLOTS"):
            if r[0] <= slot <= r[1]:
                port = r[2][1]
                return next(x for x in nodes if x.port == port)
    raise AssertionError("slot %d not served" % slot)


def check_all(nodes):
    """Every key and the tag's blobs where the slot map says, and --cluster check OK."""
    out = cli("--cluster", "check", addr(nodes[0]))
    assert "[OK] All 16384 slots covered." in out, out
    assert "[ERR]" not in out and "[WARNING]" not in out, out
    by_port = {}
    for i in range(KEYS):
        by_port.setdefault(owner(nodes, "k%d" % i).port, []).append(i)
    for n in nodes:
        idx = by_port.get(n.port, [])
        if idx:
            with n.conn() as c:
                assert [c.py("GET", "k%d" % i) for i in idx] == [b"v%d" % i for i in idx]
    t = owner(nodes, "{t}")
    assert t.py("TLEN", "{t}") == 20
    for b in range(20):
        assert t.py("TGET", "{t}", "b%d" % b) == bytes([b]) * 70000
    assert sum(n.py("DBSIZE") for n in nodes) == KEYS + 1


def test_create_add_rebalance_del_fix(cluster_factory):  # noqa: F811
    nodes = cluster_factory(4, ["--cluster-node-timeout", "3000"])
    three, extra = nodes[:3], nodes[3]
    cli("--cluster", "create", *[addr(n) for n in three], "--cluster-yes")
    wait_cluster_ok(three)
    for i in range(KEYS):
        assert owner(three, "k%d" % i).call("SET", "k%d" % i, "v%d" % i).val == b"OK"
    t = owner(three, "{t}")
    for b in range(20):
        t.py("TPUT", "{t}", "b%d" % b, 0, bytes([b]) * 70000)
    check_all(three)
    info = cli("--cluster", "info", addr(three[0]))
    assert "%d keys in 3 masters" % (KEYS + 1) in info, info

    # add-node, then rebalance onto the empty master: keys and the tag move with MIGRATE
    cli("--cluster", "add-node", addr(extra), addr(three[0]))
    wait_for(lambda: all(len(n.nodes()) == 4 for n in nodes), timeout=30, what="4 nodes known")
    wait_for(lambda: agreed(three[0]), timeout=30, interval=0.5, what="the nodes to agree")
    cli("--cluster", "rebalance", addr(three[0]), "--cluster-use-empty-masters",
        timeout=300)
    wait_cluster_ok(nodes)
    wait_for(lambda: agreed(three[0]), timeout=30, interval=0.5, what="the nodes to agree")
    me = [d for d in extra.nodes() if "myself" in d["flags"]][0]
    assert me["slots"], "the new node got no slots"
    assert int(extra.info()["cluster_slots_assigned"]) == 16384
    assert extra.py("DBSIZE") > 0
    check_all(nodes)

    # weight 0 empties it again, then del-node removes it from the cluster
    cli("--cluster", "rebalance", addr(three[0]), "--cluster-weight",
        "%s=0" % extra.node_id(), timeout=300)
    wait_for(lambda: extra.py("DBSIZE") == 0, timeout=30, what="the node emptied")
    wait_for(lambda: agreed(three[0]), timeout=30, interval=0.5, what="the nodes to agree")
    check_all(three)
    cli("--cluster", "del-node", addr(three[0]), extra.node_id())
    wait_for(lambda: all(len(n.nodes()) == 3 for n in three), timeout=30, what="3 nodes known")
    wait_for(lambda: agreed(three[0]), timeout=30, interval=0.5, what="the nodes to agree")
    check_all(three)

    # fix closes a slot left half-migrated (MIGRATING on its owner, IMPORTING on another)
    src = owner(three, "k1")
    dst = next(n for n in three if n is not src)
    slot = keyslot("k1")
    assert src.call("CLUSTER", "SETSLOT", slot, "MIGRATING", dst.node_id()).val == b"OK"
    assert dst.call("CLUSTER", "SETSLOT", slot, "IMPORTING", src.node_id()).val == b"OK"
    p = subprocess.run([REDIS_CLI, "--cluster", "check", addr(three[0])], capture_output=True,
                       text=True, timeout=60)
    assert "open slot" in p.stdout.lower() or p.returncode != 0, p.stdout
    cli("--cluster", "fix", addr(three[0]), "--cluster-yes", timeout=300)
    check_all(three)
