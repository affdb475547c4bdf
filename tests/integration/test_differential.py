"""Differential test: the same seeded random command stream goes to Redis 7.0 (Debian's
redis-server) and to cte-server, and the replies must be the same bytes (COMMANDS.md section 1:
standard commands behave exactly as Redis 7.0, errors included).

The stream runs over a small key space so that commands collide: keys of every type share
names across groups now and then (WRONGTYPE), values include bad numbers, commands come with
bad options and wrong arity, and some run inside MULTI/EXEC. One key per type is filled past
Redis's encoding limits. Commands go out in pipelined batches over one of two connection pairs
chosen at random: one speaks RESP2, the other RESP3 (HELLO 3).

What is not compared byte for byte, and why (see normalize() and Run.run_special()):
  - TTL PTTL EXPIRETIME PEXPIRETIME: the two servers got the command some microseconds apart, so
    only -2, -1 or "positive" is compared;
  - replies whose order Redis does not define (KEYS, SMEMBERS, SINTER/SUNION/SDIFF, HKEYS,
    HVALS, HGETALL): compared sorted;
  - random picks (SRANDMEMBER, SPOP, HRANDFIELD, ZRANDMEMBER, RANDOMKEY): compared by shape
    (types and lengths); after SPOP, which leaves different members behind, the set is rebuilt
    from Redis's copy on both servers;
  - SCAN HSCAN SSCAN ZSCAN: each server is iterated to cursor 0 on its own, and the sorted
    sets of what came back are compared;
  - DBSIZE: preceded by a whole SCAN on both servers, which reclaims keys whose time is up
    (SET ... EXAT in the past) the same way on both;
  - lex commands only touch sorted sets whose scores are all equal (LEX_KEYS): on mixed
    scores Redis's own answer depends on its skiplist's random levels;
  - SORT and SORT_RO run alone (never inside MULTI), each after a "ZADD <missing key> XX 0 m"
    (a no-op) sent to both servers: Redis 7.0's SORT tests errno after strtod() without
    clearing it first, so an ERANGE left by any earlier command (ZADD 1e400, a SORT over
    1e400) fails a later numeric SORT until something clears errno; string2d() in that ZADD
    does (cte-server clears errno itself). Where Redis leaves the order undefined (a set
    with BY nosort and no STORE comes in hash order; ALPHA with BY leaves elements with equal
    BY values in qsort's order, which for sets and sorted sets starts from hash order, and
    with LIMIT comes from Redis's own partial quicksort) the reply is compared as a multiset
    of its per-element groups, or with LIMIT (which then picks an undefined slice) by its
    length; a stored result is copied from Redis to both servers.
After the stream the whole data set of db 0 and db 1 is compared too.

Running the file with CTE_SERVER=/usr/bin/redis-server compares Redis with Redis: it must pass,
which is how the normalizations above were found to be needed, and enough.

Environment:
  CTE_DIFF_COMMANDS  how many commands in all (default 20000)
  CTE_DIFF_SEED      the seed: a number, or "random" for a new one each run (default: 20261130,
                     so CI is repeatable; always printed, and named in the failure).
  CTE_DIFF_SKIP      comma-separated groups to leave out while the server lacks them, e.g.
                     "lists,sets"; groups: %s
  CTE_DIFF_STATS=1   prints, per command, how many were sent and how many Redis refused
On a mismatch the test goes on (after copying Redis's db 0 to both servers, so that one
difference does not cascade) and at the end fails listing the first 20 mismatches, with a count
per command.
"""
import os
import random
import socket
import sys
import time
from collections import Counter

import pytest

from conftest import R, RespConn, encode_command, encode_reply
from diffgen_streams import gen_streams, normalize_stream

N_COMMANDS = int(os.environ.get("CTE_DIFF_COMMANDS", "20000"))
SKIP = {g.strip() for g in os.environ.get("CTE_DIFF_SKIP", "").split(",") if g.strip()}
MAX_LISTED = 20
MAX_RESYNCS = 300

# ---------------------------------------------------------------------------------------
# Value pools. Small on purpose: collisions are the point.

STR_KEYS = ["s%d" % i for i in range(6)]
# One key per type grows big (bulk fills of 40 elements) past Redis 7.0's default encoding
# limits: hash-max-listpack-entries 512, zset-max-listpack-entries 128, set-max-intset-entries
# 512, so OBJECT ENCODING and the conversions are compared too.
HASH_KEYS = ["h%d" % i for i in range(5)] + ["hbig"]
ZSET_KEYS = ["z%d" % i for i in range(5)] + ["zbig"]
# Lex commands only see sorted sets whose members all have the same score: on mixed scores
# their result depends on the skiplist's random levels (differs between two Redis processes).
LEX_KEYS = ["zl%d" % i for i in range(3)]
LIST_KEYS = ["l%d" % i for i in range(5)]
SET_KEYS = ["S%d" % i for i in range(5)] + ["Sbig"]
ALL_KEYS = STR_KEYS + HASH_KEYS + ZSET_KEYS + LIST_KEYS + SET_KEYS + ["nokey"]

VALUES = ["", "0", "1", "-1", "10", "42", "abc", "hello world", "3.14", "1e3", " 1", "01",
          "9223372036854775807", "-9223372036854775808", "x" * 50, "y" * 70, "a\x00b\r\nc",
          "\xff\xfe", "123456789012", "-0", "v"]
INTS = ["1", "-1", "0", "5", "100", "-100", "9223372036854775807", "-9223372036854775808",
        "abc", "1.5", "", "18446744073709551616", " 5", "+3", "0x10", "10"]
FLOATS = ["0.1", "-1.5", "1e308", "-1e308", "inf", "-inf", "abc", "5.0e3", "0", "-0", "1e-5",
          "nan", "10", "3", "", "1.0000000000000002", " 1", "0x10", "1e", "2.5"]
SECONDS = ["100", "1000", "86400", "2147483648", "9999999999", "0", "-1", "abc", "1.5",
           "9223372036854775807", "-9223372036854775808", "3600"]
MILLIS = ["100000", "1000000", "86400000", "9999999999999", "0", "-1", "abc",
          "9223372036854775807", "3600000"]
FIELDS = ["f%d" % i for i in range(8)] + ["", "x" * 70]
MEMBERS = list("abcdefgh") + ["", "m" * 70]
SET_MEMBERS = ["m%d" % i for i in range(8)] + ["1", "2", "3", "100", "-5", "x" * 70]
SCORES = ["1", "-2.5", "1e10", "-5.94971599E8", "inf", "-inf", "+inf", "0", "3", "1.5",
          "0.1", "2", "abc", "nan", "(1", "", "1e400", "-0", "4.5"]
SCORE_BOUNDS = ["-inf", "+inf", "inf", "0", "1", "(1", "2.5", "(-2.5", "1e10", "(3", "3", "-1",
                "abc", "(", "((1", "nan", "-5.94971599E8", "(inf"]
LEX_BOUNDS = ["-", "+", "[a", "(a", "[c", "(c", "[h", "(h", "[", "(", "a", "[aa", "[m"]
INDEXES = ["0", "1", "2", "-1", "-2", "3", "10", "-10", "abc", "100", "-100",
           "9223372036854775807"]
PATTERNS = ["*", "s*", "h?", "[sz]*", "*1", "z[0-2]", "[^s]*", "\\*", "nokey", "S*", "l[1-3]",
            "*[", "h*0"]
# SORT: the elements the other groups put in lists, sets and sorted sets, which name the weight
# keys (w_<element>, wh_<element>) that gen_sort writes; BY and GET patterns.
SORT_ELEMENTS = sorted(set(VALUES[:12] + SET_MEMBERS + MEMBERS[:8]))
SORT_WEIGHTS = ["1", "2", "3", "10", "-1", "0.5", "1e3", "0", "-0", "5", "a", "b", "abc", "",
                " 5", "inf", "1e400", "nan", "0x10"]
SORT_BY = ["w_*", "w_*", "w_*", "wh_*->f", "wh_*->g", "s*", "h*->f1", "nosort", "nosort", "*",
           "#", "w_*->f", "h*", "nosuch_*", "wh_*->"]
SORT_GET = ["#", "#", "w_*", "wh_*->f", "wh_*->g", "s*", "h*->f0", "nostar", "*", "l*",
            "wh_*"]


class Gen:
    """Random command generators, one method per group (gen_<group>); add a group by adding a
    method and a weight in GROUPS."""

    def __init__(self, rng):
        self.r = rng

    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p):
        return self.r.random() < p

    def key(self, own):
        """A key of the group's own type, now and then one of any type (WRONGTYPE)."""
        return self.pick(ALL_KEYS) if self.chance(0.06) else self.pick(own)

    def keys(self, own, lo=1, hi=4):
        return [self.key(own) for _ in range(self.r.randint(lo, hi))]

    def now_plus(self, seconds, ms=False):
        t = time.time() + seconds
        return str(int(t * 1000) if ms else int(t))

    def when(self, ms=False):
        """An absolute time: far future, past, or garbage."""
        x = self.r.random()
        if x < 0.6:
            return self.now_plus(self.r.choice([1000, 100000, 10 ** 7]), ms)
        if x < 0.8:
            return self.pick(["1", "0", "-1"])
        return self.pick(["abc", "9223372036854775807", "1.5"])

    # --- strings -----------------------------------------------------------------------

    def set_options(self):
        opts = []
        x = self.r.random()
        if x < 0.15:
            opts += ["EX", self.pick(SECONDS)]
        elif x < 0.25:
            opts += ["PX", self.pick(MILLIS)]
        elif x < 0.32:
            opts += ["EXAT", self.when()]
        elif x < 0.38:
            opts += ["PXAT", self.when(ms=True)]
        elif x < 0.45:
            opts += ["KEEPTTL"]
        if self.chance(0.2):
            opts.append(self.pick(["NX", "XX"]))
        if self.chance(0.15):
            opts.append("GET")
        if self.chance(0.04):  # invalid combinations and unknown options
            opts += self.pick([["NX", "XX"], ["EX", "100", "PX", "100"], ["KEEPTTL", "EX", "10"],
                               ["BOGUS"], ["EX"], ["GET", "GET"], ["ex", "10"]])
        self.r.shuffle(opts) if self.chance(0.1) else None
        return opts

    def gen_strings(self):
        k = lambda: self.key(STR_KEYS)
        v = lambda: self.pick(VALUES)
        c = self.pick([
            "GET", "SET", "SET", "SET", "SETNX", "SETEX", "PSETEX", "MGET", "MSET", "MSETNX",
            "GETSET", "GETDEL", "GETEX", "APPEND", "STRLEN", "GETRANGE", "SETRANGE", "SUBSTR",
            "INCR", "DECR", "INCRBY", "DECRBY", "INCRBYFLOAT", "INCRBYFLOAT", "OBJECT"])
        if c == "GET" or c == "STRLEN" or c == "GETDEL" or c in ("INCR", "DECR"):
            return [c, k()]
        if c == "SET":
            return ["SET", k(), v()] + self.set_options()
        if c in ("SETNX", "GETSET", "APPEND"):
            return [c, k(), v()]
        if c == "SETEX":
            return [c, k(), self.pick(SECONDS), v()]
        if c == "PSETEX":
            return [c, k(), self.pick(MILLIS), v()]
        if c == "MGET":
            return [c] + self.keys(STR_KEYS, 1, 5)
        if c in ("MSET", "MSETNX"):
            args = [c]
            for _ in range(self.r.randint(1, 3)):
                args += [k(), v()]
            if self.chance(0.05):
                args.pop()  # odd number of arguments
            return args
        if c == "GETEX":
            opt = self.pick([[], ["EX", self.pick(SECONDS)], ["PX", self.pick(MILLIS)],
                             ["EXAT", self.when()], ["PXAT", self.when(ms=True)], ["PERSIST"],
                             ["PERSIST", "EX", "10"], ["BOGUS"], ["EX"]])
            return [c, k()] + opt
        if c in ("GETRANGE", "SUBSTR"):
            return [c, k(), self.pick(INDEXES), self.pick(INDEXES)]
        if c == "SETRANGE":
            # 536870912 + len > proto-max-bulk-len (512 MB): an error. Never 536870911 with one
            # byte: that would make each server allocate 512 MB.
            off = self.pick(["0", "1", "5", "20", "100", "-1", "abc", "536870912"])
            val = v()
            if off == "536870912" and val == "":
                val = "x"  # an empty value at a huge offset would be a no-op, not an error
            return [c, k(), off, val]
        if c in ("INCRBY", "DECRBY"):
            return [c, k(), self.pick(INTS)]
        if c == "INCRBYFLOAT":
            return [c, k(), self.pick(FLOATS)]
        return ["OBJECT", "ENCODING", k()]

    # --- keys --------------------------------------------------------------------------

    def gen_keys(self):
        k = lambda: self.pick(ALL_KEYS + LEX_KEYS)
        dst = lambda: self.pick(ALL_KEYS)  # never a LEX key: it could get mixed scores
        c = self.pick([
            "DEL", "UNLINK", "EXISTS", "TYPE", "RENAME", "RENAMENX", "COPY", "MOVE", "EXPIRE",
            "PEXPIRE", "EXPIREAT", "PEXPIREAT", "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME",
            "PERSIST", "TOUCH", "OBJECT", "DBSIZE", "KEYS", "SCAN", "RANDOMKEY", "EXPIRE",
            "TTL", "TYPE"])
        if c in ("DEL", "UNLINK", "EXISTS", "TOUCH"):
            return [c] + [k() for _ in range(self.r.randint(1, 4))]
        if c in ("TYPE", "TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"):
            return [c, k()]
        if c in ("RENAME", "RENAMENX"):
            return [c, k(), dst()]
        if c == "COPY":
            args = [c, k(), dst()]
            if self.chance(0.3):
                args += ["DB", self.pick(["0", "1", "1", "16", "abc"])]
            if self.chance(0.4):
                args.append("REPLACE")
            if self.chance(0.03):
                args.append("BOGUS")
            return args
        if c == "MOVE":
            return [c, k(), self.pick(["1", "1", "0", "16", "-1", "abc"])]
        if c in ("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"):
            if c == "EXPIRE":
                t = self.pick(SECONDS)
            elif c == "PEXPIRE":
                t = self.pick(MILLIS)
            else:
                t = self.when(ms=(c == "PEXPIREAT"))
            args = [c, k(), t]
            if self.chance(0.4):
                args.append(self.pick(["NX", "XX", "GT", "LT", "nx", "gt"]))
            if self.chance(0.05):
                args.append(self.pick(["NX", "XX", "GT", "LT", "BOGUS"]))
            return args
        if c == "OBJECT":
            return ["OBJECT", self.pick(["ENCODING", "ENCODING", "BOGUS"]), k()]
        if c in ("DBSIZE", "RANDOMKEY"):
            return [c]
        if c == "KEYS":
            return [c, self.pick(PATTERNS)]
        args = ["SCAN", "0"]
        if self.chance(0.5):
            args += ["MATCH", self.pick(PATTERNS)]
        if self.chance(0.5):
            args += ["COUNT", self.pick(["1", "2", "10", "100", "0", "abc"])]
        if self.chance(0.3):
            args += ["TYPE", self.pick(["string", "hash", "zset", "list", "set", "nosuch"])]
        return args

    # --- hashes ------------------------------------------------------------------------

    def gen_hashes(self):
        if self.chance(0.03):
            args = ["HSET", "hbig"]
            for _ in range(40):
                args += ["F%d" % self.r.randrange(700), self.pick(VALUES[:12])]
            return args
        k = lambda: self.key(HASH_KEYS)
        f = lambda: self.pick(FIELDS)
        v = lambda: self.pick(VALUES)
        c = self.pick([
            "HSET", "HSET", "HSET", "HSETNX", "HMSET", "HGET", "HMGET", "HGETALL", "HDEL", "HLEN",
            "HEXISTS", "HKEYS", "HVALS", "HSTRLEN", "HINCRBY", "HINCRBYFLOAT", "HRANDFIELD",
            "HSCAN", "OBJECT"])
        if c in ("HSET", "HMSET"):
            args = [c, k()]
            for _ in range(self.r.randint(1, 4)):
                args += [f(), v()]
            if self.chance(0.05):
                args.pop()
            return args
        if c == "HSETNX":
            return [c, k(), f(), v()]
        if c in ("HGET", "HEXISTS", "HSTRLEN"):
            return [c, k(), f()]
        if c in ("HMGET", "HDEL"):
            return [c, k()] + [f() for _ in range(self.r.randint(1, 4))]
        if c in ("HGETALL", "HLEN", "HKEYS", "HVALS"):
            return [c, k()]
        if c == "HINCRBY":
            return [c, k(), f(), self.pick(INTS)]
        if c == "HINCRBYFLOAT":
            return [c, k(), f(), self.pick(FLOATS)]
        if c == "HRANDFIELD":
            args = [c, k()]
            if self.chance(0.7):
                args.append(self.pick(["1", "3", "5", "20", "-3", "-20", "0", "abc"]))
                if self.chance(0.5):
                    args.append("WITHVALUES")
            return args
        if c == "HSCAN":
            args = [c, k(), "0"]
            if self.chance(0.4):
                args += ["MATCH", self.pick(["f*", "*1", "f[0-3]", "*"])]
            if self.chance(0.4):
                args += ["COUNT", self.pick(["1", "5", "100", "0"])]
            return args
        return ["OBJECT", "ENCODING", k()]

    # --- sorted sets -------------------------------------------------------------------

    def score_range(self):
        return [self.pick(SCORE_BOUNDS), self.pick(SCORE_BOUNDS)]

    def lex_range(self):
        return [self.pick(LEX_BOUNDS), self.pick(LEX_BOUNDS)]

    def limit(self):
        return ["LIMIT", self.pick(["0", "1", "2", "-1", "abc"]),
                self.pick(["1", "2", "3", "-1", "0", "abc"])]

    def zset_inputs(self):
        """numkeys and the keys (sets count as sorted sets with score 1, as in Redis)."""
        n = self.r.choice([1, 2, 2, 3, 3, 0])
        srcs = [self.pick(ZSET_KEYS) if self.chance(0.85) else self.pick(SET_KEYS + ALL_KEYS)
                for _ in range(n)]
        numkeys = str(n) if self.chance(0.95) else self.pick(["5", "-1", "abc"])
        return [numkeys] + srcs

    def lex_key(self):
        """A same-score sorted set, or now and then a key of another type (WRONGTYPE)."""
        if self.chance(0.06):
            return self.pick(STR_KEYS + HASH_KEYS + LIST_KEYS + SET_KEYS + ["nokey"])
        return self.pick(LEX_KEYS)

    def gen_zsets_lex(self):
        """The lex commands, on sorted sets whose members all have score 0."""
        k = self.lex_key
        m = lambda: self.pick(MEMBERS)
        c = self.pick(["ZADD", "ZADD", "ZADD", "ZREM", "ZLEXCOUNT", "ZRANGEBYLEX",
                       "ZREVRANGEBYLEX", "ZREMRANGEBYLEX", "ZRANGE", "ZRANGE", "ZRANGESTORE",
                       "ZPOPMIN", "ZCARD", "ZRANK"])
        if c == "ZADD":
            args = [c, k()] + (["NX"] if self.chance(0.2) else [])
            for _ in range(self.r.randint(1, 4)):
                args += ["0", m()]
            return args
        if c == "ZREM":
            return [c, k()] + [m() for _ in range(self.r.randint(1, 3))]
        if c in ("ZLEXCOUNT", "ZREMRANGEBYLEX"):
            return [c, k()] + self.lex_range()
        if c in ("ZRANGEBYLEX", "ZREVRANGEBYLEX"):
            args = [c, k()] + self.lex_range()
            if self.chance(0.3):
                args += self.limit()
            return args
        if c in ("ZRANGE", "ZRANGESTORE"):
            args = [c, k()] if c == "ZRANGE" else [c, self.pick(LEX_KEYS), k()]
            args += self.lex_range() + ["BYLEX"]
            if self.chance(0.3):
                args.append("REV")
            if self.chance(0.3):
                args += self.limit()
            if c == "ZRANGE" and self.chance(0.05):
                args.append("WITHSCORES")  # an error with BYLEX
            return args
        if c == "ZPOPMIN":
            return [c, k(), self.pick(["1", "2"])]
        if c == "ZRANK":
            return [c, k(), m()]
        return [c, k()]

    def gen_zsets(self):
        if self.chance(0.2):
            return self.gen_zsets_lex()
        if self.chance(0.03):
            args = ["ZADD", "zbig"]
            for _ in range(40):
                args += [str(self.r.randrange(-50, 50)), "M%d" % self.r.randrange(200)]
            return args
        k = lambda: self.key(ZSET_KEYS)
        m = lambda: self.pick(MEMBERS)
        s = lambda: self.pick(SCORES)
        c = self.pick([
            "ZADD", "ZADD", "ZADD", "ZADD", "ZREM", "ZSCORE", "ZMSCORE", "ZINCRBY", "ZCARD",
            "ZCOUNT", "ZRANK", "ZREVRANK", "ZRANGE", "ZRANGE", "ZRANGE", "ZRANGESTORE",
            "ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZREVRANGE", "ZPOPMIN", "ZPOPMAX", "ZMPOP",
            "ZRANDMEMBER", "ZUNION", "ZINTER", "ZDIFF", "ZINTERCARD", "ZUNIONSTORE",
            "ZINTERSTORE", "ZDIFFSTORE", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "ZSCAN",
            "OBJECT"])
        if c == "ZADD":
            args = [c, k()]
            flags = [o for o in ("NX", "XX", "GT", "LT", "CH", "INCR") if self.chance(0.12)]
            if len([o for o in flags if o in ("NX", "XX", "GT", "LT")]) > 1 and self.chance(0.7):
                flags = [o for o in flags if o not in ("XX", "GT", "LT")]  # mostly valid ones
            args += flags
            for _ in range(1 if "INCR" in args and self.chance(0.8) else self.r.randint(1, 4)):
                args += [s(), m()]
            if self.chance(0.04):
                args.pop()
            return args
        if c == "ZREM":
            return [c, k()] + [m() for _ in range(self.r.randint(1, 3))]
        if c in ("ZSCORE", "ZRANK", "ZREVRANK"):
            return [c, k(), m()]
        if c == "ZMSCORE":
            return [c, k()] + [m() for _ in range(self.r.randint(1, 3))]
        if c == "ZINCRBY":
            return [c, k(), s(), m()]
        if c == "ZCARD":
            return [c, k()]
        if c in ("ZCOUNT", "ZREMRANGEBYSCORE"):
            return [c, k()] + self.score_range()
        if c == "ZREMRANGEBYRANK":
            return [c, k(), self.pick(INDEXES), self.pick(INDEXES)]
        if c in ("ZRANGE", "ZRANGESTORE"):
            head = [c, k()] if c == "ZRANGE" else [c, self.pick(ZSET_KEYS), k()]
            mode = self.pick(["index", "index", "BYSCORE"])  # BYLEX: gen_zsets_lex
            if mode == "index":
                args = head + [self.pick(INDEXES), self.pick(INDEXES)]
            elif mode == "BYSCORE":
                args = head + self.score_range() + ["BYSCORE"]
            else:
                args = head + self.lex_range() + ["BYLEX"]
            if self.chance(0.3):
                args.append("REV")
            if self.chance(0.3 if mode != "index" else 0.05):
                args += self.limit()
            if c == "ZRANGE" and self.chance(0.4 if mode != "BYLEX" else 0.05):
                args.append("WITHSCORES")
            if self.chance(0.03):
                args.append(self.pick(["BOGUS", "BYSCORE"]))
            return args
        if c in ("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"):
            args = [c, k()] + self.score_range()
            if self.chance(0.4):
                args.append("WITHSCORES")
            if self.chance(0.3):
                args += self.limit()
            return args
        if c == "ZREVRANGE":
            args = [c, k(), self.pick(INDEXES), self.pick(INDEXES)]
            if self.chance(0.4):
                args.append("WITHSCORES")
            return args
        if c in ("ZPOPMIN", "ZPOPMAX"):
            args = [c, k()]
            if self.chance(0.5):
                args.append(self.pick(["1", "2", "5", "0", "-1", "abc"]))
            return args
        if c == "ZMPOP":
            n = self.r.randint(1, 3)
            args = [c, str(n) if self.chance(0.95) else self.pick(["0", "-1", "abc", "9"])]
            args += [k() for _ in range(n)]
            args.append(self.pick(["MIN", "MAX", "min", "BOGUS"]))
            if self.chance(0.5):
                args += ["COUNT", self.pick(["1", "2", "10", "0", "-1", "abc"])]
            return args
        if c == "ZRANDMEMBER":
            args = [c, k()]
            if self.chance(0.7):
                args.append(self.pick(["1", "3", "5", "20", "-3", "-20", "0", "abc"]))
                if self.chance(0.5):
                    args.append("WITHSCORES")
            return args
        if c in ("ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE"):
            args = [c] + ([self.pick(ZSET_KEYS)] if c.endswith("STORE") else [])
            inputs = self.zset_inputs()
            args += inputs
            if c not in ("ZDIFF", "ZDIFFSTORE") or self.chance(0.05):
                if self.chance(0.3):
                    n = len(inputs) - 1 if self.chance(0.9) else len(inputs)
                    args += ["WEIGHTS"] + [self.pick(["1", "2", "-1", "0", "1.5", "inf", "abc"])
                                           for _ in range(max(n, 0))]
                if self.chance(0.3):
                    args += ["AGGREGATE", self.pick(["SUM", "MIN", "MAX", "max", "AVG"])]
            if not c.endswith("STORE") and self.chance(0.5):
                args.append("WITHSCORES")
            return args
        if c == "ZINTERCARD":
            args = [c] + self.zset_inputs()
            if self.chance(0.4):
                args += ["LIMIT", self.pick(["0", "1", "2", "-1", "abc"])]
            return args
        if c == "ZSCAN":
            args = [c, k(), "0"]
            if self.chance(0.4):
                args += ["MATCH", self.pick(["a*", "*", "[a-c]", "m*"])]
            if self.chance(0.4):
                args += ["COUNT", self.pick(["1", "5", "100"])]
            return args
        return ["OBJECT", "ENCODING", k()]

    # --- lists -------------------------------------------------------------------------

    def gen_lists(self):
        k = lambda: self.key(LIST_KEYS)
        v = lambda: self.pick(VALUES[:12] + ["x" * 70])
        side = lambda: self.pick(["LEFT", "RIGHT", "left", "MIDDLE"] if self.chance(0.05)
                                 else ["LEFT", "RIGHT"])
        c = self.pick([
            "LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX", "LPOP", "RPOP", "LLEN",
            "LRANGE", "LRANGE", "LINDEX", "LSET", "LREM", "LTRIM", "LINSERT", "LPOS", "LMOVE",
            "RPOPLPUSH", "LMPOP", "OBJECT"])
        if c in ("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"):
            return [c, k()] + [v() for _ in range(self.r.randint(1, 4))]
        if c in ("LPOP", "RPOP"):
            args = [c, k()]
            if self.chance(0.4):
                args.append(self.pick(["1", "2", "5", "0", "-1", "abc"]))
            return args
        if c == "LLEN":
            return [c, k()]
        if c in ("LRANGE", "LTRIM"):
            return [c, k(), self.pick(INDEXES), self.pick(INDEXES)]
        if c == "LINDEX":
            return [c, k(), self.pick(INDEXES)]
        if c == "LSET":
            return [c, k(), self.pick(INDEXES), v()]
        if c == "LREM":
            return [c, k(), self.pick(["0", "1", "-1", "2", "-2", "abc"]), v()]
        if c == "LINSERT":
            return [c, k(), self.pick(["BEFORE", "AFTER", "before", "BOGUS"]), v(), v()]
        if c == "LPOS":
            args = [c, k(), v()]
            for opt, pool in (("RANK", ["1", "2", "-1", "-2", "0", "abc"]),
                              ("COUNT", ["0", "1", "2", "-1", "abc"]),
                              ("MAXLEN", ["0", "1", "3", "-1"])):
                if self.chance(0.3):
                    args += [opt, self.pick(pool)]
            return args
        if c == "LMOVE":
            return [c, k(), k(), side(), side()]
        if c == "RPOPLPUSH":
            return [c, k(), k()]
        if c == "LMPOP":
            n = self.r.randint(1, 3)
            args = [c, str(n) if self.chance(0.95) else self.pick(["0", "-1", "abc", "9"])]
            args += [k() for _ in range(n)] + [side()]
            if self.chance(0.5):
                args += ["COUNT", self.pick(["1", "2", "10", "0", "-1", "abc"])]
            return args
        return ["OBJECT", "ENCODING", k()]

    # --- sets --------------------------------------------------------------------------

    def gen_sets(self):
        if self.chance(0.03):
            return ["SADD", "Sbig"] + [str(self.r.randrange(800)) for _ in range(40)]
        k = lambda: self.key(SET_KEYS)
        m = lambda: self.pick(SET_MEMBERS)
        c = self.pick([
            "SADD", "SADD", "SADD", "SREM", "SMEMBERS", "SISMEMBER", "SMISMEMBER", "SCARD",
            "SPOP", "SRANDMEMBER", "SMOVE", "SINTER", "SINTERCARD", "SUNION", "SDIFF",
            "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE", "SSCAN", "OBJECT"])
        if c in ("SADD", "SREM"):
            return [c, k()] + [m() for _ in range(self.r.randint(1, 4))]
        if c in ("SMEMBERS", "SCARD"):
            return [c, k()]
        if c == "SISMEMBER":
            return [c, k(), m()]
        if c == "SMISMEMBER":
            return [c, k()] + [m() for _ in range(self.r.randint(1, 3))]
        if c in ("SPOP", "SRANDMEMBER"):
            args = [c, k()]
            if self.chance(0.5):
                args.append(self.pick(["1", "2", "5", "20", "0", "-3", "abc"]))
            return args
        if c == "SMOVE":
            return [c, k(), k(), m()]
        if c in ("SINTER", "SUNION", "SDIFF"):
            return [c] + self.keys(SET_KEYS, 1, 3)
        if c == "SINTERCARD":
            n = self.r.randint(1, 3)
            args = [c, str(n) if self.chance(0.95) else self.pick(["0", "-1", "abc", "9"])]
            args += [k() for _ in range(n)]
            if self.chance(0.4):
                args += ["LIMIT", self.pick(["0", "1", "2", "-1", "abc"])]
            return args
        if c in ("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"):
            return [c, self.pick(SET_KEYS)] + self.keys(SET_KEYS, 1, 3)
        if c == "SSCAN":
            args = [c, k(), "0"]
            if self.chance(0.4):
                args += ["MATCH", self.pick(["m*", "*1", "[0-9]*", "*"])]
            if self.chance(0.4):
                args += ["COUNT", self.pick(["1", "5", "100"])]
            return args
        return ["OBJECT", "ENCODING", k()]

    # --- sort --------------------------------------------------------------------------

    def gen_sort(self):
        """SORT and SORT_RO over lists, sets and sorted sets (now and then any key), with BY
        and GET patterns that name the weight keys this group writes (w_<element> strings,
        wh_<element> hashes) or the other groups' keys (s<n> strings, h<n> hashes)."""
        x = self.r.random()
        if x < 0.12:
            e = self.pick(SORT_ELEMENTS)
            if self.chance(0.6):
                return ["SET", "w_" + e, self.pick(SORT_WEIGHTS)]
            return ["HSET", "wh_" + e, self.pick(["f", "g"]), self.pick(SORT_WEIGHTS)]
        if x < 0.14:
            return [self.pick(["SORT", "SORT_RO", "sort"])]
        name = self.pick(["SORT", "SORT", "SORT", "SORT_RO"])
        key = self.key(self.pick([LIST_KEYS, SET_KEYS, ZSET_KEYS]))
        opts = []
        if self.chance(0.45):
            opts.append(["BY", self.pick(SORT_BY)])
        if self.chance(0.3):
            opts.append(["LIMIT", self.pick(["0", "1", "2", "-1", "5", "-5", "100", "abc",
                                             "9223372036854775807"]),
                         self.pick(["0", "1", "2", "3", "-1", "-2", "10", "abc"])])
        for _ in range(self.pick([0, 0, 0, 1, 1, 2, 3])):
            opts.append(["GET", self.pick(SORT_GET)])
        if self.chance(0.35):
            opts.append([self.pick(["ASC", "DESC", "desc"])])
        if self.chance(0.5):
            opts.append([self.pick(["ALPHA", "alpha"])])
        if self.chance(0.3) and (name == "SORT" or self.chance(0.1)):
            opts.append(["STORE", self.pick(LIST_KEYS) if self.chance(0.8)
                         else self.pick(ALL_KEYS)])
        if self.chance(0.05):  # a word Redis does not know, or an option missing arguments
            opts.append(self.pick([["BOGUS"], ["LIMIT", "1"], ["BY"], ["GET"], ["STORE"]]))
        if self.chance(0.05):
            opts.append(["BY", self.pick(SORT_BY)])  # a second BY: the last one wins
        self.r.shuffle(opts)
        return [name, key] + [w for o in opts for w in o]

    # --- errors: wrong arity, unknown commands ---------------------------------------

    WRONG_ARITY = {  # group -> commands with a wrong number of arguments
        "strings": [["GET"], ["GET", "a", "b"], ["SET", "a"], ["STRLEN"], ["INCR", "a", "b"],
                    ["APPEND", "a"], ["GETRANGE", "a", "0"], ["SETEX", "a", "10"], ["MGET"],
                    ["MSET"], ["MSET", "a"], ["INCRBYFLOAT", "a"], ["GETEX"], ["SETNX", "a"],
                    ["DECRBY", "a"], ["GETDEL"], ["SETRANGE", "a", "0"], ["MSETNX", "a"]],
        "keys": [["TYPE"], ["TTL", "a", "b"], ["EXISTS"], ["DEL"], ["RENAME", "a"],
                 ["EXPIRE", "a"], ["OBJECT"], ["OBJECT", "ENCODING"], ["KEYS"], ["SCAN"],
                 ["DBSIZE", "x"], ["COPY", "a"], ["EXPIRETIME"], ["PERSIST"], ["TOUCH"],
                 ["MOVE", "a"], ["PEXPIREAT", "a"], ["RANDOMKEY", "a"], ["UNLINK"]],
        "hashes": [["HSET", "h"], ["HSET", "h", "f"], ["HGET", "h"], ["HLEN"], ["HMGET", "h"],
                   ["HINCRBY", "h", "f"], ["HGETALL"], ["HDEL", "h"], ["HSETNX", "h", "f"],
                   ["HRANDFIELD"], ["HSCAN", "h"], ["HMSET", "h", "f"]],
        "zsets": [["ZADD", "z"], ["ZADD", "z", "1"], ["ZSCORE", "z"], ["ZRANGE", "z", "0"],
                  ["ZCARD"], ["ZCOUNT", "z", "0"], ["ZUNIONSTORE", "d"], ["ZINTER"],
                  ["ZPOPMIN"], ["ZMPOP", "1"], ["ZRANGEBYLEX", "z", "-"], ["ZINCRBY", "z", "1"],
                  ["ZRANDMEMBER"], ["ZSCAN", "z"], ["ZMSCORE", "z"], ["ZINTERCARD"]],
        "lists": [["LPUSH", "l"], ["LRANGE", "l", "0"], ["LINDEX", "l"], ["LPOP"],
                  ["LMOVE", "a", "b", "LEFT"], ["LMPOP", "1", "l"], ["LSET", "l", "0"],
                  ["LINSERT", "l", "BEFORE", "x"], ["RPOPLPUSH", "a"], ["LPOS", "l"],
                  ["LTRIM", "l", "0"], ["LREM", "l", "0"]],
        "sets": [["SADD", "s"], ["SREM", "s"], ["SMEMBERS"], ["SCARD", "s", "t"],
                 ["SMOVE", "a", "b"], ["SINTERCARD"], ["SPOP"], ["SISMEMBER", "s"],
                 ["SINTERSTORE", "d"], ["SRANDMEMBER"], ["SSCAN", "s"], ["SMISMEMBER", "s"]],
    }

    def gen_errors(self):
        groups = [g for g in self.WRONG_ARITY if g not in SKIP]
        if self.chance(0.15) or not groups:
            return [self.pick(["FOOBAR", "xyzzy", "HGETT", "GETDELL"])] + \
                [self.pick(VALUES[:8]) for _ in range(self.r.randint(0, 3))]
        return list(self.pick(self.WRONG_ARITY[self.pick(groups)]))



def _gen_bits(self):
    """Bit commands and LCS on the string keys, with small offsets (no huge strings)."""
    k = lambda: self.key(STR_KEYS)
    off = lambda: self.pick(["0", "1", "7", "8", "15", "63", "100", "200", "-1", "abc", "1.5"])
    rng = lambda: self.pick(["0", "1", "-1", "2", "-3", "10", "100", "-100", "x"])
    c = self.pick(["SETBIT", "SETBIT", "GETBIT", "BITCOUNT", "BITCOUNT", "BITPOS", "BITPOS",
                   "BITOP", "BITFIELD", "BITFIELD", "BITFIELD_RO", "LCS", "LCS"])
    if c == "SETBIT":
        return [c, k(), off(), self.pick(["0", "1", "1", "2", "x"])]
    if c == "GETBIT":
        return [c, k(), off()]
    if c == "BITCOUNT":
        args = [c, k()]
        if self.chance(0.7):
            args += [rng(), rng()]
            if self.chance(0.4):
                args.append(self.pick(["BYTE", "BIT", "bit", "WORD"]))
        elif self.chance(0.1):
            args.append(rng())  # one bound only: syntax error
        return args
    if c == "BITPOS":
        args = [c, k(), self.pick(["0", "1", "1", "2"])]
        for _ in range(self.r.randint(0, 2)):
            args.append(rng())
        if len(args) == 5 and self.chance(0.4):
            args.append(self.pick(["BYTE", "BIT"]))
        return args
    if c == "BITOP":
        op = self.pick(["AND", "OR", "XOR", "NOT", "not", "NAND"])
        n = 1 if op.upper() == "NOT" and self.chance(0.8) else self.r.randint(1, 3)
        return [c, op, k()] + [k() for _ in range(n)]
    if c in ("BITFIELD", "BITFIELD_RO"):
        args = [c, k()]
        for _ in range(self.r.randint(1, 3)):
            t = self.pick(["u8", "i8", "u1", "i16", "u63", "i64", "u64", "i0", "x8"])
            o = self.pick(["0", "4", "#1", "13", "-1"])
            sub = "GET" if c == "BITFIELD_RO" and self.chance(0.9) else \
                self.pick(["GET", "SET", "INCRBY", "OVERFLOW"])
            if sub == "GET":
                args += ["GET", t, o]
            elif sub == "OVERFLOW":
                args += ["OVERFLOW", self.pick(["WRAP", "SAT", "FAIL", "BAD"])]
            else:
                args += [sub, t, o, self.pick(["1", "-1", "100", "300", "-200", "x"])]
        return args
    args = [c, k(), k()]
    if self.chance(0.3):
        args.append("LEN")
    elif self.chance(0.4):
        args.append("IDX")
        if self.chance(0.5):
            args += ["MINMATCHLEN", self.pick(["0", "1", "2", "x"])]
        if self.chance(0.5):
            args.append("WITHMATCHLEN")
    return args


Gen.gen_bits = _gen_bits


# ACL: users u0..u2 get random rules (only categories and commands both servers have in full,
# since GETUSER describes a user by counting each category's commands), then GETUSER, LIST,
# USERS, DRYRUN, CAT and DELUSER. The connections never AUTH as them.
ACL_USERS = ["u0", "u1", "u2", "u 3"]
ACL_RULES = ["on", "off", "nopass", "resetpass", ">p1", ">p2", "<p1", "<nosuch", "reset",
             "#" + "a" * 64, "!" + "a" * 64, "#abc", "#" + "A" * 64,
             "~k*", "~s*", "~*", "%R~h*", "%W~l*", "%RW~z*", "%X~a", "~", "%R", "allkeys",
             "resetkeys", "&ch*", "&*", "&", "allchannels", "resetchannels", "+@string",
             "-@string", "+@hash", "-@hash", "+@list", "-@list", "+@set", "+@sortedset",
             "-@sortedset", "+@bitmap", "+@all", "-@all", "allcommands", "nocommands", "+get",
             "-get", "+hset", "-hset", "+set", "-lpush", "+select|0", "+select|1", "-select",
             "+select|", "+get|x|y", "+nosuch", "-@nosuch", "+@HASH", "bogus", "(~x +get)",
             "(+set ~y &c)", "()", "( +@list ~l* )", "(", "(~a", "+get)", "clearselectors",
             "sanitize-payload", "skip-sanitize-payload", "", "+", "-", "+|", "-get|x", "ON",
             "+GET", "+@ALL", "~*x", "&", ">", "<", "#", "%", ")", "%RW~*"]
ACL_DRY = [["GET", "k1"], ["GET", "s1"], ["SET", "k1", "v"], ["SET", "k1", "v", "GET"],
           ["HSET", "h1", "f", "v"], ["HGET", "h1", "f"], ["LPUSH", "l1", "v"],
           ["LRANGE", "l1", "0", "-1"], ["SADD", "S1", "m"], ["ZADD", "z1", "1", "m"],
           ["COPY", "h1", "l1"], ["COPY", "l1", "h1"], ["SELECT", "0"], ["SELECT", "1"],
           ["PUBLISH", "ch1", "m"], ["PUBLISH", "x", "m"], ["SUBSCRIBE", "ch1", "x"],
           ["PSUBSCRIBE", "ch*"], ["PSUBSCRIBE", "c*"], ["MGET", "k1", "x", "s2"],
           ["DEL", "k1", "l1"], ["BITFIELD", "k1", "GET", "u8", "0"],
           ["BITFIELD", "k1", "SET", "u8", "0", "1"], ["EXISTS", "h1"], ["PING"],
           ["SET", "k1"], ["NOSUCH"], ["CLIENT", "NOSUCH"], ["CLIENT", "ID"]]


def _gen_acl(self):
    u = lambda: self.pick(ACL_USERS)
    c = self.pick(["SETUSER", "SETUSER", "SETUSER", "SETUSER", "GETUSER", "GETUSER", "LIST",
                   "USERS", "DRYRUN", "DRYRUN", "DRYRUN", "CAT", "DELUSER", "WHOAMI"])
    if c == "SETUSER":
        return ["ACL", c, u()] + [self.pick(ACL_RULES) for _ in range(self.r.randint(0, 5))]
    if c == "GETUSER":
        return ["ACL", c, u()]
    if c == "DRYRUN":
        return ["ACL", c, self.pick(ACL_USERS + ["default"])] + self.pick(ACL_DRY)
    if c == "CAT":
        # (ACL CAT alone lists our own categories too: tag and search)
        return ["ACL", c, self.pick(["string", "hash", "list", "set", "sortedset", "bitmap",
                                     "nosuch", "HASH"])] + (["x"] if self.chance(0.05) else [])
    if c == "DELUSER":
        return ["ACL", c] + [u() for _ in range(self.r.randint(1, 2))]
    return ["ACL", c]


Gen.gen_acl = _gen_acl

# EVAL: scripts that call the other groups' commands and return every kind of value; errors
# name the script by its SHA-1 and line, so they compare byte for byte too.
EVAL_SCRIPTS = [
    ("return redis.call('GET', KEYS[1])", STR_KEYS, 0),
    ("return redis.pcall('INCR', KEYS[1])", STR_KEYS, 0),
    ("return redis.call('INCRBY', KEYS[1], ARGV[1])", STR_KEYS, 1),
    ("return {redis.call('LRANGE', KEYS[1], 0, -1), redis.call('LLEN', KEYS[1])}", LIST_KEYS, 0),
    ("redis.call('RPUSH', KEYS[1], ARGV[1]); return redis.call('LPOP', KEYS[1])", LIST_KEYS, 1),
    ("redis.call('HSET', KEYS[1], 'f', ARGV[1]); return {redis.call('HGET', KEYS[1], 'f'), "
     "redis.call('HLEN', KEYS[1])}", HASH_KEYS, 1),
    ("return redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')", ZSET_KEYS, 0),
    ("return redis.call('ZINCRBY', KEYS[1], ARGV[1], 'm1')", ZSET_KEYS, 1),
    ("return redis.call('SCARD', KEYS[1])", SET_KEYS, 0),
    ("return redis.call('SISMEMBER', KEYS[1], ARGV[1])", SET_KEYS, 1),
    ("return {1, 2.5, 'x', true, false, {ok='fine'}, {1, {2}}, nil, 3}", [], 0),
    ("return {err='MY_ERR custom'}", [], 0),
    ("return redis.error_reply(ARGV[1])", [], 1),
    ("return redis.status_reply(ARGV[1])", [], 1),
    ("return tonumber(ARGV[1]) + 1", [], 1),
    ("return {double=tonumber(ARGV[1]) or 0}", [], 1),
    ("return redis.sha1hex(ARGV[1])", [], 1),
    ("return cjson.encode({1, 2, ARGV[1]})", [], 1),
    ("return cmsgpack.unpack(cmsgpack.pack({1, 'a', ARGV[1]}))", [], 1),
    ("return struct.unpack('>I2', struct.pack('>I2', 258))", [], 0),
    ("return bit.band(tonumber(ARGV[1]) or 0, 6)", [], 1),
    ("redis.setresp(3); return {redis.call('EXISTS', KEYS[1]), true, false}", ALL_KEYS, 0),
    ("redis.setresp(3); return redis.call('ZSCORE', KEYS[1], 'm1')", ZSET_KEYS, 0),
    ("return redis.call('nosuchcommand')", [], 0),
    ("return redis.call('GET')", [], 0),
    ("return redis.pcall('SELECT', 99)", [], 0),
    ("return undefined_global", [], 0),
    ("x = 1", [], 0),
    ("return redis.call()", [], 0),
    ("return 1 +", [], 0),
    ("#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], 'x')", STR_KEYS, 0),
    ("#!lua flags=bogus\nreturn 1", [], 0),
    ("#!lua\nreturn redis.call('DEL', KEYS[1])", ALL_KEYS, 0),
]


def _gen_eval(self):
    body, keys, nargs = self.pick(EVAL_SCRIPTS)
    ks = [self.pick(keys)] if keys else []
    argv = [self.pick(["1", "5", "-2", "x", "", "3.5", "m1", "ERR oops", "OK"])
            for _ in range(nargs)]
    roll = self.r.random()
    if roll < 0.05:
        return ["EVAL", body, self.pick(["-1", "x", "9"])] + ks + argv
    if roll < 0.10:
        return ["EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0"]
    if roll < 0.15:
        return ["EVAL_RO", body, str(len(ks))] + ks + argv
    return ["EVAL", body, str(len(ks))] + ks + argv


Gen.gen_eval = _gen_eval
Gen.gen_streams = gen_streams
Gen.gen_geo = __import__("diffgen_geo").gen_geo  # the "geo" group: tests/integration/diffgen_geo.py
Gen.gen_hll = __import__("diffgen_hll").gen_hll  # the "hll" group: diffgen_hll.py
Gen.gen_dump = __import__("diffgen_dump").gen_dump  # the "dump" group: diffgen_dump.py

# group name -> weight; "multi" draws its commands from the other data groups
GROUPS = {
    "strings": 22,
    "keys": 16,
    "hashes": 14,
    "zsets": 18,
    "lists": 12,
    "sets": 12,
    "multi": 4,
    "errors": 2,
    "sort": 6,
    "bits": 8,
    "acl": 6,
    "eval": 6,
    "streams": 10,
    "geo": 8,
    "hll": 6,
    "dump": 6,
}
__doc__ = __doc__ % ", ".join(GROUPS)

# Replies compared by shape only, and commands never put inside MULTI for that reason.
SHAPE_ONLY = {"SRANDMEMBER", "SPOP", "HRANDFIELD", "ZRANDMEMBER", "RANDOMKEY"}
SCANS = {"SCAN", "HSCAN", "SSCAN", "ZSCAN"}
SORTS = {"SORT", "SORT_RO"}
TTL_LIKE = {"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"}
UNORDERED = {"KEYS", "SMEMBERS", "SINTER", "SUNION", "SDIFF", "HKEYS", "HVALS"}
UNORDERED_PAIRS = {"HGETALL"}


# ---------------------------------------------------------------------------------------
# Reply normalization


def _sort_key(r):
    return encode_reply(r)


def shape(r):
    """The reply with every string and double replaced by '?' (types and lengths kept)."""
    k, v = r.kind, r.val
    if k in "$=+,(" and v is not None:
        return R(k, b"?")
    if k in "*~>" and v is not None:
        return R(k, [shape(x) for x in v])
    if k in "%|":
        return R(k, [(shape(a), shape(b)) for a, b in v])
    return r


def _acl_norm(r):
    """ACL replies: GETUSER lists single commands in an order Redis leaves undefined (its
    command table's hash order), and so does ACL CAT: words of strings and items of arrays are
    compared sorted."""
    k, v = r.kind, r.val
    if k in "$+" and v is not None:
        return R(k, b" ".join(sorted(v.split(b" "))))
    if k in "*~" and v is not None:
        return R(k, sorted((_acl_norm(x) for x in v), key=_sort_key))
    if k == "%":
        return R(k, [(a, _acl_norm(b)) for a, b in v])
    return r


def normalize(name, r):
    """The comparable form of reply r to command name (None: compare the bytes as they are)."""
    if r.kind == "-":
        return None
    if name.startswith("X"):
        return normalize_stream(name, r)
    if name == "ACL":
        return _acl_norm(r)
    if name in TTL_LIKE and r.kind == ":" and r.val > 0:
        return R(":", 1)
    if name in SHAPE_ONLY:
        return shape(r)
    if name in UNORDERED and r.kind in "*~" and r.val is not None:
        return R(r.kind, sorted(r.val, key=_sort_key))
    if name in UNORDERED_PAIRS:
        if r.kind == "%":
            return R("%", sorted(r.val, key=lambda p: _sort_key(p[0])))
        if r.kind == "*" and r.val:
            pairs = sorted(zip(r.val[::2], r.val[1::2]), key=lambda p: _sort_key(p[0]))
            return R("*", [x for p in pairs for x in p])
    return None


def sort_order_undefined(args, ktype):
    """(undefined, group, store destination) for a SORT: whether Redis leaves the order of the
    reply undefined (see the module's doc): False, "order", or "slice" when a LIMIT also
    leaves undefined which elements come back; how many replies each element gives (the GETs,
    or 1); the STORE destination (bytes) or None. Parses the options as Redis does."""
    by, dontsort, alpha, limit, store, nget = None, False, False, False, None, 0
    words = [a.encode() if isinstance(a, str) else a for a in args]
    j = 2
    while j < len(words):
        w, left = words[j].lower(), len(words) - j - 1
        if w == b"alpha":
            alpha = True
        elif w == b"limit" and left >= 2:
            limit = True
            j += 2
        elif w == b"store" and left >= 1 and words[0].lower() == b"sort":
            store = words[j + 1]
            j += 1
        elif w == b"by" and left >= 1:
            by = words[j + 1]
            dontsort = dontsort or b"*" not in by
            j += 1
        elif w == b"get" and left >= 1:
            nget += 1
            j += 1
        j += 1
    if ktype == b"set" and dontsort and store is not None:
        dontsort, alpha, by = False, True, None  # Redis sorts it ALPHA: a defined order
    if ktype == b"set" and dontsort:
        undefined = True
    else:
        undefined = not dontsort and alpha and by is not None and \
            (ktype in (b"set", b"zset") or limit)
    if undefined:
        undefined = "slice" if limit else "order"
    return undefined, max(nget, 1), store


def sort_groups(r, group):
    """A SORT reply as a sorted list of its per-element groups, or None if not an array."""
    if r.kind != "*" or r.val is None or len(r.val) % group:
        return None
    chunks = [b"".join(encode_reply(x) for x in r.val[k:k + group])
              for k in range(0, len(r.val), group)]
    return sorted(chunks)


# ---------------------------------------------------------------------------------------
# Running the stream


class Mismatch(Exception):
    pass


def fmt_args(args):
    args = [a.decode("latin-1") if isinstance(a, bytes) else a for a in args]  # payloads
    s = " ".join(repr(a) if (not a or any(ch in a for ch in " \r\n\x00'\"")) else a
                 for a in args)
    return s if len(s) <= 200 else s[:200] + "..."


def fmt_bytes(b):
    return repr(b) if len(b) <= 300 else repr(b[:300]) + "...(%d bytes)" % len(b)


class Pair:
    """A connection to each server speaking the same protocol."""

    def __init__(self, name, redis_srv, cte_srv, proto):
        self.name = name
        self.redis = RespConn(port=redis_srv.port, timeout=20)
        self.cte = RespConn(port=cte_srv.port, timeout=20)
        self.hello = None
        if proto == 3:
            r1 = self.redis.call("HELLO", "3")
            r2 = self.cte.call("HELLO", "3")
            assert r1.kind == "%", r1
            self.hello = r2  # checked by the test (a map expected)

    def both(self, args):
        """Sends args to both servers; returns (redis R, redis bytes, cte R, cte bytes)."""
        self.redis.send(*args)
        self.cte.send(*args)
        r1, b1 = self.redis.read_reply()
        r2, b2 = self.cte.read_reply()
        return r1, b1, r2, b2

    def close(self):
        self.redis.close()
        self.cte.close()


def scan_all(conn, args):
    """Runs a SCAN-family command from cursor 0 to 0; returns a comparable R (sorted unique
    items, or pairs for HSCAN/ZSCAN), or the error reply."""
    name = args[0].upper()
    cursor_at = 1 if name == "SCAN" else 2
    args = list(args)
    seen = set()
    for _ in range(10000):
        r = conn.call(*args)
        if r.kind == "-":
            return r
        if r.kind not in "*" or len(r.val) != 2 or r.val[0].kind != "$":
            return R("!shape", encode_reply(r))
        items = [x.val for x in r.val[1].val]
        if name in ("HSCAN", "ZSCAN"):
            seen.update(zip(items[::2], items[1::2]))
        else:
            seen.update(items)
        cursor = r.val[0].val
        if cursor == b"0":
            break
        args[cursor_at] = cursor
    else:
        return R("!shape", b"SCAN did not finish in 10000 calls")
    out = []
    for x in sorted(seen):
        if isinstance(x, tuple):
            out += [R("$", x[0]), R("$", x[1])]
        else:
            out.append(R("$", x))
    return R("*", out)


def dump_db(conn, db):
    """Every key of one db as comparable text: type, value (sorted where unordered), TTL sign."""
    conn.call("SELECT", str(db))
    try:
        keys = sorted(x.val for x in conn.call("KEYS", "*").val)
        out = []
        for k in keys:
            t = conn.call("TYPE", k).val
            if t == b"string":
                v = conn.call("GET", k)
            elif t == b"hash":
                v = normalize("HGETALL", conn.call("HGETALL", k))
            elif t == b"list":
                v = conn.call("LRANGE", k, "0", "-1")
            elif t == b"set":
                v = normalize("SMEMBERS", conn.call("SMEMBERS", k))
            elif t == b"zset":
                v = conn.call("ZRANGE", k, "0", "-1", "WITHSCORES")
            elif t == b"stream":
                v = conn.call("XRANGE", k, "-", "+")
            else:
                v = R("?", t)
            ttl = conn.call("PTTL", k).val
            out.append((k, t, encode_reply(v) if v is not None else None,
                        "ttl" if isinstance(ttl, int) and ttl > 0 else ttl))
        return out
    finally:
        conn.call("SELECT", "0")


def read_db0(src, keys=None):
    """What db 0 of src holds: [(key, writer command args, pttl)], from Redis's point of view."""
    if keys is None:
        keys = sorted(x.val for x in src.call("KEYS", "*").val)
    out = []
    for k in keys:
        t = src.call("TYPE", k).val
        if t == b"string":
            cmd = ["SET", k, src.call("GET", k).val]
        elif t == b"hash":
            cmd = ["HSET", k] + [x.val for x in src.call("HGETALL", k).val]
        elif t == b"list":
            cmd = ["RPUSH", k] + [x.val for x in src.call("LRANGE", k, "0", "-1").val]
        elif t == b"set":
            cmd = ["SADD", k] + [x.val for x in src.call("SMEMBERS", k).val]
        elif t == b"zset":
            flat = [x.val for x in src.call("ZRANGE", k, "0", "-1", "WITHSCORES").val]
            cmd = ["ZADD", k]
            for m, sc in zip(flat[::2], flat[1::2]):
                cmd += [sc, m]
        else:
            continue
        out.append((k, cmd, src.call("PTTL", k).val))
    return out


def rewrite_db0(conns, content, keys=None):
    """Deletes keys (default: every key) on each of conns and writes content there, so that
    all of them hold the same thing, built the same way (same encodings)."""
    for c in conns:
        have = [x.val for x in c.call("KEYS", "*").val] if keys is None else list(keys)
        if have:
            c.call("DEL", *have)
        for k, cmd, pttl in content:
            c.call(*cmd)
            if pttl > 0:
                c.call("PEXPIRE", k, str(pttl))


class Run:
    """One run of the stream. Commands go out in batches of 1..32 on one connection pair,
    pipelined (one write to each server, then the replies are read and compared in order),
    which keeps the run short on a loaded machine and means the same as sending one at a time.
    SCANs and SPOP run on their own, between batches."""

    def __init__(self, seed, redis_srv, cte_srv):
        self.seed = seed
        self.rng = random.Random(seed)
        self.gen = Gen(self.rng)
        self.redis_srv, self.cte_srv = redis_srv, cte_srv
        self.pairs = [Pair("RESP2", redis_srv, cte_srv, 2), Pair("RESP3", redis_srv, cte_srv, 3)]
        self.admin_redis = RespConn(port=redis_srv.port, timeout=20)
        self.admin_cte = RespConn(port=cte_srv.port, timeout=20)
        self.mismatches = []
        self.per_command = Counter()
        self.sent = Counter()
        self.errors = Counter()  # error replies from Redis, per command (CTE_DIFF_STATS=1)
        self.resyncs = 0
        self.followups = 0
        self.groups = [g for g in GROUPS if g not in SKIP]
        self.weights = [GROUPS[g] for g in self.groups]
        self.data_groups = [g for g in self.groups if g not in ("multi", "errors")]

    def close(self):
        for p in self.pairs:
            p.close()
        self.admin_redis.close()
        self.admin_cte.close()

    # --- bookkeeping -------------------------------------------------------------------

    def record(self, i, pair, args, b1, b2, note="", follows=None):
        """Notes a mismatch. One that follows an earlier mismatch in the same batch (before the
        data set could be copied over) may be its consequence: it is listed after the others
        and not counted per command."""
        name = args[0].upper() if args else "?"
        if follows is None:
            self.per_command[name] += 1
        else:
            self.followups += 1
            note = (note + " (may follow from #%d)" % follows).strip()
        self.mismatches.append((follows is not None, i, pair.name, fmt_args(args),
                                fmt_bytes(b1), fmt_bytes(b2), note))

    def after_mismatch(self):
        """Copies Redis's db 0 to both servers, so that one difference does not cascade."""
        if self.resyncs >= MAX_RESYNCS:
            return
        self.resyncs += 1
        try:
            rewrite_db0([self.admin_redis, self.admin_cte], read_db0(self.admin_redis))
        except (AttributeError, TypeError):
            pass  # cte-server lacks what the copy needs: go on without it

    def same(self, args, r1, b1, r2, b2):
        if b1 == b2:
            return True
        n1, n2 = normalize(args[0].upper(), r1), normalize(args[0].upper(), r2)
        return n1 is not None and n2 is not None and encode_reply(n1) == encode_reply(n2)

    # --- generating --------------------------------------------------------------------

    def make_item(self):
        """("one", args) or ("block", [args...], end) for MULTI/EXEC."""
        g = self.rng.choices(self.groups, self.weights)[0]
        if g != "multi":
            return ("one", getattr(self.gen, "gen_" + g)())
        cmds = []
        target = self.rng.randint(1, 5)
        while len(cmds) < target:
            grp = self.rng.choice(self.data_groups) if self.data_groups else "errors"
            args = getattr(self.gen, "gen_" + grp)()
            if args[0].upper() in SHAPE_ONLY | SCANS | SORTS | {"DBSIZE"}:
                continue  # their replies cannot be compared inside EXEC's array
            cmds.append(args)
        if self.rng.random() < 0.05 or not self.data_groups:
            cmds.insert(self.rng.randrange(len(cmds) + 1), self.gen.gen_errors())
        end = ["DISCARD"] if self.rng.random() < 0.1 else ["EXEC"]
        return ("block", cmds, end)

    @staticmethod
    def special(item):
        return item[0] == "one" and item[1][0].upper() in SCANS | SORTS | {"SPOP", "DBSIZE"}

    # --- running -----------------------------------------------------------------------

    def run_batch(self, i0, pair, items):
        """Sends the items pipelined; compares the replies. Returns False on a mismatch."""
        flat = []  # (command index, args, role, block commands)
        for n, item in enumerate(items):
            if item[0] == "one":
                flat.append((i0 + n, item[1], "one", None))
            else:
                _, cmds, end = item
                flat.append((i0 + n, ["MULTI"], "queued", None))
                flat += [(i0 + n, a, "queued", None) for a in cmds]
                flat.append((i0 + n, end, "exec", cmds))
        for _, args, _, _ in flat:
            self.sent[args[0].upper()] += 1
        data = b"".join(encode_command(*a) for _, a, _, _ in flat)
        pair.redis.send_raw(data)
        pair.cte.send_raw(data)
        replies1 = [pair.redis.read_reply() for _ in flat]
        replies2 = [pair.cte.read_reply() for _ in flat]
        first = None  # the first mismatch of this batch
        for (i, args, role, cmds), (r1, b1), (r2, b2) in zip(flat, replies1, replies2):
            if r1.kind == "-":
                self.errors[args[0].upper()] += 1
            if role == "one":
                if not self.same(args, r1, b1, r2, b2):
                    self.record(i, pair, args, b1, b2, follows=first)
                    first = i if first is None else first
            elif role == "queued":
                if b1 != b2:
                    self.record(i, pair, args, b1, b2, "(inside MULTI)", follows=first)
                    first = i if first is None else first
            elif b1 != b2 and not self.same_exec(cmds, r1, r2):
                self.record(i, pair, ["MULTI"] + [fmt_args(c) for c in cmds] + args, b1, b2,
                            "(EXEC of this block)", follows=first)
                first = i if first is None else first
        return first is None

    def same_exec(self, cmds, r1, r2):
        if not (r1.kind == r2.kind == "*" and r1.val is not None and r2.val is not None and
                len(r1.val) == len(r2.val) == len(cmds)):
            return False
        for args, x, y in zip(cmds, r1.val, r2.val):
            if not self.same(args, x, encode_reply(x), y, encode_reply(y)):
                return False
        return True

    def run_special(self, i, pair, args):
        name = args[0].upper()
        self.sent[name] += 1
        if name in SCANS:
            a, b = scan_all(pair.redis, args), scan_all(pair.cte, args)
            ea = a.val if a.kind == "!shape" else encode_reply(a)
            eb = b.val if b.kind == "!shape" else encode_reply(b)
            if ea != eb:
                self.record(i, pair, args, ea, eb, "(whole iteration, sorted)")
                return False
            return True
        if name == "DBSIZE":
            # DBSIZE counts keys whose time is up but that no one has touched yet (SET EXAT in
            # the past): when active expiry reclaims them differs between two processes. A
            # whole SCAN first reclaims them on both.
            scan_all(self.admin_redis, ["SCAN", "0"])
            scan_all(self.admin_cte, ["SCAN", "0"])
            r1, b1, r2, b2 = pair.both(args)
            ok = b1 == b2
            if not ok:
                self.record(i, pair, args, b1, b2)
            return ok
        if name in SORTS:
            return self.run_sort(i, pair, args)
        r1, b1, r2, b2 = pair.both(args)  # SPOP
        ok = self.same(args, r1, b1, r2, b2)
        if not ok:
            self.record(i, pair, args, b1, b2)
        if r1.kind != "-":  # each server popped different members: rebuild the set on both
            key = args[1].encode() if isinstance(args[1], str) else args[1]
            rewrite_db0([self.admin_redis, self.admin_cte], read_db0(self.admin_redis, [key]),
                        keys=[key])
        return ok

    def run_sort(self, i, pair, args):
        """SORT alone: Redis's errno cleared first, replies whose order Redis leaves undefined
        compared as multisets of their groups (see the module's doc)."""
        for conn in (self.admin_redis, self.admin_cte):  # the other one may be Redis too
            conn.call("ZADD", "__sort_errno_reset", "XX", "0", "m")
        key = args[1] if len(args) > 1 else None
        ktype = None
        if key is not None:
            ktype = self.admin_redis.call("TYPE", key).val
            self.admin_cte.call("TYPE", key)  # the same lookup (and lazy expiry) on both
        r1, b1, r2, b2 = pair.both(args)
        undefined, group, dst = sort_order_undefined(args, ktype)
        if not undefined or b1 == b2:
            ok, note = b1 == b2, ""
        elif undefined == "slice":
            ok = r1.kind == r2.kind == "*" and len(r1.val or []) == len(r2.val or [])
            note = "(undefined slice: compared by length)"
        else:
            g1 = sort_groups(r1, group)
            ok, note = g1 is not None and g1 == sort_groups(r2, group), \
                "(undefined order: compared as a multiset)"
        if not ok:
            self.record(i, pair, args, b1, b2, note)
        if undefined and dst is not None and r1.kind == ":":
            rewrite_db0([self.admin_redis, self.admin_cte], read_db0(self.admin_redis, [dst]),
                        keys=[dst])
        return ok

    def go(self, n):
        i = 0
        pending = None
        while i < n:
            pair = self.pairs[self.rng.randrange(2)]
            size = self.rng.randint(1, 32)
            items = []
            while len(items) < size and i + len(items) < n:
                item = pending or self.make_item()
                pending = None
                if self.special(item):
                    if items:
                        pending = item  # runs alone, after this batch
                    else:
                        items.append(item)
                    break
                items.append(item)
            try:
                if self.special(items[0]):
                    ok = self.run_special(i, pair, items[0][1])
                else:
                    ok = self.run_batch(i, pair, items)
            except (ConnectionError, socket.timeout, OSError) as e:
                for srv in (self.redis_srv, self.cte_srv):
                    if not srv.alive():
                        raise Mismatch("%s died in the batch of commands #%d-#%d (%s): exit %s"
                                       % (srv.name, i, i + len(items) - 1, pair.name,
                                          srv.proc.poll()))
                raise Mismatch("connection trouble in the batch of commands #%d-#%d (%s): %r; "
                               "the batch: %s" % (i, i + len(items) - 1, pair.name, e,
                                                  "; ".join(fmt_args(it[1]) if it[0] == "one"
                                                            else "MULTI..." for it in items)))
            i += len(items)
            if not ok:
                self.after_mismatch()

    def final_state(self):
        diffs = []
        for db in (0, 1):
            a, b = dump_db(self.admin_redis, db), dump_db(self.admin_cte, db)
            if a != b:
                ka, kb = {x[0]: x for x in a}, {x[0]: x for x in b}
                for k in sorted(set(ka) | set(kb)):
                    if ka.get(k) != kb.get(k):
                        diffs.append("db%d %r: redis %r / cte %r" % (db, k, ka.get(k), kb.get(k)))
        return diffs


def test_differential_against_redis(redis_server, cte_server, capsys):
    env = os.environ.get("CTE_DIFF_SEED") or "20261130"
    seed = random.SystemRandom().randrange(1 << 32) if env == "random" else int(env)
    with capsys.disabled():
        sys.stdout.write("\n[differential] seed=%d commands=%d skip=%s\n" %
                         (seed, N_COMMANDS, ",".join(sorted(SKIP)) or "-"))
    t0 = time.monotonic()
    run = Run(seed, redis_server, cte_server)
    fatal = None
    try:
        hello = run.pairs[1].hello
        if hello is None or hello.kind != "%":
            fatal = "HELLO 3 on cte-server did not answer a map: %r" % (hello,)
        else:
            try:
                run.go(N_COMMANDS)
            except Mismatch as e:
                fatal = str(e)
        final = run.final_state() if fatal is None else []
    finally:
        run.close()
    took = time.monotonic() - t0
    lines = []
    if fatal:
        lines.append("FATAL: " + fatal)
    if run.mismatches:
        lines.append("%d mismatching replies in %d commands (seed %d, %.1f s), %d of them "
                     "after another in the same batch; per command (mismatches/sent): %s" %
                     (len(run.mismatches), N_COMMANDS, seed, took, run.followups,
                      ", ".join("%s %d/%d" % (c, n, run.sent[c])
                                for c, n in run.per_command.most_common())))
        for _, i, proto, args, b1, b2, note in sorted(run.mismatches)[:MAX_LISTED]:
            lines.append("#%d %s %s %s\n    redis: %s\n    cte:   %s" % (i, proto, args, note,
                                                                       b1, b2))
    if final:
        lines.append("final data set differs in %d keys (first 20):" % len(final))
        lines += ["    " + d for d in final[:20]]
    if lines:
        pytest.fail("differential test, seed %d (rerun with CTE_DIFF_SEED=%d):\n%s" %
                    (seed, seed, "\n".join(lines)), pytrace=False)
    with capsys.disabled():
        sys.stdout.write("[differential] %d commands, no mismatch, %.1f s\n" % (N_COMMANDS, took))
        if os.environ.get("CTE_DIFF_STATS"):
            for c, n in sorted(run.sent.items()):
                sys.stdout.write("  %-18s %6d sent, %5.1f%% errors\n" %
                                 (c, n, 100.0 * run.errors[c] / n))
