"""The "dump" group of the differential test (test_differential.py): DUMP, RESTORE and OBJECT
ENCODING on keys of their own, and the payload helpers test_dump_restore.py uses too.

The group's keys are built only by commands that leave values in encodings whose DUMP bytes
are Redis's exactly (strings, small listpack hashes and sorted sets, intsets that only grow,
lists by RPUSH/RPOP), so DUMP's reply is compared byte for byte like any other. RESTORE gets
payloads built here: well-formed values in the RDB forms Redis 2.6 to 7.0 write (plain and
integer strings, hashtable hashes, sets and sorted sets, plain lists, ziplists of RDB 9,
intsets), with REPLACE, ABSTTL, IDLETIME and FREQ, and broken ones that Redis refuses before
decoding (CRC, version, unknown type, duplicates it detects), so both servers must answer the
same and then hold the same values. Payloads that are malformed inside a listpack or ziplist
are left to the fuzzer: Redis 7.0 does not check them deeply by default."""
import struct

# ---------------------------------------------------------------------------------------
# Payload building blocks


def _crc64_table():
    t = []
    for b in range(256):
        c = b
        for _ in range(8):
            c = (c >> 1) ^ 0x95AC9329AC4BC9B5 if c & 1 else c >> 1
        t.append(c)
    return t


_T = _crc64_table()


def crc64(data, crc=0):
    for b in data:
        crc = _T[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def payload(body, version=10):
    """A DUMP payload: type byte and value (body), version, CRC-64."""
    p = body + struct.pack("<H", version)
    return p + struct.pack("<Q", crc64(p))


def rdb_len(n):
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    return b"\x80" + struct.pack(">I", n)


def rdb_str(b):
    return rdb_len(len(b)) + b


def rdb_int_str(v):
    """The integer forms (int8/16/32) of a string holding v."""
    if -128 <= v <= 127:
        return b"\xc0" + struct.pack("<b", v)
    if -32768 <= v <= 32767:
        return b"\xc1" + struct.pack("<h", v)
    return b"\xc2" + struct.pack("<i", v)


def zl_entry(prevlen, v):
    pl = bytes([prevlen]) if prevlen < 254 else b"\xfe" + struct.pack("<I", prevlen)
    if isinstance(v, int):
        if 0 <= v <= 12:
            enc = bytes([0xF1 + v])
        elif -128 <= v <= 127:
            enc = b"\xfe" + struct.pack("<b", v)
        elif -32768 <= v <= 32767:
            enc = b"\xc0" + struct.pack("<h", v)
        elif -(1 << 23) <= v < (1 << 23):
            enc = b"\xf0" + v.to_bytes(3, "little", signed=True)
        elif -(1 << 31) <= v < (1 << 31):
            enc = b"\xd0" + struct.pack("<i", v)
        else:
            enc = b"\xe0" + struct.pack("<q", v)
    else:
        n = len(v)
        if n < 64:
            enc = bytes([n]) + v
        elif n < 16384:
            enc = bytes([0x40 | (n >> 8), n & 0xFF]) + v
        else:
            enc = b"\x80" + struct.pack(">I", n) + v
    return pl + enc


def ziplist(items):
    body, prev, tail = b"", 0, 10
    for it in items:
        e = zl_entry(prev, it)
        tail = 10 + len(body)
        body += e
        prev = len(e)
    return struct.pack("<IIH", 10 + len(body) + 1, tail, min(len(items), 65535)) + body + b"\xff"


def zipmap(pairs):
    out = bytes([min(len(pairs), 254)])
    for k, v in pairs:
        out += bytes([len(k)]) + k + bytes([len(v)]) + b"\x00" + v
    return out + b"\xff"


# ---------------------------------------------------------------------------------------
# The group

D_STR = ["ds%d" % i for i in range(3)]
D_HASH = ["dh%d" % i for i in range(2)]
D_ZSET = ["dz%d" % i for i in range(2)]
D_SET = ["dS%d" % i for i in range(2)]
D_LIST = ["dl%d" % i for i in range(2)]
D_STREAM = ["dx%d" % i for i in range(2)]
D_KEYS = D_STR + D_HASH + D_ZSET + D_SET + D_LIST + ["dnokey"]
D_VALUES = ["", "0", "12", "-300", "70000", "-2147483648", "2147483648", "9223372036854775807",
            "01", "abc", "x" * 21, "ab" * 40, "hello world " * 12, "a\x00b", "3.5", "-0"]
D_FIELDS = ["a", "b", "c", "1", "-7", "fieldname", "x" * 30]
D_SHORT = ["", "v", "1", "-1", "100000", "hello", "y" * 40, "3.14"]
D_SCORES = ["1", "-2.5", "0", "-0", "inf", "-inf", "1e300", "0.1", "4611686018427387904", "7"]
D_INTS = ["0", "1", "-1", "300", "-40000", "70000", "-2147483649", "9223372036854775807"]
D_TTLS = ["0", "0", "0", "100000", "-1", "abc"]  # no short TTLs: expiry would race


def _value_payload(g):
    """(payload bytes, version) of a well-formed value of a random RDB form."""
    r = g.r
    x = r.random()
    b = lambda s: s.encode("latin-1")
    if x < 0.15:
        v = r.choice([-5, 300, -70000, 2 ** 31 - 1])
        return payload(b"\x00" + (rdb_int_str(v) if r.random() < 0.5 else rdb_str(b(str(v))))), 10
    if x < 0.3:
        return payload(b"\x00" + rdb_str(b(g.pick(D_VALUES)))), 10
    if x < 0.42:
        fields = r.sample(D_FIELDS, r.randint(1, 5))
        body = b"\x04" + rdb_len(len(fields))
        for f in fields:
            body += rdb_str(b(f)) + rdb_str(b(g.pick(D_SHORT)))
        return payload(body), 10
    if x < 0.52:
        members = r.sample(D_INTS, r.randint(1, 5))  # an intset: a hashtable's order is its dict's
        return payload(b"\x02" + rdb_len(len(members)) + b"".join(rdb_str(b(m)) for m in members)), 10
    if x < 0.62:
        members = r.sample(["a", "b", "c", "d", "e"], r.randint(1, 4))
        body = b"\x05" + rdb_len(len(members))
        for m in members:
            body += rdb_str(b(m)) + struct.pack("<d", float(g.pick(D_SCORES)))
        return payload(body), 10
    if x < 0.7:
        items = [g.pick(D_VALUES) for _ in range(r.randint(1, 6))]
        return payload(b"\x01" + rdb_len(len(items)) + b"".join(rdb_str(b(i)) for i in items)), 9
    if x < 0.78:
        fields = r.sample(D_FIELDS, r.randint(1, 4))
        zl = ziplist(sum(([b(f), b(g.pick(D_SHORT))] for f in fields), []))
        return payload(b"\x0d" + rdb_str(zl), 9), 9
    if x < 0.84:
        pairs = sorted((float(g.pick(D_SCORES[:4] + ["7"])), m)
                       for m in r.sample(["a", "b", "c", "d"], r.randint(1, 4)))
        items = []
        for sc, m in pairs:
            items += [b(m), int(sc) if sc == int(sc) else b(repr(sc))]
        return payload(b"\x0c" + rdb_str(ziplist(items)), 9), 9
    if x < 0.92:
        items = [r.choice([b"x", 5, -100, 1 << 40, b"word" * 5]) for _ in range(r.randint(1, 6))]
        typ = r.choice([b"\x0a", b"\x0e"])
        body = typ + (rdb_str(ziplist(items)) if typ == b"\x0a" else
                      rdb_len(1) + rdb_str(ziplist(items)))
        return payload(body, 9), 9
    vals = sorted(set(r.choice([1, 2, 3, -4, 300, 70000]) for _ in range(r.randint(1, 5))))
    width = 4 if any(abs(v) > 32767 for v in vals) else 2
    blob = struct.pack("<II", width, len(vals)) + b"".join(
        v.to_bytes(width, "little", signed=True) for v in vals)
    return payload(b"\x0b" + rdb_str(blob)), 10


def _broken_payload(g):
    """A payload both servers refuse before or while decoding, the same way."""
    good, _ = _value_payload(g)
    return g.pick([
        good[:-1] + bytes([good[-1] ^ 0x40]),          # CRC
        payload(good[:-10], version=11),                # version
        payload(b"\x08" + rdb_str(b"x")),               # a type Redis does not have
        payload(b"\x02" + rdb_len(2) + rdb_str(b"7") + rdb_str(b"7")),  # duplicate member
        payload(b"\x05" + rdb_len(2) + (rdb_str(b"a") + struct.pack("<d", 1.0)) * 2),
        payload(b"\x00"),                               # cut short
        b"short",
        payload(bytes([200, 1, 0])),                    # a tag payload: Redis has no type 200
    ])


def _next_ms(g, step=None):
    """A growing ms part for the stream ids (mostly above the streams' last ids)."""
    g.dump_stream_ms = getattr(g, "dump_stream_ms", 0) + (g.r.randint(0, 3) if step is None
                                                         else step)
    return g.dump_stream_ms


def gen_dump(self):
    """One command of the dump group (a method of test_differential.Gen)."""
    x = self.r.random()
    if x < 0.3:
        return self.pick([
            lambda: ["SET", self.pick(D_STR), self.pick(D_VALUES)],
            lambda: ["APPEND", self.pick(D_STR), self.pick(D_VALUES)],
            lambda: ["HSET", self.pick(D_HASH), self.pick(D_FIELDS), self.pick(D_SHORT)],
            lambda: ["HDEL", self.pick(D_HASH), self.pick(D_FIELDS)],
            lambda: ["ZADD", self.pick(D_ZSET), self.pick(D_SCORES), self.pick(D_FIELDS)],
            lambda: ["ZREM", self.pick(D_ZSET), self.pick(D_FIELDS)],
            lambda: ["SADD", self.pick(D_SET)] + self.r.sample(D_INTS, 2),
            lambda: ["RPUSH", self.pick(D_LIST)] + [self.pick(D_VALUES)
                                                    for _ in range(self.r.randint(1, 40))],
            lambda: ["RPOP", self.pick(D_LIST), str(self.r.randint(1, 10))],
            # streams without times (no consumers), so that their DUMP bytes are Redis's
            lambda: ["XADD", self.pick(D_STREAM), "%d-*" % _next_ms(self),
                     self.pick(D_FIELDS), self.pick(D_SHORT)],
            lambda: ["XDEL", self.pick(D_STREAM), "%d-0" % self.r.randint(0, _next_ms(self, 0))],
            lambda: ["XTRIM", self.pick(D_STREAM), "MAXLEN", str(self.r.randint(0, 30))],
            lambda: ["XGROUP", "CREATE", self.pick(D_STREAM), self.pick(["g1", "g2", "7"]),
                     self.pick(["0", "$", "100-0"]), "MKSTREAM"],
        ])()
    if x < 0.55:
        return ["DUMP", self.pick(D_KEYS + D_STREAM)]
    if x < 0.9:
        p, _ = _value_payload(self) if self.chance(0.85) else (_broken_payload(self), 0)
        args = ["RESTORE", self.pick(D_KEYS), self.pick(D_TTLS), p]
        if self.chance(0.6):
            args.append("REPLACE")
        if self.chance(0.15):
            args[2] = self.when(ms=True)
            args.append("ABSTTL")
        if self.chance(0.1):
            args += [self.pick(["IDLETIME", "FREQ"]), self.pick(["0", "10", "255", "256", "-1",
                                                                 "abc"])]
        if self.chance(0.03):
            args.append(self.pick(["BOGUS", "IDLETIME", "FREQ"]))
        return args
    return ["OBJECT", "ENCODING", self.pick(D_KEYS)]
