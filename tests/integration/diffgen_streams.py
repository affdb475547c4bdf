"""The "streams" group of the differential test (test_differential.py): XADD XRANGE XREVRANGE
XLEN XDEL XTRIM XREAD XREADGROUP XGROUP XACK XPENDING XCLAIM XAUTOCLAIM XINFO XSETID with good
and bad arguments over a few stream keys.

Ids are explicit (small "ms-seq", "ms" and "ms-*" forms) so that both servers hold the same
entries; "*" is only sent to a stream whose last id lies far in the future, where the next id is
the last one's sequence plus one on both (xfut is only created by an explicit future id, and
never gets a smaller last id). Times are kept out of what is compared: idle times,
delivery times and seen times (XPENDING's extended form, XINFO CONSUMERS, XINFO STREAM FULL) are
zeroed by normalize_stream(); XCLAIM/XAUTOCLAIM/XPENDING thresholds are 0 or far from any time
the run can reach, so the same entries qualify on both servers. Blocking forms are left to
test_streams.py (a BLOCK here would stall the pipeline)."""
import re

from conftest import R

STREAM_KEYS = ["x0", "x1", "x2", "xfut"]
GROUPS_ = ["g0", "g1", "g2"]
CONSUMERS = ["c0", "c1", "c2"]
FIELDS = ["f", "g", "h", "12", ""]
VALUES = ["v", "1", "-7", "300", "hello", "", "x" * 70]
BAD_IDS = ["abc", "-1", "1-x", "1-", "+", "-", "18446744073709551616", "0-0"]
FUTURE_MS = "9999999999999"
ID_RE = re.compile(rb"^\d+-\d+$")


def _id(gen, allow_special=False):
    x = gen.r.random()
    if x < 0.7:
        return "%d-%d" % (gen.r.randint(0, 30), gen.r.randint(0, 3))
    if x < 0.8:
        return str(gen.r.randint(0, 30))
    if x < 0.9 and allow_special:
        return gen.pick(["-", "+", "(3-1", "(0-0", "(18446744073709551615-18446744073709551615"])
    return gen.pick(BAD_IDS) if gen.chance(0.5) else "%d-%d" % (gen.r.randint(0, 30), 0)


def _skey(gen):
    return gen.key(STREAM_KEYS)


def _fields(gen):
    out = []
    for _ in range(gen.r.randint(1, 3) if gen.chance(0.97) else 0):
        out += [gen.pick(FIELDS[:3]) if gen.chance(0.8) else gen.pick(FIELDS), gen.pick(VALUES)]
    if gen.chance(0.02):
        out.append("odd")
    return out


def _trim(gen):
    opts = []
    strategy = gen.pick(["MAXLEN", "MINID"])
    opts.append(strategy)
    mode = gen.pick(["", "=", "~"])
    if mode:
        opts.append(mode)
    if strategy == "MAXLEN":
        opts.append(gen.pick(["0", "1", "3", "5", "10", "-1", "x"]))
    else:
        opts.append(_id(gen))
    if gen.chance(0.2):
        opts += ["LIMIT", gen.pick(["0", "1", "5", "-1"])]
    return opts


def _xadd(gen):
    key = _skey(gen)
    args = ["XADD", key]
    if gen.chance(0.1) or key == "xfut":  # "*" on a missing xfut would take the clock
        args.append("NOMKSTREAM")
    if gen.chance(0.25):
        args += _trim(gen)
    if key == "xfut":
        x = gen.r.random()
        idarg = "*" if x < 0.5 else (FUTURE_MS + "-*" if x < 0.7 else "%s-%d" % (
            FUTURE_MS, gen.r.randint(0, 50)))
        if idarg != "*" and args[-1] == "NOMKSTREAM" and gen.chance(0.8):
            args.pop()
    else:
        x = gen.r.random()
        idarg = "%d-*" % gen.r.randint(0, 30) if x < 0.15 else _id(gen)
    return args + [idarg] + _fields(gen)


def _range(gen):
    name = gen.pick(["XRANGE", "XREVRANGE"])
    a, b = _id(gen, True), _id(gen, True)
    if gen.chance(0.5):
        a, b = ("-", "+") if name == "XRANGE" else ("+", "-")
    args = [name, _skey(gen), a, b]
    if gen.chance(0.4):
        args += ["COUNT", gen.pick(["0", "1", "2", "5", "-1", "x"])]
    if gen.chance(0.03):
        args.append("COUNT")
    return args


def _xread(gen, group):
    keys = [_skey(gen) for _ in range(gen.r.randint(1, 2))]
    args = ["XREADGROUP", "GROUP", gen.pick(GROUPS_), gen.pick(CONSUMERS)] if group else ["XREAD"]
    if gen.chance(0.5):
        args += ["COUNT", gen.pick(["1", "2", "0", "-3", "x"])]
    if group and gen.chance(0.2):
        args.append("NOACK")
    if gen.chance(0.03):
        args.append(gen.pick(["NOACK", "GROUP", "BOGUS"]))
    ids = []
    for _ in keys:
        if group:
            ids.append(">" if gen.chance(0.6) else gen.pick(["0", "0-0", "5-0", "$"]) if
                       gen.chance(0.9) else _id(gen))
        else:
            ids.append(_id(gen) if gen.chance(0.7) else gen.pick(["$", "0", ">"]))
    if gen.chance(0.03):
        ids = ids[:-1]  # unbalanced
    return args + ["STREAMS"] + keys + ids


def _xgroup(gen):
    key, grp = _skey(gen), gen.pick(GROUPS_)
    x = gen.r.random()
    if x < 0.35:
        args = ["XGROUP", "CREATE", key, grp, gen.pick(["$", "0", "0-0"]) if gen.chance(0.7)
                else _id(gen)]
        if gen.chance(0.4) and key != "xfut":  # xfut's last id stays in the future
            args.append("MKSTREAM")
        if gen.chance(0.2):
            args += ["ENTRIESREAD", gen.pick(["0", "3", "-1", "-2", "x"])]
        return args
    if x < 0.5:
        args = ["XGROUP", "SETID", key, grp, gen.pick(["$", "0"]) if gen.chance(0.5)
                else _id(gen)]
        if gen.chance(0.3):
            args += ["ENTRIESREAD", gen.pick(["0", "2", "-1", "-5"])]
        return args
    if x < 0.6:
        return ["XGROUP", "DESTROY", key, grp]
    if x < 0.75:
        return ["XGROUP", "CREATECONSUMER", key, grp, gen.pick(CONSUMERS)]
    if x < 0.88:
        return ["XGROUP", "DELCONSUMER", key, grp, gen.pick(CONSUMERS)]
    return gen.pick([["XGROUP", "HELP"], ["XGROUP", "BOGUS", key], ["XGROUP", "CREATE", key],
                     ["XGROUP"], ["XGROUP", "SETID", key, grp, "0", "MKSTREAM"],
                     ["XGROUP", "DESTROY", key, grp, "extra"]])


def _xpending(gen):
    args = ["XPENDING", _skey(gen), gen.pick(GROUPS_)]
    if gen.chance(0.4):
        return args
    if gen.chance(0.25):
        args += ["IDLE", gen.pick(["0", "99999999", "x"])]
    args += [_id(gen, True), _id(gen, True), gen.pick(["10", "1", "0", "-1", "x"])]
    if gen.chance(0.4):
        args.append(gen.pick(CONSUMERS))
    if gen.chance(0.03):
        args.append("extra")
    return args


def _xclaim(gen):
    args = ["XCLAIM", _skey(gen), gen.pick(GROUPS_), gen.pick(CONSUMERS),
            gen.pick(["0", "0", "99999999", "-5", "x"])]
    args += [_id(gen) for _ in range(gen.r.randint(1, 3))]
    for _ in range(gen.r.randint(0, 3)):
        args += gen.pick([["FORCE"], ["JUSTID"], ["IDLE", gen.pick(["0", "5000", "1000000000"])],
                          ["TIME", gen.pick(["0", "1", "-1"])],
                          ["RETRYCOUNT", gen.pick(["0", "7", "-1", "x"])],
                          ["LASTID", _id(gen)], ["BOGUS"]])
    return args


def _xautoclaim(gen):
    args = ["XAUTOCLAIM", _skey(gen), gen.pick(GROUPS_), gen.pick(CONSUMERS),
            gen.pick(["0", "0", "99999999", "x"]), _id(gen, True)]
    if gen.chance(0.5):
        args += ["COUNT", gen.pick(["1", "2", "100", "0", "-1"])]
    if gen.chance(0.3):
        args.append("JUSTID")
    if gen.chance(0.03):
        args.append("BOGUS")
    return args


def _xinfo(gen):
    key = _skey(gen)
    x = gen.r.random()
    if x < 0.35:
        args = ["XINFO", "STREAM", key]
        if gen.chance(0.5):
            args.append("FULL")
            if gen.chance(0.5):
                args += ["COUNT", gen.pick(["0", "1", "3", "-1"])]
        return args
    if x < 0.6:
        return ["XINFO", "GROUPS", key]
    if x < 0.85:
        return ["XINFO", "CONSUMERS", key, gen.pick(GROUPS_)]
    return gen.pick([["XINFO", "HELP"], ["XINFO", "BOGUS", key], ["XINFO", "STREAM"],
                     ["XINFO", "STREAM", key, "FULL", "COUNT"], ["XINFO", "GROUPS", key, "x"]])


def _xsetid(gen):
    key = gen.key(STREAM_KEYS[:3])  # xfut's last id stays in the future
    args = ["XSETID", key, gen.pick(["40-0", "30-5", "0-1", FUTURE_MS + "-100"]) if
            gen.chance(0.6) else _id(gen)]
    if gen.chance(0.3):
        args += ["ENTRIESADDED", gen.pick(["100", "0", "-1"])]
    if gen.chance(0.3):
        args += ["MAXDELETEDID", gen.pick(["1-0", "30-0", "99-0"])]
    return args


def gen_streams(self):
    """Gen.gen_streams: one random stream command."""
    x = self.r.random()
    if x < 0.28:
        return _xadd(self)
    if x < 0.38:
        return _range(self)
    if x < 0.41:
        return ["XLEN", _skey(self)]
    if x < 0.46:
        return ["XDEL", _skey(self)] + [_id(self) for _ in range(self.r.randint(1, 3))]
    if x < 0.50:
        return ["XTRIM", _skey(self)] + (_trim(self) if self.chance(0.95) else ["BOGUS"])
    if x < 0.55:
        return _xread(self, False)
    if x < 0.63:
        return _xread(self, True)
    if x < 0.72:
        return _xgroup(self)
    if x < 0.76:
        return ["XACK", _skey(self), self.pick(GROUPS_)] + \
            [_id(self) for _ in range(self.r.randint(1, 3))]
    if x < 0.82:
        return _xpending(self)
    if x < 0.87:
        return _xclaim(self)
    if x < 0.91:
        return _xautoclaim(self)
    if x < 0.98:
        return _xinfo(self)
    return _xsetid(self)


# ---- normalization ----


def _zero_times(r, in_map_key=None):
    """r with times zeroed: the value of an "idle" or "seen-time" field, and the time in a
    pending entry ([id, consumer, time, count] or [id, time, count])."""
    k, v = r.kind, r.val
    if k == ":" and in_map_key in (b"idle", b"seen-time"):
        return R(":", 0)
    if k in "*~" and v is not None:
        items = list(v)
        if len(items) in (3, 4) and items[0].kind == "$" and items[0].val and \
                ID_RE.match(items[0].val) and all(x.kind == ":" for x in items[-2:]):
            items[-2] = R(":", 0)
            return R(k, items)
        out, prev = [], None
        for x in items:  # RESP2 maps are flat arrays of key, value
            out.append(_zero_times(x, prev.val if prev is not None and prev.kind == "$" else None))
            prev = x
        return R(k, out)
    if k == "%":
        return R(k, [(a, _zero_times(b, a.val)) for a, b in v])
    return r


def normalize_stream(name, r):
    """The comparable form of a stream command's reply, or None (compare bytes)."""
    if name in ("XPENDING", "XINFO"):
        return _zero_times(r)
    return None
