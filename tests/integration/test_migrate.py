"""MIGRATE between cte-servers and to a redis-server (server/cmd/migrate.c, docs/migrate.md):
every type, COPY/REPLACE/BUSYKEY/NOKEY/KEYS/AUTH/AUTH2, Redis's error replies, the timeout
against a target that never answers, a 256 MiB tag streamed without blocking the loop or
holding the tag in memory, writes to a key in flight waiting, and a source killed mid-transfer.
"""
import hashlib
import os
import socket
import threading
import time

import pytest

from cluster_util import keyslot
from conftest import SANITIZE, free_port, proc_kb

MB = 1 << 20


def client(s, **kw):
    kw.setdefault("socket_timeout", 60)
    return s.redis(decode_responses=False, **kw)


def tier_args(path="disk", ram="512mb", disk="1gb"):
    return ["--tier", "ram:ram:%s" % ram, "--tier", "disk:file:%s:%s" % (disk, path),
            "--max-blob-size", "1gb", "--proto-max-bulk-len", "64mb"]


@pytest.fixture(scope="module")
def pair():
    from conftest import start_cte
    src = start_cte(tier_args(), name="migrate-source")
    dst = start_cte(tier_args() + ["--requirepass", "sekret"], name="migrate-target")
    yield src, dst
    for s in (src, dst):
        s.stop()


@pytest.fixture
def two(pair):
    src, dst = pair
    r, t = client(src), client(dst)
    r.flushall()
    t.flushall()
    return src, dst, r, t


def migrate(r, dst, *args, keys=None, key="k", db=0, timeout=5000, auth=True):
    argv = ["MIGRATE", dst.host, dst.port, key if keys is None else "", db, timeout]
    argv += list(args)
    if auth and dst.password:
        argv += ["AUTH", dst.password]
    if keys is not None:
        argv += ["KEYS"] + list(keys)
    return r.execute_command(*argv)


def fill_standard(r):
    r.set("str", "hello")
    r.set("int", 12345)
    r.hset("hash", mapping={"a": "1", "b": "2"})
    r.rpush("list", *[b"x%d" % i for i in range(300)])
    r.sadd("set", *range(50))
    r.sadd("sset", "a", "b")
    r.zadd("zset", {"m%d" % i: i / 3 for i in range(200)})
    r.xadd("stream", {"f": "v"}, id="1-1")
    r.xadd("stream", {"g": "w"}, id="2-1")
    r.xgroup_create("stream", "grp", id="0")
    r.xreadgroup("grp", "alice", {"stream": ">"}, count=1)
    r.pfadd("hll", *["e%d" % i for i in range(1000)])
    r.pexpire("hash", 100000)
    return ["str", "int", "hash", "list", "set", "sset", "zset", "stream", "hll"]


def test_every_standard_type_moves_with_its_payload_and_ttl(two):
    src, dst, r, t = two
    names = fill_standard(r)
    dumps = {k: r.dump(k) for k in names}
    assert migrate(r, dst, keys=names + ["missing"]) == b"OK"
    for k in names:
        assert r.exists(k) == 0, k
        if k != "sset":  # a set of strings is a hash table: its order may change
            assert t.dump(k) == dumps[k], k
    assert 90000 < t.pttl("hash") <= 100000
    assert t.pttl("str") == -1
    assert t.pfcount("hll") == 1000 or abs(t.pfcount("hll") - 1000) < 30
    assert t.xinfo_groups("stream")[0]["pending"] == 1


def blob_state(r, key, blob):
    info = r.execute_command("TINFO", key, blob)
    d = dict(zip(info[::2], info[1::2]))
    return r.execute_command("TGET", key, blob), d


def test_tags_small_and_streamed_on_ram_and_file_tiers(two):
    src, dst, r, t = two
    big = os.urandom(3 * MB + 12345)
    for key in ("small", "large"):
        r.execute_command("TPUT", key, "hot", 0, b"h" * 1000)  # score 1: RAM
        r.execute_command("TPUT", key, "cold", 0, b"c" * 2000, 0.1)  # file tier
        r.execute_command("TPUT", key, "empty", 0, b"")
    r.execute_command("TPUT", "large", "big-ram", 0, big)
    r.execute_command("TPUT", "large", "big-file", 0, big[::-1], 0.05)
    r.execute_command("TMETA", "large", "hot", 1000, 2000, 3000, 7, 9)
    r.pexpire("large", 200000)
    before = {(k, b): blob_state(r, k, b) for k in ("small", "large")
              for b in r.execute_command("TLIST", k)}
    assert before[("large", b"big-file")][1][b"tier"] == b"disk"
    assert before[("large", b"hot")][1][b"tier"] == b"ram"
    assert migrate(r, dst, keys=["small", "large"]) == b"OK"
    assert r.exists("small", "large") == 0
    assert sorted(t.keys("*")) == [b"large", b"small"]  # no temporary key left
    for (k, b), (data, info) in before.items():
        got, ginfo = blob_state(t, k, b)
        assert got == data, (k, b)
        for f in (b"size", b"score", b"tier", b"ctime", b"mtime", b"writes"):
            assert ginfo[f] == info[f], (k, b, f)
    assert 150000 < t.pttl("large") <= 200000
    assert t.execute_command("TINFO", "large", "hot")[-4:] == [b"reads", 9, b"writes", 9]


def test_copy_replace_busykey_nokey(two):
    src, dst, r, t = two
    r.set("k", "v1")
    assert migrate(r, dst, "COPY") == b"OK"
    assert r.get("k") == b"v1" and t.get("k") == b"v1"
    r.set("k", "v2")
    with pytest.raises(Exception) as e:
        migrate(r, dst)
    assert str(e.value) == ("Target instance replied with error: BUSYKEY Target key name "
                            "already exists.")
    assert r.get("k") == b"v2" and t.get("k") == b"v1"
    assert migrate(r, dst, "REPLACE") == b"OK"
    assert r.exists("k") == 0 and t.get("k") == b"v2"
    assert migrate(r, dst, key="nothere") == b"NOKEY"
    assert migrate(r, dst, keys=["a", "b"]) == b"NOKEY"
    # a streamed tag refused by BUSYKEY leaves its source and no temporary key on the target
    r.execute_command("TPUT", "tg", "b", 0, b"z" * (2 * MB))
    t.set("tg", "occupied")
    with pytest.raises(Exception) as e:
        migrate(r, dst, key="tg")
    assert "BUSYKEY" in str(e.value)
    assert r.execute_command("TSIZE", "tg", "b") == 2 * MB
    deadline = time.time() + 5
    while len(t.keys("*")) != 2 and time.time() < deadline:
        time.sleep(0.02)
    assert sorted(t.keys("*")) == [b"k", b"tg"]
    assert migrate(r, dst, "REPLACE", key="tg") == b"OK"
    assert t.execute_command("TSIZE", "tg", "b") == 2 * MB and r.exists("tg") == 0


def test_keys_form_with_some_missing_and_expired(two):
    src, dst, r, t = two
    r.mset({"a": 1, "c": 3})
    r.set("gone", 1, px=1)
    time.sleep(0.01)
    assert migrate(r, dst, keys=["a", "b", "c", "gone"]) == b"OK"
    assert t.mget("a", "b", "c", "gone") == [b"1", None, b"3", None]
    assert r.dbsize() == 0


def test_only_acknowledged_keys_are_deleted(two):
    src, dst, r, t = two
    r.mset({"a": 1, "b": 2, "c": 3, "d": 4})
    t.mset({"b": "_", "d": "_"})  # busy on the target, no REPLACE
    with pytest.raises(Exception) as e:
        migrate(r, dst, keys=["a", "b", "c", "d"])
    assert "BUSYKEY" in str(e.value)
    assert sorted(r.keys("*")) == [b"b", b"d"]
    assert t.mget("a", "b", "c", "d") == [b"1", b"_", b"3", b"_"]


def test_auth_and_auth2(two):
    src, dst, r, t = two
    # a fresh connection each time (a cached one stays authenticated, as Redis's)
    other = dst.port
    r.set("k", "v")
    with pytest.raises(Exception) as e:
        r.execute_command("MIGRATE", "localhost", other, "k", 0, 5000)
    assert str(e.value).startswith("Target instance replied with error: NOAUTH")
    assert r.get("k") == b"v"
    with pytest.raises(Exception) as e:
        r.execute_command("MIGRATE", "localhost", other, "k", 0, 5000, "AUTH", "wrong")
    assert "WRONGPASS" in str(e.value)
    assert r.execute_command("MIGRATE", "127.0.0.1", other, "k", 0, 5000, "AUTH2", "default",
                             "sekret") == b"OK"
    assert t.get("k") == b"v" and r.exists("k") == 0


def test_selects_the_destination_db(two):
    src, dst, r, t = two
    r.set("k", "v")
    assert migrate(r, dst, db=3) == b"OK"
    assert t.get("k") is None
    t3 = client(dst, db=3)
    assert t3.get("k") == b"v"
    r.set("k", "w")
    with pytest.raises(Exception) as e:
        migrate(r, dst, db=99)
    assert "DB index is out of range" in str(e.value)
    assert r.get("k") == b"w"


def test_bad_arguments_change_nothing(two):
    src, dst, r, t = two
    r.set("k", "v")
    cached = r.info("stats")["migrate_cached_sockets"]
    bad = [
        (["MIGRATE", dst.host, dst.port, "k", 0, 1000, "FOO"], "syntax error"),
        (["MIGRATE", dst.host, dst.port, "k", 0, 1000, "AUTH"], "syntax error"),
        (["MIGRATE", dst.host, dst.port, "k", 0, 1000, "AUTH2", "u"], "syntax error"),
        (["MIGRATE", dst.host, dst.port, "k", 0, 1000, "KEYS", "k"],
         "When using MIGRATE KEYS option, the key argument must be set to the empty string"),
        (["MIGRATE", dst.host, dst.port, "k", 0, "soon"], "value is not an integer"),
        (["MIGRATE", dst.host, dst.port, "k", "db", 1000], "value is not an integer"),
        (["MIGRATE", dst.host, dst.port, "k", 0], "wrong number of arguments"),
        (["MIGRATE", dst.host, "notaport", "k", 0, 1000],
         "IOERR error or timeout connecting to the client"),
    ]
    for argv, msg in bad:
        with pytest.raises(Exception) as e:
            r.execute_command(*argv)
        assert msg in str(e.value), (argv, str(e.value))
    assert r.get("k") == b"v" and r.dbsize() == 1 and t.dbsize() == 0
    assert r.info("stats")["migrate_cached_sockets"] == cached


def test_command_getkeys(two):
    src, dst, r, t = two
    gk = lambda *a: r.command_getkeys("MIGRATE", *a)
    assert gk("h", 1, "k", 0, 10) == ["k"]
    assert gk("h", 1, "", 0, 10, "COPY", "AUTH", "keys", "AUTH2", "u", "p", "KEYS", "a",
              "b") == ["a", "b"]
    assert gk("h", 1, "k", 0, 10, "REPLACE") == ["k"]
    with pytest.raises(Exception) as e:
        gk("h", 1, "k", 0, 10, "KEYS", "a")
    assert "Invalid arguments specified for command" in str(e.value)


def test_connection_cache_and_info(two):
    src, dst, r, t = two
    r.mset({"a": 1, "b": 2})
    assert migrate(r, dst, key="a") == b"OK"
    assert r.info("stats")["migrate_cached_sockets"] >= 1
    # the target drops the cached connection: the next MIGRATE reconnects once, as Redis's
    t.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    time.sleep(0.05)
    assert migrate(r, dst, key="b") == b"OK"
    assert t.mget("a", "b") == [b"1", b"2"]


def silent_server():
    """A socket that accepts connections and never answers."""
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    conns = []
    stop = threading.Event()

    def run():
        ls.settimeout(0.05)
        while not stop.is_set():
            try:
                c, _ = ls.accept()
                conns.append(c)
            except OSError:
                pass

    th = threading.Thread(target=run, daemon=True)
    th.start()

    def close():
        stop.set()
        th.join()
        for c in conns:
            c.close()
        ls.close()

    return ls.getsockname()[1], close


def test_timeout_against_a_target_that_never_answers(two):
    src, dst, r, t = two
    r.set("k", "v")
    r.execute_command("TPUT", "tg", "b", 0, b"q" * (2 * MB))
    port, close = silent_server()
    try:
        for key in ("k", "tg"):
            pinger = client(src)
            t0 = time.time()
            result = {}

            def run():
                try:
                    client(src).execute_command("MIGRATE", "127.0.0.1", port, key, 0, 300)
                except Exception as e:  # noqa: BLE001 - the reply is the error
                    result["err"] = str(e)

            th = threading.Thread(target=run)
            th.start()
            time.sleep(0.05)
            assert pinger.ping()  # the loop is free while MIGRATE waits
            if key == "k":
                assert pinger.get("k") == b"v"  # reads are served
                assert pinger.set("k", "w")  # a write waits for the MIGRATE to end (300 ms)
                assert time.time() - t0 >= 0.25, "the write ran while the key was in flight"
            th.join()
            assert time.time() - t0 < 2.0
            assert result["err"] == "IOERR error or timeout reading to target instance", result
        with pytest.raises(Exception) as e:
            r.execute_command("MIGRATE", "127.0.0.1", free_port(), "k", 0, 300)
        assert str(e.value) == "IOERR error or timeout connecting to the client"
    finally:
        close()
    assert r.get("k") == b"w" and r.execute_command("TSIZE", "tg", "b") == 2 * MB


def resp_commands(buf):
    """The complete RESP commands at the start of buf (arrays of bulk strings) and the bytes
    they took."""
    cmds, pos = [], 0
    while True:
        try:
            end = buf.index(b"\r\n", pos)
            n, at, args = int(buf[pos + 1:end]), end + 2, []
            for _ in range(n):
                end = buf.index(b"\r\n", at)
                ln = int(buf[at + 1:end])
                if len(buf) < end + 2 + ln + 2:
                    return cmds, pos
                args.append(buf[end + 2:end + 2 + ln])
                at = end + 2 + ln + 2
        except ValueError:
            return cmds, pos
        cmds.append(args)
        pos = at


def test_a_connection_closed_before_any_reply_is_tried_once_more(two):
    """As Redis: a socket error (not a timeout) before the first reply closes the connection
    and sends everything again on a new one."""
    src, dst, r, t = two
    r.set("k", "v")
    payload = r.dump("k")
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)
    ls.settimeout(5)
    seen = []

    def serve():
        first, _ = ls.accept()
        first.recv(65536)
        first.close()  # drops the first try without a word
        c, _ = ls.accept()
        buf = b""
        while True:
            cmds, used = resp_commands(buf)
            if cmds:
                seen.extend(cmds)
                buf = buf[used:]
                c.sendall(b"+OK\r\n" * len(cmds))
                if any(cmd[0].upper() == b"RESTORE" for cmd in cmds):
                    break
            data = c.recv(65536)
            if not data:
                break
            buf += data
        time.sleep(0.1)
        c.close()

    th = threading.Thread(target=serve)
    th.start()
    try:
        assert r.execute_command("MIGRATE", "127.0.0.1", ls.getsockname()[1], "k", 0,
                                 5000) == b"OK"
    finally:
        th.join()
        ls.close()
    assert [c[0].upper() for c in seen] == [b"SELECT", b"RESTORE"]
    assert seen[1][1:] == [b"k", b"0", payload]
    assert r.exists("k") == 0


def test_standard_types_to_redis_server(two, server_factory):
    src, dst, r, t = two
    red = server_factory([], kind="redis")
    rr = client(red)
    names = fill_standard(r)
    dumps = {k: r.dump(k) for k in names}
    content_of = {k: content(r, k) for k in names}
    assert r.execute_command("MIGRATE", red.host, red.port, "", 0, 5000, "KEYS", *names) == b"OK"
    for k in names:
        assert content(rr, k) == content_of[k], k
    assert rr.lrange("list", 0, 2) == [b"x0", b"x1", b"x2"]
    assert rr.pfcount("hll") > 900
    # and back to a cte-server (PFCOUNT cached the cardinality in the HLL's header)
    content_of = {k: content(rr, k) for k in names}
    dumps = {k: rr.dump(k) for k in names}
    assert rr.execute_command("MIGRATE", dst.host, dst.port, "", 0, 5000, "AUTH", "sekret",
                              "KEYS", *names) == b"OK"
    for k in names:
        assert content(t, k) == content_of[k], k
        if k != "sset":  # Redis 7.0 keeps small sets of strings as hash tables
            assert t.dump(k) == dumps[k], k


def content(r, k):
    """A key's value, in a form that does not depend on the encoding."""
    kind = r.type(k)
    if kind == b"string":
        return r.get(k)
    if kind == b"hash":
        return sorted(r.hgetall(k).items())
    if kind == b"list":
        return r.lrange(k, 0, -1)
    if kind == b"set":
        return sorted(r.smembers(k))
    if kind == b"zset":
        return r.zrange(k, 0, -1, withscores=True)
    if kind == b"stream":
        return (r.xrange(k), r.xinfo_groups(k)[0]["pending"])
    raise AssertionError(kind)


def pattern(n, seed):
    unit = hashlib.sha256(b"%d" % seed).digest()
    return (unit * (n // len(unit) + 1))[:n]


def put_sparse(r, key, blob, size, piece=16 * MB):
    """A blob of size bytes: pieces at the start, the middle and the end, zeros between (the
    tier stores every byte). Returns {offset: bytes} of what to check."""
    marks = {}
    for off in sorted({0, size // 2, size - piece}):
        chunk = (b"%016d" % off) + pattern(piece - 16, off)
        assert r.execute_command("TPUT", key, blob, off, chunk, 0.1) >= off + piece
        marks[off] = chunk
    marks[size // 4] = bytes(4096)
    return marks


def check_marks(r, key, blob, size, marks):
    assert r.execute_command("TSIZE", key, blob) == size
    for off, data in marks.items():
        assert r.execute_command("TGET", key, blob, off, len(data)) == data, off


def test_256mib_tag_streams_without_blocking_or_holding_it(server_factory):
    size = 256 * MB
    # ASan's quarantine holds freed memory (256 MiB by default): keep it small here so that
    # the source's RSS shows what the transfer itself holds
    env = None
    if SANITIZE:
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=8"
    src = server_factory(tier_args(ram="64mb"), env=env, name="big-source")
    dst = server_factory(tier_args(ram="64mb"), name="big-target")
    r, t = client(src), client(dst)
    marks = put_sparse(r, "t", "big", size)
    r.execute_command("TPUT", "t", "small", 0, b"s" * 100)
    base_rss = proc_kb(src.pid, "VmRSS")
    peak = [base_rss]
    lat = []
    done = threading.Event()
    result = {}

    def run():
        t0 = time.time()
        result["reply"] = client(src).execute_command("MIGRATE", dst.host, dst.port, "t", 0,
                                                      10000)
        result["secs"] = time.time() - t0
        done.set()

    def writer():
        # a write to the key in flight waits for the transfer to end
        w = client(src)
        time.sleep(0.05)
        result["write_issued_in_flight"] = not done.is_set()
        w.execute_command("TPUT", "t", "late", 0, b"after")

    th, wt = threading.Thread(target=run), threading.Thread(target=writer)
    th.start()
    wt.start()
    p = client(src)
    reads_served = False
    while not done.is_set():
        t0 = time.time()
        assert p.ping()
        lat.append(time.time() - t0)
        if not reads_served and not done.is_set():
            reads_served = p.execute_command("TSIZE", "t", "big") == size
        peak[0] = max(peak[0], proc_kb(src.pid, "VmRSS"))
        time.sleep(0.005)
    th.join()
    wt.join()
    assert result["reply"] == b"OK"
    assert result["write_issued_in_flight"]
    assert reads_served
    lat.sort()
    print("MIGRATE of %d MiB: %.2f s, %d PINGs, median %.1f ms, max %.1f ms, source RSS +%d "
          "KiB" % (size // MB, result["secs"], len(lat), lat[len(lat) // 2] * 1e3, lat[-1] * 1e3,
                   peak[0] - base_rss))
    assert len(lat) >= 5, result
    assert lat[-1] < 0.5 and lat[len(lat) // 2] < 0.05, (lat[-5:], result)
    assert (peak[0] - base_rss) * 1024 < 64 * MB, (base_rss, peak[0])
    check_marks(t, "t", "big", size, marks)
    assert t.execute_command("TGET", "t", "small") == b"s" * 100
    assert t.keys("*") == [b"t"]
    # the source lost the tag it moved; the write that waited made a new one afterwards (had
    # it run during the transfer, its blob would have gone with the tag's deletion)
    assert r.execute_command("TLIST", "t") == [b"late"]


def test_source_killed_mid_transfer(server_factory):
    size = 192 * MB
    src = server_factory(tier_args(ram="64mb") + ["--appendonly", "yes"], name="kill-source")
    dst = server_factory(tier_args(ram="64mb"), name="kill-target")
    r, t = client(src), client(dst)
    marks = put_sparse(r, "t", "big", size)

    def run():
        try:
            client(src).execute_command("MIGRATE", dst.host, dst.port, "t", 0, 10000)
        except Exception:  # noqa: BLE001 - the connection dies with the server
            pass

    th = threading.Thread(target=run, daemon=True)
    th.start()
    tmp = []
    deadline = time.time() + 20
    while not tmp and time.time() < deadline:
        tmp = t.keys("t.cte-migrate.*")
        time.sleep(0.002)
    assert tmp, "the transfer did not start"
    assert keyslot(tmp[0]) == keyslot(b"t")  # the temporary key lives in the key's slot
    src.kill9()
    th.join(10)
    assert t.exists("t") == 0  # no half tag under the key
    time.sleep(0.1)
    left = t.keys("t.cte-migrate.*")
    for k in left:
        assert 0 < t.pttl(k) <= 60000  # a leftover goes by itself
    src.start(same_dir=True)
    r = client(src)
    check_marks(r, "t", "big", size, marks)


def test_both_sides_replay_their_append_only_files(server_factory):
    src = server_factory(tier_args(ram="64mb") + ["--appendonly", "yes"], name="aof-source")
    dst = server_factory(tier_args(ram="64mb") + ["--appendonly", "yes"], name="aof-target")
    r, t = client(src), client(dst)
    data = os.urandom(3 * MB)
    r.execute_command("TPUT", "tg", "b", 0, data, 0.1)
    r.execute_command("TPUT", "tg", "c", 0, b"small")
    r.set("s", "v", ex=1000)
    assert r.execute_command("MIGRATE", dst.host, dst.port, "", 0, 5000, "KEYS", "tg",
                             "s") == b"OK"
    for s in (src, dst):
        s.kill9()
        s.start(same_dir=True)
    r, t = client(src), client(dst)
    assert r.dbsize() == 0
    assert sorted(t.keys("*")) == [b"s", b"tg"]
    assert t.execute_command("TGET", "tg", "b") == data
    assert t.execute_command("TGET", "tg", "c") == b"small"
    assert 990 < t.ttl("s") <= 1000


def test_cluster_slot_migration_of_a_streamed_tag():
    """Cluster mode, as redis-cli --cluster reshard moves a slot: the target imports it, the
    source migrates it, MIGRATE ... KEYS goes as RESTORE-ASKING and ASKING + the tag's stream;
    a write to a key in flight answers TRYAGAIN (cluster clients retry it)."""
    from cluster_util import stop_nodes
    from test_cluster import key_in_slot, make_pair
    a, b, ida, idb = make_pair(tier_args(ram="64mb"))
    try:
        ra, rb = client(a), client(b)
        slot = 4321
        base = key_in_slot(slot, "m")
        tag, s = "{%s}tag" % base, "{%s}s" % base
        assert keyslot(tag.encode()) == keyslot(s.encode()) == slot
        ra.set(s, "v")
        size = 192 * MB
        marks = put_sparse(ra, tag, "big", size)
        assert rb.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ida) == b"OK"
        assert ra.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", idb) == b"OK"
        assert ra.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10) in ([tag.encode(),
                                                                              s.encode()],
                                                                             [s.encode(),
                                                                              tag.encode()])
        result = {}

        def run():
            result["reply"] = client(a).execute_command("MIGRATE", b.host, b.port, "", 0, 10000,
                                                        "KEYS", s, tag)

        th = threading.Thread(target=run)
        th.start()
        deadline = time.time() + 20
        while not rb.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot):  # the stream began
            assert time.time() < deadline
            time.sleep(0.002)
        with pytest.raises(Exception) as e:
            ra.execute_command("TPUT", tag, "late", 0, b"x")
        assert str(e.value).startswith("TRYAGAIN"), str(e.value)
        th.join()
        assert result["reply"] == b"OK"
        for n in (ra, rb):
            assert n.execute_command("CLUSTER", "SETSLOT", slot, "NODE", idb) == b"OK"
        assert ra.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 0
        assert rb.execute_command("CLUSTER", "COUNTKEYSINSLOT", slot) == 2  # no temporary key
        assert rb.get(s) == b"v"
        check_marks(rb, tag, "big", size, marks)
    finally:
        stop_nodes([a, b])
