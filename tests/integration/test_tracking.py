"""Client-side caching (CLIENT TRACKING, server/tracking.c) against the real binary.

RESP3 invalidation pushes read with the raw client (exact frames) over TCP and the Unix
socket; the RESP2 redirect to a client subscribed to __redis__:invalidate with redis-py's
pub/sub; BCAST prefixes, OPTIN/OPTOUT, NOLOOP, the key-table limit; and every way a key
changes: commands of each type, tag writes, MULTI/EXEC, a served blocking command, active and
lazy expiry, eviction, FLUSHDB/FLUSHALL (ASYNC too), DEBUG RELOAD. The errors and the
TRACKINGINFO replies are compared byte for byte with Debian's redis-server 7.0. (The
shared-memory transport is tested in test_shm.c, with libcte's push callback.)"""
import time

import pytest

from conftest import R, RespConn


def push_keys(r):
    """The keys of an invalidate push (None for a flush's null), asserting its shape."""
    assert r.kind == ">" and len(r.val) == 2, r
    assert r.val[0] == R("$", b"invalidate"), r
    if r.val[1].val is None:
        return None
    return sorted(k.val for k in r.val[1].val)


def resp3_tracker(server, transport="tcp", *options):
    """A raw RESP3 connection with tracking on (options after ON)."""
    c = server.conn(unix=(transport == "unix"))
    assert c.call("HELLO", "3").kind == "%"
    assert c.call("CLIENT", "TRACKING", "on", *options) == R("+", b"OK")
    return c


def nothing_pending(c):
    """Checks that c has no push waiting: the next thing it reads is PING's reply."""
    assert c.call("PING") == R("+", b"PONG")


@pytest.fixture
def w(cte_server):
    """A plain RESP2 connection that writes."""
    c = cte_server.conn()
    yield c
    c.close()


def test_resp3_push_when_a_read_key_changes(cte_server, transport, w):
    t = resp3_tracker(cte_server, transport)
    w.call("SET", "k", "1")
    assert t.call("GET", "k") == R("$", b"1")
    w.call("SET", "k", "2")
    assert t.read_reply()[1] == b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n"
    w.call("SET", "k", "3")  # forgotten until read again
    nothing_pending(t)
    t.close()


def test_resp2_redirect_over_pubsub_with_redis_py(cte_server, transport):
    r = cte_server.redis(unix=(transport == "unix"), decode_responses=True,
                         single_connection_client=True)
    listener = cte_server.redis(unix=(transport == "unix"), decode_responses=True,
                                client_name="inv-listener")
    p = listener.pubsub()
    p.subscribe("__redis__:invalidate")
    assert p.get_message(timeout=5)["type"] == "subscribe"
    listener_id = [c["id"] for c in r.client_list() if c["name"] == "inv-listener"][0]
    listener_id = int(listener_id)
    assert r.client_tracking_on(clientid=listener_id)
    assert r.client_getredir() == listener_id
    r.set("a", 1)
    r.get("a")
    r.incr("a")
    msg = p.get_message(timeout=5)
    assert msg["channel"] == "__redis__:invalidate" and msg["data"] == ["a"], msg
    r.get("a")
    r.flushdb()
    msg = p.get_message(timeout=5)
    assert msg["channel"] == "__redis__:invalidate" and msg["data"] is None, msg
    info = r.client_trackinginfo()
    info = dict(zip(info[::2], info[1::2]))
    assert info["flags"] == ["on"] and info["redirect"] == listener_id, info
    p.close()
    r.close()
    listener.close()


def test_a_gone_redirect_target_gives_tracking_redir_broken(cte_server, w):
    target = cte_server.conn()
    tid = target.call("CLIENT", "ID").val
    t = resp3_tracker(cte_server, "tcp", "REDIRECT", tid)
    t.call("GET", "k")
    target.call("QUIT")
    target.close()
    deadline = time.time() + 5
    while time.time() < deadline:  # the server frees it once the socket closed
        if b"id=%d " % tid not in w.call("CLIENT", "LIST").val:
            break
        time.sleep(0.01)
    w.call("SET", "k", "v")
    r = t.read_reply()[0]
    assert r == R(">", [R("$", b"tracking-redir-broken"), R(":", tid)]), r
    info = t.py("CLIENT", "TRACKINGINFO")
    assert info[b"flags"] == [b"on", b"broken_redirect"] and info[b"redirect"] == tid, info
    assert b" flags=tR " in t.call("CLIENT", "INFO").val
    t.close()


def test_bcast_prefixes_one_message_per_prefix_after_exec(cte_server, w):
    t = resp3_tracker(cte_server, "tcp", "BCAST", "PREFIX", "a:", "PREFIX", "b:")
    w.call("MULTI")
    for k in ("a:1", "a:2", "b:1", "c:1"):
        w.call("INCR", k)
    assert w.call("EXEC").kind == "*"
    got = sorted(push_keys(t.read_reply()[0]) for _ in range(2))
    assert got == [[b"a:1", b"a:2"], [b"b:1"]]
    nothing_pending(t)
    # prefixes add up while on; BCAST with no prefix tracks every key
    assert t.call("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "c:") == R("+", b"OK")
    w.call("SET", "c:9", "x")
    assert push_keys(t.read_reply()[0]) == [b"c:9"]
    assert t.py("CLIENT", "TRACKINGINFO")[b"prefixes"] == [b"a:", b"b:", b"c:"]
    info = w.call("INFO", "stats").val
    assert b"tracking_total_prefixes:3\r\n" in info
    t.close()


def test_noloop_leaves_out_own_writes(cte_server, w):
    t = resp3_tracker(cte_server, "tcp", "NOLOOP")
    t.call("MGET", "mine", "theirs")
    t.call("SET", "mine", "1")
    w.call("SET", "theirs", "1")
    assert push_keys(t.read_reply()[0]) == [b"theirs"]
    nothing_pending(t)
    t.close()
    b = resp3_tracker(cte_server, "tcp", "BCAST", "NOLOOP")
    b.call("SET", "mine", "2")
    w.call("SET", "theirs", "2")
    assert push_keys(b.read_reply()[0]) == [b"theirs"]
    nothing_pending(b)
    b.close()


def test_own_write_is_told_after_its_reply(cte_server):
    t = resp3_tracker(cte_server)
    t.call("HSET", "h", "f", "1")
    t.call("HGET", "h", "f")
    assert t.call("HDEL", "h", "f") == R(":", 1)
    assert push_keys(t.read_reply()[0]) == [b"h"]
    t.close()


def test_optin_and_optout(cte_server, w):
    t = resp3_tracker(cte_server, "tcp", "OPTIN")
    t.call("GET", "a")
    assert t.call("CLIENT", "CACHING", "yes") == R("+", b"OK")
    t.call("GET", "b")
    t.call("GET", "c")  # CACHING lasted one command
    w.call("MSET", "a", "1", "b", "1", "c", "1")
    assert push_keys(t.read_reply()[0]) == [b"b"]
    nothing_pending(t)
    t.call("CLIENT", "TRACKING", "off")
    t.call("CLIENT", "TRACKING", "on", "OPTOUT")
    t.call("CLIENT", "CACHING", "no")
    t.call("GET", "a")
    t.call("GET", "b")
    w.call("MSET", "a", "2", "b", "2")
    assert push_keys(t.read_reply()[0]) == [b"b"]
    nothing_pending(t)
    t.close()


# (setup commands, the read that remembers the key, the write that must invalidate it)
WRITES = [
    ([("SET", "k", "1")], ("GET", "k"), ("APPEND", "k", "x")),
    ([("SET", "k", "1")], ("STRLEN", "k"), ("SETRANGE", "k", "0", "y")),
    ([("SET", "k", "1")], ("GET", "k"), ("INCRBYFLOAT", "k", "1.5")),
    ([("SET", "k", "1")], ("GET", "k"), ("GETDEL", "k")),
    ([("SET", "k", "1")], ("GET", "k"), ("GETEX", "k", "EX", "100")),
    ([("SET", "k", "1")], ("GET", "k"), ("DEL", "k")),
    ([("SET", "k", "1")], ("GET", "k"), ("UNLINK", "k")),
    ([("SET", "k", "1")], ("EXISTS", "k"), ("EXPIRE", "k", "100")),
    ([("SET", "k", "1")], ("GET", "k"), ("RENAME", "k", "k2")),
    ([("SET", "k2", "1")], ("GET", "k"), ("RENAME", "k2", "k")),
    ([("SET", "k2", "1")], ("GET", "k"), ("COPY", "k2", "k")),
    ([("SET", "k", "1")], ("GET", "k"), ("MOVE", "k", "1")),
    ([("HSET", "k", "f", "1")], ("HGETALL", "k"), ("HINCRBY", "k", "f", "2")),
    ([("RPUSH", "k", "a", "b")], ("LRANGE", "k", "0", "-1"), ("LPOP", "k")),
    ([("RPUSH", "k", "a", "b")], ("LLEN", "k"), ("LTRIM", "k", "0", "0")),
    ([("SADD", "k", "a")], ("SMEMBERS", "k"), ("SREM", "k", "a")),
    ([("SADD", "s1", "a")], ("SMEMBERS", "k"), ("SUNIONSTORE", "k", "s1")),
    ([("ZADD", "k", "1", "a")], ("ZRANGE", "k", "0", "-1"), ("ZINCRBY", "k", "1", "a")),
    ([], ("GETBIT", "k", "7"), ("SETBIT", "k", "7", "1")),
    ([("RPUSH", "l", "3", "1")], ("LRANGE", "k", "0", "-1"), ("SORT", "l", "STORE", "k")),
    ([("TPUT", "k", "b", "0", "hello")], ("TGET", "k", "b", "0"), ("TPUT", "k", "b", "0", "HE")),
    ([("TPUT", "k", "b", "0", "hello")], ("TSIZE", "k", "b"), ("TTRUNCATE", "k", "b", "2")),
    ([("TPUT", "k", "b", "0", "hello")], ("TLEN", "k"), ("TDEL", "k", "b")),
]


@pytest.mark.parametrize("setup,read,write", WRITES, ids=[" ".join(x[2]) for x in WRITES])
def test_every_write_command_invalidates(cte_server, w, setup, read, write):
    for cmd in setup:
        assert w.call(*cmd).kind != "-", cmd
    t = resp3_tracker(cte_server)
    assert t.call(*read).kind != "-", read
    r = w.call(*write)
    assert r.kind != "-", (write, r)
    assert push_keys(t.read_reply()[0]) == [b"k"]
    nothing_pending(t)
    t.close()


def test_transaction_invalidations_come_after_exec(cte_server):
    t = resp3_tracker(cte_server)
    t.call("MSET", "a", "1", "b", "2")
    t.call("GET", "a")
    t.call("MULTI")
    t.call("INCR", "a")
    t.call("GET", "b")
    assert t.call("EXEC") == R("*", [R(":", 2), R("$", b"2")])
    assert push_keys(t.read_reply()[0]) == [b"a"]
    t.call("MULTI")
    t.call("FLUSHDB")
    assert t.call("EXEC") == R("*", [R("+", b"OK")])
    assert push_keys(t.read_reply()[0]) is None
    t.close()


def test_unblocked_blmove_gets_its_push_after_the_reply(cte_server, w):
    t = resp3_tracker(cte_server)
    w.call("RPUSH", "dst", "a")
    t.call("LRANGE", "dst", "0", "-1")
    t.send("BLMOVE", "src", "dst", "LEFT", "LEFT", "0")
    deadline = time.time() + 5
    while b"blocked_clients:1\r\n" not in w.call("INFO", "clients").val:
        assert time.time() < deadline
        time.sleep(0.01)
    w.call("RPUSH", "src", "foo")
    assert t.read_reply()[0] == R("$", b"foo")
    assert push_keys(t.read_reply()[0]) == [b"dst"]
    t.close()


def test_active_and_lazy_expiry_invalidate(cte_server, w):
    t = resp3_tracker(cte_server)
    w.call("SET", "active", "v", "PX", "100")
    t.call("GET", "active")
    assert push_keys(t.read_reply()[0]) == [b"active"]  # the cron deleted it
    assert w.call("DEBUG", "SET-ACTIVE-EXPIRE", "0") == R("+", b"OK")
    try:
        w.call("SET", "lazy", "v", "PX", "50")
        t.call("GET", "lazy")
        time.sleep(0.1)
        assert w.call("EXISTS", "lazy") == R(":", 0)
        assert push_keys(t.read_reply()[0]) == [b"lazy"]
        # the tracking client's own read expiring the key: told after the reply
        w.call("SET", "lazy2", "v", "PX", "50")
        t.call("MGET", "x", "lazy2")
        time.sleep(0.1)
        assert t.call("MGET", "x", "lazy2") == R("*", [R("_", None), R("_", None)])
        assert push_keys(t.read_reply()[0]) == [b"lazy2"]
    finally:
        w.call("DEBUG", "SET-ACTIVE-EXPIRE", "1")
    t.close()


def test_eviction_invalidates_before_the_reply(server_factory):
    s = server_factory(["--maxmemory-policy", "volatile-random"])
    t = resp3_tracker(s)
    info = t.call("INFO", "memory").val.decode()
    fields = dict(l.split(":", 1) for l in info.split("\r\n") if ":" in l)
    used = int(fields["used_memory"]) - int(fields["mem_not_counted_for_evict"])
    t.call("CONFIG", "SET", "maxmemory", str(used + 100 * 1024))
    t.call("SETEX", "volatile-key", "10000", "x")
    t.call("GET", "volatile-key")
    assert t.call("SETBIT", "big-key", "1600000", "0") == R(":", 0)  # 200 KB: over the limit
    # the next command evicts first: the push comes before its reply
    t.send("GETBIT", "big-key", "0")
    assert push_keys(t.read_reply()[0]) == [b"volatile-key"]
    assert t.read_reply()[0] == R(":", 0)
    t.close()


def test_flushes_send_the_null_and_empty_the_table(cte_server, w):
    r = cte_server.conn()
    rid = r.call("CLIENT", "ID").val
    r.call("SUBSCRIBE", "__redis__:invalidate")
    t = cte_server.conn()
    assert t.call("CLIENT", "TRACKING", "on", "REDIRECT", rid) == R("+", b"OK")
    t.call("GET", "key1")
    t.call("GET", "key2")
    assert b"tracking_total_keys:2\r\ntracking_total_items:2\r\n" in w.call("INFO").val
    for cmd in (("FLUSHALL", "ASYNC"), ("FLUSHDB",), ("FLUSHALL",), ("DEBUG", "RELOAD")):
        w.call(*cmd)
        assert r.read_reply()[1] == (b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n"
                                     b"$-1\r\n"), cmd
        assert b"tracking_total_keys:0\r\ntracking_total_items:0\r\n" in w.call("INFO").val
    r.close()
    t.close()


def test_table_limit_invalidates_random_keys(cte_server, w):
    t = resp3_tracker(cte_server)
    try:
        for i in range(250):
            t.call("GET", "key%d" % i)
        w.call("CONFIG", "SET", "tracking-table-max-keys", "10")
        w.call("PING")
        w.call("PING")
        w.call("PING")
        keys = set()
        while len(keys) < 240:
            keys.update(push_keys(t.read_reply()[0]))
        nothing_pending(t)
        assert b"tracking_total_keys:10\r\n" in w.call("INFO", "stats").val
    finally:
        w.call("CONFIG", "SET", "tracking-table-max-keys", "1000000")
    t.close()


def test_client_list_info_and_reset(cte_server, w):
    t = resp3_tracker(cte_server, "tcp", "BCAST")
    assert b" flags=tB " in t.call("CLIENT", "INFO").val
    assert b"tracking_clients:1\r\n" in w.call("INFO", "clients").val
    assert t.call("CLIENT", "GETREDIR") == R(":", 0)
    assert t.call("RESET") == R("+", b"RESET")
    assert b"tracking_clients:0\r\n" in w.call("INFO", "clients").val
    assert t.call("CLIENT", "GETREDIR") == R(":", -1)
    t.close()


# Replies compared byte for byte with Redis 7.0 (each line runs on a fresh connection; {id}
# is the id of another connection that exists).
SAME_AS_REDIS = [
    [("CLIENT", "TRACKING", "maybe")],
    [("CLIENT", "TRACKING", "on", "FOO")],
    [("CLIENT", "TRACKING", "on", "PREFIX", "a")],
    [("CLIENT", "TRACKING", "on", "BCAST", "OPTIN")],
    [("CLIENT", "TRACKING", "on", "OPTIN", "OPTOUT")],
    [("CLIENT", "TRACKING", "on", "REDIRECT", "999999")],
    [("CLIENT", "TRACKING", "on", "REDIRECT", "x")],
    [("CLIENT", "TRACKING", "on", "REDIRECT", "{id}", "REDIRECT", "{id}")],
    [("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOOBAR", "PREFIX", "FOO")],
    [("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FOO", "PREFIX", "BAR"),
     ("CLIENT", "TRACKING", "on", "BCAST", "PREFIX", "FO"),
     ("CLIENT", "TRACKING", "on"),
     ("CLIENT", "TRACKINGINFO")],
    [("CLIENT", "TRACKING", "on", "OPTIN"), ("CLIENT", "TRACKING", "on", "OPTOUT"),
     ("CLIENT", "CACHING", "no"), ("CLIENT", "CACHING", "yes"), ("CLIENT", "TRACKINGINFO")],
    [("CLIENT", "CACHING", "yes"), ("CLIENT", "GETREDIR"), ("CLIENT", "TRACKINGINFO"),
     ("CLIENT", "TRACKING", "off", "NOLOOP")],
    [("CLIENT", "TRACKING", "on", "REDIRECT", "{id}", "NOLOOP"), ("CLIENT", "TRACKINGINFO")],
    [("CLIENT", "TRACKING",), ("CLIENT", "CACHING"), ("CLIENT", "GETREDIR", "x")],
]


def _run_lines(server, lines):
    other = server.conn()
    oid = str(other.call("CLIENT", "ID").val)
    c = server.conn()
    out = []
    for cmd in lines:
        cmd = [a.replace("{id}", oid) for a in cmd]
        raw = c.call_raw(*cmd)
        out.append(raw.replace(oid.encode(), b"{id}"))
    c.close()
    other.close()
    return out


@pytest.mark.parametrize("lines", SAME_AS_REDIS, ids=[" / ".join(" ".join(c) for c in x)
                                                     for x in SAME_AS_REDIS])
def test_replies_and_errors_match_redis(cte_server, redis_server, lines):
    assert _run_lines(cte_server, lines) == _run_lines(redis_server, lines)
