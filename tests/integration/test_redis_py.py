"""redis-py (Debian's python3-redis 4.3.4) against cte-server, over TCP and the Unix socket.

Each test runs on the session's server, flushed before the test (see conftest.py). The
expected values are what Redis 7.0 answers (COMMANDS.md section 1)."""
import os
import threading
import time

import pytest
import redis

from conftest import R, RespConn


@pytest.fixture
def r(cte_server, transport):
    """A decoding redis-py client on the session's cte-server, over TCP or the Unix socket."""
    c = cte_server.redis(unix=(transport == "unix"), decode_responses=True)
    yield c
    c.close()


@pytest.fixture
def rb(cte_server, transport):
    """The same, without decoding (bytes in, bytes out)."""
    c = cte_server.redis(unix=(transport == "unix"), decode_responses=False)
    yield c
    c.close()


# ---------------------------------------------------------------------------------------
# Connection


def test_ping_and_echo(r):
    assert r.ping() is True
    assert r.echo("hello world") == "hello world"


def test_transport_is_the_one_asked_for(r, transport, cte_server):
    # CLIENT LIST's addr field tells TCP and Unix-socket clients apart.
    info = r.client_info()
    if transport == "unix":
        assert not info["addr"].startswith("127.0.0.1"), info
    else:
        assert info["addr"].startswith("127.0.0.1:"), info
        assert info["laddr"] == "127.0.0.1:%d" % cte_server.port, info


# ---------------------------------------------------------------------------------------
# Strings


def test_set_get_and_options(r):
    assert r.get("nokey") is None
    assert r.set("s", "v1") is True
    assert r.get("s") == "v1"
    assert r.set("s", "v2", nx=True) is None
    assert r.set("s", "v2", xx=True) is True
    assert r.set("other", "x", xx=True) is None
    assert r.set("s", "v3", get=True) == "v2"
    assert r.get("s") == "v3"
    assert r.setnx("s", "no") is False
    assert r.setnx("n", "yes") is True
    assert r.getset("n", "new") == "yes"
    assert r.getdel("n") == "new"
    assert r.exists("n") == 0
    with pytest.raises(redis.ResponseError, match="syntax error"):
        r.execute_command("SET", "s", "v", "NX", "XX")


def test_mset_mget_msetnx(r):
    assert r.mset({"a": "1", "b": "2", "c": "3"}) is True
    assert r.mget("a", "b", "nokey", "c") == ["1", "2", None, "3"]
    assert r.msetnx({"c": "x", "d": "4"}) is False
    assert r.get("d") is None
    assert r.msetnx({"d": "4", "e": "5"}) is True
    assert r.mget(["d", "e"]) == ["4", "5"]


def test_counters(r):
    assert r.incr("c") == 1
    assert r.incrby("c", 41) == 42
    assert r.decr("c") == 41
    assert r.decrby("c", 50) == -9
    assert r.get("c") == "-9"
    assert r.incrbyfloat("f", 0.1) == pytest.approx(0.1)
    assert r.incrbyfloat("f", "0.2") == pytest.approx(0.3)  # redis-py turns it into a float
    assert r.get("f") == "0.3"  # ... but the server keeps it as Redis formats it
    assert r.incrbyfloat("f", "5.0e3") == pytest.approx(5000.3)
    assert r.get("f") == "5000.29999999999999982"  # long double, %.17Lg, as Redis 7.0
    r.set("big", "9223372036854775807")
    with pytest.raises(redis.ResponseError, match="increment or decrement would overflow"):
        r.incr("big")
    r.set("str", "abc")
    with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
        r.incr("str")
    with pytest.raises(redis.ResponseError, match="value is not a valid float"):
        r.incrbyfloat("str", 1.0)


def test_append_strlen_ranges(r):
    assert r.append("s", "Hello") == 5
    assert r.append("s", " World") == 11
    assert r.strlen("s") == 11
    assert r.strlen("nokey") == 0
    assert r.getrange("s", 0, 4) == "Hello"
    assert r.getrange("s", -5, -1) == "World"
    assert r.getrange("s", 5, 1) == ""
    assert r.execute_command("SUBSTR", "s", 6, 100) == "World"
    assert r.setrange("s", 6, "Redis") == 11
    assert r.get("s") == "Hello Redis"
    assert r.setrange("pad", 3, "x") == 4
    assert r.get("pad") == "\x00\x00\x00x"
    with pytest.raises(redis.ResponseError, match="offset is out of range"):
        r.setrange("s", -1, "x")


def test_getex_and_set_with_ttl(r):
    r.set("k", "v", ex=100)
    assert 98 <= r.ttl("k") <= 100
    assert r.getex("k", persist=True) == "v"
    assert r.ttl("k") == -1
    assert r.getex("k", px=50000) == "v"
    assert 48000 <= r.pttl("k") <= 50000
    r.set("k", "w", keepttl=True)
    assert r.pttl("k") > 0
    r.set("k", "x")
    assert r.ttl("k") == -1
    r.setex("k2", 100, "v")
    r.psetex("k3", 100000, "v")
    assert 98 <= r.ttl("k2") <= 100 and 98 <= r.ttl("k3") <= 100
    with pytest.raises(redis.ResponseError, match="invalid expire time in 'set' command"):
        r.set("k", "v", ex=0)


def test_object_encoding_of_strings(r):
    r.set("i", "12345")
    r.set("e", "short")
    r.set("raw", "x" * 100)
    assert r.object("encoding", "i") == "int"
    assert r.object("encoding", "e") == "embstr"
    assert r.object("encoding", "raw") == "raw"


# ---------------------------------------------------------------------------------------
# Keys


def test_generic_key_commands(r):
    r.set("a", "1")
    r.hset("h", "f", "v")
    r.zadd("z", {"m": 1})
    assert r.exists("a", "h", "z", "nokey", "a") == 4
    assert r.type("a") == "string"
    assert r.type("h") == "hash"
    assert r.type("z") == "zset"
    assert r.type("nokey") == "none"
    assert r.dbsize() == 3
    assert sorted(r.keys("*")) == ["a", "h", "z"]
    assert sorted(r.keys("[ah]")) == ["a", "h"]
    assert r.randomkey() in ("a", "h", "z")
    assert r.touch("a", "h", "nokey") == 2
    assert r.rename("a", "b") is True
    assert r.get("b") == "1"
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.rename("nokey", "x")
    assert r.renamenx("b", "h") is False
    assert r.renamenx("b", "c") is True
    assert r.copy("c", "d") is True
    assert r.copy("c", "d") is False
    assert r.copy("c", "d", replace=True) is True
    assert r.get("d") == "1"
    assert r.delete("c", "d", "nokey") == 2
    assert r.unlink("h", "z") == 2
    assert r.dbsize() == 0


def test_select_across_databases(cte_server, transport):
    unix = transport == "unix"
    r0 = cte_server.redis(unix=unix, db=0, decode_responses=True)
    r1 = cte_server.redis(unix=unix, db=1, decode_responses=True)
    r15 = cte_server.redis(unix=unix, db=15, decode_responses=True)
    try:
        r0.set("k", "zero")
        r1.set("k", "one")
        assert r0.get("k") == "zero" and r1.get("k") == "one"
        assert r15.get("k") is None
        assert r0.move("k", 15) is True
        assert r15.get("k") == "zero"
        assert r0.exists("k") == 0
        assert r1.move("k", 15) is False  # exists there already
        assert r1.copy("k", "k", destination_db=2) is True
        r2 = cte_server.redis(unix=unix, db=2, decode_responses=True)
        assert r2.get("k") == "one"
        r2.close()
        assert r0.dbsize() == 0 and r1.dbsize() == 1 and r15.dbsize() == 1
        ks = r0.info("keyspace")
        assert ks["db1"]["keys"] == 1 and ks["db15"]["keys"] == 1 and ks["db2"]["keys"] == 1
        assert "db0" not in ks
        assert r0.swapdb(1, 15) is True
        assert r1.get("k") == "zero" and r15.get("k") == "one"
        with pytest.raises(redis.ResponseError, match="DB index is out of range"):
            r0.execute_command("SELECT", 16)
        with pytest.raises(redis.ResponseError, match="value is not an integer or out of range"):
            r0.execute_command("SELECT", "abc")
        r1.flushdb()
        assert r1.dbsize() == 0 and r15.dbsize() == 1
    finally:
        for c in (r0, r1, r15):
            c.close()


def test_expiry(r):
    r.set("k", "v")
    assert r.ttl("k") == -1
    assert r.ttl("nokey") == -2
    assert r.pttl("nokey") == -2
    assert r.expire("k", 100) is True
    assert 99 <= r.ttl("k") <= 100
    assert r.expire("k", 50, nx=True) is False
    assert r.expire("k", 50, xx=True) is True
    assert r.expire("k", 10, gt=True) is False
    assert r.expire("k", 1000, gt=True) is True
    assert r.expire("k", 5000, lt=True) is False
    assert r.expire("k", 200, lt=True) is True
    assert 199 <= r.ttl("k") <= 200
    at = int(time.time()) + 3600
    assert r.expireat("k", at) is True
    assert r.execute_command("EXPIRETIME", "k") == at
    assert r.execute_command("PEXPIRETIME", "k") == at * 1000
    assert r.pexpire("k", 123456) is True
    assert 120000 <= r.pttl("k") <= 123456
    assert r.persist("k") is True
    assert r.persist("k") is False
    assert r.execute_command("EXPIRETIME", "k") == -1
    assert r.expire("nokey", 10) is False
    # a short TTL really expires, whether the key is read or not
    r.set("short", "v", px=100)
    r.set("short2", "v", px=100)
    time.sleep(0.3)
    assert r.get("short") is None
    assert r.exists("short2") == 0
    assert r.dbsize() == 1
    # a TTL in the past deletes at once
    assert r.expire("k", -1) is True
    assert r.exists("k") == 0


def test_active_expiry_removes_unread_keys(r):
    for i in range(50):
        r.set("e%d" % i, "v", px=50)
    r.set("keep", "v")
    deadline = time.time() + 5
    while time.time() < deadline:
        if r.info("keyspace").get("db0", {}).get("keys") == 1:
            break
        time.sleep(0.1)
    assert r.info("keyspace")["db0"]["keys"] == 1
    assert r.info("stats")["expired_keys"] >= 50


# ---------------------------------------------------------------------------------------
# Hashes


def test_hashes(r):
    assert r.hset("h", mapping={"a": "1", "b": "2", "c": "3"}) == 3
    assert r.hset("h", "a", "10") == 0
    assert r.hsetnx("h", "a", "x") == 0  # redis-py 4.3.4 passes HSETNX's integer through
    assert r.hsetnx("h", "d", "4") == 1
    assert r.hget("h", "a") == "10"
    assert r.hget("h", "nofield") is None
    assert r.hmget("h", "a", "nofield", "d") == ["10", None, "4"]
    assert r.hgetall("h") == {"a": "10", "b": "2", "c": "3", "d": "4"}
    assert r.hgetall("nokey") == {}
    assert r.hlen("h") == 4
    assert r.hexists("h", "a") is True
    assert r.hexists("h", "zz") is False
    assert sorted(r.hkeys("h")) == ["a", "b", "c", "d"]
    assert sorted(r.hvals("h")) == ["10", "2", "3", "4"]
    assert r.hstrlen("h", "a") == 2
    assert r.hincrby("h", "a", 5) == 15
    assert r.hincrbyfloat("h", "b", 0.5) == 2.5
    assert r.hincrbyfloat("h", "b", "0.1") == pytest.approx(2.6)
    assert r.hget("h", "b") == "2.6"
    with pytest.raises(redis.ResponseError, match="hash value is not an integer"):
        r.hincrby("h", "b", 1)
    assert r.execute_command("HMSET", "h", "e", "5") is True  # (r.hmset warns: deprecated)
    assert r.hdel("h", "a", "b", "nofield") == 2
    assert r.hlen("h") == 3
    assert r.object("encoding", "h") == "listpack"
    r.set("s", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.hget("s", "f")
    assert r.hdel("h", "c", "d", "e") == 3
    assert r.exists("h") == 0


def test_hash_encoding_and_random_fields(r):
    # Redis 7.0's default hash-max-listpack-entries is 512 (and -value 64)
    r.hset("big", mapping={"f%d" % i: str(i) for i in range(200)})
    assert r.object("encoding", "big") == "listpack"
    r.hset("big", mapping={"f%d" % i: str(i) for i in range(200, 600)})
    assert r.object("encoding", "big") == "hashtable"
    assert r.hlen("big") == 600
    one = r.hrandfield("big")
    assert one in {"f%d" % i for i in range(600)}
    five = r.hrandfield("big", 5)
    assert len(five) == 5 and len(set(five)) == 5
    rep = r.hrandfield("big", -700)
    assert len(rep) == 700
    pairs = r.hrandfield("big", 3, withvalues=True)
    assert len(pairs) == 6
    for f, v in zip(pairs[::2], pairs[1::2]):
        assert f == "f" + v
    all_fields = dict(r.hscan_iter("big", count=17))
    assert all_fields == {"f%d" % i: str(i) for i in range(600)}
    assert sorted(dict(r.hscan_iter("big", match="f1?")).keys()) == \
        ["f%d" % i for i in range(10, 20)]
    r.hset("long", "f", "x" * 65)
    assert r.object("encoding", "long") == "hashtable"


# ---------------------------------------------------------------------------------------
# Sorted sets


def test_sorted_sets_basics(r):
    assert r.zadd("z", {"a": 1, "b": 2, "c": 3}) == 3
    assert r.zadd("z", {"a": 5}, nx=True) == 0
    assert r.zadd("z", {"a": 5, "d": 4}, xx=True, ch=True) == 1
    assert r.zadd("z", {"a": 1}, gt=True, ch=True) == 0
    assert r.zadd("z", {"a": 0.5}, lt=True, ch=True) == 1
    assert r.zadd("z", {"a": 1}, incr=True) == 1.5
    assert r.zscore("z", "a") == 1.5
    assert r.zscore("z", "nomember") is None
    assert r.zmscore("z", ["a", "nomember", "c"]) == [1.5, None, 3.0]
    assert r.zincrby("z", 2.5, "b") == 4.5
    assert r.zcard("z") == 3
    assert r.zcount("z", 2, "+inf") == 2
    assert r.zcount("z", "(1.5", 3) == 1
    assert r.zrank("z", "a") == 0
    assert r.zrevrank("z", "a") == 2
    assert r.zrank("z", "nomember") is None
    assert r.zrange("z", 0, -1, withscores=True) == [("a", 1.5), ("c", 3.0), ("b", 4.5)]
    assert r.zrevrange("z", 0, 0) == ["b"]
    assert r.zrange("z", "(1.5", "+inf", byscore=True) == ["c", "b"]
    assert r.zrange("z", "+inf", "-inf", byscore=True, desc=True, offset=1, num=1) == ["c"]
    assert r.zrangebyscore("z", "-inf", 3, withscores=True) == [("a", 1.5), ("c", 3.0)]
    assert r.zrevrangebyscore("z", 10, 2) == ["b", "c"]
    assert r.zrem("z", "a", "nomember") == 1
    with pytest.raises(redis.ResponseError,
                       match="XX and NX options at the same time are not compatible"):
        r.execute_command("ZADD", "z", "XX", "NX", "1", "x")
    with pytest.raises(redis.ResponseError, match="value is not a valid float"):
        r.execute_command("ZADD", "z", "abc", "x")
    with pytest.raises(redis.ResponseError, match="min or max is not a float"):
        r.zcount("z", "x", 1)


def test_sorted_set_scores_are_formatted_as_redis_does(rb, cte_server, transport):
    rb.zadd("z", {"a": 1, "b": -2.5, "c": 1e10, "d": -5.94971599E8, "e": float("inf"),
                  "f": 0.1})
    got = rb.execute_command("ZRANGE", "z", 0, -1, "WITHSCORES")
    assert got == [b"d", b"-594971599", b"b", b"-2.5", b"f", b"0.10000000000000001", b"a", b"1",
                   b"c", b"10000000000", b"e", b"inf"]
    # redis-py turns ZINCRBY/ZSCORE replies into floats: look at the bytes on the wire
    with cte_server.conn(unix=(transport == "unix")) as c:
        assert c.call_raw("ZINCRBY", "z", "0.2", "f") == b"$19\r\n0.30000000000000004\r\n"
        assert c.call_raw("ZSCORE", "z", "e") == b"$3\r\ninf\r\n"
        assert c.call_raw("ZSCORE", "z", "d") == b"$10\r\n-594971599\r\n"


def test_sorted_sets_lex_and_store(r):
    r.zadd("lex", {m: 0 for m in "abcdefg"})
    assert r.zrangebylex("lex", "[b", "(e") == ["b", "c", "d"]
    assert r.zrevrangebylex("lex", "+", "[f") == ["g", "f"]
    assert r.zrange("lex", "[c", "+", bylex=True, offset=1, num=2) == ["d", "e"]
    assert r.zlexcount("lex", "-", "+") == 7
    assert r.zremrangebylex("lex", "[f", "+") == 2
    with pytest.raises(redis.ResponseError, match="min or max not valid string range item"):
        r.zrangebylex("lex", "b", "c")
    r.zadd("z1", {"a": 1, "b": 2, "c": 3})
    r.zadd("z2", {"b": 10, "c": 20, "d": 30})
    assert r.zunionstore("u", ["z1", "z2"]) == 4
    assert r.zrange("u", 0, -1, withscores=True) == [("a", 1), ("b", 12), ("c", 23), ("d", 30)]
    assert r.zinterstore("i", {"z1": 2, "z2": 1}, aggregate="MAX") == 2
    assert r.zrange("i", 0, -1, withscores=True) == [("b", 10), ("c", 20)]
    assert r.zdiffstore("d", ["z1", "z2"]) == 1
    assert r.zrange("d", 0, -1) == ["a"]
    assert r.zunion(["z1", "z2"], aggregate="MIN", withscores=True) == \
        [("a", 1), ("b", 2), ("c", 3), ("d", 30)]
    assert r.zinter(["z1", "z2"]) == ["b", "c"]
    assert r.zdiff(["z2", "z1"], withscores=True) == ["d", "30"]  # 4.3.4: flat, not pairs
    assert r.zintercard(2, ["z1", "z2"]) == 2
    assert r.zrangestore("rs", "z2", 1, -1) == 2
    assert r.zrange("rs", 0, -1) == ["c", "d"]
    assert r.zremrangebyscore("z2", "-inf", "(20") == 1
    assert r.zremrangebyrank("z2", 0, 0) == 1
    assert r.zcard("z2") == 1
    assert r.zpopmin("z1") == [("a", 1)]
    assert r.zpopmax("z1", 2) == [("c", 3), ("b", 2)]
    assert r.exists("z1") == 0
    r.zadd("m1", {"x": 1, "y": 2})
    assert r.execute_command("ZMPOP", 2, "nokey", "m1", "MAX", "COUNT", 5) == \
        ["m1", [["y", "2"], ["x", "1"]]]
    assert r.execute_command("ZMPOP", 1, "nokey", "MIN") is None


def test_sorted_set_random_members_and_scan(r):
    r.zadd("z", {"m%d" % i: i for i in range(300)})
    assert r.object("encoding", "z") == "skiplist"
    assert r.zrandmember("z") in {"m%d" % i for i in range(300)}
    assert len(set(r.zrandmember("z", 10))) == 10
    assert len(r.zrandmember("z", -500)) == 500
    ws = r.zrandmember("z", 4, withscores=True)
    assert len(ws) == 8
    for m, s in zip(ws[::2], ws[1::2]):
        assert m == "m" + s
    scanned = dict(r.zscan_iter("z", count=20))
    assert scanned == {"m%d" % i: float(i) for i in range(300)}
    r.zadd("small", {"a": 1})
    assert r.object("encoding", "small") == "listpack"


# ---------------------------------------------------------------------------------------
# Pipelines, SCAN


def test_pipeline_non_transactional(r):
    p = r.pipeline(transaction=False)
    for i in range(500):
        p.set("p%d" % i, i)
    for i in range(500):
        p.incr("p%d" % i)
    p.hset("ph", "f", "v")
    p.incr("ph")  # wrong type: an error in the middle of the pipeline
    p.get("p7")
    res = p.execute(raise_on_error=False)
    assert res[:500] == [True] * 500
    assert res[500:1000] == list(range(1, 501))
    assert res[1000] == 1
    assert isinstance(res[1001], redis.ResponseError) and "WRONGTYPE" in str(res[1001])
    assert res[1002] == "8"
    assert r.dbsize() == 501


def test_scan_iter(r):
    p = r.pipeline(transaction=False)
    for i in range(1000):
        p.set("key:%d" % i, "v")
    for i in range(100):
        p.hset("hash:%d" % i, "f", "v")
    p.execute()
    assert set(r.scan_iter(count=50)) == {"key:%d" % i for i in range(1000)} | \
        {"hash:%d" % i for i in range(100)}
    assert set(r.scan_iter(match="key:1??")) == {"key:%d" % i for i in range(100, 200)}
    assert set(r.scan_iter(_type="hash")) == {"hash:%d" % i for i in range(100)}
    cursor, keys = r.scan(0, count=10)
    assert isinstance(cursor, int) and len(keys) >= 1


# ---------------------------------------------------------------------------------------
# Server: INFO, CONFIG, CLIENT


def test_info_parses(r):
    r.set("a", "1")
    info = r.info()
    for field in ("redis_version", "process_id", "tcp_port", "uptime_in_seconds",
                  "connected_clients", "used_memory", "total_commands_processed"):
        assert field in info, field
    assert isinstance(info["connected_clients"], int) and info["connected_clients"] >= 1
    assert info["db0"]["keys"] == 1
    server = r.info("server")
    assert "redis_version" in server and "connected_clients" not in server
    assert r.info("keyspace")["db0"] == {"keys": 1, "expires": 0, "avg_ttl": 0}
    allinfo = r.info("all")
    assert "cmdstat_set" in allinfo and allinfo["cmdstat_set"]["calls"] >= 1
    stats = r.info("commandstats")
    assert set(stats["cmdstat_set"]) >= {"calls", "usec", "usec_per_call"}
    with pytest.raises(redis.ResponseError):
        r.execute_command("NOSUCHCMD")
    assert "errorstat_ERR" in r.info("errorstats")


def test_config_get_set(r):
    assert r.config_get("maxclients") == {"maxclients": "10000"}
    got = r.config_get("*max-*-entries*")
    assert got["hash-max-listpack-entries"] == "512"  # Redis 7.0's built-in defaults
    assert got["set-max-intset-entries"] == "512"
    assert got["zset-max-listpack-entries"] == "128"
    assert "hash-max-ziplist-entries" in got  # the older names answer too, as in Redis
    old = r.config_get("hash-max-listpack-entries")["hash-max-listpack-entries"]
    try:
        assert r.config_set("hash-max-listpack-entries", 4) is True
        assert r.config_get("hash-max-ziplist-entries") == {"hash-max-ziplist-entries": "4"}
        r.hset("h", mapping={"a": 1, "b": 2, "c": 3, "d": 4})
        assert r.object("encoding", "h") == "listpack"
        r.hset("h", "e", 5)
        assert r.object("encoding", "h") == "hashtable"
    finally:
        r.config_set("hash-max-listpack-entries", old)
    with pytest.raises(redis.ResponseError, match="Unknown option or number of arguments"):
        r.config_set("no-such-option", "1")
    with pytest.raises(redis.ResponseError, match="argument must be between 0 and 65535"):
        r.config_set("port", "99999")
    assert r.config_get("no-such-option") == {}
    old = r.config_get("maxmemory-policy")["maxmemory-policy"]
    try:
        assert r.config_set("maxmemory-policy", "allkeys-lru") is True
        assert r.config_get("maxmemory-policy") == {"maxmemory-policy": "allkeys-lru"}
    finally:
        r.config_set("maxmemory-policy", old)


def test_client_commands(r, cte_server, transport):
    cid = r.client_id()
    assert isinstance(cid, int) and cid > 0
    assert r.client_getname() is None
    name = "itest-conn-" + transport  # the other run's connection may not be gone yet
    assert r.client_setname(name) is True
    assert r.client_getname() == name
    with pytest.raises(redis.ResponseError,
                       match="Client names cannot contain spaces, newlines or special characters"):
        r.client_setname("bad name")
    other = cte_server.redis(decode_responses=True)
    other.client_setname("other-conn")
    try:
        clients = r.client_list()
        mine = [c for c in clients if c["name"] == name]
        assert len(mine) == 1
        assert int(mine[0]["id"]) == cid
        assert mine[0]["cmd"] == "client|list"
        assert any(c["name"] == "other-conn" for c in clients)
        assert r.client_info()["name"] == name
        assert [c["name"] for c in r.client_list(client_id=[str(cid)])] == [name]
    finally:
        other.close()


def test_hello_3_through_execute_command(r, cte_server):
    # redis-py 4.3.4 speaks RESP2 only: a HELLO 3 answer (a map, '%7') is more than it can
    # parse, exactly as with redis-server. The raw bytes are checked below.
    with pytest.raises(redis.exceptions.InvalidResponse, match=r"%7"):
        r.execute_command("HELLO", 3)
    r.connection_pool.disconnect()
    h = r.execute_command("HELLO", 2)
    d = dict(zip(h[::2], h[1::2]))
    assert d["server"] == "redis" and d["proto"] == 2 and d["mode"] == "standalone"
    assert d["role"] == "master" and d["modules"] == []
    with cte_server.conn() as c:
        rep = c.call("HELLO", "3")
        assert rep.kind == "%" and len(rep.val) == 7
        keys = [k.val for k, _ in rep.val]
        assert keys == [b"server", b"version", b"proto", b"id", b"mode", b"role", b"modules"]
        assert dict((k.val, v) for k, v in rep.val)[b"proto"] == R(":", 3)
        # after HELLO 3, RESP3 types: a double, a null, a map
        c.call("HSET", "h3", "f", "v")
        c.call("ZADD", "z3", "1.5", "m")
        assert c.call_raw("ZSCORE", "z3", "m") == b",1.5\r\n"
        assert c.call_raw("GET", "nokey") == b"_\r\n"
        assert c.call_raw("HGETALL", "h3") == b"%1\r\n$1\r\nf\r\n$1\r\nv\r\n"


def test_auth_and_requirepass(server_factory):
    s = server_factory(["--requirepass", "s3cret"])
    anon = redis.Redis(host=s.host, port=s.port, decode_responses=True)
    with pytest.raises(redis.AuthenticationError):
        anon.get("k")
    with pytest.raises(redis.ResponseError, match="WRONGPASS"):  # 4.3.4 does not map it
        redis.Redis(host=s.host, port=s.port, password="wrong").ping()
    ok = redis.Redis(host=s.host, port=s.port, password="s3cret", decode_responses=True)
    assert ok.ping() is True
    assert ok.set("k", "v") is True
    ok2 = redis.Redis(host=s.host, port=s.port, username="default", password="s3cret",
                      decode_responses=True)
    assert ok2.get("k") == "v"
    ux = redis.Redis(unix_socket_path=s.unixsocket, password="s3cret", decode_responses=True)
    assert ux.get("k") == "v"
    with RespConn(port=s.port) as c:
        assert c.call_raw("GET", "k") == b"-NOAUTH Authentication required.\r\n"
        assert c.call_raw("AUTH", "wrong") == \
            b"-WRONGPASS invalid username-password pair or user is disabled.\r\n"
        assert c.call_raw("AUTH", "default", "s3cret") == b"+OK\r\n"
        assert c.call_raw("GET", "k") == b"$1\r\nv\r\n"
    with RespConn(port=s.port) as c:
        rep = c.call("HELLO", "3", "AUTH", "default", "s3cret", "SETNAME", "hello-client")
        assert rep.kind == "%", rep
        assert c.call_raw("CLIENT", "GETNAME") == b"$12\r\nhello-client\r\n"
    for cl in (anon, ok, ok2, ux):
        cl.close()


# ---------------------------------------------------------------------------------------
# Values


@pytest.mark.parametrize("size", [1 << 20, 10 << 20], ids=["1MB", "10MB"])
def test_large_values_round_trip(rb, size):
    value = os.urandom(size)
    assert rb.set("big", value) is True
    assert rb.strlen("big") == size
    assert rb.get("big") == value
    assert rb.hset("bigh", "f", value) == 1
    assert rb.hget("bigh", "f") == value
    assert rb.append("big", b"tail") == size + 4
    assert rb.getrange("big", size - 2, -1) == value[-2:] + b"tail"


def test_binary_safe_values_and_keys(rb):
    nasty = [b"a\r\nb", b"\x00", b"\x00\x01\x02\r\n\x00", b"\r\n", b"$5\r\nhello\r\n",
             b"*1\r\n$4\r\nPING\r\n", bytes(range(256)), b""]
    for i, v in enumerate(nasty):
        key = b"key\x00\r\n%d" % i
        assert rb.set(key, v) is True
        assert rb.get(key) == v
        assert rb.strlen(key) == len(v)
        assert rb.hset(b"h\r\n", v, v) in (0, 1)
        assert rb.hget(b"h\r\n", v) == v
        rb.zadd(b"z\x00", {v: i})
        assert rb.zscore(b"z\x00", v) == i
    assert rb.exists(*[b"key\x00\r\n%d" % i for i in range(len(nasty))]) == len(nasty)
    assert set(rb.keys(b"key\x00*")) == {b"key\x00\r\n%d" % i for i in range(len(nasty))}
    assert rb.mget([b"key\x00\r\n0", b"key\x00\r\n1"]) == nasty[:2]


# ---------------------------------------------------------------------------------------
# Lists


def test_lists(r):
    assert r.rpush("l", "a", "b", "c") == 3
    assert r.lpush("l", "z") == 4
    assert r.lpushx("nokey", "x") == 0
    assert r.rpushx("l", "d") == 5
    assert r.lrange("l", 0, -1) == ["z", "a", "b", "c", "d"]
    assert r.llen("l") == 5
    assert r.lindex("l", -1) == "d"
    assert r.lindex("l", 100) is None
    assert r.lset("l", 0, "y") is True
    with pytest.raises(redis.ResponseError, match="index out of range"):
        r.lset("l", 100, "x")
    with pytest.raises(redis.ResponseError, match="no such key"):
        r.lset("nokey", 0, "x")
    assert r.linsert("l", "BEFORE", "b", "a") == 6
    assert r.linsert("l", "AFTER", "nothere", "x") == -1
    assert r.lrange("l", 0, -1) == ["y", "a", "a", "b", "c", "d"]
    assert r.lpos("l", "a") == 1
    assert r.lpos("l", "a", rank=2) == 2
    assert r.lpos("l", "a", count=0) == [1, 2]
    assert r.lpos("l", "nothere") is None
    assert r.lrem("l", 0, "a") == 2
    assert r.ltrim("l", 1, -2) is True
    assert r.lrange("l", 0, -1) == ["b", "c"]
    assert r.lpop("l") == "b"
    assert r.rpush("l", "1", "2", "3") == 4
    assert r.rpop("l", 2) == ["3", "2"]
    assert r.lpop("l", 10) == ["c", "1"]
    assert r.exists("l") == 0
    assert r.lpop("l") is None
    assert r.lpop("l", 2) is None
    r.rpush("src", "1", "2", "3")
    assert r.lmove("src", "dst", "LEFT", "RIGHT") == "1"
    assert r.rpoplpush("src", "dst") == "3"
    assert r.lrange("dst", 0, -1) == ["3", "1"]
    assert r.execute_command("LMPOP", 2, "nokey", "src", "LEFT", "COUNT", 5) == ["src", ["2"]]
    assert r.execute_command("LMPOP", 1, "src", "RIGHT") is None
    r.set("str", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.lpush("str", "x")


def test_list_encodings(r):
    r.rpush("small", "a")
    assert r.object("encoding", "small") == "quicklist"  # Redis 7.0 (listpack came in 7.2)
    r.rpush("big", *["x" * 100 for _ in range(200)])
    assert r.object("encoding", "big") == "quicklist"
    assert r.llen("big") == 200


def test_blpop_times_out(r):
    t0 = time.monotonic()
    assert r.blpop(["nolist1", "nolist2"], timeout=1) is None
    took = time.monotonic() - t0
    assert 0.9 <= took < 3.0, took
    t0 = time.monotonic()
    assert r.brpop("nolist1", timeout=0.3) is None  # fractional timeouts, as Redis 6+
    assert 0.25 <= time.monotonic() - t0 < 2.0
    with pytest.raises(redis.ResponseError, match="timeout is negative"):
        r.blpop("nolist1", timeout=-1)


def test_blpop_is_woken_by_a_push_from_another_connection(r, cte_server, transport):
    other = cte_server.redis(unix=(transport == "unix"), decode_responses=True)
    result = {}

    def pusher():
        time.sleep(0.3)
        result["pushed"] = other.rpush("q2", "hello", "world")

    t = threading.Thread(target=pusher)
    t0 = time.monotonic()
    t.start()
    try:
        got = r.blpop(["q1", "q2"], timeout=10)
        took = time.monotonic() - t0
    finally:
        t.join()
        other.close()
    assert got == ("q2", "hello")
    assert result["pushed"] == 2
    assert 0.2 <= took < 5, took
    assert r.lrange("q2", 0, -1) == ["world"]
    # a value that is already there is returned at once
    assert r.brpop("q2", timeout=5) == ("q2", "world")
    assert r.exists("q2") == 0


def test_blmove_is_woken_by_lpush(r, cte_server, transport):
    other = cte_server.redis(unix=(transport == "unix"), decode_responses=True)
    t = threading.Timer(0.2, lambda: other.lpush("src", "v"))
    t.start()
    try:
        assert r.blmove("src", "dst", 10, "RIGHT", "LEFT") == "v"
    finally:
        t.join()
        other.close()
    assert r.lrange("dst", 0, -1) == ["v"]


# ---------------------------------------------------------------------------------------
# Sets


def test_sets(r):
    assert r.sadd("s", "a", "b", "c", "a") == 3
    assert r.sadd("s", "d") == 1
    assert r.srem("s", "d", "nothere") == 1
    assert r.smembers("s") == {"a", "b", "c"}
    assert r.sismember("s", "a") is True
    assert r.sismember("s", "z") is False
    assert r.smismember("s", ["a", "z", "c"]) == [True, False, True]
    assert r.scard("s") == 3
    assert r.scard("nokey") == 0
    r.sadd("t", "b", "c", "d")
    assert r.sinter("s", "t") == {"b", "c"}
    assert r.sunion("s", "t") == {"a", "b", "c", "d"}
    assert r.sdiff("s", "t") == {"a"}
    assert r.sintercard(2, ["s", "t"]) == 2
    assert r.sintercard(2, ["s", "t"], limit=1) == 1
    assert r.sinterstore("i", ["s", "t"]) == 2
    assert r.sunionstore("u", ["s", "t"]) == 4
    assert r.sdiffstore("d", ["t", "s"]) == 1
    assert r.smembers("d") == {"d"}
    assert r.smove("s", "t", "a") is True
    assert r.smove("s", "t", "nothere") is False
    assert r.smembers("t") == {"a", "b", "c", "d"}
    assert r.srandmember("t") in {"a", "b", "c", "d"}
    assert len(r.srandmember("t", -10)) == 10
    assert set(r.srandmember("t", 10)) == {"a", "b", "c", "d"}
    popped = r.spop("t", 2)
    assert len(popped) == 2 and set(popped) <= {"a", "b", "c", "d"}
    assert r.scard("t") == 2
    assert r.spop("nokey") is None
    r.set("str", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.sadd("str", "x")


def test_set_encodings_and_sscan(r):
    r.sadd("ints", *range(100))
    assert r.object("encoding", "ints") == "intset"
    r.sadd("strs", "a", "b")
    assert r.object("encoding", "strs") == "hashtable"  # Redis 7.0 (listpack sets came in 7.2)
    r.sadd("ints", "x")
    assert r.object("encoding", "ints") == "hashtable"
    r.sadd("many", *range(1000))
    assert r.object("encoding", "many") == "hashtable"  # past set-max-intset-entries (512)
    assert set(r.sscan_iter("many", count=50)) == {str(i) for i in range(1000)}
    assert set(r.sscan_iter("many", match="99?")) == {str(i) for i in range(990, 1000)}


# ---------------------------------------------------------------------------------------
# Transactions


def test_transactional_pipeline_is_multi_exec(r, cte_server):
    p = r.pipeline()  # transaction=True: MULTI ... EXEC
    p.set("a", "1").incr("a").rpush("l", "x").get("a").lrange("l", 0, -1)
    assert p.execute() == [True, 2, 1, "2", ["x"]]
    # a runtime error inside EXEC does not stop the others
    p = r.pipeline()
    p.set("s", "str").lpush("s", "x").set("after", "1")
    res = p.execute(raise_on_error=False)
    assert res[0] is True and res[2] is True
    assert isinstance(res[1], redis.ResponseError) and str(res[1]).startswith("WRONGTYPE")
    assert r.get("after") == "1"
    # a queueing error (unknown command) aborts the whole transaction
    p = r.pipeline()
    p.set("x", "1")
    p.execute_command("NOSUCHCOMMAND", "a")
    with pytest.raises(redis.ResponseError):
        p.execute()
    assert r.exists("x") == 0
    # raw: the replies and the EXECABORT text
    with cte_server.conn() as c:
        assert c.call_raw("MULTI") == b"+OK\r\n"
        assert c.call_raw("SET", "k", "v") == b"+QUEUED\r\n"
        assert c.call_raw("GET") == \
            b"-ERR wrong number of arguments for 'get' command\r\n"
        assert c.call_raw("EXEC") == \
            b"-EXECABORT Transaction discarded because of previous errors.\r\n"
        assert c.call_raw("EXEC") == b"-ERR EXEC without MULTI\r\n"
        assert c.call_raw("MULTI") == b"+OK\r\n"
        assert c.call_raw("MULTI") == b"-ERR MULTI calls can not be nested\r\n"
        assert c.call_raw("INCR", "n") == b"+QUEUED\r\n"
        assert c.call_raw("DISCARD") == b"+OK\r\n"
        assert c.call_raw("GET", "n") == b"$-1\r\n"


def test_watch_conflict_raises_watch_error(r, cte_server, transport):
    other = cte_server.redis(unix=(transport == "unix"), decode_responses=True)
    try:
        r.set("balance", "10")
        with r.pipeline() as p:
            p.watch("balance")
            current = int(p.get("balance"))  # immediate mode while watching
            other.set("balance", "100")  # another client changes the watched key
            p.multi()
            p.set("balance", current - 1)
            with pytest.raises(redis.WatchError):
                p.execute()
        assert r.get("balance") == "100"
        # without interference the same transaction goes through
        with r.pipeline() as p:
            p.watch("balance")
            current = int(p.get("balance"))
            p.multi()
            p.set("balance", current - 1)
            assert p.execute() == [True]
        assert r.get("balance") == "99"
        # expiry and deletion by another client count as changes too
        with r.pipeline() as p:
            p.watch("balance")
            other.delete("balance")
            p.multi()
            p.set("balance", "1")
            with pytest.raises(redis.WatchError):
                p.execute()
        # UNWATCH forgets
        r.set("w", "1")
        with r.pipeline() as p:
            p.watch("w")
            other.set("w", "2")
            p.unwatch()
            p.multi()
            p.incr("w")
            assert p.execute() == [3]
        # the transaction helper retries until it wins
        calls = []

        def txn(pipe):
            v = int(pipe.get("w"))
            if not calls:
                other.incr("w")
            calls.append(v)
            pipe.multi()
            pipe.set("w", v * 10)

        r.transaction(txn, "w")
        assert calls == [3, 4] and r.get("w") == "40"
    finally:
        other.close()


# ---------------------------------------------------------------------------------------
# Pub/Sub


def _get_message(ps, timeout=5.0):
    """The next message of a redis-py PubSub (None when nothing came within timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = ps.get_message(timeout=min(0.5, max(0.01, deadline - time.monotonic())))
        if m is not None:
            return m
    return None


def test_pubsub_subscribe_and_psubscribe(r, cte_server, transport):
    ps = cte_server.redis(unix=(transport == "unix"), decode_responses=True).pubsub()
    try:
        ps.subscribe("news", "sport")
        assert _get_message(ps) == {"type": "subscribe", "pattern": None, "channel": "news",
                                    "data": 1}
        assert _get_message(ps) == {"type": "subscribe", "pattern": None, "channel": "sport",
                                    "data": 2}
        ps.psubscribe("w*")
        assert _get_message(ps) == {"type": "psubscribe", "pattern": None, "channel": "w*",
                                    "data": 3}
        assert r.pubsub_channels() in (["news", "sport"], ["sport", "news"])
        assert r.pubsub_numsub("news", "nothere") == [("news", 1), ("nothere", 0)]
        assert r.pubsub_numpat() == 1
        assert r.publish("news", "hello") == 1
        assert _get_message(ps) == {"type": "message", "pattern": None, "channel": "news",
                                    "data": "hello"}
        assert r.publish("weather", "rain\r\n\x00") == 1
        assert _get_message(ps) == {"type": "pmessage", "pattern": "w*",
                                    "channel": "weather", "data": "rain\r\n\x00"}
        assert r.publish("nobody", "x") == 0
        ps.unsubscribe("news")
        assert _get_message(ps) == {"type": "unsubscribe", "pattern": None, "channel": "news",
                                    "data": 2}
        assert r.publish("news", "lost") == 0
        ps.punsubscribe()
        assert _get_message(ps) == {"type": "punsubscribe", "pattern": None, "channel": "w*",
                                    "data": 1}
        assert _get_message(ps, timeout=0.2) is None
    finally:
        ps.close()


def test_pubsub_raw_replies_and_restrictions(cte_server):
    with cte_server.conn() as c:
        assert c.call_raw("SUBSCRIBE", "a") == b"*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
        assert c.call_raw("GET", "x") == (
            b"-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
            b"QUIT / RESET are allowed in this context\r\n")
        assert c.call_raw("PING") == b"*2\r\n$4\r\npong\r\n$0\r\n\r\n"
        assert c.call_raw("UNSUBSCRIBE") == b"*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:0\r\n"
        assert c.call_raw("PING") == b"+PONG\r\n"
    with cte_server.conn() as c:  # RESP3: pushes, and normal commands are allowed
        c.call("HELLO", "3")
        assert c.call_raw("SUBSCRIBE", "a") == b">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
        assert c.call_raw("SET", "k", "v") == b"+OK\r\n"
        with cte_server.conn() as p:
            assert p.call_raw("PUBLISH", "a", "m") == b":1\r\n"
        assert c.read_reply()[1] == b">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nm\r\n"


def test_keyspace_notifications(server_factory, transport):
    s = server_factory(["--notify-keyspace-events", "KEA"])
    r = s.redis(unix=(transport == "unix"), decode_responses=True)
    ps = s.redis(unix=(transport == "unix"), decode_responses=True).pubsub()
    try:
        assert r.config_get("notify-keyspace-events")["notify-keyspace-events"] == "AKE"
        ps.psubscribe("__key*__:*")
        assert _get_message(ps)["type"] == "psubscribe"
        r.set("foo", "bar")
        r.lpush("mylist", "x")
        r.delete("foo")
        r.set("tmp", "v", px=50)
        got = []
        while ("__keyevent@0__:expired", "tmp") not in got:
            m = _get_message(ps, timeout=3.0)
            if m is None:
                break
            got.append((m["channel"], m["data"]))
        assert got[:8] == [
            ("__keyspace@0__:foo", "set"), ("__keyevent@0__:set", "foo"),
            ("__keyspace@0__:mylist", "lpush"), ("__keyevent@0__:lpush", "mylist"),
            ("__keyspace@0__:foo", "del"), ("__keyevent@0__:del", "foo"),
            ("__keyspace@0__:tmp", "set"), ("__keyevent@0__:set", "tmp"),
        ], got
        assert ("__keyspace@0__:tmp", "expired") in got[8:], got
        assert ("__keyevent@0__:expired", "tmp") in got[8:], got
        # turned off at run time: no more events
        assert r.config_set("notify-keyspace-events", "") is True
        r.set("quiet", "1")
        assert _get_message(ps, timeout=0.3) is None
    finally:
        ps.close()
        r.close()


# ---------------------------------------------------------------------------------------
# CLIENT KILL


def test_client_kill(r, cte_server, transport):
    with cte_server.conn(unix=(transport == "unix")) as victim:
        victim.call("CLIENT", "SETNAME", "victim")
        vid = victim.call("CLIENT", "ID").val
        assert r.client_kill_filter(_id=vid) == 1
        assert victim.is_closed_by_peer(timeout=5)
    assert r.client_kill_filter(_id=999999999) == 0
    with pytest.raises(redis.ResponseError, match="No such client"):
        r.client_kill("1.2.3.4:5")
    with cte_server.conn() as victim:
        addr = to_addr(victim.call("CLIENT", "INFO").val)
        assert r.client_kill(addr) is True
        assert victim.is_closed_by_peer(timeout=5)
    # the killer itself survives
    assert r.ping() is True


def to_addr(client_info_line):
    for field in client_info_line.decode().split():
        if field.startswith("addr="):
            return field[len("addr="):]
    raise AssertionError("no addr= in %r" % client_info_line)
