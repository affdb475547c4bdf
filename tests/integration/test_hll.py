"""HyperLogLog against the real binary and Debian's redis-server 7.0.15 side by side: strings
that redis-server's PFADD produced, loaded into cte-server with SET, count the same and grow
into the same bytes; hostile strings (fake HYLL headers with bad sparse opcodes, a quarter
megabyte of XZERO opcodes, runs past the last register) get Redis's error and never crash;
registers up to 63 in dense values; keyspace events, WATCH, scripts and ACL categories as
Redis; and what the append-only file keeps across a restart (PFCOUNT's cached cardinality
included, which Redis propagates)."""
import os
import random

import pytest

from conftest import CTE_KIND, encode_reply

REGISTERS = 16384


def header(encoding, cache=None):
    card = (cache or 0).to_bytes(8, "little")
    if cache is None:
        card = card[:7] + bytes([card[7] | 0x80])
    return b"HYLL" + bytes([encoding, 0, 0, 0]) + card


def xzero(n):
    return bytes([0x40 | ((n - 1) >> 8), (n - 1) & 0xff])


def dense(vals):
    out = bytearray()
    for j in range(0, REGISTERS, 4):
        a, b, c, d = vals[j:j + 4]
        out += bytes([(a | b << 6) & 0xff, (b >> 2 | c << 4) & 0xff, (c >> 4 | d << 2) & 0xff])
    return bytes(out)


def call(r, *args):
    """The reply, or the error text (so that errors compare as values)."""
    try:
        return r.execute_command(*args)
    except Exception as e:  # redis.ResponseError
        return "ERR:" + str(e)


def fill(r, key, elements):
    p = r.pipeline(transaction=False)
    p.pfadd(key)
    for i in range(0, len(elements), 500):
        p.pfadd(key, *elements[i:i + 500])
    p.execute()


@pytest.fixture
def both(cte_server, redis_server):
    a, b = cte_server.redis(), redis_server.redis()
    yield a, b
    a.close()
    b.close()


@pytest.mark.parametrize("n", [0, 1, 3, 100, 1000, 3000, 20000, 100000])
def test_strings_made_by_redis_count_the_same(both, n):
    cte, red = both
    rng = random.Random(n)
    elements = ["e%d-%d" % (i, rng.randrange(10 ** 9)) for i in range(n)]
    fill(red, "h", elements)
    fill(cte, "h", elements)
    made = red.get("h")
    assert cte.get("h") == made  # the same bytes from the same PFADDs
    cte.set("copy", made)
    red.set("copy", made)
    assert cte.pfcount("copy") == red.pfcount("copy")
    assert cte.get("copy") == red.get("copy")  # the cache filled in the same way
    assert call(cte, "PFDEBUG", "ENCODING", "copy") == call(red, "PFDEBUG", "ENCODING", "copy")
    more = ["more%d" % i for i in range(200)]
    cte.pfadd("copy", *more)
    red.pfadd("copy", *more)
    assert cte.get("copy") == red.get("copy")
    for r in both:
        r.pfadd("other", *["o%d" % i for i in range(500)])
    assert cte.pfcount("copy", "other", "missing") == red.pfcount("copy", "other", "missing")
    assert call(cte, "PFMERGE", "m", "copy", "other") == call(red, "PFMERGE", "m", "copy", "other")
    assert cte.get("m") == red.get("m")
    assert cte.object("encoding", "m") == red.object("encoding", "m")


def hostile_values(rng):
    vals = [
        header(1) + b"",
        header(1) + xzero(16384) + b"\x80",            # a VAL past the last register
        header(1) + xzero(16384) + b"\x00",            # a ZERO past it
        header(1) + xzero(16383) + b"\x81",            # a VAL run crossing it
        header(1) + xzero(16000),                      # short of it
        header(1) + b"\x7f",                           # an XZERO cut by the end
        header(1) + xzero(16384) * 131073 + b"\x80",   # 2^31 registers of XZERO, then a VAL
        header(1) + b"\xff" * 5000,                    # VAL runs far past the end
        header(1) + xzero(16384) + b"hello",
        header(0) + b"\x00" * 100,                     # dense of the wrong length
        header(2) + xzero(16384),                      # unknown encoding
        b"HYLX" + header(1)[4:] + xzero(16384),
        b"HYLL",
    ]
    for _ in range(200):
        vals.append(header(1, rng.choice([None, 0, 7])) +
                    bytes(rng.randrange(256) for _ in range(rng.randint(1, 40))))
    return vals


def test_hostile_strings_get_redis_errors_and_never_crash(both):
    cte, red = both
    rng = random.Random(14)
    for i, v in enumerate(hostile_values(rng)):
        for cmd in (("PFCOUNT", "k"), ("PFCOUNT", "k", "k2"), ("PFADD", "k", "a", "b", "x" * 40),
                    ("PFMERGE", "d", "k"), ("PFMERGE", "k", "k2"), ("PFDEBUG", "DECODE", "k"),
                    ("PFDEBUG", "TODENSE", "k"), ("PFDEBUG", "GETREG", "k"), ("GET", "k")):
            for r in both:
                r.delete("k", "d")
                r.set("k", v)
                r.pfadd("k2", "z")
            got, want = call(cte, *cmd), call(red, *cmd)
            assert got == want, "value %d (%r...), %s" % (i, v[:40], cmd)
            assert cte.get("k") == red.get("k"), "value %d, %s" % (i, cmd)
    assert cte.ping()


def test_registers_up_to_63_and_merges_into_sparse(both):
    cte, red = both
    rng = random.Random(63)
    vals = [rng.choice([0, 0, 1, 5, 32, 33, 51, 63]) for _ in range(REGISTERS)]
    big = header(0) + dense(vals)
    for r in both:
        r.set("big", big)
        r.pfadd("small", "a", "b")
    assert cte.pfcount("big") == red.pfcount("big")
    assert cte.execute_command("PFDEBUG", "GETREG", "big") == vals
    assert cte.pfcount("big", "small") == red.pfcount("big", "small")
    # the destination is sparse, a source is dense: the result is dense (Redis 7.0)
    assert call(cte, "PFMERGE", "small", "big") == call(red, "PFMERGE", "small", "big") is True
    assert cte.get("small") == red.get("small")
    assert cte.execute_command("PFDEBUG", "ENCODING", "small") == b"dense"
    # a sparse value gets a register over 32 only by turning dense
    few = {5: 32, 700: 1}
    sparse = header(1) + xzero(5) + bytes([0x80 | (31 << 2)]) + xzero(694) + b"\x80" + \
        xzero(REGISTERS - 701)
    for r in both:
        r.set("sp", sparse)
        r.set("sp2", sparse)
        r.config_set("hll-sparse-max-bytes", 40)
    try:
        assert cte.execute_command("PFDEBUG", "GETREG", "sp")[5] == few[5]
        elements = ["x%d" % i for i in range(30)]
        assert cte.pfadd("sp2", *elements) == red.pfadd("sp2", *elements)
        assert cte.get("sp2") == red.get("sp2")  # promoted past 40 bytes at the same point
    finally:
        for r in both:
            r.config_set("hll-sparse-max-bytes", 3000)


def test_config_key_is_redis_default_and_settable(cte_server):
    r = cte_server.redis()
    assert r.config_get("hll-sparse-max-bytes") == {"hll-sparse-max-bytes": "3000"}
    r.config_set("hll-sparse-max-bytes", 0)
    try:
        r.pfadd("h", "a")  # the first split passes 0 bytes: dense at once
        assert r.execute_command("PFDEBUG", "ENCODING", "h") == b"dense"
    finally:
        r.config_set("hll-sparse-max-bytes", 3000)


def events(server, script):
    """The keyspace events script(r) causes, as (channel, message) pairs."""
    r = server.redis()
    r.config_set("notify-keyspace-events", "KEAn")
    p = r.pubsub()
    p.psubscribe("__key*__:*")
    p.get_message(timeout=2)
    try:
        script(server.redis())
        r.ping()
        out = []
        while True:
            m = p.get_message(timeout=0.5)
            if m is None:
                break
            out.append((m["channel"], m["data"]))
        return out
    finally:
        p.close()
        r.config_set("notify-keyspace-events", "")


def test_events_watch_and_scripts_as_redis(cte_server, redis_server):
    def script(r):
        r.pfadd("h", "a", "b")      # new + pfadd
        r.pfadd("h", "a")           # no change: no event
        r.pfcount("h")              # cache refresh: no event
        r.pfmerge("m", "h")         # new + pfadd (a merge notifies pfadd)
        r.execute_command("PFDEBUG", "TODENSE", "h")  # no event
        r.pfadd("h")                # no change
    got = events(cte_server, script)
    assert got == events(redis_server, script)
    assert (b"__keyevent@0__:new", b"h") in got and (b"__keyevent@0__:pfadd", b"m") in got

    for srv in (cte_server, redis_server):
        r = srv.redis()
        r.pfadd("w", "a")
        p = r.pipeline(transaction=True)
        p.watch("w")
        other = srv.redis()
        other.pfcount("w")  # refreshes the cache: Redis counts it as a change
        p.multi()
        p.get("w")
        with pytest.raises(Exception):
            p.execute()
        p.reset()
        # a cached count does not touch the key
        p.watch("w")
        other.pfcount("w")
        p.multi()
        p.pfcount("w")
        assert p.execute() == [1]
        p.reset()

    for srv in (cte_server, redis_server):
        r = srv.redis()
        assert r.eval("redis.call('PFADD', KEYS[1], 'a', 'b'); return redis.call('PFCOUNT', "
                      "KEYS[1])", 1, "e") == 2
    assert call(cte_server.redis(), "EVAL_RO", "return redis.call('PFCOUNT', KEYS[1])", 1, "e") \
        == call(redis_server.redis(), "EVAL_RO", "return redis.call('PFCOUNT', KEYS[1])", 1, "e")


def test_acl_category_and_command_info_as_redis(cte_server, redis_server):
    a, b = cte_server.redis(), redis_server.redis()
    assert sorted(a.acl_cat("hyperloglog")) == sorted(b.acl_cat("hyperloglog"))
    for srv in (a, b):
        srv.acl_setuser("hll", enabled=True, nopass=True, commands=["+@hyperloglog", "+@read"],
                        keys=["h*"])
    try:
        assert call(a, "ACL", "DRYRUN", "hll", "PFADD", "hx", "1") == \
            call(b, "ACL", "DRYRUN", "hll", "PFADD", "hx", "1")
        assert call(a, "ACL", "DRYRUN", "hll", "SET", "hx", "1") == \
            call(b, "ACL", "DRYRUN", "hll", "SET", "hx", "1")
    finally:  # the servers are shared with later tests (the differential test lists users)
        for srv in (a, b):
            srv.acl_deluser("hll")
    with cte_server.conn() as ca, redis_server.conn() as cb:
        # whole rows (key specs: one per part of a command's key flags), but for PFCOUNT's
        # key spec, whose "notes" text is not kept here
        for name in ("pfadd", "pfcount", "pfmerge", "pfdebug", "pfselftest", "lmove", "smove",
                     "copy", "rpoplpush"):
            ia, ib = ca.call("COMMAND", "INFO", name), cb.call("COMMAND", "INFO", name)
            n = 8 if name == "pfcount" else 10
            assert [encode_reply(x) for x in ia.val[0].val[:n]] == \
                [encode_reply(x) for x in ib.val[0].val[:n]], name


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server's append-only file")
def test_aof_restart_keeps_the_bytes(server_factory):
    srv = server_factory(["--appendonly", "yes", "--appendfsync", "always"])
    r = srv.redis()
    r.pfadd("s", *["s%d" % i for i in range(300)])
    r.pfadd("d", *["d%d" % i for i in range(5000)])
    r.pfadd("t", "a", "b")
    r.pfcount("s")                                    # cache refresh: logged
    r.pfcount("d", "s")                               # several keys: changes nothing
    r.execute_command("PFDEBUG", "TODENSE", "t")      # conversion: logged
    r.pfmerge("m", "s", "t")
    r.set("copied", r.get("d"))
    r.pfcount("copied")
    p = r.pipeline(transaction=True)                  # inside MULTI/EXEC
    p.pfadd("x", "1", "2", "3")
    p.pfcount("x")
    p.execute()
    r.pfadd("y", "a")
    r.eval("return redis.call('PFCOUNT', KEYS[1])", 1, "y")  # a script's only effect
    before = {k: r.get(k) for k in (b"s", b"d", b"t", b"m", b"copied", b"x", b"y")}
    assert [before[k][15] for k in (b"s", b"copied", b"x", b"y")] == [0] * 4  # caches valid
    srv.restart_same_dir()
    r = srv.redis()
    assert {k: r.get(k) for k in before} == before
    assert r.execute_command("PFDEBUG", "ENCODING", "t") == b"dense"
    assert r.pfcount("s", "d", "t") > 5000
