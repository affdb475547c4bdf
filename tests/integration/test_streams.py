"""Streams against the real binary: blocking XREAD / XREADGROUP served in arrival order and
unblocked with Redis's errors, the append-only file (restart and rewrite) keeping ids, groups,
pending entries and consumers, and the type in the generic commands (COPY, RENAME, MOVE, SCAN
TYPE, scripts, MULTI, keyspace events). Reply bytes against Redis are the differential test's
"streams" group (diffgen_streams.py)."""
import os
import time

import pytest

from conftest import CTE_KIND, R, to_py

AOF = ["--appendonly", "yes", "--appendfsync", "always"]


def wait_blocked(r, n, timeout=5.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if r.info("clients")["blocked_clients"] == n:
            return
        time.sleep(0.01)
    raise AssertionError("expected %d blocked clients" % n)


# ---- blocking ----


def test_xreadgroup_waiters_are_served_in_arrival_order(cte_server):
    r = cte_server.redis()
    r.xgroup_create("s", "g", "$", mkstream=True)
    conns = []
    for name in ("c1", "c2", "c3"):
        c = cte_server.conn()
        c.send("XREADGROUP", "GROUP", "g", name, "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">")
        conns.append(c)
        wait_blocked(r, len(conns))
    for i, c in enumerate(conns):
        r.xadd("s", {"n": str(i)}, id="1-%d" % (i + 1))
        got = to_py(c.read_reply()[0])
        assert got == [[b"s", [[b"1-%d" % (i + 1), [b"n", str(i).encode()]]]]]
    pending = r.xpending_range("s", "g", "-", "+", 10)
    assert [(p["message_id"], p["consumer"]) for p in pending] == [
        (b"1-1", b"c1"), (b"1-2", b"c2"), (b"1-3", b"c3")]
    for c in conns:
        c.close()


def test_xread_dollar_waits_for_entries_after_the_block(cte_server):
    r = cte_server.redis()
    r.xadd("s", {"old": "1"}, id="5-0")
    a, b = cte_server.conn(), cte_server.conn()
    a.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    b.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 2)
    r.xdel("s", "5-0")  # a change that brings nothing new: both keep waiting
    time.sleep(0.05)
    assert r.info("clients")["blocked_clients"] == 2
    r.xadd("s", {"new": "2"}, id="6-0")
    for c in (a, b):  # XREAD does not consume: every waiter gets the entry
        assert to_py(c.read_reply()[0]) == [[b"s", [[b"6-0", [b"new", b"2"]]]]]
        c.close()


def test_xread_block_times_out_with_a_null_and_counts_one_call(cte_server):
    r = cte_server.redis()
    r.config_resetstat()
    c = cte_server.conn()
    t0 = time.time()
    assert c.call("XREAD", "BLOCK", "100", "STREAMS", "nokey", "0-0") == R("*", None)
    assert time.time() - t0 >= 0.09
    assert r.info("commandstats")["cmdstat_xread"]["calls"] == 1
    c.close()


def test_blocked_xreadgroup_unblocked_with_errors(cte_server):
    r = cte_server.redis()
    r.xgroup_create("s", "g", "$", mkstream=True)
    c = cte_server.conn()
    c.send("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.xgroup_destroy("s", "g")
    reply = c.read_reply()[0]
    assert reply.kind == "-" and reply.val.startswith(b"NOGROUP the consumer group this client")
    r.xgroup_create("s", "g", "$")
    c.send("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    wait_blocked(r, 1)
    r.delete("s")
    reply = c.read_reply()[0]
    assert reply == R("-", b"UNBLOCKED the stream key no longer exists")
    c.close()


def test_timeouts_and_idle_times_past_a_long_long(cte_server):
    """Deadlines that overflow block for ever (Redis's wrapped deadline never comes), an IDLE
    that overflows is now, and timeouts past a long long in ms are refused as Redis does."""
    r = cte_server.redis()
    r.xadd("s", {"a": 1}, id="1-1")
    r.xgroup_create("s", "g", "0")
    c = cte_server.conn()
    assert c.py("XCLAIM", "s", "g", "c", 0, "1-1", "IDLE", "-9223372036854775808", "FORCE",
                "JUSTID") == [b"1-1"]
    assert r.xpending_range("s", "g", "-", "+", 10)[0]["time_since_delivered"] < 10000
    for err in ("1e30", "inf", "9223372036854775.808", "-1"):
        reply = c.call("BLPOP", "l", err)
        assert reply.kind == "-" and reply.val == b"ERR timeout is negative"
    waits = [("XREAD", "BLOCK", "9223372036854775807", "STREAMS", "s", "$"),
             ("BLPOP", "l", "9.2e15"), ("BZPOPMIN", "z", "9223372036854775")]
    conns = []
    for cmd in waits:
        w = cte_server.conn()
        w.send(*cmd)
        conns.append(w)
    wait_blocked(r, len(waits))
    time.sleep(0.3)
    assert r.info("clients")["blocked_clients"] == len(waits)
    r.xadd("s", {"b": 2}, id="2-1")
    r.rpush("l", "x")
    r.zadd("z", {"m": 1})
    assert to_py(conns[0].read_reply()[0]) == [[b"s", [[b"2-1", [b"b", b"2"]]]]]
    assert to_py(conns[1].read_reply()[0]) == [b"l", b"x"]
    assert to_py(conns[2].read_reply()[0]) == [b"z", b"m", b"1"]
    for w in conns + [c]:
        w.close()


def test_blocking_on_300_keys_wakes_on_the_last(cte_server):
    r = cte_server.redis()
    keys = ["k%d" % i for i in range(1, 301)]
    waits = [("XREAD", "BLOCK", "0", "STREAMS", *keys, *["$"] * len(keys)),
             ("BLPOP", *keys, "0"), ("BZPOPMIN", *keys, "0")]
    for cmd in waits:
        w = cte_server.conn()
        w.send(*cmd)
        wait_blocked(r, 1)
        if cmd[0] == "XREAD":
            r.xadd("k300", {"a": 1}, id="1-1")
            assert to_py(w.read_reply()[0]) == [[b"k300", [[b"1-1", [b"a", b"1"]]]]]
            r.delete("k300")
        elif cmd[0] == "BLPOP":
            r.rpush("k300", "x")
            assert to_py(w.read_reply()[0]) == [b"k300", b"x"]
        else:
            r.zadd("k300", {"m": 2})
            assert to_py(w.read_reply()[0]) == [b"k300", b"m", b"2"]
        w.close()


def test_blocked_readers_served_when_added_entries_are_gone_again(cte_server):
    """Redis serves a blocked reader once the stream's last id passed the awaited one, with an
    empty list if what was added was removed before it ran; a deletion alone wakes no one."""
    r = cte_server.redis()
    r.xgroup_create("s", "g", "$", mkstream=True)
    grp, rd = cte_server.conn(), cte_server.conn()
    grp.send("XREADGROUP", "GROUP", "g", "a", "BLOCK", "0", "STREAMS", "s", ">")
    rd.send("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    wait_blocked(r, 2)
    m = cte_server.conn()
    assert m.call("MULTI") == R("+", b"OK")
    m.call("XADD", "s", "*", "z", "1")
    m.call("XTRIM", "s", "MAXLEN", "0")
    assert to_py(m.call("EXEC"))[1] == 1
    assert to_py(grp.read_reply()[0]) == [[b"s", []]]
    assert to_py(rd.read_reply()[0]) == [[b"s", []]]
    assert r.xinfo_consumers("s", "g")[0]["name"] == b"a"
    # an id older than the last one, entries after it deleted: waits for a new id
    r.xadd("t", {"a": 1}, id="1-1")
    r.xadd("t", {"a": 2}, id="5-1")
    r.xdel("t", "5-1")
    rd.send("XREAD", "BLOCK", "0", "STREAMS", "t", "2-0")
    wait_blocked(r, 1)
    r.xdel("t", "1-1")
    time.sleep(0.1)
    assert r.info("clients")["blocked_clients"] == 1
    r.xadd("t", {"b": 3}, id="6-1")
    assert to_py(rd.read_reply()[0]) == [[b"t", [[b"6-1", [b"b", b"3"]]]]]
    for w in (grp, rd, m):
        w.close()


def test_xread_block_in_multi_and_scripts(cte_server):
    r = cte_server.redis()
    c = cte_server.conn()
    assert c.call("MULTI") == R("+", b"OK")
    c.call("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
    assert c.call("EXEC") == R("*", [R("*", None)])
    err = c.call("EVAL", "return redis.call('xread','BLOCK','0','STREAMS','s','$')", "0")
    assert err.kind == "-" and b"not allowed with BLOCK option from scripts" in err.val
    assert r.eval("return redis.call('XADD', KEYS[1], '1-1', 'f', 'v')", 1, "s") == b"1-1"
    c.close()


# ---- the generic commands on streams ----


def test_generic_commands_on_streams(cte_server):
    r = cte_server.redis()
    r.xadd("s", {"f": "v"}, id="1-1")
    r.xgroup_create("s", "g", "0")
    r.xreadgroup("g", "c", {"s": ">"})
    assert r.type("s") == b"stream"
    assert r.object("encoding", "s") == b"stream"
    assert r.memory_usage("s") > 0
    assert list(r.scan_iter(_type="stream")) == [b"s"]
    assert r.copy("s", "s2")
    r.xack("s", "g", "1-1")  # the copy keeps its own PEL
    assert r.xpending("s2", "g")["pending"] == 1
    assert r.xpending("s", "g")["pending"] == 0
    r.rename("s2", "s3")
    assert r.move("s3", 1)
    r1 = cte_server.redis(db=1)
    assert r1.xrange("s3") == [(b"1-1", {b"f": b"v"})]
    assert r1.xinfo_groups("s3")[0]["pending"] == 1


def test_keyspace_events_of_streams(cte_server):
    r = cte_server.redis()
    r.config_set("notify-keyspace-events", "Et")
    p = r.pubsub()
    p.psubscribe("__keyevent@0__:*")
    p.get_message(timeout=1)
    r.execute_command("XADD", "s", "MAXLEN", "0", "1-1", "f", "v")
    r.xgroup_create("s", "g", "0")
    r.xgroup_createconsumer("s", "g", "c")
    r.xgroup_setid("s", "g", "0")
    r.xgroup_delconsumer("s", "g", "c")
    r.xgroup_destroy("s", "g")
    r.xadd("s", {"f": "v"}, id="2-1")
    r.xdel("s", "2-1")
    r.execute_command("XSETID", "s", "3-0")
    events = []
    deadline = time.time() + 2
    while len(events) < 10 and time.time() < deadline:
        m = p.get_message(timeout=0.2)
        if m and m["type"] == "pmessage":
            events.append(m["channel"].split(b":", 1)[1])
    assert events == [b"xadd", b"xtrim", b"xgroup-create", b"xgroup-createconsumer",
                      b"xgroup-setid", b"xgroup-delconsumer", b"xgroup-destroy", b"xadd",
                      b"xdel", b"xsetid"]
    r.config_set("notify-keyspace-events", "")
    p.close()


# ---- the append-only file ----


def stream_state(r, key="s"):
    """Everything a stream holds but the consumers' seen times (rewrites renew them)."""
    full = r.execute_command("XINFO", "STREAM", key, "FULL", "COUNT", "0")
    info = dict(zip(full[::2], full[1::2]))
    groups = []
    for g in info.pop(b"groups"):
        g = dict(zip(g[::2], g[1::2]))
        consumers = []
        for co in g.pop(b"consumers"):
            co = dict(zip(co[::2], co[1::2]))
            co.pop(b"seen-time")
            consumers.append(co)
        g[b"consumers"] = consumers
        groups.append(g)
    info[b"groups"] = groups
    info.pop(b"radix-tree-nodes")  # node boundaries depend on history and settings
    info.pop(b"radix-tree-keys")
    return info


def build_busy_stream(r):
    r.config_set("stream-node-max-entries", "4")
    for i in range(30):
        r.xadd("s", {"f": str(i), "g": "x" * (i % 5)})
    r.xadd("s", {"other": "fields"}, id="%d-*" % (int(time.time() * 1000) + 5000))
    r.xadd("s", {"a": "b"}, maxlen=20, approximate=True)
    ids = [e[0] for e in r.xrange("s")]
    r.xdel("s", ids[3], ids[-2])
    r.xgroup_create("s", "g1", "0")
    r.xgroup_create("s", "g2", "$")
    r.xgroup_create("s", "g3", ids[5], entries_read=3)
    r.xreadgroup("g1", "alice", {"s": ">"}, count=5)
    r.xreadgroup("g1", "bob", {"s": ">"}, count=3, noack=True)
    r.xreadgroup("g1", "carol", {"s": ">"}, count=4)
    r.xreadgroup("g1", "alice", {"s": "0"})  # history: delivery counts grow
    r.xack("s", "g1", ids[6])
    r.xclaim("s", "g1", "dave", 0, [ids[7]], retrycount=7)
    r.xautoclaim("s", "g1", "erin", 0, "0-0", count=2)
    r.xgroup_createconsumer("s", "g2", "idle")
    r.xgroup_createconsumer("s", "g2", "gone")
    r.xgroup_delconsumer("s", "g2", "gone")
    r.xadd("empty", {"x": "y"}, id="7-7")
    r.xdel("empty", "7-7")
    r.xgroup_create("empty", "eg", "$")


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")
def test_aof_restart_and_rewrite_keep_streams(server_factory):
    srv = server_factory(AOF)
    r = srv.redis()
    build_busy_stream(r)
    before = (stream_state(r), stream_state(r, "empty"))
    srv.restart_same_dir()
    r = srv.redis()
    assert (stream_state(r), stream_state(r, "empty")) == before
    r.bgrewriteaof()
    deadline = time.time() + 10
    while time.time() < deadline:
        p = r.info("persistence")
        if not p["aof_rewrite_in_progress"] and not p["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    with open(os.path.join(srv.tmpdir, "appendonly.aof"), "rb") as f:
        text = f.read()
    assert b"XSETID" in text and b"ENTRIESREAD" in text and b"JUSTID" in text
    srv.restart_same_dir()
    r = srv.redis()
    assert (stream_state(r), stream_state(r, "empty")) == before


def wait_rewrite(r):
    deadline = time.time() + 10
    while time.time() < deadline:
        p = r.info("persistence")
        if not p["aof_rewrite_in_progress"] and not p["aof_rewrite_scheduled"]:
            return
        time.sleep(0.05)
    raise AssertionError("rewrite did not finish")


def full_state(r, key="s"):
    """XINFO STREAM FULL (seen and delivery times included) and each group's extended XPENDING
    but the idle times, which grow."""
    full = r.execute_command("XINFO", "STREAM", key, "FULL")
    pending = [[(e["message_id"], e["consumer"], e["times_delivered"])
                for e in r.xpending_range(key, g[1], "-", "+", 100)] for g in full[-1]]
    return full, pending


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")
def test_aof_rewrite_keeps_pending_entries_of_deleted_messages(server_factory):
    srv = server_factory(AOF)
    r = srv.redis()
    r.xadd("s", {"a": 1}, id="1-1")
    r.xadd("s", {"a": 1}, id="2-1")
    r.xadd("s", {"a": 1}, id="3-1")
    r.xgroup_create("s", "g", "0")
    r.xreadgroup("g", "c", {"s": ">"}, count=2)
    r.xreadgroup("g", "d", {"s": ">"})
    r.xreadgroup("g", "c", {"s": "0"})  # delivery counts 2
    r.xgroup_createconsumer("s", "g", "idle")
    r.xdel("s", "1-1", "2-1")
    assert r.xpending("s", "g")["pending"] == 3
    time.sleep(0.05)  # seen times renewed by the reload would differ
    before = full_state(r)
    r.bgrewriteaof()
    wait_rewrite(r)
    with open(os.path.join(srv.tmpdir, "appendonly.aof"), "rb") as f:
        text = f.read()
    assert b"AOFRESTORE" in text and b"FORCE" not in text
    srv.restart_same_dir()
    r = srv.redis()
    assert full_state(r) == before
    assert r.xpending("s", "g")["pending"] == 3
    assert [c["name"] for c in r.xinfo_consumers("s", "g")] == [b"c", b"d", b"idle"]
    # plain FORCE still drops a pending entry whose message is gone
    assert r.xclaim("s", "g", "d", 0, ["1-1"], justid=True, force=True) == []
    assert r.xpending("s", "g")["pending"] == 2
    # and the loader's option is unknown to clients
    with pytest.raises(Exception, match="Unrecognized XCLAIM option 'AOFRESTORE'"):
        r.execute_command("XCLAIM", "s", "g", "d", 0, "2-1", "AOFRESTORE")
    before = full_state(r)  # the drop and the claims since reached the file as well
    srv.restart_same_dir()
    assert full_state(srv.redis()) == before


@pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")
def test_aof_logs_generated_ids_and_exact_trims(server_factory):
    srv = server_factory(AOF)
    r = srv.redis()
    r.config_set("stream-node-max-entries", "2")
    for _ in range(9):
        r.xadd("s", {"f": "v"}, maxlen=3, approximate=True)
    r.xgroup_create("s", "g", "0")
    r.xreadgroup("g", "c", {"s": ">"}, count=2)
    with open(os.path.join(srv.tmpdir, "appendonly.aof"), "rb") as f:
        text = f.read()
    assert b"$1\r\n*\r\n" not in text  # no "*" id logged
    assert b"$1\r\n~\r\n" not in text and b"$1\r\n=\r\n" in text
    assert text.count(b"XCLAIM") == 2 and b"XREADGROUP" not in text
    before = stream_state(r)
    srv.restart_same_dir()
    assert stream_state(srv.redis()) == before
