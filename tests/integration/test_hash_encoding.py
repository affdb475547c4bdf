"""Hashes kept as a listpack past hash-max-listpack-value (storage/t_hash.c) must look to a client
exactly as Redis 7.0's: OBJECT ENCODING turns "hashtable" when Redis would convert and never goes
back, DUMP writes the hashtable's RDB type, COPY/RENAME/RESTORE keep it, HSCAN and HRANDFIELD
return the same fields. Every sequence runs on cte-server and on Debian's redis-server and the
answers are compared, and the expected encodings are also written out."""
import random

import pytest

RDB_TYPE_HASH = 4
RDB_TYPE_HASH_LISTPACK = 16


def enc(c, key):
    return c.py("OBJECT", "ENCODING", key)


def transitions(c):
    """The encodings a client sees through a sequence of writes; returns the list."""
    seen = []
    c.py("HSET", "h", "f1", "v")
    seen.append(enc(c, "h"))
    c.py("HSET", "h", "f2", "x" * 64)  # exactly the limit: still a listpack
    seen.append(enc(c, "h"))
    c.py("HSET", "h", "f3", "x" * 65)  # one byte over: Redis converts
    seen.append(enc(c, "h"))
    c.py("HSET", "h", "f3", "short")  # shrinking does not go back
    c.py("HDEL", "h", "f2")
    seen.append(enc(c, "h"))
    c.py("HSET", "k", "f" * 65, "v")  # a long field converts too
    seen.append(enc(c, "k"))
    c.py("HSETNX", "n", "f", "y" * 100)
    seen.append(enc(c, "n"))
    c.py("HMSET", "m", "a", "1", "b", "z" * 100)
    seen.append(enc(c, "m"))
    c.py("HINCRBY", "i", "a", "1")
    c.py("HSET", "i", "b", "q" * 70)
    seen.append(enc(c, "i"))
    return seen


def config_limits(c):
    seen = []
    c.py("CONFIG", "SET", "hash-max-listpack-value", "200")
    c.py("HSET", "a", "f", "x" * 150)
    seen.append(enc(c, "a"))
    c.py("CONFIG", "SET", "hash-max-listpack-value", "64")
    seen.append(enc(c, "a"))  # an existing hash is not looked at again
    c.py("HSET", "a", "g", "1")  # ... until a write; Redis checks only the written pair
    seen.append(enc(c, "a"))
    c.py("HSET", "b", "f", "x" * 150)
    seen.append(enc(c, "b"))
    c.py("CONFIG", "SET", "hash-max-listpack-entries", "4")
    for i in range(4):
        c.py("HSET", "e", "f%d" % i, "v")
    seen.append(enc(c, "e"))
    c.py("HSET", "e", "f4", "v")
    seen.append(enc(c, "e"))
    return seen


def hall(c, key):
    r = c.py("HGETALL", key)
    return dict(zip(r[::2], r[1::2]))


def dump_type(c, key):
    return c.call("DUMP", key).val[0]


LIMITS = ("hash-max-listpack-value", "hash-max-listpack-entries")


@pytest.fixture
def both(cte_server, redis_server):
    """A connection to each server; the hash limits the tests change are put back as they were
    (the servers are shared with other test files)."""
    with cte_server.conn() as a, redis_server.conn() as b:
        saved = [(c, k, c.py("CONFIG", "GET", k)[1]) for c in (a, b) for k in LIMITS]
        yield a, b
        for c, k, v in saved:
            c.py("CONFIG", "SET", k, v)


def test_encoding_transitions_match_redis(both):
    a, b = both
    want = [b"listpack", b"listpack", b"hashtable", b"hashtable", b"hashtable", b"hashtable",
            b"hashtable", b"hashtable"]
    assert transitions(b) == want
    assert transitions(a) == want


def test_config_set_limits_match_redis(both):
    a, b = both
    want = [b"listpack", b"listpack", b"listpack", b"hashtable", b"listpack", b"hashtable"]
    assert config_limits(b) == want
    assert config_limits(a) == want


def test_dump_type_and_round_trips(both):
    for c in both:
        c.py("HSET", "small", "a", "1", "b", "2")
        fields = ["f%d" % i for i in range(10)]
        args = []
        for f in fields:
            args += [f, "v" * 100]
        c.py("HSET", "rec", *args)
        assert dump_type(c, "small") == RDB_TYPE_HASH_LISTPACK
        assert dump_type(c, "rec") == RDB_TYPE_HASH
        # COPY and RENAME keep what is reported
        c.py("COPY", "rec", "rec2")
        assert enc(c, "rec2") == b"hashtable"
        c.py("RENAME", "rec2", "rec3")
        assert enc(c, "rec3") == b"hashtable"
        # RESTORE of a hashtable payload with long values: hashtable again, same content
        payload = c.call("DUMP", "rec").val
        c.py("RESTORE", "rec4", "0", payload)
        assert enc(c, "rec4") == b"hashtable"
        assert dump_type(c, "rec4") == RDB_TYPE_HASH
        assert hall(c, "rec4") == hall(c, "rec")
        # a hashtable payload whose values are short loads as a listpack, as in Redis
        c.py("HSET", "t", "a", "x" * 80)
        c.py("HSET", "t", "a", "1")
        assert enc(c, "t") == b"hashtable"
        c.py("RESTORE", "t2", "0", c.call("DUMP", "t").val)
        assert enc(c, "t2") == b"listpack"
    # the payloads cte-server writes load in Redis and the reverse
    a, b = both
    for src, dst in ((a, b), (b, a)):
        dst.py("DEL", "x")
        dst.py("RESTORE", "x", "0", src.call("DUMP", "rec").val)
        assert enc(dst, "x") == b"hashtable"
        assert hall(dst, "x") == hall(src, "rec")


def test_restore_of_a_listpack_payload_with_long_values(both):
    """Redis 7.0 loads a listpack payload as a listpack whatever its value lengths (it only
    converts on the entry count): written by a server with a larger hash-max-listpack-value."""
    a, b = both
    b.py("CONFIG", "SET", "hash-max-listpack-value", "200")
    b.py("HSET", "lp", "f", "x" * 150, "g", "1")
    assert enc(b, "lp") == b"listpack"
    payload = b.call("DUMP", "lp").val
    assert payload[0] == RDB_TYPE_HASH_LISTPACK
    b.py("CONFIG", "SET", "hash-max-listpack-value", "64")
    for c in both:
        c.py("RESTORE", "r", "0", payload)
        assert enc(c, "r") == b"listpack"
        assert dump_type(c, "r") == RDB_TYPE_HASH_LISTPACK
        c.py("HSET", "r", "g", "2")  # a short write keeps it
        assert enc(c, "r") == b"listpack"
        c.py("HSET", "r", "g", "y" * 65)
        assert enc(c, "r") == b"hashtable"


def test_hscan_and_hrandfield_on_reported_hashtable(both):
    a, b = both
    for c in both:
        args = []
        for i in range(10):
            args += ["field%d" % i, "%03d" % i * 34]
        c.py("HSET", "r", *args)
        assert enc(c, "r") == b"hashtable"
        got = {}
        cursor = b"0"
        for _ in range(100):
            cursor, items = c.py("HSCAN", "r", cursor)
            for i in range(0, len(items), 2):
                got[items[i]] = items[i + 1]
            if cursor == b"0":
                break
        assert cursor == b"0"
        assert {k.decode(): v.decode() for k, v in got.items()} == dict(zip(args[::2], args[1::2]))
        assert len(c.py("HSCAN", "r", "0", "MATCH", "field1*", "COUNT", "100")[1]) == 2
        one = c.py("HRANDFIELD", "r")
        assert one.decode() in args[::2]
        uniq = c.py("HRANDFIELD", "r", "5", "WITHVALUES")
        assert len(uniq) == 10 and len(set(uniq[::2])) == 5
        assert len(c.py("HRANDFIELD", "r", "20")) == 10  # more than there are: all, once
        rep = c.py("HRANDFIELD", "r", "-30")
        assert len(rep) == 30 and set(x.decode() for x in rep) <= set(args[::2])


def test_model_against_redis(both):
    """Random writes with values around the limits; after each, the reported encoding, the
    content and the DUMP type agree with Redis."""
    a, b = both
    rnd = random.Random(7)
    for step in range(400):
        key = "k%d" % rnd.randrange(4)
        op = rnd.randrange(10)
        if op < 6:
            n = rnd.randrange(1, 4)
            args = []
            for _ in range(n):
                vlen = rnd.choice((1, 10, 64, 65, 100, 300, 1500))  # 1500: past the budget
                args += ["f%d" % rnd.randrange(12), "v" * vlen]
            cmd = ("HSET", key, *args)
        elif op < 8:
            cmd = ("HDEL", key, "f%d" % rnd.randrange(12))
        elif op < 9:
            cmd = ("HINCRBY", key, "n%d" % rnd.randrange(3), "1")
        else:
            cmd = ("HSETNX", key, "f%d" % rnd.randrange(12), "w" * rnd.choice((5, 70)))
        assert a.py(*cmd) == b.py(*cmd), cmd
        if b.py("EXISTS", key):
            assert enc(a, key) == enc(b, key), (step, cmd)
            assert dump_type(a, key) == dump_type(b, key)
            assert hall(a, key) == hall(b, key)
        else:
            assert not a.py("EXISTS", key)
