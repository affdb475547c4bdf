"""DUMP, RESTORE and importing Redis RDB files, against redis-server 7.0 in the same run.

- DUMP payloads are compared byte for byte with Redis's where Redis's bytes follow from the
  value (strings in every encoding, listpack hashes and sorted sets, intsets, quicklists);
  hashtable hashes and sets and skiplist sorted sets (Redis's dict order) are compared by
  RESTORE-ing each server's payload into the other and comparing contents.
- Payloads of the encodings Redis 5 and 6 write (ziplists, quicklists of ziplists, zipmaps,
  RDB version 9) are built here and restored on both servers.
- RESTORE's options and errors, its AOF record, and corrupt payloads (random mutations with a
  valid CRC: an error or a valid value, never a crash).
- An RDB file written by redis-server (SAVE) loaded with --import-rdb and with
  tools/cte-import-rdb, compared key by key in every database."""
import os
import random
import struct
import subprocess
import time

import pytest
import redis

from conftest import CTE_KIND, CTE_SERVER
from diffgen_dump import crc64, payload, rdb_len, rdb_str, ziplist, zipmap

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="compares cte-server with redis-server")

IMPORT_TOOL = os.path.join(os.path.dirname(CTE_SERVER), "cte-import-rdb")


# ---------------------------------------------------------------------------------------
# Helpers


@pytest.fixture
def both(cte_server, redis_server):
    c = cte_server.redis()
    r = redis_server.redis()
    yield c, r
    c.close()
    r.close()


def content(s, key):
    t = s.type(key)
    if t == b"hash":
        return t, sorted(s.hgetall(key).items())
    if t == b"set":
        return t, sorted(s.smembers(key))
    if t == b"zset":
        return t, s.zrange(key, 0, -1, withscores=True)
    if t == b"list":
        return t, s.lrange(key, 0, -1)
    if t == b"string":
        return t, s.get(key)
    return t, None


def run_both(c, r, *cmd):
    return c.execute_command(*cmd), r.execute_command(*cmd)


# Values whose DUMP bytes are Redis's exactly: (key, commands that build it).
DETERMINISTIC = {
    "str_short": [("SET", "k", "hello")],
    "str_int8": [("SET", "k", "-12")],
    "str_int16": [("SET", "k", "12345")],
    "str_int32": [("SET", "k", "-2147483648")],
    "str_int64": [("SET", "k", "9223372036854775807")],
    "str_not_canonical_int": [("SET", "k", "0123")],
    "str_20": [("SET", "k", "a" * 20)],
    "str_21_lzf": [("SET", "k", "a" * 21)],
    "str_lzf_text": [("SET", "k", "the quick brown fox jumps over the lazy dog " * 30)],
    "str_incompressible": [("SET", "k", bytes(random.Random(3).randrange(256)
                                              for _ in range(300)))],
    "str_large": [("SET", "k", ("0123456789abcdef" * 8192) + "tail")],
    "str_append": [("SET", "k", "12"), ("APPEND", "k", "34")],
    "str_empty": [("SET", "k", "")],
    "hash_listpack": [("HSET", "k", "a", "1", "b", "-300", "c", "x" * 60, "d", "")],
    "hash_listpack_ints": [("HSET", "k", *sum(([str(i), str(i * 1000003)] for i in range(100)),
                                              []))],
    "hash_listpack_updated": [("HSET", "k", "a", "1", "b", "2"), ("HSET", "k", "a", "long" * 5),
                              ("HDEL", "k", "b")],
    "zset_listpack": [("ZADD", "k", "1", "a", "2.5", "b", "-inf", "c", "inf", "d", "1e300", "e",
                       "-0", "f", "0.1", "g", "4611686018427387904", "h")],
    "zset_listpack_ties": [("ZADD", "k", *sum(([str(i % 3), "m%d" % i] for i in range(120)), []))],
    "intset16": [("SADD", "k", "1", "-5", "300")],
    "intset32": [("SADD", "k", "1", "100000")],
    "intset64": [("SADD", "k", "1", "-10000000000")],
    "intset_large": [("SADD", "k", *range(0, 3500, 7))],
    "list_small": [("RPUSH", "k", "a", "b", "1", "-100", "65536", "x" * 30)],
    "list_nodes": [("RPUSH", "k", *["element-%d" % i for i in range(5000)])],
    "list_big_elements": [("RPUSH", "k", *[("e%d" % i) * 700 for i in range(40)])],
    "list_lpush": [("LPUSH", "k", *["v%d" % i for i in range(50)])],
}


@pytest.mark.parametrize("name", sorted(DETERMINISTIC))
def test_dump_bytes_equal_redis(both, name):
    c, r = both
    for cmd in DETERMINISTIC[name]:
        run_both(c, r, *cmd)
    pc, pr = c.dump("k"), r.dump("k")
    assert pc == pr, (name, pc[:120], pr[:120])
    # and restores on both with the same content and encoding
    c.restore("back", 0, pr)
    r.restore("back", 0, pr)
    assert content(c, "back") == content(r, "back") == content(r, "k")
    assert c.object("encoding", "back") == r.object("encoding", "back")


@pytest.mark.parametrize("fill", ["-1", "-3", "5", "128", "-10", "40000"])
def test_dump_list_nodes_follow_list_max_listpack_size(both, fill):
    c, r = both
    try:
        run_both(c, r, "CONFIG", "SET", "list-max-listpack-size", fill)
        run_both(c, r, "RPUSH", "k", *["item%d" % (i * 7919) for i in range(3000)])
        assert c.dump("k") == r.dump("k")
    finally:
        run_both(c, r, "CONFIG", "SET", "list-max-listpack-size", "-2")


def build_unordered(s):
    s.hset("hash", mapping={"f%d" % i: "v%d" % i * 10 for i in range(500)})
    s.hset("hash_long", mapping={"a": "x" * 100, "b": "2"})
    s.sadd("set", *["m%d" % i for i in range(300)])
    s.sadd("set_str", "a", "b", "c")
    s.zadd("zset", {"m%d" % i: i * 1.5 for i in range(400)})
    s.zadd("zset_long", {"y" * 100: 1, "b": -2.25})


def test_unordered_encodings_cross_restore(both):
    c, r = both
    build_unordered(c)
    build_unordered(r)
    for k in ["hash", "hash_long", "set", "set_str", "zset", "zset_long"]:
        c.restore(k + ":r", 0, r.dump(k))
        r.restore(k + ":c", 0, c.dump(k))
        want = content(r, k)
        assert content(c, k) == want
        assert content(c, k + ":r") == want
        assert content(r, k + ":c") == want
        assert c.object("encoding", k + ":r") == r.object("encoding", k), k
        assert r.object("encoding", k + ":c") == r.object("encoding", k), k


# Payloads in the encodings of Redis 5 and 6 (RDB 9) and older: restored on both servers.
OLD = {
    "hash_ziplist": bytes([13]) + rdb_str(ziplist([b"a", 1, b"b", b"two", b"n", 70000])),
    "zset_ziplist": bytes([12]) + rdb_str(ziplist([b"c", -3, b"a", 1, b"b", b"2.5"])),
    "list_ziplist": bytes([10]) + rdb_str(ziplist([b"x", 5, -100, 1 << 40, b"y" * 100])),
    "list_quicklist": bytes([14]) + rdb_len(2) + rdb_str(ziplist([b"a", 1, 2])) +
    rdb_str(ziplist([b"b" * 300, -(1 << 20)])),
    "hash_zipmap": bytes([9]) + rdb_str(zipmap([(b"f1", b"v1"), (b"f2", b"v2")])),
    "zset_text_scores": bytes([3]) + rdb_len(3) + rdb_str(b"a") + b"\x031.5" + rdb_str(b"b") +
    b"\xfe" + rdb_str(b"c") + b"\xff",
    "list_plain": bytes([1]) + rdb_len(3) + rdb_str(b"a") + b"\xc0\x05" + rdb_str(b"c"),
    "set_plain_ints": bytes([2]) + rdb_len(3) + b"\xc0\x01" + b"\xc1\x00\x01" + rdb_str(b"7"),
}


@pytest.mark.parametrize("name", sorted(OLD))
def test_restore_old_encodings(both, name):
    c, r = both
    p = payload(OLD[name], version=9)
    assert r.restore("k", 0, p) == b"OK"  # the payload is good for Redis 7.0 too
    assert c.restore("k", 0, p) == b"OK"
    assert content(c, "k") == content(r, "k")
    assert c.object("encoding", "k") == r.object("encoding", "k")


def test_restore_errors(both):
    c, r = both
    p = c.execute_command("DUMP", "nokey")
    assert p is None
    c.set("src", "v")
    good = c.dump("src")
    cases = [
        (["k", "0", good, "BADOPT"], "syntax error"),
        (["k", "-1", good], "Invalid TTL value, must be >= 0"),
        (["k", "abc", good], "value is not an integer or out of range"),
        (["k", "0", good, "IDLETIME", "-1"], "Invalid IDLETIME value, must be >= 0"),
        (["k", "0", good, "FREQ", "256"], "Invalid FREQ value, must be >= 0 and <= 255"),
        (["k", "0", good, "FREQ", "1", "IDLETIME", "1"], "syntax error"),
        (["k", "0", good[:-1] + bytes([good[-1] ^ 1])], "DUMP payload version or checksum are wrong"),
        (["k", "0", b"short"], "DUMP payload version or checksum are wrong"),
        (["k", "0", payload(b"\x00" + rdb_str(b"x"), version=11)],
         "DUMP payload version or checksum are wrong"),
        (["k", "0", payload(b"\x08" + rdb_str(b"x"))], "Bad data format"),
        (["k", "0", payload(b"\x02" + rdb_len(0))], "Bad data format"),
        (["k", "0", payload(b"\x02" + rdb_len(2) + rdb_str(b"a") + rdb_str(b"a"))],
         "Bad data format"),
        (["k", "0", payload(b"\x05" + rdb_len(1) + rdb_str(b"a") + struct.pack("<d", float("nan")))],
         "Bad data format"),
        (["k", "0", payload(bytes([200]) + b"\x00")], "Bad data format"),
    ]
    for args, err in cases:
        for s in (c, r):
            with pytest.raises(redis.ResponseError) as e:
                s.execute_command("RESTORE", *args)
            assert str(e.value) == err, (s, args[1:], str(e.value))
    for s in (c, r):
        s.set("k", "exists")
        with pytest.raises(redis.ResponseError) as e:
            s.restore("k", 0, good)
        assert str(e.value) == "BUSYKEY Target key name already exists."
        assert s.get("k") == b"exists"


def test_restore_options(cte_server):
    c = cte_server.redis()
    c.set("src", "v")
    p = c.dump("src")
    assert c.restore("a", 5000, p)
    assert 4000 < c.pttl("a") <= 5000
    when = int(time.time() * 1000) + 100000
    assert c.restore("b", when, p, absttl=True)
    assert abs(c.pexpiretime("b") - when) <= 1
    assert c.restore("c", 0, p, idletime=1000)
    assert 1000 <= c.object("idletime", "c") <= 1002
    assert c.restore("c", 0, p, replace=True)
    assert c.object("idletime", "c") <= 2
    # a time in the past: nothing stored, and with REPLACE the old key is deleted
    c.set("d", "old")
    assert c.restore("d", 1, p, absttl=True, replace=True)
    assert c.exists("d") == 0
    c.config_set("maxmemory-policy", "allkeys-lfu")
    try:
        assert c.restore("e", 0, p, frequency=100)
        assert c.object("freq", "e") == 100
    finally:
        c.config_set("maxmemory-policy", "noeviction")


def test_restore_keyspace_event(cte_server):
    c = cte_server.redis()
    c.config_set("notify-keyspace-events", "KEg")
    try:
        ps = c.pubsub()
        ps.psubscribe("__keyspace@0__:*")
        ps.get_message(timeout=1)
        c.set("src", "v")
        c.restore("k", 0, c.dump("src"))
        msgs = []
        for _ in range(10):
            m = ps.get_message(timeout=0.5)
            if m:
                msgs.append((m["channel"], m["data"]))
        assert (b"__keyspace@0__:k", b"restore") in msgs
        ps.close()
    finally:
        c.config_set("notify-keyspace-events", "")


def test_restore_logged_to_aof_with_absolute_ttl(server_factory):
    s = server_factory(["--appendonly", "yes", "--appendfsync", "always"])
    c = s.redis()
    c.set("src", "v")
    p = c.dump("src")
    c.restore("k", 100000, p)
    c.restore("plain", 0, p)
    data = open(os.path.join(s.tmpdir, "appendonly.aof"), "rb").read()
    assert b"ABSTTL" in data
    s.restart_same_dir()
    c = s.redis()
    assert c.get("k") == b"v" and c.get("plain") == b"v"
    assert 90000 < c.pttl("k") <= 100000


def test_restore_corrupt_payloads_never_crash(both):
    """Random mutations of real payloads, with the CRC fixed so that they reach the decoder:
    the answer is OK (the bytes still form a value) or "Bad data format"."""
    c, r = both
    build_unordered(r)
    for name in sorted(DETERMINISTIC):
        for cmd in DETERMINISTIC[name]:
            r.execute_command(*[x if x != "k" else name for x in cmd])
    for k in ["stream_src"]:
        r.xadd(k, {"a": "b"})
    keys = r.keys("*")
    rnd = random.Random(7)
    n_ok = n_err = 0
    for k in keys:
        base = r.dump(k)
        for _ in range(60):
            body = bytearray(base[:-10])
            op = rnd.randrange(4)
            if op == 0:
                for _ in range(rnd.randint(1, 4)):
                    body[rnd.randrange(len(body))] = rnd.randrange(256)
            elif op == 1:
                del body[rnd.randrange(1, len(body)):]
            elif op == 2:
                i = rnd.randrange(len(body))
                body[i:i] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 8)))
            else:
                i = rnd.randrange(1, len(body))
                body[i] ^= 1 << rnd.randrange(8)
            p = payload(bytes(body))
            try:
                c.restore("fuzz", 0, p, replace=True)
                n_ok += 1
                c.dump("fuzz")  # the value it built is whole
                content(c, "fuzz")
            except redis.ResponseError as e:
                assert str(e) == "Bad data format", str(e)
                n_err += 1
    assert c.ping()
    assert n_err > 0 and n_ok + n_err == 60 * len(keys)


# ---------------------------------------------------------------------------------------
# RDB files


def fill_for_rdb(r):
    rnd = random.Random(11)
    r.set("str", "hello")
    r.set("int", 12345)
    r.set("big", "z" * 100000)
    r.set("ttl", "v", px=500000)
    r.set("expired_soon", "v", px=1)
    r.hset("hash_lp", mapping={"a": "1", "b": "2"})
    r.hset("hash_ht", mapping={"f%d" % i: "v" * rnd.randrange(1, 200) for i in range(300)})
    r.rpush("list", *range(3000))
    r.sadd("intset", *range(100))
    r.sadd("set", *["m%d" % i for i in range(200)])
    r.zadd("zset_lp", {"a": 1, "b": 2.5})
    r.zadd("zset_sl", {"m%d" % i: rnd.random() for i in range(500)})
    r.function_load("#!lua name=rdblib\nredis.register_function('rdbf', "
                    "function(keys, args) return 'from rdb' end)")
    for db in (1, 9):
        rr = redis.Redis(host=r.connection_pool.connection_kwargs["host"],
                         port=r.connection_pool.connection_kwargs["port"], db=db)
        rr.set("indb%d" % db, db)
        rr.hset("h%d" % db, "f", "v")
        rr.close()


def compare_all_dbs(src, dst_server, skip=()):
    for db in range(16):
        s = redis.Redis(host=src.host, port=src.port, db=db)
        d = redis.Redis(host=dst_server.host, port=dst_server.port, db=db)
        keys = sorted(k for k in s.keys("*") if k not in skip)
        assert sorted(k for k in d.keys("*") if k not in skip) == keys, db
        for k in keys:
            assert content(d, k) == content(s, k), (db, k)
            assert d.object("encoding", k) == s.object("encoding", k), (db, k)
            ts, td = s.pttl(k), d.pttl(k)
            assert (ts < 0) == (td < 0) and abs(ts - td) < 5000, (db, k, ts, td)
        s.close()
        d.close()


def test_import_rdb_written_by_redis(redis_server, server_factory):
    r = redis_server.redis()
    fill_for_rdb(r)
    r.xadd("stream", {"f": "v"})
    time.sleep(0.01)
    r.save()
    path = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
    s = server_factory(["--import-rdb", path])
    c = s.redis()
    compare_all_dbs(redis_server, s, skip={b"stream"})
    assert c.fcall("rdbf", 0) == b"from rdb"
    log = s.log_text()
    assert "Could not import key 'stream' (db 0)" in log
    assert "1 records could not be imported" in log
    for db in range(16):
        redis.Redis(host=redis_server.host, port=redis_server.port, db=db).flushdb()
    r.function_flush()


def test_import_rdb_refuses_a_corrupt_file(server_factory, tmp_path):
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(b"REDIS0010\xfe\x00\x00\x03key\x99")
    with pytest.raises(Exception):
        server_factory(["--import-rdb", str(bad)])


@pytest.mark.skipif(not os.path.exists(IMPORT_TOOL), reason="tools/cte-import-rdb not built")
def test_import_tool_streams_an_rdb_into_a_running_server(redis_server, cte_server):
    r = redis_server.redis()
    fill_for_rdb(r)
    r.xadd("stream", {"f": "v"})
    r.save()
    path = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
    cte_server.redis().function_flush()
    p = subprocess.run([IMPORT_TOOL, "-p", str(cte_server.port), "-q", path],
                       capture_output=True, timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 1, err  # the stream is refused and named
    assert "key 'stream' (db 0) not imported: ERR Bad data format" in err
    compare_all_dbs(redis_server, cte_server, skip={b"stream"})
    assert cte_server.redis().fcall("rdbf", 0) == b"from rdb"
    for db in range(16):
        redis.Redis(host=cte_server.host, port=cte_server.port, db=db).flushdb()
        redis.Redis(host=redis_server.host, port=redis_server.port, db=db).flushdb()
    r.function_flush()
    cte_server.redis().function_flush()


# ---------------------------------------------------------------------------------------
# Tags: a payload type of our own (200), refused by Redis


def test_tag_dump_restore_round_trip(both):
    c, r = both
    c.execute_command("TPUT", "tg", "ram", 0, "hello world" * 100, 0.75)
    c.execute_command("TPUT", "tg", "disk", 0, bytes(range(256)) * 4000, 0.0)
    c.execute_command("TPUT", "tg", "empty", 0, "")
    p = c.dump("tg")
    assert p[0] == 200
    assert c.restore("copy", 0, p) == b"OK"
    assert sorted(c.execute_command("TLIST", "copy")) == [b"disk", b"empty", b"ram"]
    for b in (b"ram", b"disk", b"empty"):
        assert c.execute_command("TGET", "copy", b) == c.execute_command("TGET", "tg", b)
    assert c.type("copy") == c.type("tg")
    with pytest.raises(redis.ResponseError) as e:
        r.restore("tg", 0, p)
    assert str(e.value) == "Bad data format"
    rnd = random.Random(3)
    body = p[:-10]
    for _ in range(300):
        m = bytearray(body[:2000])
        m[rnd.randrange(1, len(m))] = rnd.randrange(256)
        if rnd.random() < 0.3:
            del m[rnd.randrange(2, len(m)):]
        try:
            c.restore("fuzz", 0, payload(bytes(m)), replace=True)
        except redis.ResponseError as e:
            assert str(e) == "Bad data format"
    assert c.ping()


def test_migrate_from_redis_lands_in_cte(both, cte_server):
    """redis-server's MIGRATE sends RESTORE (with REPLACE, and the TTL) over its own
    connection: the keys arrive whole, and Redis deletes its copies unless COPY."""
    c, r = both
    build_unordered(r)
    r.rpush("list", *range(2000))
    r.set("str", "hello", px=100000)
    keys = ["hash", "set", "zset", "list", "str"]
    assert r.execute_command("MIGRATE", "127.0.0.1", cte_server.port, "", 0, 5000, "COPY",
                             "KEYS", *keys) == b"OK"
    for k in keys:
        assert content(c, k) == content(r, k), k
    assert 90000 < c.pttl("str") <= 100000
    c.set("busy", "x")
    r.set("busy", "y")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("MIGRATE", "127.0.0.1", cte_server.port, "busy", 0, 5000)
    assert "BUSYKEY" in str(e.value)
    assert r.execute_command("MIGRATE", "127.0.0.1", cte_server.port, "busy", 0, 5000,
                             "REPLACE") == b"OK"
    assert c.get("busy") == b"y" and r.exists("busy") == 0


def rdb_file(version, records):
    """An RDB file: header, records (bytes), EOF, CRC-64."""
    data = b"REDIS%04d" % version + b"".join(records) + b"\xff"
    return data + struct.pack("<Q", crc64(data))


def aux(k, v):
    return b"\xfa" + rdb_str(k) + rdb_str(v)


def key(t, name, body, expire_ms=None, expire_s=None):
    pre = b""
    if expire_ms is not None:
        pre = b"\xfc" + struct.pack("<q", expire_ms)
    if expire_s is not None:
        pre = b"\xfd" + struct.pack("<i", expire_s)
    return pre + bytes([t]) + rdb_str(name) + body


def rdb9_records():
    """What Redis 5 and 6 write: RDB 9, ziplists, quicklists of ziplists, intsets."""
    far = int(time.time() * 1000) + 500000
    return [
        aux(b"redis-ver", b"6.2.6"), aux(b"redis-bits", b"64"),
        b"\xfe\x00", b"\xfb\x08\x02",
        key(0, b"str", rdb_str(b"hello")),
        key(0, b"int", b"\xc1\x39\x30", expire_ms=far),
        key(0, b"secs", rdb_str(b"v"), expire_s=int(time.time()) + 3000),
        key(0, b"gone", rdb_str(b"v"), expire_ms=1000),
        key(13, b"hzl", rdb_str(ziplist([b"a", 1, b"b", b"two"]))),
        key(12, b"zzl", rdb_str(ziplist([b"x", -3, b"y", b"2.5"]))),
        key(14, b"list", rdb_len(2) + rdb_str(ziplist([b"a", 5, -100])) +
            rdb_str(ziplist([b"b" * 100, 1 << 40]))),
        key(11, b"iset", rdb_str(struct.pack("<II", 2, 3) + struct.pack("<hhh", -1, 5, 300))),
        key(4, b"hash", rdb_len(2) + rdb_str(b"f1") + rdb_str(b"v" * 100) + rdb_str(b"f2") +
            b"\xc0\x07"),
        key(5, b"zset", rdb_len(2) + rdb_str(b"m") + struct.pack("<d", 1.5) + rdb_str(b"n") +
            struct.pack("<d", -2.0)),
        key(2, b"set", rdb_len(2) + rdb_str(b"a") + rdb_str(b"b")),
        b"\xfe\x05",
        key(0, b"in5", rdb_str(b"five")),
    ]


def test_import_rdb9_of_redis6_compared_with_redis(redis_server, server_factory, tmp_path):
    path = tmp_path / "dump.rdb"
    path.write_bytes(rdb_file(9, rdb9_records()))
    ref = server_factory(["--dir", str(tmp_path), "--dbfilename", "dump.rdb"], kind="redis")
    s = server_factory(["--import-rdb", str(path)])
    compare_all_dbs(ref, s)
    c = s.redis()
    assert c.exists("gone") == 0 and c.get("str") == b"hello"
    assert "1 keys already expired left out" in s.log_text()


def test_import_reports_module_values_by_name(server_factory, tmp_path):
    module_value = (b"\x81" + struct.pack(">Q", 0x1234567890ABCDEF) + b"\x02\x05" +
                    b"\x05" + rdb_str(b"abc") + b"\x04" + struct.pack("<d", 1.0) + b"\x00")
    module_aux = (b"\xf7" + b"\x81" + struct.pack(">Q", 0x1234567890ABCDEF) + b"\x02\x02" +
                  b"\x05" + rdb_str(b"aux") + b"\x00")
    recs = rdb9_records() + [module_aux, key(7, b"modkey", module_value),
                             key(0, b"after", rdb_str(b"ok"))]
    path = tmp_path / "mod.rdb"
    path.write_bytes(rdb_file(9, recs))
    s = server_factory(["--import-rdb", str(path)])
    c = redis.Redis(host=s.host, port=s.port, db=5)
    assert c.get("after") == b"ok"
    assert c.exists("modkey") == 0
    log = s.log_text()
    assert "Could not import key 'modkey' (db 5)" in log and "module" in log
    if os.path.exists(IMPORT_TOOL):
        t = server_factory()
        p = subprocess.run([IMPORT_TOOL, "-p", str(t.port), "-q", str(path)],
                           capture_output=True, timeout=60)
        err = p.stderr.decode()
        assert p.returncode == 1, err
        assert "key 'modkey' (db 5) not imported" in err and "module aux data" in err
        assert redis.Redis(host=t.host, port=t.port, db=5).get("after") == b"ok"
        compare_all_dbs(s, t)
