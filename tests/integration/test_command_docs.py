"""COMMAND DOCS and COMMAND INFO against Redis 7.0 (Debian's redis-server): for every command
and subcommand both servers know, the reply trees must be the same, RESP types included, in
RESP2 and RESP3 (server/cmd_docs.c holds what the command tables do not: argument trees,
history, doc flags, tips).

Compared exactly, with these exceptions:
  - "summary" of a command: cte-server words its summaries itself (the table rows, COMMANDS.md)
    and they differ from Redis's prose by design; the key must still be there on both sides.
  - the order of maps keyed by command name (the COMMAND DOCS map, its "subcommands") and of
    COMMAND INFO's subcommand array: Redis lists them in its hash table's order, which is not
    defined, so they are compared by name.
  - EXPECTED_DOC_DIFFS and EXPECTED_INFO_DIFFS: the fields where cte-server still differs from
    Redis, named one by one. The test fails when a listed field has come to match (remove it:
    the lists only shrink) as when an unlisted one differs.
Besides, every cte-server command and subcommand must have docs with arguments, except those
Redis gives none (TIME, DBSIZE...: compared above) and cte-server's own commands that take
none (OWN_WITHOUT_ARGUMENTS)."""
import pytest

from conftest import R, RespConn

# (full name, field): what cte-server's table rows say differently from Redis 7.0 (summaries
# aside). Empty: a difference that comes back must be fixed or named here.
EXPECTED_DOC_DIFFS = set()
# Subcommands Redis 7.0 has and cte-server does not, and the other way round (CLIENT SETINFO
# is Redis 7.2's).
EXPECTED_SUB_MISSING = {"latency|graph", "pubsub|shardnumsub", "pubsub|shardchannels",
                        "script|debug"}
EXPECTED_SUB_EXTRA = {"client|setinfo"}

INFO_FIELDS = ["name", "arity", "flags", "first_key", "last_key", "step", "acl_categories",
               "tips", "key_specs", "subcommands"]
# COMMAND INFO fields where cte-server still differs from Redis 7.0: none now.
EXPECTED_INFO_DIFFS = set()
# cte-server's own commands that take no arguments.
OWN_WITHOUT_ARGUMENTS = {"tiers"}


def pairs(r):
    assert r.kind in "%*", r
    if r.kind == "%":
        return list(r.val)
    return [(r.val[i], r.val[i + 1]) for i in range(0, len(r.val), 2)]


def by_name(r):
    """A map (RESP3) or flat array (RESP2) keyed by bulk names, as a dict name -> R."""
    return {k.val.decode(): v for k, v in pairs(r)}


def doc_fields(r):
    """A command's docs as an ordered list of (field, R), the summary's text left out."""
    out = []
    for k, v in pairs(r):
        name = k.val.decode()
        if name == "summary":
            v = R(v.kind, b"(summary)")
        out.append((name, v))
    return out


def compare_docs(name, red, cte, diffs, missing, extra):
    rf, cf = doc_fields(red), doc_fields(cte)
    rsub = dict(rf).pop("subcommands", None)
    csub = dict(cf).pop("subcommands", None)
    if [k for k, _ in rf] != [k for k, _ in cf]:
        diffs.add((name, "keys: %s / %s" % ([k for k, _ in rf], [k for k, _ in cf])))
    rd, cd = dict(rf), dict(cf)
    for k in rd:
        if k != "subcommands" and k in cd and rd[k] != cd[k]:
            diffs.add((name, k))
    rs = by_name(rsub) if rsub else {}
    cs = by_name(csub) if csub else {}
    missing.update(set(rs) - set(cs))
    extra.update(set(cs) - set(rs))
    for s in set(rs) & set(cs):
        compare_docs(s, rs[s], cs[s], diffs, missing, extra)


def conns(redis_server, cte_server, proto):
    a, b = RespConn(port=redis_server.port), RespConn(port=cte_server.port)
    if proto == 3:
        assert a.call("HELLO", "3").kind == "%"
        assert b.call("HELLO", "3").kind == "%"
    return a, b


@pytest.mark.parametrize("proto", [2, 3])
def test_command_docs_match_redis(redis_server, cte_server, proto):
    a, b = conns(redis_server, cte_server, proto)
    red = by_name(a.call("COMMAND", "DOCS"))
    cte = by_name(b.call("COMMAND", "DOCS"))
    both = set(red) & set(cte)
    assert len(both) > 200
    diffs, missing, extra = set(), set(), set()
    for name in sorted(both):
        compare_docs(name, red[name], cte[name], diffs, missing, extra)
    new, fixed = sorted(diffs - EXPECTED_DOC_DIFFS), sorted(EXPECTED_DOC_DIFFS - diffs)
    assert new == [], "differ from Redis: %s" % new
    assert fixed == [], "match Redis now, drop from the list: %s" % fixed
    assert missing == EXPECTED_SUB_MISSING
    assert extra == EXPECTED_SUB_EXTRA
    # asking for some by name gives the same as the whole map, subcommands by full name too
    names = ["set", "client|kill", "xadd", "nosuchcommand", "config|get", "migrate"]
    red1 = by_name(a.call("COMMAND", "DOCS", *names))
    cte1 = by_name(b.call("COMMAND", "DOCS", *names))
    assert set(red1) == set(cte1) == set(names) - {"nosuchcommand"}
    for n in red1:
        d = set()
        compare_docs(n, red1[n], cte1[n], d, set(), set())
        assert d == set(), n
    a.close()
    b.close()


def info_by_name(r):
    out = {}
    for e in r.val:
        out[e.val[0].val.decode()] = e
        for s in e.val[9].val:
            out[s.val[0].val.decode()] = s
    return out


@pytest.mark.parametrize("proto", [2, 3])
def test_command_info_matches_redis(redis_server, cte_server, proto):
    a, b = conns(redis_server, cte_server, proto)
    red = info_by_name(a.call("COMMAND", "INFO"))
    cte = info_by_name(b.call("COMMAND", "INFO"))
    both = set(red) & set(cte)
    assert len(both) > 300
    diffs, tips = set(), 0
    for name in sorted(both):
        r, c = red[name], cte[name]
        assert (r.kind, len(r.val)) == (c.kind, len(c.val)) == ("*", 10), name
        tips += len(r.val[7].val) > 0
        for i, field in enumerate(INFO_FIELDS[:9]):
            if r.val[i] != c.val[i]:
                diffs.add((name, field))
        rs = sorted(s.val[0].val for s in r.val[9].val)
        cs = sorted(s.val[0].val for s in c.val[9].val)
        if r.val[9].kind != c.val[9].kind or (rs and rs != cs and
                                              name not in ("latency", "pubsub", "script",
                                                           "client")):
            diffs.add((name, "subcommands"))
    assert tips > 60  # the tips are compared, not all empty on both sides
    new, fixed = sorted(diffs - EXPECTED_INFO_DIFFS), sorted(EXPECTED_INFO_DIFFS - diffs)
    assert new == [], "differ from Redis: %s" % new
    assert fixed == [], "match Redis now, drop from the list: %s" % fixed
    a.close()
    b.close()


def flat_docs(conn):
    """Every command and subcommand's docs, as a dict full name -> dict of fields."""
    flat = {}

    def walk(name, r):
        d = by_name(r)
        flat[name] = d
        for s, sd in (by_name(d["subcommands"]).items() if "subcommands" in d else []):
            walk(s, sd)

    for n, r in by_name(conn.call("COMMAND", "DOCS")).items():
        walk(n, r)
    return flat


def test_every_command_has_docs_with_arguments(redis_server, cte_server):
    """Each command and subcommand cte-server has is in COMMAND DOCS (and in COMMAND INFO), and
    lists its arguments unless it takes none: for Redis's commands the tests above compare that
    with Redis; cte-server's own commands without arguments are named in
    OWN_WITHOUT_ARGUMENTS."""
    with RespConn(port=cte_server.port) as c, RespConn(port=redis_server.port) as r:
        c.call("HELLO", "3")
        r.call("HELLO", "3")
        ours, theirs = flat_docs(c), flat_docs(r)
        names = [n.val.decode() for n in c.call("COMMAND", "LIST").val]
        info = info_by_name(c.call("COMMAND", "INFO"))
    assert set(ours) == set(info) == set(names)
    own = set(ours) - set(theirs)
    assert {"tput", "tget", "tquery", "tsearch", "tiers", "reorg"} <= own
    assert {n for n in own if "arguments" not in ours[n]} == OWN_WITHOUT_ARGUMENTS
    tput = [by_name(a) for a in ours["tput"]["arguments"].val]
    assert [(a["name"].val, a["type"].val) for a in tput] == [
        (b"tag", b"key"), (b"blob", b"string"), (b"offset", b"integer"), (b"data", b"string"),
        (b"score", b"double")]
    assert tput[0]["key_spec_index"] == R(":", 0)


def test_slowlog_keeps_the_commands_of_a_transaction_not_exec(cte_server):
    """EXEC is skip_slowlog (COMMAND INFO says so, and Redis 7.0 logs only what it ran)."""
    with RespConn(port=cte_server.port) as c:
        assert c.call("CONFIG", "SET", "slowlog-log-slower-than", "0") == R("+", b"OK")
        try:
            c.call("SLOWLOG", "RESET")
            for cmd in (("MULTI",), ("SET", "k", "v"), ("INCR", "n"), ("EXEC",)):
                c.call(*cmd)
            entries = c.call("SLOWLOG", "GET", "10").val
            logged = [e.val[3].val[0].val.upper() for e in entries]
        finally:
            c.call("CONFIG", "SET", "slowlog-log-slower-than", "10000")
    assert b"EXEC" not in logged
    assert b"SET" in logged and b"INCR" in logged


@pytest.mark.parametrize("call", [
    ("set", "k", "v"), ("set", "k", "v", "get"), ("set", "k", "v", "EX", "10", "GET"),
    ("bitfield", "k", "get", "u8", "0"), ("bitfield", "k", "overflow", "sat", "get", "u8", "0"),
    ("bitfield", "k", "get", "u8", "0", "incrby", "u8", "0", "1"), ("bitfield", "k", "bad"),
    ("bitfield", "k"), ("sort", "k"), ("sort", "k", "by", "w_*", "store", "d"),
    ("sort_ro", "k", "get", "#"), ("eval", "return 1", "2", "a", "b"),
    ("zunionstore", "d", "2", "a", "b"), ("rename", "a", "b"), ("lmpop", "2", "a", "b", "left"),
])
def test_getkeysandflags_matches_redis(redis_server, cte_server, call):
    """Per-call key flags (Redis's variable_flags) and the flags of the key specs' keys."""
    with RespConn(port=redis_server.port) as a, RespConn(port=cte_server.port) as b:
        assert b.call("COMMAND", "GETKEYSANDFLAGS", *call) == a.call(
            "COMMAND", "GETKEYSANDFLAGS", *call)
