"""maxmemory against the real binary (redis-py): filling past a small limit under allkeys-lru
keeps the server near the limit by evicting keys (evicted_keys, `evicted` events, dbsize), hot
keys survive an LRU fill, noeviction refuses writes with Redis's exact -OOM text while reads
and DEL go on, transactions over the limit fail as in Redis, and RAM-tier blob bytes are not
counted. The error texts are checked against redis-server 7.0 in the same run.

    CTE_SERVER=$PWD/build-mem/cte-server /usr/bin/python3 -m pytest -q tests/integration/test_maxmemory.py
"""
import os
import time

import pytest
import redis

from conftest import CTE_KIND, REDIS_SERVER

MB = 1 << 20
OOM = "OOM command not allowed when used memory > 'maxmemory'."
EXECABORT_OOM = "EXECABORT Transaction discarded because of: " + OOM


def used_memory(r):
    return r.info("memory")["used_memory"]


def fill(r, prefix, n, size, batch=500):
    value = b"x" * size
    for start in range(0, n, batch):
        p = r.pipeline(transaction=False)
        for i in range(start, min(n, start + batch)):
            p.set("%s%d" % (prefix, i), value)
        p.execute()


def wait_under_limit(r, timeout=10.0):
    deadline = time.time() + timeout
    while used_memory(r) > int(r.config_get("maxmemory")["maxmemory"]):
        assert time.time() < deadline, "eviction did not bring used_memory under maxmemory"
        time.sleep(0.05)


def over_limit(r, extra=0):
    """Sets maxmemory below what is used now (by extra bytes more)."""
    r.config_set("maxmemory", str(max(1, used_memory(r) - 64 * 1024 - extra)))


def test_allkeys_lru_stays_near_the_limit(server_factory):
    s = server_factory(["--maxmemory-policy", "allkeys-lru"])
    r = s.redis()
    base = used_memory(r)
    limit = base + 4 * MB
    r.config_set("maxmemory", str(limit))
    events = r.pubsub()
    r.config_set("notify-keyspace-events", "Ee")
    events.subscribe("__keyevent@0__:evicted")
    assert events.get_message(timeout=2)["type"] == "subscribe"
    fill(r, "k", 20000, 1000)  # about 20 MB of values into 4 MB
    info = r.info("memory")
    assert info["maxmemory"] == limit
    assert info["maxmemory_policy"] == "allkeys-lru"
    assert info["maxmemory_human"].endswith("M")
    # a command is checked before it runs: at most one pipeline batch's growth over
    assert info["used_memory"] <= limit + 1 * MB, info["used_memory"]
    dbsize = r.dbsize()
    evicted = r.info("stats")["evicted_keys"]
    assert 0 < dbsize < 20000 * 4 // 20 + 500, dbsize
    assert evicted >= 20000 - dbsize, (evicted, dbsize)
    got = events.get_message(timeout=2)
    assert got and got["type"] == "message" and got["data"].startswith(b"k"), got
    events.close()
    # writes go on: every new key makes room
    assert r.set("after", "v")
    assert r.get("after") == b"v"


def test_lru_keeps_recently_read_keys(server_factory):
    s = server_factory(["--maxmemory-policy", "allkeys-lru", "--maxmemory-samples", "10"])
    r = s.redis()
    r.config_set("maxmemory", str(used_memory(r) + 3200 * 1024))
    fill(r, "hot", 500, 1000, batch=100)
    fill(r, "old", 1500, 1000, batch=100)
    time.sleep(2.2)  # the LRU clock counts seconds: reading gives the hot keys a newer stamp
    p = r.pipeline(transaction=False)
    for i in range(500):
        p.get("hot%d" % i)
    assert all(v is not None for v in p.execute())
    assert r.info("stats")["evicted_keys"] == 0
    fill(r, "new", 1500, 1000, batch=100)  # makes room by evicting about 600 keys
    evicted = r.info("stats")["evicted_keys"]
    assert evicted > 500, evicted
    p = r.pipeline(transaction=False)
    for i in range(500):
        p.exists("hot%d" % i)
    hot_left = sum(p.execute())
    # the old keys were idle two seconds longer: they go first, the hot ones stay
    assert hot_left > 475, (hot_left, evicted)


def test_volatile_policy_keeps_keys_without_ttl(server_factory):
    s = server_factory(["--maxmemory-policy", "volatile-lru"])
    r = s.redis()
    fill(r, "p", 2000, 1000)
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.set("v%d" % i, b"y" * 1000, ex=3600)
    p.execute()
    over_limit(r, 500 * 1000)
    assert r.set("new", "1")
    wait_under_limit(r)  # a slow (sanitizer) build leaves part of it to the background
    assert r.dbsize() < 4001 - 300
    p = r.pipeline(transaction=False)
    for i in range(2000):
        p.exists("p%d" % i)
    assert sum(p.execute()) == 2000
    # only keys without TTL left and still over: -OOM. Eviction past the time limit per
    # command (maxmemory-eviction-tenacity) goes on in the background, and commands are let
    # through meanwhile, as in Redis: wait until every volatile key is gone.
    over_limit(r, 3 * MB)
    deadline = time.time() + 10
    while r.info("keyspace")["db0"].get("expires", 0) and time.time() < deadline:
        time.sleep(0.05)
    with pytest.raises(redis.exceptions.ResponseError, match="^" + OOM.replace(".", r"\.") + "$"):
        r.set("more", "1")
    assert r.info("keyspace")["db0"].get("expires", 0) == 0
    assert r.get("p5") == b"x" * 1000


def check_noeviction(s):
    """The noeviction behaviour both servers must share; returns the exact replies seen (the
    error texts among them)."""
    r = s.redis()
    fill(r, "k", 200, 1000)
    r.config_set("maxmemory-policy", "noeviction")
    over_limit(r)
    seen = []
    with s.conn() as c, s.conn() as admin:
        for cmd in (("SET", "a", "1"), ("LPUSH", "l", "x"), ("INCR", "n"), ("SETEX", "x", 9, "y")):
            seen.append(c.call(*cmd))
        assert c.call("GET", "k1").val == b"x" * 1000  # reads go on
        assert c.call("EXISTS", "k2").val == 1
        assert c.call("EXPIRE", "k3", 100).val == 1  # a write, but not DENYOOM
        assert c.call("DBSIZE").val == 200
        # a command queued over the limit fails the transaction
        seen += [c.call("MULTI"), c.call("GET", "k1"), c.call("EXEC")]
        # queued under the limit, EXEC over it
        admin.call("CONFIG", "SET", "maxmemory", "0")
        seen += [c.call("MULTI"), c.call("SET", "t", "1")]
        over_limit(r)
        seen += [c.call("EXEC"), c.call("EXEC"), c.call("EXISTS", "t")]
        # DEL still works, and frees enough to write again
        seen.append(c.call("DEL", *["k%d" % i for i in range(200)]))
        seen.append(c.call("SET", "a", "1"))
    return [(x.kind, x.val) for x in seen]


def test_noeviction_refuses_writes_as_redis_does(server_factory):
    cte = server_factory([])
    seen = check_noeviction(cte)
    oom = ("-", OOM.encode())
    assert seen == [oom, oom, oom, oom,
                    ("+", b"OK"), oom,
                    ("-", b"EXECABORT Transaction discarded because of previous errors."),
                    ("+", b"OK"), ("+", b"QUEUED"),
                    ("-", EXECABORT_OOM.encode()), ("-", b"ERR EXEC without MULTI"), (":", 0),
                    (":", 200), ("+", b"OK")], seen
    assert cte.redis().info("stats")["evicted_keys"] == 0
    if CTE_KIND == "cte" and os.path.exists(REDIS_SERVER):
        ref = server_factory([], kind="redis")
        assert check_noeviction(ref) == seen


def test_ram_tier_blobs_are_not_counted(server_factory):
    if CTE_KIND != "cte":
        pytest.skip("tags are cte-server's own commands")
    s = server_factory(["--tier", "ram:ram:64mb::1", "--max-blob-size", "16mb"])
    r = s.redis()
    # headroom for what the first blob's write allocates once (query buffer, the search
    # index's tables: about 3.5 MB) but not for the blobs: 12 MB of them on the RAM tier
    r.config_set("maxmemory", str(used_memory(r) + 6 * MB))
    # a command's arguments are in its query buffer, which counts (as in Redis): blobs smaller
    # than the headroom
    blob = b"b" * (512 * 1024)
    for i in range(24):
        assert r.execute_command("TPUT", "t", "b%d" % i, 0, blob) == len(blob)
    assert used_memory(r) > int(r.config_get("maxmemory")["maxmemory"])
    assert r.set("k", "v")  # noeviction, and still not over: tier bytes are not counted
    assert r.info("stats")["evicted_keys"] == 0


def test_evictions_are_logged_to_the_append_only_file(server_factory):
    if CTE_KIND != "cte":
        pytest.skip("restarts on cte-server's append-only file")
    s = server_factory(["--appendonly", "yes", "--appendfsync", "always",
                        "--maxmemory-policy", "allkeys-random"])
    r = s.redis()
    r.config_set("maxmemory", str(used_memory(r) + 2 * MB))
    fill(r, "k", 5000, 1000, batch=100)
    wait_under_limit(r)
    r.config_set("maxmemory", "0")  # no more evictions while the keys are listed
    evicted = r.info("stats")["evicted_keys"]
    assert evicted > 1000, evicted
    keys = set(r.scan_iter(count=1000))
    assert len(keys) == 5000 - evicted
    r.close()
    s.restart_same_dir()  # maxmemory was set at run time: the restart has no limit
    r = s.redis()
    assert set(r.scan_iter(count=1000)) == keys
