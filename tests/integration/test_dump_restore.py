"""DUMP, RESTORE and importing Redis RDB files, against redis-server 7.0 in the same run.

- DUMP payloads are compared byte for byte with Redis's where Redis's bytes follow from the
  value (strings in every encoding, listpack hashes and sorted sets, intsets, quicklists);
  hashtable hashes and sets and skiplist sorted sets (Redis's dict order) are compared by
  RESTORE-ing each server's payload into the other and comparing contents.
- Payloads of the encodings Redis 5 and 6 write (ziplists, quicklists of ziplists, zipmaps,
  RDB version 9) are built here and restored on both servers.
- RESTORE's options and errors, its AOF record, and corrupt payloads (random mutations with a
  valid CRC: an error or a valid value, never a crash).
- Streams: DUMP bytes equal Redis's but for delivery and seen times, payloads of each server
  restored on the other (XINFO STREAM FULL, XRANGE, XPENDING), the type 15 of Redis 5 to 6.2,
  crafted inconsistent payloads and random corruption.
- An RDB file written by redis-server (SAVE), streams included, loaded with --import-rdb and
  with tools/cte-import-rdb, compared key by key in every database."""
import os
import random
import struct
import subprocess
import threading
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
    if t == b"stream":
        return t, stream_state(s, key)
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
# Streams (RDB_TYPE_STREAM_LISTPACKS_2; type 15 of Redis 5 to 6.2 built here)


def stream_commands(k):
    """A stream with several nodes (stream-node-max-entries 4), tombstones, trimming, groups
    with PELs, claimed entries, an idle consumer and an unknown entries-read counter."""
    cmds = []
    for i in range(1, 23):
        fields = ["f", str(i), "g", "x" * (i % 5)] if i % 3 else ["other", "v%d" % i]
        cmds.append(("XADD", k, "%d-%d" % (i * 10, i % 2), *fields))
    cmds += [
        ("XADD", k, "230-0", "big", "y" * 300),
        ("XDEL", k, "30-1", "70-1", "80-0", "90-1"),
        ("XTRIM", k, "MINID", "25-0"),
        ("XGROUP", "CREATE", k, "g1", "0"),
        ("XGROUP", "CREATE", k, "g2", "$"),
        ("XGROUP", "CREATE", k, "g3", "50-0"),
        ("XGROUP", "CREATE", k, "1234", "0", "ENTRIESREAD", "2"),
        ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", "5", "STREAMS", k, ">"),
        ("XREADGROUP", "GROUP", "g1", "bob", "COUNT", "3", "STREAMS", k, ">"),
        ("XACK", k, "g1", "40-0"),
        ("XGROUP", "CREATECONSUMER", k, "g1", "carol"),
        ("XCLAIM", k, "g1", "carol", "0", "50-0", "60-0"),
        ("XREADGROUP", "GROUP", "g3", "dave", "COUNT", "2", "STREAMS", k, ">"),
        ("XREADGROUP", "GROUP", "1234", "12", "STREAMS", k, ">"),
        ("XDEL", k, "100-0", "110-1"),
    ]
    return cmds


STREAMS = {
    "stream_rich": stream_commands("k"),
    "stream_one": [("XADD", "k", "1-1", "a", "1")],
    "stream_emptied": [("XADD", "k", "5-0", "a", "1"), ("XDEL", "k", "5-0"),
                       ("XGROUP", "CREATE", "k", "g", "0")],
    "stream_mkstream": [("XGROUP", "CREATE", "k", "g", "$", "MKSTREAM"),
                        ("XGROUP", "CREATECONSUMER", "k", "g", "c")],
    "stream_maxlen": [("XADD", "k", "MAXLEN", "7", "%d-0" % i, "f", "v" * i)
                      for i in range(1, 40)],
}


def rlen(b, i):
    t = b[i] >> 6
    if t == 0:
        return b[i] & 63, i + 1
    if t == 1:
        return ((b[i] & 63) << 8) | b[i + 1], i + 2
    if b[i] == 0x80:
        return struct.unpack(">I", b[i + 1:i + 5])[0], i + 5
    assert b[i] == 0x81, b[i]
    return struct.unpack(">Q", b[i + 1:i + 9])[0], i + 9


def rstr_end(b, i):
    if b[i] >> 6 == 3:
        enc = b[i] & 63
        if enc < 3:
            return i + 1 + (1 << enc)
        clen, i = rlen(b, i + 1)
        _, i = rlen(b, i)
        return i + clen
    n, i = rlen(b, i)
    return i + n


def stream_walk(p, zero_times=False, legacy=False):
    """The body of a type-19 payload: with zero_times its delivery and seen times as 0, with
    legacy rewritten as type 15 (no first id, max deleted id, entries added, entries read)."""
    b = bytearray(p[:-10])
    assert b[0] == 19
    out = bytearray([15 if legacy else 19])
    i = 1
    n, j = rlen(b, i)
    for _ in range(n):
        j = rstr_end(b, rstr_end(b, j))
    for _ in range(3):
        _, j = rlen(b, j)
    out += b[i:j]
    i = j
    for _ in range(5):
        _, j = rlen(b, j)
    if not legacy:
        out += b[i:j]
    ngroups, i = rlen(b, j)
    out += b[j:i]
    for _ in range(ngroups):
        j = rstr_end(b, i)
        for _ in range(2):
            _, j = rlen(b, j)
        out += b[i:j]
        _, i = rlen(b, j)
        if not legacy:
            out += b[j:i]
        npel, j = rlen(b, i)
        for _ in range(npel):
            if zero_times:
                b[j + 16:j + 24] = bytes(8)
            _, j = rlen(b, j + 24)
        ncons, j = rlen(b, j)
        for _ in range(ncons):
            j = rstr_end(b, j)
            if zero_times:
                b[j:j + 8] = bytes(8)
            npel, j = rlen(b, j + 8)
            j += 16 * npel
        out += b[i:j]
        i = j
    assert i == len(b), (i, len(b))
    return bytes(out)


def xinfo_full(s, k):
    return s.execute_command("XINFO", "STREAM", k, "FULL")


def stream_state(s, k):
    groups = [g[1] for g in s.execute_command("XINFO", "GROUPS", k)]
    return (xinfo_full(s, k), s.execute_command("XRANGE", k, "-", "+"),
            [[{f: v for f, v in e.items() if f != "time_since_delivered"}  # relative to now
              for e in s.xpending_range(k, g, "-", "+", 100)] for g in groups])


@pytest.fixture
def small_nodes(both):
    c, r = both
    run_both(c, r, "CONFIG", "SET", "stream-node-max-entries", "4")
    yield c, r
    run_both(c, r, "CONFIG", "SET", "stream-node-max-entries", "100")


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_stream_dump_equals_redis_and_restores_across(small_nodes, name):
    """The same commands give the same payload but for delivery and seen times; each server's
    payload restores on both with the same XINFO STREAM FULL, XRANGE and XPENDING."""
    c, r = small_nodes
    for cmd in STREAMS[name]:
        run_both(c, r, *cmd)
    pc, pr = c.dump("k"), r.dump("k")
    assert stream_walk(pc, zero_times=True) == stream_walk(pr, zero_times=True), name
    assert stream_walk(pr) == pr[:-10]  # the walk covers the whole payload
    for p in (pc, pr):
        c.restore("back", 0, p, replace=True)
        r.restore("back", 0, p, replace=True)
        assert stream_state(c, "back") == stream_state(r, "back")
    assert c.dump("back") == r.dump("back") == pr
    if name == "stream_rich":
        assert c.xinfo_stream("back")["radix-tree-keys"] > 3
        assert len(c.xpending_range("back", "g1", "-", "+", 100)) > 3


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_stream_legacy_payload_of_redis6(small_nodes, name):
    """Type 15 (Redis 5 to 6.2, RDB 9): first id, max deleted id, entries added and entries
    read are derived on load as Redis derives them."""
    c, r = small_nodes
    for cmd in STREAMS[name]:
        r.execute_command(*cmd)
    old = payload(stream_walk(r.dump("k"), legacy=True), version=9)
    c.restore("old", 0, old)
    r.restore("old", 0, old)
    assert stream_state(c, "old") == stream_state(r, "old")
    assert c.dump("old") == r.dump("old")


def lp_entry(v):
    if isinstance(v, int) and 0 <= v < 128:
        enc = bytes([v])
    else:
        s = str(v).encode() if isinstance(v, int) else v
        assert len(s) < 64
        enc = bytes([0x80 | len(s)]) + s
    return enc + bytes([len(enc)])


def listpack(items):
    body = b"".join(lp_entry(v) for v in items)
    return struct.pack("<IH", 6 + len(body) + 1, len(items)) + body + b"\xff"


def stream_node(master, entries):
    """A node with master fields ["f"]: entries are (ms delta, seq delta, value, deleted)."""
    items = [sum(1 for e in entries if not e[3]), sum(1 for e in entries if e[3]), 1, b"f", 0]
    for msd, seqd, v, deleted in entries:
        items += [2 | (1 if deleted else 0), msd, seqd, v, 4]
    return rdb_str(struct.pack(">QQ", *master)) + rdb_str(listpack(items))


def big_len(n):
    return b"\x81" + struct.pack(">Q", n) if n >= 1 << 32 else rdb_len(n)


def stream_payload(nodes, length, last, first, added, groups=b"\x00", maxdel=(0, 0)):
    body = bytes([19]) + rdb_len(len(nodes)) + b"".join(nodes) + rdb_len(length)
    for v in (*last, *first, *maxdel):
        body += big_len(v)
    return payload(body + big_len(added) + groups)


def group(name, last, read, pel, consumers):
    """pel: ids; consumers: (name, ids)."""
    g = rdb_str(name) + big_len(last[0]) + big_len(last[1]) + big_len(read) + rdb_len(len(pel))
    for i in pel:
        g += struct.pack(">QQ", *i) + struct.pack("<q", 1700000000000) + rdb_len(1)
    g += rdb_len(len(consumers))
    for cname, ids in consumers:
        g += rdb_str(cname) + struct.pack("<q", 1700000000000) + rdb_len(len(ids))
        g += b"".join(struct.pack(">QQ", *i) for i in ids)
    return g


NODE_A = stream_node((1, 0), [(0, 0, b"a", False), (4, 0, b"b", False)])  # 1-0, 5-0


def test_stream_crafted_payloads(both):
    """Hand-built payloads: good ones load on both servers alike (so the builder here is
    right); overlapping nodes, PEL entries without or with two owners, and consumers' entries
    missing from the group PEL are "Bad data format" on cte-server."""
    c, r = both
    node_b = stream_node((6, 0), [(0, 0, b"c", False)])
    ok = stream_payload([NODE_A, node_b], 3, (6, 0), (1, 0), 3)
    g_ok = b"\x01" + group(b"g", (6, 0), (1 << 64) - 1, [(1, 0), (5, 0)],
                           [(b"x", [(5, 0)]), (b"y", [(1, 0)])])
    ok_groups = stream_payload([NODE_A, node_b], 3, (6, 0), (1, 0), 3, groups=g_ok)
    for p in (ok, ok_groups):
        c.restore("k", 0, p, replace=True)
        r.restore("k", 0, p, replace=True)
        assert stream_state(c, "k") == stream_state(r, "k")
        assert c.xrange("k") == [(b"1-0", {b"f": b"a"}), (b"5-0", {b"f": b"b"}),
                                 (b"6-0", {b"f": b"c"})]
    assert c.xinfo_groups("k")[0]["entries-read"] is None
    bad = {
        # node B's master 3-0 lies inside node A (1-0 .. 5-0); its entry is 3-0 + 3 = 6-0
        "overlap": stream_payload([NODE_A, stream_node((3, 0), [(3, 0, b"c", False)])],
                                  3, (6, 0), (1, 0), 3),
        "same_master": stream_payload([NODE_A, stream_node((1, 0), [(5, 0, b"c", False)])],
                                      3, (6, 0), (1, 0), 3),
        "length": stream_payload([NODE_A, node_b], 4, (6, 0), (1, 0), 4),
        "last_below_entries": stream_payload([NODE_A, node_b], 3, (5, 0), (1, 0), 3),
        "nack_without_consumer": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x01" + group(b"g", (6, 0), 3, [(1, 0), (5, 0)], [(b"x", [(5, 0)])])),
        "no_consumers": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x01" + group(b"g", (6, 0), 3, [(1, 0)], [])),
        "owned_twice": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x01" + group(b"g", (6, 0), 3, [(1, 0)],
                                   [(b"x", [(1, 0)]), (b"y", [(1, 0)])])),
        "consumer_entry_not_in_group": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x01" + group(b"g", (6, 0), 3, [(1, 0)], [(b"x", [(1, 0), (2, 0)])])),
        "duplicate_group": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x02" + group(b"g", (6, 0), 3, [], []) + group(b"g", (6, 0), 3, [], [])),
        "duplicate_consumer": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x01" + group(b"g", (6, 0), 3, [], [(b"x", []), (b"x", [])])),
        "entries_read_negative": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x01" + group(b"g", (6, 0), (1 << 64) - 2, [], [])),
        "huge_pel_count": stream_payload(
            [NODE_A, node_b], 3, (6, 0), (1, 0), 3,
            groups=b"\x01" + rdb_str(b"g") + b"\x06\x00\x03" + big_len(1 << 40)),
        "huge_node_count": payload(bytes([19]) + big_len(1 << 40) + NODE_A),
        "master_key_short": payload(bytes([19]) + b"\x01" + rdb_str(b"short") +
                                    rdb_str(listpack([1, 0, 1, b"f", 0, 2, 0, 0, b"a", 4]))),
        "empty_listpack": stream_payload([rdb_str(bytes(16)) + rdb_str(listpack([]))],
                                         0, (0, 0), (0, 0), 0),
    }
    for name, p in sorted(bad.items()):
        with pytest.raises(redis.ResponseError, match="^Bad data format$"):
            c.restore("bad_" + name, 0, p)
        assert c.exists("bad_" + name) == 0, name
    assert c.ping() and stream_state(c, "k") == stream_state(r, "k")


def test_restore_of_a_stream_wakes_blocked_readers(both):
    """A reader blocked on a missing key is served once RESTORE creates the stream there, as
    Redis's RESTORE signals the key (dbAdd)."""
    c, r = both
    for cmd in STREAMS["stream_rich"]:
        r.execute_command(*cmd)
    p = r.dump("k")
    got = {}
    for name, s in (("cte", c), ("redis", r)):
        reader = redis.Redis(**s.connection_pool.connection_kwargs)
        t = threading.Thread(target=lambda: got.__setitem__(name, reader.execute_command(
            "XREAD", "COUNT", "3", "BLOCK", "5000", "STREAMS", "restored", "$")))
        t.start()
        time.sleep(0.3)
        s.restore("restored", 0, p)
        t.join(10)
        reader.close()
    assert got["cte"] == got["redis"] and got["cte"][0][0] == b"restored"


def test_stream_corrupt_payloads_never_crash(small_nodes):
    """Flipped, cut and inserted bytes in real stream payloads, CRC fixed: OK (then the stream
    works) or "Bad data format"."""
    c, r = small_nodes
    for name, cmds in sorted(STREAMS.items()):
        for cmd in cmds:
            r.execute_command(*[x if x != "k" else name for x in cmd])
    rnd = random.Random(19)
    n_ok = n_err = 0
    for k in sorted(STREAMS):
        base = r.dump(k)
        for _ in range(150):
            body = bytearray(base[:-10])
            op = rnd.randrange(3)
            if op == 0:
                for _ in range(rnd.randint(1, 3)):
                    i = rnd.randrange(1, len(body))
                    body[i] ^= 1 << rnd.randrange(8)
            elif op == 1:
                del body[rnd.randrange(1, len(body)):]
            else:
                body[rnd.randrange(1, len(body))] = rnd.randrange(256)
            try:
                c.restore("fuzz", 0, payload(bytes(body)), replace=True)
            except redis.ResponseError as e:
                assert str(e) == "Bad data format", str(e)
                n_err += 1
                continue
            n_ok += 1
            stream_state(c, "fuzz")
            c.dump("fuzz")
            groups = [g[1] for g in c.execute_command("XINFO", "GROUPS", "fuzz")]
            for cmd in [("XADD", "fuzz", "*", "new", "entry"), ("XDEL", "fuzz", "50-0"),
                        *[("XREADGROUP", "GROUP", g, "zz", "STREAMS", "fuzz", "0")
                          for g in groups],
                        *[("XAUTOCLAIM", "fuzz", g, "zz", "0", "0") for g in groups],
                        ("XTRIM", "fuzz", "MAXLEN", "1")]:
                try:  # an odd but valid stream may refuse a command; it must not crash
                    c.execute_command(*cmd)
                except redis.ResponseError:
                    pass
    assert c.ping()
    assert n_err > 100 and n_ok > 0


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
    for cmd in stream_commands("stream"):
        r.execute_command(*cmd)
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
    time.sleep(0.01)
    r.save()
    path = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
    s = server_factory(["--import-rdb", path])
    c = s.redis()
    compare_all_dbs(redis_server, s)
    assert c.type("stream") == b"stream" and c.xinfo_stream("stream")["groups"] == 4
    assert c.fcall("rdbf", 0) == b"from rdb"
    log = s.log_text()
    assert "Could not import" not in log
    assert "0 records could not be imported" in log
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
    r.save()
    path = os.path.join(r.config_get("dir")["dir"], r.config_get("dbfilename")["dbfilename"])
    cte_server.redis().function_flush()
    p = subprocess.run([IMPORT_TOOL, "-p", str(cte_server.port), "-q", path],
                       capture_output=True, timeout=120)
    err = p.stderr.decode()
    assert p.returncode == 0, err
    compare_all_dbs(redis_server, cte_server)
    assert cte_server.redis().xinfo_stream("stream")["groups"] == 4
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


def test_tag_payload_times_past_2_47_ms_are_refused(both):
    """Blob times are kept in 48 bits: a payload with a time past 2^47 - 1 ms (TMETA's limit
    too) is bad data, one at the limit comes back exactly."""
    c, _ = both
    c.execute_command("TPUT", "tt", "b", 0, "x")
    body = bytearray(c.dump("tt")[:-10])
    assert body[:5] == b"\xc8\x01\x01\x01b"  # type 200, format 1, one blob, its name
    at = 5 + 8 + 16  # past the score, ctime and mtime: the atime
    for atime, ok in ((1 << 47, False), ((1 << 47) - 1, True)):
        body[at:at + 8] = struct.pack("<q", atime)
        if not ok:
            with pytest.raises(redis.ResponseError) as e:
                c.restore("tt2", 0, payload(bytes(body)))
            assert str(e.value) == "Bad data format"
            assert c.exists("tt2") == 0
            continue
        assert c.restore("tt2", 0, payload(bytes(body))) == b"OK"
        info = c.execute_command("TINFO", "tt2", "b")
        info = dict(zip(info[::2], info[1::2])) if isinstance(info, list) else info
        assert info[b"atime"] == atime


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
