"""Integration tests of the tiered store (COMMANDS.md sections 2-3) against the real binary:
binary-safe blobs, big blobs on a file tier, partial writes, spilling to a second tier, REORG and
rewrites under concurrent readers (never a short or torn value), a slow file tier that must not
delay other clients, reply order of pipelined commands while file I/O is pending, clients that
go away with I/O in flight, transactions around file I/O, and tier accounting (INFO tiers and
TIERS) against the bytes stored.

Each test starts its own cte-server with small tiers (server_factory) so that placement is
predictable; file tiers live in the server's temp dir. Run with Debian's interpreter:

    /usr/bin/python3 -m pytest -q tests/integration/test_tags.py
"""
import os
import random
import socket
import threading
import time

import pytest

from conftest import CTE_KIND, R, RespConn

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="tags are cte-server's own commands")

BLOCK = 4096
MB = 1 << 20


def blocks(n, block=BLOCK):
    return (n + block - 1) // block * block


RAM_BLOCK = 16  # a RAM tier counts 16-byte blocks


def start(server_factory, ram="64kb", disk="16mb", extra=(), ram_score=None):
    ram_spec = "ram:ram:%s" % ram + ("::%s" % ram_score if ram_score is not None else "")
    args = ["--tier", ram_spec, "--tier", "disk:file:%s:disk" % disk,
            "--max-blob-size", "16mb", "--enable-debug-command", "yes"] + list(extra)
    return server_factory(args)


def client(s, **kw):
    return s.redis(decode_responses=False, socket_timeout=15, **kw)


def tiers(r):
    """TIERS as {name: {field: value}} (RESP2 flat lists)."""
    out = {}
    for t in r.execute_command("TIERS"):
        d = {t[i]: t[i + 1] for i in range(0, len(t), 2)}
        out[d[b"name"].decode()] = d
    return out


def info_tiers(s):
    """INFO tiers parsed from the raw text: {name: {field: int or str}}, plus inflight."""
    with s.conn() as c:
        r = c.call("INFO", "tiers")
    assert r.kind == "$", r
    out = {}
    for line in r.val.decode().split("\r\n"):
        if line.startswith("tier_io_inflight:"):
            out["_inflight"] = int(line.split(":", 1)[1])
        elif line.startswith("tier_"):
            name, rest = line[5:].split(":", 1)
            d = {}
            for kv in rest.split(","):
                k, v = kv.split("=", 1)
                d[k] = int(v) if v.isdigit() else v
            out[name] = d
    return out


def tinfo(r, tag, blob):
    v = r.execute_command("TINFO", tag, blob)
    if v is None:
        return None
    if isinstance(v, dict):
        return v
    return {v[i]: v[i + 1] for i in range(0, len(v), 2)}


def tier_of(r, tag, blob):
    return tinfo(r, tag, blob)[b"tier"]


def wait_until(pred, timeout=10.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.01)
    raise AssertionError("timed out waiting for %s" % what)


def wait_idle(s):
    wait_until(lambda: info_tiers(s).get("_inflight", 0) == 0, what="tier I/O to drain")


def wait_calls(r, cmd, n):
    """Until the server has run cmd n times (INFO commandstats): a command sent on another
    connection has run, and its tier I/O is in flight. A sleep is not enough on a loaded
    machine, where the server may read that connection later; tier I/O in flight is not
    either (the search index reads blobs on file tiers too)."""
    def calls():
        return r.info("commandstats").get("cmdstat_" + cmd, {}).get("calls", 0)
    wait_until(lambda: calls() >= n, what="%s to have run %d times" % (cmd, n))


# ------------------------------------------------------------------------------------------
# bytes in, bytes out


def test_binary_safe_blobs_in_ram_and_on_file(server_factory):
    s = start(server_factory)
    r = client(s)
    data = b"a\r\nb\x00c\r\n$3\r\n*1\r\n" + bytes(range(256)) + b"\r\n"
    assert r.execute_command("TPUT", "t", "ram", 0, data) == len(data)
    assert r.execute_command("TPUT", "t", "disk", 0, data, 0) == len(data)
    assert tier_of(r, "t", "ram") == b"ram"
    assert tier_of(r, "t", "disk") == b"disk"
    for b in ("ram", "disk"):
        assert r.execute_command("TGET", "t", b) == data
        assert r.execute_command("TGET", "t", b, 2, 5) == data[2:7]
        assert r.execute_command("TSIZE", "t", b) == len(data)
    name = b"\x00n\r\nm\xff"
    assert r.execute_command("TPUT", b"t\r\n\x00", name, 0, b"\x00") == 1
    assert r.execute_command("TGET", b"t\r\n\x00", name) == b"\x00"
    assert name in r.execute_command("TLIST", b"t\r\n\x00")
    assert r.execute_command("TGET", "t", "nope") is None


@pytest.mark.parametrize("size", [MB, 8 * MB])
def test_big_blobs_on_a_file_tier_read_back_intact(server_factory, size):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(size)
    assert r.execute_command("TPUT", "t", "big", 0, data, 0) == size
    assert tier_of(r, "t", "big") == b"disk"
    assert r.execute_command("TGET", "t", "big") == data
    rnd = random.Random(size)
    for _ in range(20):
        off = rnd.randrange(size)
        cnt = rnd.randrange(1, 100000)
        assert r.execute_command("TGET", "t", "big", off, cnt) == data[off:off + cnt]
    assert r.execute_command("TGET", "t", "big", size - 1, 10) == data[-1:]
    assert r.execute_command("TGET", "t", "big", size, 10) == b""
    assert tiers(r)["disk"][b"used"] == blocks(size)
    # move it up and down: a 1 MiB RAM tier for the 1 MiB case is too small, REORG answers
    # without losing a byte either way
    try:
        r.execute_command("REORG", "t", "big", 1)
    except Exception as e:  # OOM is acceptable: the RAM tier is 64 KiB
        assert str(e).startswith("OOM") or "OOM" in str(e), e
    assert r.execute_command("TGET", "t", "big") == data


def test_partial_writes_at_offsets_match_a_model(server_factory):
    s = start(server_factory, ram="256kb")
    r = client(s)
    rnd = random.Random(7)
    for blob, score in (("r", 1), ("f", 0)):
        model = bytearray()
        for step in range(60):
            off = rnd.randrange(len(model) + 5000)
            n = rnd.randrange(1, 9000)
            piece = os.urandom(n)
            size = r.execute_command("TPUT", "t", blob, off, piece, score)
            if off > len(model):
                model += bytes(off - len(model))
            model[off:off + n] = piece
            assert size == len(model), (blob, step)
            if step % 10 == 0:
                assert r.execute_command("TGET", "t", blob) == bytes(model), (blob, step)
            a = rnd.randrange(len(model))
            assert r.execute_command("TGET", "t", blob, a, 3000) == bytes(model[a:a + 3000])
        # truncate down and up: zeros come back
        cut = len(model) // 3
        assert r.execute_command("TTRUNCATE", "t", blob, cut) == cut
        assert r.execute_command("TTRUNCATE", "t", blob, cut + 5000) == cut + 5000
        model = model[:cut] + bytes(5000)
        assert r.execute_command("TGET", "t", blob) == bytes(model)
        # empty data writes nothing, even past the end
        assert r.execute_command("TPUT", "t", blob, len(model) + 100, b"") == len(model)
        assert r.execute_command("TGET", "t", blob) == bytes(model)


def test_every_byte_survives_spilling_to_the_second_tier(server_factory):
    s = start(server_factory, ram="64kb", disk="2mb")
    r = client(s)
    blobs = {}
    for i in range(40):
        data = os.urandom(10000 + i * 37)
        blobs[b"b%d" % i] = data
        assert r.execute_command("TPUT", "t", b"b%d" % i, 0, data) == len(data)
    where = {k: tier_of(r, "t", k) for k in blobs}
    assert b"ram" in where.values() and b"disk" in where.values(), where
    for k, v in blobs.items():
        assert r.execute_command("TGET", "t", k) == v, k
    t = tiers(r)
    assert t["ram"][b"used"] <= 65536
    in_ram = sum(len(v) for k, v in blobs.items() if where[k] == b"ram"
                 and len(tinfo(r, "t", k).get(b"tiers", [])) <= 1)
    assert t["ram"][b"used"] >= in_ram
    assert t["ram"][b"used"] + t["disk"][b"used"] >= sum(len(v) for v in blobs.values())
    # rewrite each blob in place: still intact, nothing leaks
    for k in list(blobs):
        piece = os.urandom(1000)
        r.execute_command("TPUT", "t", k, 500, piece)
        blobs[k] = blobs[k][:500] + piece + blobs[k][1500:]
    for k, v in blobs.items():
        assert r.execute_command("TGET", "t", k) == v, k
    assert r.execute_command("TDEL", "t", *blobs.keys()) == len(blobs)
    assert r.exists("t") == 0
    t = tiers(r)
    assert t["ram"][b"used"] == 0 and t["disk"][b"used"] == 0, t


def test_hot_write_into_a_full_ram_tier_demotes_the_coldest(server_factory):
    s = start(server_factory, ram="64kb", ram_score=0.1)
    r = client(s)
    data = {}
    for i, score in enumerate((0.2, 0.5, 0.3, 0.4)):
        data[i] = os.urandom(16384)
        assert r.execute_command("TPUT", "t", "c%d" % i, 0, data[i], score) == 16384
        assert tier_of(r, "t", "c%d" % i) == b"ram"
    hot = os.urandom(16384)
    assert r.execute_command("TPUT", "t", "hot", 0, hot, 0.9) == 16384
    assert tier_of(r, "t", "hot") == b"ram"
    assert tier_of(r, "t", "c0") == b"disk"  # score 0.2: the coldest
    for i in (1, 2, 3):
        assert tier_of(r, "t", "c%d" % i) == b"ram"
    for i in range(4):
        assert r.execute_command("TGET", "t", "c%d" % i) == data[i]
    assert r.execute_command("TGET", "t", "hot") == hot


# ------------------------------------------------------------------------------------------
# concurrency


def _reader_loop(s, tag, blob, valid, stop, errors, counts, idx):
    r = client(s)
    try:
        while not stop.is_set():
            v = r.execute_command("TGET", tag, blob)
            if v not in valid:
                sizes = [len(x) for x in valid]
                errors.append("reader %d: got %s bytes (valid sizes %s)%s" % (
                    idx, None if v is None else len(v), sizes,
                    "" if v is None or len(v) not in sizes else ": torn value"))
                return
            counts[idx] += 1
    except Exception as e:  # noqa: BLE001 - any error is a failure
        errors.append("reader %d: %r" % (idx, e))


def test_reorg_under_concurrent_readers(server_factory):
    s = start(server_factory, ram="1mb")
    r = client(s)
    data = os.urandom(300000)
    assert r.execute_command("TPUT", "t", "b", 0, data, 0) == len(data)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 2000)
    stop = threading.Event()
    errors = []
    counts = [0] * 4
    readers = [threading.Thread(target=_reader_loop,
                                args=(s, "t", "b", {data}, stop, errors, counts, i))
               for i in range(4)]
    for t in readers:
        t.start()
    tiers_seen = set()
    try:
        for i in range(30):
            got = r.execute_command("REORG", "t", "b", 1 if i % 2 == 0 else 0)
            tiers_seen.add(got)
            assert got == tier_of(r, "t", "b"), (i, got)
            if errors:
                break
    finally:
        stop.set()
        for t in readers:
            t.join(15)
    assert not errors, errors
    assert tiers_seen == {b"ram", b"disk"}, tiers_seen
    assert min(counts) > 0, counts
    assert r.execute_command("TGET", "t", "b") == data
    wait_idle(s)
    t = tiers(r)
    assert t["disk"][b"used"] == blocks(len(data)) and t["ram"][b"used"] == 0, t


def test_rewrites_under_concurrent_readers_are_never_torn(server_factory):
    s = start(server_factory, ram="64kb")
    r = client(s)
    a, b = b"A" * 200000, b"B" * 200000
    assert r.execute_command("TPUT", "t", "b", 0, a, 0) == len(a)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 1000)
    stop = threading.Event()
    errors = []
    counts = [0] * 3
    readers = [threading.Thread(target=_reader_loop,
                                args=(s, "t", "b", {a, b}, stop, errors, counts, i))
               for i in range(3)]
    for t in readers:
        t.start()
    try:
        for i in range(40):
            assert r.execute_command("TPUT", "t", "b", 0, b if i % 2 == 0 else a) == len(a)
            if errors:
                break
    finally:
        stop.set()
        for t in readers:
            t.join(15)
    assert not errors, errors
    assert min(counts) > 0, counts


def test_a_slow_file_tier_does_not_delay_other_clients(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(100000)
    assert r.execute_command("TPUT", "t", "slow", 0, data, 0) == len(data)
    r.set("k", "v")
    assert r.execute_command("DEBUG", "TIER-DELAY", "disk", 200000) == b"OK"
    a = s.conn(timeout=10)
    b = s.conn(timeout=10)
    try:
        t0 = time.time()
        a.send("TGET", "t", "slow")
        time.sleep(0.02)  # the read is on the slow tier now
        for cmd in (("PING",), ("GET", "k"), ("SET", "k2", "x"), ("TPUT", "t", "fast", 0, "x"),
                    ("TGET", "t", "fast"), ("TIERS",), ("INFO", "tiers")):
            t1 = time.time()
            rep = b.call(*cmd)
            assert rep.kind != "-", (cmd, rep)
            dt = time.time() - t1
            assert dt < 0.1, "%s took %.3f s while a slow read was in flight" % (cmd, dt)
        rep = a.read_reply()[0]
        elapsed = time.time() - t0
        assert rep == R("$", data)
        assert elapsed >= 0.15, "the slow read came back in %.3f s: delay not applied?" % elapsed
        # a write to the slow tier does not block others either
        t0 = time.time()
        a.send("TPUT", "t", "slow", 0, b"Z" * 10)
        time.sleep(0.02)
        t1 = time.time()
        assert b.call("PING") == R("+", b"PONG")
        assert time.time() - t1 < 0.1
        assert a.read_reply()[0] == R(":", len(data))
        assert time.time() - t0 >= 0.15
    finally:
        a.close()
        b.close()
        r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    assert r.execute_command("TGET", "t", "slow", 0, 12) == b"Z" * 10 + data[10:12]


def test_pipelined_commands_keep_reply_order_while_file_io_is_pending(server_factory):
    s = start(server_factory)
    r = client(s)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 30000)
    big = os.urandom(50000)
    with s.conn(timeout=15) as c:
        cmds = [
            (("TPUT", "t", "f", 0, big, 0), R(":", len(big))),
            (("TGET", "t", "f", 0, 10), R("$", big[:10])),
            (("PING",), R("+", b"PONG")),
            (("TPUT", "t", "r", 0, "ramdata"), R(":", 7)),
            (("TGET", "t", "r"), R("$", b"ramdata")),
            (("TPUT", "t", "f", 3, "xyz"), R(":", len(big))),
            (("TGET", "t", "f", 0, 6), R("$", big[:3] + b"xyz")),
            (("SET", "k", "v"), R("+", b"OK")),
            (("TSIZE", "t", "f"), R(":", len(big))),
            (("TGET", "t", "f", len(big) - 5), R("$", big[-5:])),
            (("GET", "k"), R("$", b"v")),
            (("REORG", "t", "f", 1), None),
            (("TGET", "t", "f", 0, 6), R("$", big[:3] + b"xyz")),
            (("TLEN", "t"), R(":", 2)),
        ]
        c.send_raw(b"".join(encode(*cmd) for cmd, _ in cmds))
        for cmd, want in cmds:
            got = c.read_reply()[0]
            if want is None:
                assert got.kind == "$", (cmd[0], got)
            else:
                assert got == want, (cmd[0], got)
        # many reads of the slow tier pipelined: each reply is its own range
        reqs = [(i * 250, 700) for i in range(200)]  # more than any late-reply window
        c.send_raw(b"".join(encode("TGET", "t", "f", o, n) for o, n in reqs))
        cur = big[:3] + b"xyz" + big[6:]
        for o, n in reqs:
            assert c.read_reply()[0] == R("$", cur[o:o + n]), o


def encode(*args):
    from conftest import encode_command
    return encode_command(*args)


def test_client_going_away_with_io_in_flight_leaves_the_server_healthy(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(100000)
    assert r.execute_command("TPUT", "t", "b", 0, data, 0) == len(data)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 150000)
    # 1. a reader that closes its socket
    a = s.conn()
    a.send("TGET", "t", "b")
    time.sleep(0.02)
    a.close()
    # 2. a reader killed by CLIENT KILL, with more commands pipelined behind the read
    k = s.conn()
    k.send("CLIENT", "ID")
    kid = k.read_reply()[0].val
    k.send_raw(encode("TGET", "t", "b") + encode("PING") + encode("TGET", "t", "b"))
    time.sleep(0.02)
    assert r.execute_command("CLIENT", "KILL", "ID", kid) == 1
    assert k.is_closed_by_peer(timeout=5)
    k.close()
    # 3. a writer that goes away: its write still completes (or never happened), whole
    w = s.conn()
    w.send("TPUT", "t", "b", 0, b"W" * 1000)
    time.sleep(0.02)
    w.close()
    assert r.ping()
    wait_idle(s)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    v = r.execute_command("TGET", "t", "b")
    assert v in (data, b"W" * 1000 + data[1000:]), "torn after the writer left"
    assert r.execute_command("TSIZE", "t", "b") == len(data)
    n = r.execute_command("CLIENT", "LIST").count(b"\n")
    assert n <= 2, r.execute_command("CLIENT", "LIST")
    assert r.delete("t") == 1
    t = tiers(r)
    assert t["disk"][b"used"] == 0 and t["ram"][b"used"] == 0, t


def test_waiters_on_a_busy_blob_are_answered_after_it_is_deleted(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(50000)
    assert r.execute_command("TPUT", "t", "b", 0, data, 0) == len(data)
    wait_idle(s)  # the search index's read of the new blob is done: the next TPUT writes at once
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 200000)
    w, g, d = s.conn(), s.conn(timeout=5), s.conn()
    try:
        w.send("TPUT", "t", "b", 0, b"N" * 100)   # a write in flight: the blob is busy
        wait_calls(r, "tput", 2)
        g.send("TGET", "t", "b")                  # waits for the write
        time.sleep(0.03)
        assert d.call("TDEL", "t", "b") == R(":", 1)
        assert w.read_reply()[0] == R(":", len(data))
        try:
            rep = g.read_reply()[0]
        except socket.timeout:
            pytest.fail("a TGET waiting on a busy blob was never answered after TDEL")
        assert rep == R("$", None), rep
    finally:
        for c in (w, g, d):
            c.close()
        r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    wait_idle(s)
    t = tiers(r)
    assert t["disk"][b"used"] == 0, t


def test_waiters_on_a_busy_blob_whose_tag_is_renamed(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(30000)
    assert r.execute_command("TPUT", "t", "b", 0, data, 0) == len(data)
    wait_idle(s)  # the search index's read of the new blob is done: the next TPUT writes at once
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 150000)
    w, g = s.conn(), s.conn(timeout=5)
    try:
        w.send("TPUT", "t", "b", 0, b"R" * 10)
        wait_calls(r, "tput", 2)
        g.send("TGET", "t", "b", 0, 10)
        time.sleep(0.03)
        assert r.rename("t", "u")
        assert w.read_reply()[0] == R(":", len(data))
        try:
            rep = g.read_reply()[0]
        except socket.timeout:
            pytest.fail("a TGET waiting on a busy blob was never answered after RENAME")
        assert rep == R("$", None), rep  # it runs again on "t", which is gone
    finally:
        w.close()
        g.close()
        r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    assert r.execute_command("TGET", "u", "b", 0, 12) == b"R" * 10 + data[10:12]


def test_several_waiters_on_a_busy_blob_all_get_their_replies(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(40000)
    assert r.execute_command("TPUT", "t", "b", 0, data, 0) == len(data)
    wait_idle(s)  # the search index's read of the new blob is done: the next TPUT writes at once
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 100000)
    conns = [s.conn(timeout=10) for _ in range(6)]
    try:
        conns[0].send("TPUT", "t", "b", 0, b"X" * 10)
        wait_calls(r, "tput", 2)  # it runs first (a sleep is not enough on a loaded machine)
        for i, c in enumerate(conns[1:]):
            if i % 2:
                c.send("TGET", "t", "b", 0, 10)
            else:
                c.send("TPUT", "t", "b", 10 + i, b"y")
        assert conns[0].read_reply()[0] == R(":", len(data))
        for i, c in enumerate(conns[1:]):
            rep = c.read_reply()[0]
            if i % 2:
                assert rep.kind == "$" and rep.val[:10] == b"X" * 10, rep
            else:
                assert rep == R(":", len(data)), rep
    finally:
        for c in conns:
            c.close()
        r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    v = r.execute_command("TGET", "t", "b", 0, 20)
    assert v[:10] == b"X" * 10 and v[10] == ord("y") and v[12] == ord("y") and v[14] == ord("y")


def test_multi_exec_around_file_io_replies_in_one_array(server_factory):
    s = start(server_factory)
    r = client(s)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 20000)
    with s.conn(timeout=5) as c:
        assert c.call("MULTI") == R("+", b"OK")
        assert c.call("TPUT", "t", "f", 0, "xyz", 0) == R("+", b"QUEUED")
        assert c.call("TGET", "t", "f") == R("+", b"QUEUED")
        assert c.call("TSIZE", "t", "f") == R("+", b"QUEUED")
        assert c.call("PING") == R("+", b"QUEUED")
        try:
            rep = c.call("EXEC")
        except socket.timeout:
            pytest.fail("EXEC with file-tier I/O inside never replied")
        assert rep == R("*", [R(":", 3), R("$", b"xyz"), R(":", 3), R("+", b"PONG")]), rep
        assert c.call("PING") == R("+", b"PONG")
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)


def test_a_transaction_with_file_io_runs_atomically(server_factory):
    """Inside EXEC, file-tier I/O runs on the loop thread so the transaction stays atomic and
    reads its own writes (a documented exception to "file tiers never block the loop": other
    clients wait for the transaction, as they wait for any command). Both clients get their
    replies, in order."""
    s = start(server_factory)
    r = client(s)
    data = os.urandom(20000)
    assert r.execute_command("TPUT", "t", "f", 0, data, 0) == len(data)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 300000)
    a, b = s.conn(timeout=10), s.conn(timeout=10)
    try:
        assert a.call("MULTI") == R("+", b"OK")
        assert a.call("TGET", "t", "f") == R("+", b"QUEUED")
        a.send("EXEC")
        time.sleep(0.03)
        t1 = time.time()
        assert b.call("PING") == R("+", b"PONG")
        dt = time.time() - t1
        assert a.read_reply()[0] == R("*", [R("$", data)])
        assert dt < 5, "PING waited %.3f s" % dt
    finally:
        a.close()
        b.close()
        r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)


def test_a_transaction_reading_a_busy_blob_gets_its_bytes(server_factory):
    """A blob with a write in flight from another client: EXEC's TGET answers with the bytes
    (after the write), as a TGET outside a transaction does, not with an error."""
    s = start(server_factory)
    r = client(s)
    data = os.urandom(20000)
    assert r.execute_command("TPUT", "t", "f", 0, data, 0) == len(data)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 100000)
    a, b = s.conn(timeout=10), s.conn(timeout=10)
    try:
        assert b.call("MULTI") == R("+", b"OK")
        assert b.call("TGET", "t", "f", 0, 4) == R("+", b"QUEUED")
        assert b.call("TPUT", "t", "f", 0, "zz") == R("+", b"QUEUED")
        a.send("TPUT", "t", "f", 0, b"WXYZ")
        wait_calls(r, "tput", 2)
        rep = b.call("EXEC")
        assert rep == R("*", [R("$", b"WXYZ"), R(":", len(data))]), rep
        assert a.read_reply()[0] == R(":", len(data))
    finally:
        a.close()
        b.close()
        r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    assert r.execute_command("TGET", "t", "f", 0, 4) == b"zzYZ"


def test_client_reply_skip_and_off_apply_to_late_replies(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(5000)
    assert r.execute_command("TPUT", "t", "f", 0, data, 0) == len(data)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 30000)
    with s.conn(timeout=5) as c:
        c.send_raw(encode("CLIENT", "REPLY", "SKIP") + encode("TGET", "t", "f") +
                   encode("PING", "one"))
        assert c.read_reply()[0] == R("$", b"one")
        c.send_raw(encode("CLIENT", "REPLY", "OFF") + encode("TGET", "t", "f") +
                   encode("TPUT", "t", "f", 0, "q") + encode("CLIENT", "REPLY", "ON") +
                   encode("PING", "two"))
        assert c.read_reply()[0] == R("+", b"OK")
        assert c.read_reply()[0] == R("$", b"two")
        c.send_raw(encode("TGET", "t", "f", 0, 1))
        assert c.read_reply()[0] == R("$", b"q")
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)


def test_quit_after_a_pipelined_read_still_delivers_the_read(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(5000)
    assert r.execute_command("TPUT", "t", "f", 0, data, 0) == len(data)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 50000)
    with s.conn(timeout=5) as c:
        c.send_raw(encode("TGET", "t", "f") + encode("QUIT"))
        assert c.read_reply()[0] == R("$", data)
        assert c.read_reply()[0] == R("+", b"OK")
        assert c.is_closed_by_peer(timeout=5)
    with s.conn(timeout=5) as c:
        c.send_raw(encode("TGET", "t", "f", 0, 3) + encode("RESET") + encode("PING"))
        assert c.read_reply()[0] == R("$", data[:3])
        assert c.read_reply()[0] == R("+", b"RESET")
        assert c.read_reply()[0] == R("+", b"PONG")
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)


def test_debug_tier_delay_checks_its_arguments(server_factory):
    s = start(server_factory)
    with s.conn() as c:
        assert c.call("DEBUG", "TIER-DELAY", "nosuch", 0).kind == "-"
        assert c.call("DEBUG", "TIER-DELAY", "disk", -1).kind == "-"
        assert c.call("DEBUG", "TIER-DELAY", "disk", "x").kind == "-"
        assert c.call("DEBUG", "TIER-DELAY", "disk", 0) == R("+", b"OK")


def test_flushall_and_expiry_with_io_in_flight(server_factory):
    s = start(server_factory)
    r = client(s)
    data = os.urandom(60000)
    for i in range(4):
        assert r.execute_command("TPUT", "t%d" % i, "b", 0, data, 0) == len(data)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 100000)
    conns = [s.conn() for _ in range(4)]
    try:
        for i, c in enumerate(conns):
            c.send("TGET", "t%d" % i, "b")
        time.sleep(0.02)
        r.pexpire("t0", 1)
        assert r.flushall()
        for c in conns:
            assert c.read_reply()[0] == R("$", data)
    finally:
        for c in conns:
            c.close()
    wait_idle(s)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    t = tiers(r)
    assert t["disk"][b"used"] == 0 and t["disk"][b"blobs"] == 0, t


def test_tget_of_zero_bytes_inside_a_file_blob(server_factory):
    s = start(server_factory)
    r = client(s)
    assert r.execute_command("TPUT", "t", "f", 0, "0123456789", 0) == 10
    assert r.execute_command("TGET", "t", "f", 2, 0) == b""
    assert r.execute_command("TGET", "t", "f", 0, 0) == b""
    assert r.execute_command("TGET", "t", "f", 3, 2) == b"34"
    assert r.ping()


def _stress_worker(s, idx, seconds, errors, stats):
    """Owns tag w<idx>: random TPUT / TGET / TTRUNCATE / TDEL / REORG against a model."""
    rnd = random.Random(1000 + idx)
    r = client(s)
    tag = "w%d" % idx
    model = {}
    deadline = time.time() + seconds
    step = 0
    try:
        while time.time() < deadline and not errors:
            step += 1
            b = "b%d" % rnd.randrange(4)
            op = rnd.randrange(100)
            cur = model.get(b)
            if op < 35:
                off = rnd.randrange((len(cur) if cur else 0) + 2000)
                data = os.urandom(rnd.randrange(1, 30000))
                args = ["TPUT", tag, b, off, data]
                if rnd.randrange(3) == 0:
                    args.append(rnd.choice(["0", "0.3", "0.5", "0.8", "1"]))
                got = r.execute_command(*args)
                m = bytearray(cur or b"")
                if off > len(m):
                    m += bytes(off - len(m))
                m[off:off + len(data)] = data
                model[b] = bytes(m)
                if got != len(m):
                    errors.append("%s step %d: TPUT replied %r, model %d" % (tag, step, got, len(m)))
            elif op < 65:
                got = r.execute_command("TGET", tag, b)
                if got != cur:
                    errors.append("%s step %d: TGET %s: %s bytes, model %s" % (
                        tag, step, b, None if got is None else len(got),
                        None if cur is None else len(cur)))
            elif op < 75:
                n = rnd.randrange(40000)
                got = r.execute_command("TTRUNCATE", tag, b, n)
                m = (cur or b"")[:n]
                model[b] = m + bytes(n - len(m))
                if got != n:
                    errors.append("%s step %d: TTRUNCATE replied %r" % (tag, step, got))
            elif op < 83:
                got = r.execute_command("TDEL", tag, b)
                if got != (1 if cur is not None else 0):
                    errors.append("%s step %d: TDEL replied %r" % (tag, step, got))
                model.pop(b, None)
            else:
                got = r.execute_command("REORG", tag, b, rnd.choice(["0", "0.5", "1"]))
                if cur is None and got is not None:
                    errors.append("%s step %d: REORG of a missing blob: %r" % (tag, step, got))
                if cur is not None and got not in (b"ram", b"disk"):
                    errors.append("%s step %d: REORG replied %r" % (tag, step, got))
        for b, v in model.items():
            got = r.execute_command("TGET", tag, b)
            if got != v:
                errors.append("%s at the end: TGET %s differs from the model" % (tag, b))
        stats[idx] = (step, model)
    except Exception as e:  # noqa: BLE001
        errors.append("%s step %d: %r" % (tag, step, e))


def _chaos(s, seconds, errors):
    """Moves everybody's blobs around and reads metadata, ignoring what it finds."""
    rnd = random.Random(99)
    r = client(s)
    deadline = time.time() + seconds
    try:
        while time.time() < deadline and not errors:
            tag, b = "w%d" % rnd.randrange(4), "b%d" % rnd.randrange(4)
            op = rnd.randrange(4)
            if op == 0:
                r.execute_command("REORG", tag, b, rnd.choice(["0", "1"]))
            elif op == 1:
                tinfo(r, tag, b)
            elif op == 2:
                tiers(r)
            else:
                r.execute_command("TSCAN", tag, 0, "COUNT", 2)
    except Exception as e:  # noqa: BLE001
        errors.append("chaos: %r" % (e,))


@pytest.mark.parametrize("organizer", [False, True])
def test_many_clients_with_a_slow_tier_keep_every_blob_intact(server_factory, organizer):
    extra = ["--organizer", "yes", "--organizer-half-life", "1", "--hz", "50"] if organizer else []
    s = start(server_factory, ram="64kb", disk="8mb", ram_score=0.5, extra=extra)
    r = client(s)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 1000)
    errors, stats = [], {}
    threads = [threading.Thread(target=_stress_worker, args=(s, i, 3.0, errors, stats))
               for i in range(4)]
    threads.append(threading.Thread(target=_chaos, args=(s, 3.0, errors)))
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads), "a client hangs: %s" % info_tiers(s)
    assert not errors, errors[:5]
    assert len(stats) == 4
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    wait_idle(s)
    total = sum(len(v) for _, m in stats.values() for v in m.values())
    t = tiers(r)
    assert t["ram"][b"used"] + t["disk"][b"used"] >= total
    nblobs = sum(len(m) for _, m in stats.values())
    assert t["ram"][b"blobs"] + t["disk"][b"blobs"] >= sum(
        1 for _, m in stats.values() for v in m.values() if v)
    assert t["ram"][b"blobs"] + t["disk"][b"blobs"] <= 2 * nblobs
    for i, (_, m) in stats.items():
        for b, v in m.items():
            assert r.execute_command("TGET", "w%d" % i, b) == v
    r.flushall()
    t = tiers(r)
    assert t["ram"][b"used"] == 0 and t["disk"][b"used"] == 0, t
    assert t["ram"][b"blobs"] == 0 and t["disk"][b"blobs"] == 0, t


def test_many_hot_writers_into_a_full_ram_tier_all_get_replies(server_factory):
    """RAM (score 0.1) holds 8 cold blobs (0.2) of 8 KiB; 6 clients write a 0.9 blob of 8 KiB
    at once. Each must be answered, and each hot blob must land in RAM: demotion makes room
    for all six (6 cold blobs go down, 2 stay), none is pushed to disk while RAM is free."""
    s = start(server_factory, ram="64kb", disk="8mb", ram_score=0.1)
    r = client(s)
    for i in range(8):  # RAM full of cold blobs
        r.execute_command("TPUT", "cold", "c%d" % i, 0, os.urandom(8192), 0.2)
    assert tiers(r)["ram"][b"free"] == 0
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 20000)
    conns = [s.conn(timeout=10) for _ in range(6)]
    payload = {i: os.urandom(8192) for i in range(len(conns))}
    try:
        for i, c in enumerate(conns):
            c.send("TPUT", "hot", "h%d" % i, 0, payload[i], "0.9")
        for i, c in enumerate(conns):
            try:
                assert c.read_reply()[0] == R(":", 8192), i
            except socket.timeout:
                pytest.fail("hot writer %d never got a reply (waiting for room?) %s"
                            % (i, info_tiers(s)))
    finally:
        for c in conns:
            c.close()
    wait_idle(s)
    assert r.ping()
    for i in range(len(conns)):
        assert r.execute_command("TGET", "hot", "h%d" % i) == payload[i]
    for i in range(8):
        assert r.execute_command("TSIZE", "cold", "c%d" % i) == 8192
    hot = [tier_of(r, "hot", "h%d" % i) for i in range(len(conns))]
    cold = [tier_of(r, "cold", "c%d" % i) for i in range(8)]
    t = tiers(r)
    assert hot == [b"ram"] * 6, "hot blobs on %s, cold on %s, RAM used %d of %d" % (
        hot, cold, t["ram"][b"used"], t["ram"][b"capacity"])
    assert cold.count(b"ram") == 2, "demoted %d cold blobs for 6 hot ones" % cold.count(b"disk")


def test_a_writer_leaving_while_it_waits_for_room(server_factory):
    s = start(server_factory, ram="64kb", disk="8mb", ram_score=0.1)
    r = client(s)
    for i in range(8):
        r.execute_command("TPUT", "cold", "c%d" % i, 0, os.urandom(8192), 0.2)
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 100000)
    c = s.conn()
    c.send("TPUT", "hot", "late", 0, os.urandom(8192), "0.95")
    time.sleep(0.03)
    c.close()
    assert r.ping()
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    wait_idle(s)
    assert r.execute_command("TLEN", "cold") == 8
    v = r.execute_command("TSIZE", "hot", "late")
    assert v in (None, 8192)
    assert r.execute_command("TPUT", "hot", "again", 0, b"x" * 8192, 0.95) == 8192


# ------------------------------------------------------------------------------------------
# accounting


def test_info_tiers_and_tiers_agree_with_the_bytes_stored(server_factory):
    s = start(server_factory, ram="128kb")
    r = client(s)
    ram_sizes = [1, 100, 4096, 5000, 30000]
    disk_sizes = [1, 4096, 4097, 10000, 200000]
    for i, n in enumerate(ram_sizes):
        r.execute_command("TPUT", "t", "r%d" % i, 0, os.urandom(n))
    for i, n in enumerate(disk_sizes):
        r.execute_command("TPUT", "t", "d%d" % i, 0, os.urandom(n), 0)
    r.execute_command("TPUT", "t", "empty", 0, b"")
    t = tiers(r)
    it = info_tiers(s)
    assert t["ram"][b"used"] == sum(blocks(n, RAM_BLOCK) for n in ram_sizes)
    assert t["disk"][b"used"] == sum(blocks(n) for n in disk_sizes)
    assert t["ram"][b"blobs"] == len(ram_sizes)
    assert t["disk"][b"blobs"] == len(disk_sizes)
    for name in ("ram", "disk"):
        assert t[name][b"free"] == t[name][b"capacity"] - t[name][b"used"]
        for f in ("capacity", "used", "free", "blobs", "reads", "writes", "bytes_read",
                  "bytes_written"):
            assert it[name][f] == t[name][f.encode()], (name, f, it[name], t[name])
    assert t["ram"][b"kind"] == b"ram" and t["disk"][b"kind"] == b"file"
    assert t["ram"][b"capacity"] == 131072
    # the same after moves and deletes
    r.execute_command("REORG", "t", "r4", 0)
    r.execute_command("REORG", "t", "d3", 1)
    r.execute_command("TDEL", "t", "r0", "d0")
    r.execute_command("TTRUNCATE", "t", "d4", 5000)
    ram = [100, 4096, 5000, 10000]
    disk = [4096, 4097, 5000, 30000]
    t = tiers(r)
    assert t["ram"][b"used"] == sum(blocks(n, RAM_BLOCK) for n in ram), t["ram"]
    assert t["disk"][b"used"] == sum(blocks(n) for n in disk), t["disk"]
    assert t["ram"][b"blobs"] == 4 and t["disk"][b"blobs"] == 4
    assert r.delete("t") == 1
    wait_idle(s)  # extents a read in flight (the search index's) still holds are freed after it
    t = tiers(r)
    assert t["ram"][b"used"] == 0 and t["disk"][b"used"] == 0
    assert t["ram"][b"blobs"] == 0 and t["disk"][b"blobs"] == 0
    # RESP3: TIERS is an array of maps
    with s.conn() as c:
        c.call("HELLO", "3")
        rep = c.call("TIERS")
        assert rep.kind == "*" and len(rep.val) == 2 and all(m.kind == "%" for m in rep.val), rep


# ------------------------------------------------------------------------------------------
# TLIST's ordered form


def test_tlist_from_count_lists_names_in_byte_order_from_a_name_on(server_factory):
    s = start(server_factory, extra=["--search-enabled", "no"])  # the names are kept all the same
    r = client(s)
    rng = random.Random(12)
    names = {b"a", b"aa", b"a\x00", b"b", b"\xff", b"", b"user1", b"user10", b"user9"}
    names |= {bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6))) for _ in range(300)}
    for i, n in enumerate(sorted(names, key=lambda _: rng.random())):
        # some on the file tier (score 0), the rest in RAM
        r.execute_command("TPUT", "t", n, 0, b"x" * 10, 0 if i % 3 == 0 else 1)
    wait_idle(s)
    model = sorted(names)
    tl = lambda *a: r.execute_command("TLIST", "t", *a)
    assert tl("FROM", "", "COUNT", len(model) + 5) == model
    assert tl("COUNT", 3) == model[:3]
    assert tl("FROM", "a") == [n for n in model if n >= b"a"]
    for _ in range(100):
        start_at = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 4)))
        count = rng.randrange(0, 20)
        assert tl("FROM", start_at, "COUNT", count) == \
            [n for n in model if n >= start_at][:count], (start_at, count)
    assert tl("FROM", "a", "COUNT", 0) == []
    assert tl("FROM", b"\xff\xff") == []
    # paging: the name after x is x + "\0", so pages of 7 list every name once
    seen, at = [], b""
    while True:
        page = tl("FROM", at, "COUNT", 7)
        seen += page
        if len(page) < 7:
            break
        at = page[-1] + b"\x00"
    assert seen == model
    # deletes and re-creation, a rename of the tag: the order follows
    r.execute_command("TDEL", "t", "a", "b")
    model.remove(b"a")
    model.remove(b"b")
    assert tl("FROM", "a", "COUNT", 2) == [n for n in model if n >= b"a"][:2]
    r.execute_command("TPUT", "t", "b", 0, "y")
    model = sorted(model + [b"b"])
    assert r.rename("t", "t2")
    assert r.execute_command("TLIST", "t2", "FROM", "") == model
    assert r.execute_command("TLIST", "t", "FROM", "") == []
    # plain TLIST is every name, in no particular order
    assert sorted(r.execute_command("TLIST", "t2")) == model
    # inside MULTI
    p = r.pipeline(transaction=True)
    p.execute_command("TLIST", "t2", "FROM", "user", "COUNT", 2)
    p.execute_command("TLIST", "t2", "COUNT", 1)
    assert p.execute() == [[n for n in model if n >= b"user"][:2], model[:1]]


def test_tlist_from_count_rejects_bad_arguments(server_factory):
    s = start(server_factory)
    r = client(s)
    r.execute_command("TPUT", "t", "a", 0, "x")
    r.set("str", "v")
    errors = [
        (("t", "COUNT", -1), "value is out of range, must be positive"),
        (("t", "COUNT", "x"), "value is not an integer or out of range"),
        (("t", "COUNT", "9223372036854775808"), "value is not an integer or out of range"),
        (("t", "COUNT"), "syntax error"),
        (("t", "FROM"), "syntax error"),
        (("t", "FROM", "a", "COUNT"), "syntax error"),
        (("t", "LIMIT", 3), "syntax error"),
        (("str", "FROM", "a"), "WRONGTYPE"),
        (("str",), "WRONGTYPE"),
    ]
    for args, msg in errors:
        with pytest.raises(Exception) as e:
            r.execute_command("TLIST", *args)
        assert msg in str(e.value), (args, e.value)
    # a bad argument changes nothing and a missing tag is empty, not an error
    assert r.execute_command("TLIST", "t", "FROM", "") == [b"a"]
    assert r.execute_command("TLIST", "nope", "FROM", "a", "COUNT", 5) == []
    # the largest COUNT is only a bound: nothing is sized by it
    assert r.execute_command("TLIST", "t", "COUNT", "9223372036854775807") == [b"a"]
    with s.conn() as c:
        docs = repr(c.py("COMMAND", "DOCS", "tlist"))
    assert "b'FROM'" in docs and "b'COUNT'" in docs, docs
