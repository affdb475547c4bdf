"""The append-only file against the real binary: what survives a restart (every type, blobs on
file tiers with their times and scores, TTLs as absolute times, commands that are logged as
others), rewrites in the background under writes, a torn tail, corruption in the middle, and
SIGKILL at random moments under a write load for appendfsync always and everysec.

Servers run with --appendonly yes on their own temp dir and are restarted on that same dir."""
import os
import random
import subprocess
import threading
import time

import pytest
import redis

from conftest import CTE_KIND, R, START_TIMEOUT, start_cte

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server persistence")

AOF = ["--appendonly", "yes", "--enable-debug-command", "yes"]


def aof_path(srv):
    return os.path.join(srv.tmpdir, "appendonly.aof")


def wait_for(pred, timeout=10.0, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


def rewrite_done(r):
    info = r.info("persistence")
    return info["aof_rewrite_in_progress"] == 0 and info["aof_rewrite_scheduled"] == 0


@pytest.fixture
def srv():
    s = start_cte(AOF + ["--appendfsync", "always"])
    yield s
    if s.alive():
        s.stop()
    s.cleanup()


def fill_every_type(r):
    r.set("s", "v")
    r.set("n", 10)
    r.incrbyfloat("f", 1.25)
    r.hset("h", mapping={"a": "1", "b": "2"})
    r.hincrbyfloat("h", "c", 0.5)
    r.rpush("l", "x", "y", "z")
    r.sadd("set", *["m%d" % i for i in range(20)])
    r.zadd("z", {"a": 1.5, "b": -2, "c": 3})
    r.execute_command("TPUT", "t", "ram", 0, b"in ram")
    r.execute_command("TPUT", "t", "disk", 0, b"\x00\x01 on the file tier " * 100, 0)
    r.execute_command("TPUT", "t", "disk", 5000, b"tail")
    r.execute_command("TTRUNCATE", "t", "cut", 3)
    r.set("ttl", "x", ex=1000)
    r.expire("h", 2000)


def snapshot(r):
    """Every key's type and contents, blob bytes and metadata included."""
    out = {}
    for k in sorted(r.keys("*")):
        t = r.type(k)
        if t == b"string":
            v = r.get(k)
        elif t == b"hash":
            v = r.hgetall(k)
        elif t == b"list":
            v = r.lrange(k, 0, -1)
        elif t == b"set":
            v = sorted(r.smembers(k))
        elif t == b"zset":
            v = r.zrange(k, 0, -1, withscores=True)
        else:
            v = {}
            for b in sorted(r.execute_command("TLIST", k)):
                info = r.execute_command("TINFO", k, b)
                meta = dict(zip(info[0::2], info[1::2]))
                meta.pop(b"reads", None)
                meta.pop(b"atime", None)  # a read changes it; TGET below reads
                v[b] = (r.execute_command("TGET", k, b), meta)
        out[k] = (t, v, r.pexpiretime(k))
    return out


def test_every_type_survives_a_restart(srv):
    r = srv.redis()
    fill_every_type(r)
    before = snapshot(r)
    srv.restart_same_dir()
    assert snapshot(srv.redis()) == before
    assert b"DB loaded from append only file" in srv.log_text().encode()


def test_commands_logged_as_others_replay_to_the_same_state(srv):
    r = srv.redis()
    r.sadd("pop", *range(50))
    popped = {r.spop("pop")} | set(r.spop("pop", 10)) | set(r.spop("pop", 3))
    r.sadd("all", 1, 2)
    r.spop("all", 5)  # takes the whole set: DEL
    r.rpush("q", "a", "b", "c")
    r.blpop(["nothing", "q"], timeout=1)
    r.brpoplpush("q", "dst", timeout=1)
    r.zadd("zz", {"x": 1, "y": 2})
    r.bzpopmax(["zz"], timeout=1)
    r.set("rel", "v", px=500000)
    r.setex("rel2", 300, "v")
    r.set("gone", "v")
    r.expire("gone", -1)  # deletes it
    r.set("p", "v", ex=100)
    r.persist("p")
    r.set("ge", "v")
    r.getex("ge", ex=200)
    before = snapshot(r)
    time.sleep(0.05)  # a replay at a later time must not move the absolute TTLs
    srv.restart_same_dir()
    r = srv.redis()
    assert snapshot(r) == before
    assert not popped & set(r.smembers("pop"))
    text = open(aof_path(srv), "rb").read()
    assert b"BLPOP" not in text.upper() and b"SPOP" not in text.upper()
    assert b"PEXPIREAT" in text


def test_blob_times_and_scores_survive_a_restart(srv):
    r = srv.redis()
    r.execute_command("TPUT", "t", "b", 0, b"x" * 10000, 0.0)
    time.sleep(0.02)
    r.execute_command("TPUT", "t", "b", 20000, b"y", 0.25)
    info = r.execute_command("TINFO", "t", "b")
    srv.restart_same_dir()
    again = srv.redis().execute_command("TINFO", "t", "b")
    assert again == info


TIME_MAX = (1 << 47) - 1  # TMETA's limit: blobs keep their times in 48 bits


def test_blob_times_at_0_and_the_limit_survive_dump_restore_rewrite_and_restart(srv):
    """Times at both ends of their range, beside counters at UINT32_MAX, come back exactly
    from RESTORE, from the rewritten file (TMETA records) and from a restart."""
    r = srv.redis()
    cases = [(0, 0, 0, 0, 0), (TIME_MAX, TIME_MAX, TIME_MAX, 2**32 - 1, 2**32 - 1),
             (TIME_MAX, 0, TIME_MAX, 1, 2), (0, TIME_MAX, 0, 2**32 - 1, 0)]
    for i, meta in enumerate(cases):
        r.execute_command("TPUT", "t", "b%d" % i, 0, b"x" * (100 + i), 0.0 if i % 2 else 1.0)
        assert r.execute_command("TMETA", "t", "b%d" % i, *meta) == b"OK"
    with pytest.raises(redis.ResponseError, match="out of range"):
        r.execute_command("TMETA", "t", "b0", TIME_MAX + 1, 0, 0, 0, 0)

    def infos(key):
        out = {}
        for i in range(len(cases)):
            v = r.execute_command("TINFO", key, "b%d" % i)
            out[i] = dict(zip(v[::2], v[1::2]))
        return out

    before = infos("t")
    for i, (ct, mt, at, rd, wr) in enumerate(cases):
        got = before[i]
        assert (got[b"ctime"], got[b"mtime"], got[b"atime"]) == (ct, mt, at), (i, got)
        assert (got[b"reads"], got[b"writes"]) == (rd, wr), (i, got)
    assert r.restore("t2", 0, r.dump("t")) == b"OK"
    assert infos("t2") == before
    assert r.execute_command("BGREWRITEAOF")
    wait_for(lambda: rewrite_done(r), what="the rewrite")
    srv.restart_same_dir()
    r = srv.redis()
    assert infos("t") == before
    assert infos("t2") == before


def test_transaction_is_logged_between_multi_and_exec(srv):
    r = srv.redis()
    p = r.pipeline(transaction=True)
    p.set("a", 1).incr("a").rpush("l", "x")
    p.execute()
    text = open(aof_path(srv), "rb").read().upper()
    assert text.index(b"MULTI") < text.index(b"RPUSH") < text.index(b"EXEC")
    srv.restart_same_dir()
    assert srv.redis().get("a") == b"2"


def test_bgrewriteaof_compacts_and_keeps_writes_made_during_it(srv):
    r = srv.redis()
    for i in range(300):
        r.set("k", i)
        r.execute_command("TPUT", "tag", "b%d" % (i % 7), 0, os.urandom(3000), 0)
    size_before = os.path.getsize(aof_path(srv))
    stop = threading.Event()
    written = []

    def writer():
        w = srv.redis()
        i = 0
        while not stop.is_set():
            w.set("during:%d" % i, i)
            w.execute_command("TPUT", "dtag", "b%d" % i, 0, b"d%d" % i, i % 2)
            written.append(i)
            i += 1

    th = threading.Thread(target=writer)
    th.start()
    time.sleep(0.1)
    assert r.bgrewriteaof() is True
    wait_for(lambda: rewrite_done(r), what="the rewrite")
    time.sleep(0.1)
    stop.set()
    th.join()
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    before = snapshot(r)
    srv.restart_same_dir()
    r = srv.redis()
    assert snapshot(r) == before
    assert written and r.get("during:%d" % written[-1]) == str(written[-1]).encode()
    assert os.path.getsize(aof_path(srv)) < size_before
    assert not [f for f in os.listdir(srv.tmpdir) if f.startswith("temp-rewriteaof")]


def test_automatic_rewrite_at_growth(srv):
    r = srv.redis()
    r.config_set("auto-aof-rewrite-min-size", 64 * 1024)
    r.config_set("auto-aof-rewrite-percentage", 100)
    for i in range(400):
        r.set("same", "x" * 500)
    wait_for(lambda: r.info("persistence")["aof_rewrites"] >= 1, what="an automatic rewrite")
    wait_for(lambda: rewrite_done(r), what="the rewrite")
    # 400 records of ~540 bytes were written; what is left is one SET plus the records that
    # came after the last rewrite
    assert os.path.getsize(aof_path(srv)) < 400 * 540 * 0.75
    srv.restart_same_dir()
    assert srv.redis().get("same") == b"x" * 500


def test_save_bgsave_lastsave(srv):
    r = srv.redis()
    r.set("a", 1)
    t0 = r.lastsave()
    assert r.save() is True
    assert r.lastsave() >= t0
    assert r.bgsave() is True
    wait_for(lambda: rewrite_done(r), what="BGSAVE")
    assert r.info("persistence")["rdb_changes_since_last_save"] == 0


def test_save_without_appendonly_is_loaded_at_start():
    s = start_cte(["--enable-debug-command", "yes"])
    try:
        r = s.redis()
        r.set("kept", "yes")
        r.execute_command("TPUT", "t", "b", 0, b"blob", 0)
        assert r.save() is True
        r.set("lost", "not saved")
        s.restart_same_dir()
        r = s.redis()
        assert r.get("kept") == b"yes" and r.get("lost") is None
        assert r.execute_command("TGET", "t", "b") == b"blob"
    finally:
        s.stop()


def test_config_set_appendonly_yes_writes_the_dataset():
    s = start_cte(["--enable-debug-command", "yes"])
    try:
        r = s.redis()
        r.set("before", 1)
        r.config_set("appendonly", "yes")
        r.set("after", 2)
        wait_for(lambda: r.info("persistence")["aof_enabled"] == 1 and rewrite_done(r)
                 and os.path.exists(aof_path(s)), what="the first AOF")
        r.set("later", 3)
        s.kill9()
        s.start(same_dir=True)
        # the restarted server has appendonly no (its command line) but loads the file
        r = s.redis()
        assert (r.get("before"), r.get("after"), r.get("later")) == (b"1", b"2", b"3")
    finally:
        s.stop()


def test_debug_reload_goes_through_the_file(srv):
    r = srv.redis()
    fill_every_type(r)
    before = snapshot(r)
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert snapshot(r) == before


def test_expired_keys_are_logged_as_del(srv):
    r = srv.redis()
    r.set("short", "v", px=50)
    wait_for(lambda: r.exists("short") == 0, what="expiry")
    text = open(aof_path(srv), "rb").read()
    assert b"$3\r\nDEL\r\n$5\r\nshort" in text


# ---- damaged files ----


def run_on_dir(srv, timeout=None):
    """Runs the binary once on srv's dir; returns (exit status or None if it started, log)."""
    log_before = srv.log_size()
    try:
        srv.start(same_dir=True, attempts=1)
    except Exception:
        return srv.proc.returncode, srv.log_text(log_before)
    return None, srv.log_text(log_before)


def test_torn_tail_is_cut_with_a_warning(srv):
    r = srv.redis()
    for i in range(50):
        r.set("k%d" % i, i)
    srv.kill9()
    good = os.path.getsize(aof_path(srv))
    with open(aof_path(srv), "ab") as f:
        f.write(b"*3\r\n$3\r\nSET\r\n$3\r\nk50\r\n$2\r\n5")  # a crash in the middle of a write
    status, log = run_on_dir(srv)
    assert status is None, log
    assert "truncated" in log and str(good) in log
    r = srv.redis()
    assert r.get("k49") == b"49" and r.get("k50") is None
    assert os.path.getsize(aof_path(srv)) == good
    r.set("after", 1)  # appends after the cut: the file stays readable
    srv.restart_same_dir()
    assert srv.redis().get("after") == b"1"


def test_torn_transaction_is_dropped_whole(srv):
    r = srv.redis()
    r.set("a", 1)
    srv.kill9()
    with open(aof_path(srv), "ab") as f:
        f.write(b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n2\r\n")
    status, log = run_on_dir(srv)
    assert status is None, log
    assert srv.redis().get("a") == b"1"


def test_truncated_file_refused_without_aof_load_truncated(srv):
    srv.redis().set("a", 1)
    srv.kill9()
    with open(aof_path(srv), "ab") as f:
        f.write(b"*2\r\n$3\r\nDEL")
    srv.extra_args = srv.extra_args + ["--aof-load-truncated", "no"]
    status, log = run_on_dir(srv)
    assert status not in (None, 0), log
    assert "aof-load-truncated" in log


@pytest.mark.parametrize("garbage", [b"*3\r\n$3\r\nSET\r\n$x\r\n", b"NOSUCHCMD a b\r\n"])
def test_corruption_in_the_middle_stops_the_start_naming_the_offset(srv, garbage):
    r = srv.redis()
    r.set("first", 1)
    srv.kill9()
    offset = os.path.getsize(aof_path(srv))
    with open(aof_path(srv), "ab") as f:
        f.write(garbage)
        f.write(b"*3\r\n$3\r\nSET\r\n$6\r\nsecond\r\n$1\r\n2\r\n")
    size = os.path.getsize(aof_path(srv))
    status, log = run_on_dir(srv)
    assert status not in (None, 0), log
    assert "offset %d" % offset in log, log
    assert os.path.getsize(aof_path(srv)) == size  # nothing was cut


# ---- crashes under load ----


class Load:
    """Writer threads, each with its own connection: unique string keys and blobs (half on
    the file tier), recording each write once acknowledged, with the time of the reply."""

    def __init__(self, srv, prefix, threads=3):
        self.srv = srv
        self.prefix = prefix
        self.acked = []  # (kind, key, blob, value, ack time)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.run, args=(t,)) for t in range(threads)]

    def run(self, t):
        try:
            r = self.srv.redis(socket_timeout=5)
            i = 0
            while not self.stop.is_set():
                v = b"%d:%d:" % (t, i) + os.urandom(16).hex().encode()
                key, tag = "%s:k:%d:%d" % (self.prefix, t, i), "%s:tag%d" % (self.prefix, t)
                if i % 2:
                    r.set(key, v)
                    item = ("s", key, None, v, time.time())
                else:
                    r.execute_command("TPUT", tag, "b%d" % i, 0, v * 50, (i // 2) % 2)
                    item = ("b", tag, "b%d" % i, v * 50, time.time())
                with self.lock:
                    self.acked.append(item)
                i += 1
        except Exception:
            return  # the server was killed

    def start(self):
        for th in self.threads:
            th.start()

    def join(self):
        self.stop.set()
        for th in self.threads:
            th.join()


def read_back(r, acked, batch=500):
    """What the server holds now for each acknowledged write, read in pipelined batches."""
    got = []
    for i in range(0, len(acked), batch):
        p = r.pipeline(transaction=False)
        for kind, key, blob, _value, _t in acked[i:i + batch]:
            if kind == "s":
                p.get(key)
            else:
                p.execute_command("TGET", key, blob)
        got += p.execute()
    return got


def check_acked(r, acked, kill_time, loss_window):
    """Every write acknowledged before kill_time - loss_window is there; nothing is torn.
    Returns the number of acknowledged writes missing (inside the window)."""
    missing = 0
    for (kind, key, blob, value, t), got in zip(acked, read_back(r, acked)):
        if got is None:
            assert t > kill_time - loss_window, "write acknowledged %.2f s before the kill " \
                "is lost: %s %s" % (kill_time - t, key, blob)
            missing += 1
        else:
            assert got == value, (key, blob)
    return missing


@pytest.mark.parametrize("policy,loss_window", [("always", 0.0), ("everysec", 2.0)])
def test_sigkill_under_load_keeps_acknowledged_writes(policy, loss_window):
    rng = random.Random(20261130)
    s = start_cte(AOF + ["--appendfsync", policy])  # score 0 blobs: the default file tier
    try:
        acked = []
        for rnd in range(4 if loss_window == 0 else 3):
            load = Load(s, "r%d" % rnd)
            load.start()
            if rnd == 2:
                time.sleep(0.2)
                s.redis().bgrewriteaof()  # a kill may land in the middle of it
            time.sleep(rng.uniform(0.3, 1.5) if loss_window == 0 else rng.uniform(2.5, 3.5))
            kill_time = time.time()
            s.kill9()
            load.join()
            acked += load.acked
            assert load.acked, "no write was acknowledged"
            s.start(same_dir=True)
            missing = check_acked(s.redis(), acked, kill_time, loss_window)
            if loss_window == 0:
                assert missing == 0
            # what was lost in the window is gone for good: forget it
            r = s.redis()
            acked = [a for a, got in zip(acked, read_back(r, acked)) if got is not None]
    finally:
        s.stop()
