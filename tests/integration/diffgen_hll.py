"""The "hll" group of the differential test (test_differential.py): PFADD, PFCOUNT (one key and
several), PFMERGE and PFDEBUG over a few HyperLogLog keys, one of which ("pbig") grows past
hll-sparse-max-bytes and turns dense, beside GET/SET/SETRANGE/APPEND of their bytes: SET writes
HyperLogLog strings made here (valid sparse and dense ones, ones with a valid or invalid cached
cardinality, and corrupted ones: random opcodes, runs that do not add up to 16384 registers, a
cut XZERO, a dense value of the wrong length, a bad magic or encoding), SETRANGE damages a byte
of whatever a key holds. Replies are compared byte for byte, GET of a HyperLogLog included, so
the representation (opcode splits and joins, promotion points, the cache bytes) must be Redis's.

Values are raw bytes: they travel as Raw strings, which encode to latin-1 (one byte per
character) where the other groups' values encode to UTF-8."""


class Raw(str):
    """A str whose encode() gives back the bytes it was made from (latin-1), so that binary
    values pass through encode_command unchanged and still print in mismatch reports."""

    def encode(self, *args, **kwargs):
        return str.encode(self, "latin-1")


def raw(b):
    return Raw(b.decode("latin-1"))


HLL_KEYS = ["p%d" % i for i in range(5)] + ["pbig"]
HLL_ELEMENTS = ["a", "b", "c", "", "x" * 70, "\x00", "foo", "bar"] + [str(i) for i in range(40)]
REGISTERS = 16384


def _header(encoding, cache=None):
    """The 16-byte header; cache None means invalid (bit 7 of the last byte set)."""
    card = (cache if cache is not None else 0).to_bytes(8, "little")
    if cache is None:
        card = card[:7] + bytes([card[7] | 0x80])
    return b"HYLL" + bytes([encoding, 0, 0, 0]) + card


def _zeros(n):
    """ZERO or XZERO opcodes for n zero registers."""
    out = b""
    while n > 0:
        run = min(n, 16384)
        if run > 64:
            out += bytes([0x40 | ((run - 1) >> 8), (run - 1) & 0xff])
        else:
            out += bytes([run - 1])
        n -= run
    return out


def _sparse(regs):
    """Sparse opcodes of {index: value 1..32} covering all registers (not always the shortest
    form Redis would build: a valid input that it reads all the same)."""
    out, pos = b"", 0
    for i in sorted(regs):
        out += _zeros(i - pos)
        out += bytes([0x80 | ((regs[i] - 1) << 2)])
        pos = i + 1
    return out + _zeros(REGISTERS - pos)


def _dense(rng, top):
    """12288 bytes of packed 6-bit registers, each 0..top."""
    vals = [rng.randint(0, top) if rng.random() < 0.3 else 0 for _ in range(REGISTERS)]
    out = bytearray()
    for j in range(0, REGISTERS, 4):
        a, b, c, d = vals[j:j + 4]
        out += bytes([(a | b << 6) & 0xff, (b >> 2 | c << 4) & 0xff, (c >> 4 | d << 2) & 0xff])
    return bytes(out)


def hll_value(rng):
    """A HyperLogLog string for SET: valid or damaged in one of the ways Redis must detect."""
    cache = rng.choice([None, None, 0, 3, 12345])
    kind = rng.randrange(10)
    if kind <= 2:  # valid sparse
        regs = {rng.randrange(REGISTERS): rng.randint(1, 32) for _ in range(rng.randint(0, 30))}
        return _header(1, cache) + _sparse(regs)
    if kind == 3:  # valid dense (register values up to 63)
        return _header(0, cache) + _dense(rng, rng.choice([5, 63]))
    if kind == 4:  # random opcodes
        return _header(1, cache) + bytes(rng.randrange(256) for _ in range(rng.randint(0, 12)))
    if kind == 5:  # runs past or short of the last register, a VAL after the end
        return _header(1, cache) + rng.choice([
            _zeros(16384) + b"\x80", _zeros(16384) + b"\x00", _zeros(16000),
            b"\x80" + _zeros(16384), _zeros(16383) + b"\x81", _zeros(16380) + b"\x03\x84"])
    if kind == 6:  # an XZERO cut by the end of the string
        return _header(1, cache) + _zeros(1000) + bytes([0x40 | rng.randrange(64)])
    if kind == 7:  # dense of the wrong length
        return _header(0, cache) + bytes(rng.randint(0, 40))
    if kind == 8:  # bad magic or encoding
        v = _header(1, cache) + _zeros(16384)
        return rng.choice([b"HYLA" + v[4:], v[:4] + b"\x02" + v[5:], v[:10]])
    return _header(1, cache) + _zeros(16384) + b"hello"  # additional bytes at the tail


def gen_hll(self):
    """Gen.gen_hll (self is test_differential's Gen)."""
    if self.chance(0.03):  # grows past hll-sparse-max-bytes: dense after ~2000 elements
        return ["PFADD", "pbig"] + [str(self.r.randrange(10 ** 6)) for _ in range(150)]
    k = lambda: self.key(HLL_KEYS)
    e = lambda: self.pick(HLL_ELEMENTS)
    c = self.pick(["PFADD"] * 6 + ["PFCOUNT"] * 4 + ["PFMERGE"] * 2 + [
        "PFDEBUG", "PFDEBUG", "GET", "GET", "SET", "SET", "SETRANGE", "APPEND", "STRLEN",
        "OBJECT", "GETRANGE"])
    if c == "PFADD":
        return [c, k()] + [e() for _ in range(self.r.randint(0, 6))]
    if c == "PFCOUNT":
        return [c] + self.keys(HLL_KEYS, 1, 3) if self.chance(0.95) else [c]
    if c == "PFMERGE":
        return [c, k()] + self.keys(HLL_KEYS, 0, 3)
    if c == "PFDEBUG":
        sub = self.pick(["ENCODING", "encoding", "DECODE", "TODENSE", "GETREG", "BOGUS"])
        if self.chance(0.05):
            return [c, sub] + ([k(), k()] if self.chance(0.5) else [])
        return [c, sub, self.pick(HLL_KEYS + ["nokey"])]
    if c == "SET":
        return [c, self.pick(HLL_KEYS), raw(hll_value(self.r))]
    if c == "SETRANGE":
        pos = self.r.choice([self.r.randrange(16), self.r.randrange(16, 40),
                             self.r.randrange(40, 400)])
        return [c, k(), str(pos), raw(bytes([self.r.randrange(256)]))]
    if c == "APPEND":
        return [c, k(), self.pick(["hello", "\x00", "\x80"])]
    if c == "GETRANGE":
        return [c, k(), "0", self.pick(["15", "40", "-1"])]
    if c == "OBJECT":
        return ["OBJECT", "ENCODING", k()]
    return [c, k()]
