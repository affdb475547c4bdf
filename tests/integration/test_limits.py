"""Limits under load: 10,000 concurrent clients (the server raises its own descriptor limit, or
lowers maxclients when it cannot), maxclients + 1 refused, and the per-client query-buffer and
output-buffer limits (normal and pubsub classes): the offending client is closed, the others
go on, and INFO stats counts it.

The 10,000 clients are non-blocking sockets driven by one selector, not threads. The test
raises its own RLIMIT_NOFILE (soft up to hard) and is skipped when the hard limit is too low.
"""
import os
import resource
import selectors
import socket
import time

import pytest

import conftest
from conftest import CTE_KIND, SANITIZE, NeedMore, encode_command, parse_reply, proc_kb

from test_protocol import assert_healthy, connected_clients, raw_socket, recv_until_close, wait_for

NCLIENTS = 10000
FD_MARGIN = 200  # pytest, the fixtures' own connections, the server's log


def info_stat(server, section, name):
    """The INFO field as an int; None against Redis 7.0 for the limit counters it lacks."""
    if CTE_KIND != "cte" and name.endswith("_limit_disconnections"):
        return None
    with server.conn() as c:
        info = c.call("INFO", section).val
    for line in info.split(b"\r\n"):
        if line.startswith(name.encode() + b":"):
            return int(line.split(b":")[1])
    raise AssertionError("no %s in INFO %s" % (name, section))


def clients_now(server):
    """connected_clients, or -1 while the server still refuses new clients."""
    try:
        return connected_clients(server)
    except (AssertionError, ConnectionError, OSError):
        return -1


def soft_nofile(pid):
    with open("/proc/%d/limits" % pid) as f:
        for line in f:
            if line.startswith("Max open files"):
                return int(line.split()[3])
    raise AssertionError("no 'Max open files' in /proc/%d/limits" % pid)


@pytest.fixture
def own_fd_limit():
    """Raises this process's soft RLIMIT_NOFILE to fit NCLIENTS sockets; restores it after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = NCLIENTS + FD_MARGIN
    if hard != resource.RLIM_INFINITY and hard < need:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (need, need))
        except (ValueError, OSError):
            pytest.skip("RLIMIT_NOFILE hard limit %d < %d and cannot be raised" % (hard, need))
    else:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, need), hard))
    yield
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, resource.getrlimit(
            resource.RLIMIT_NOFILE)[1]))


@pytest.fixture
def child_nofile(monkeypatch):
    """child_nofile(soft, hard): servers started afterwards begin with this RLIMIT_NOFILE
    (set in the child before exec, beside the conftest's parent-death signal)."""
    def set_limits(soft, hard):
        orig = conftest._die_with_parent

        def preexec():
            orig()
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        monkeypatch.setattr(conftest, "_die_with_parent", preexec)
    return set_limits


def open_many(port, n, batch=500, timeout=30.0):
    """n connected non-blocking sockets to 127.0.0.1:port, connected in batches (the listen
    backlog is 511)."""
    socks = []
    sel = selectors.DefaultSelector()
    deadline = time.monotonic() + timeout
    try:
        while len(socks) < n:
            pending = set()
            for _ in range(min(batch, n - len(socks))):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setblocking(False)
                err = s.connect_ex(("127.0.0.1", port))
                assert err in (0, 115), os.strerror(err)  # EINPROGRESS
                socks.append(s)
                pending.add(s)
                sel.register(s, selectors.EVENT_WRITE)
            while pending:
                assert time.monotonic() < deadline, "%d connects still pending" % len(pending)
                for key, _ in sel.select(timeout=1.0):
                    s = key.fileobj
                    err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    assert err == 0, "connect #%d failed: %s" % (len(socks), os.strerror(err))
                    sel.unregister(s)
                    pending.discard(s)
    except BaseException:
        for s in socks:
            s.close()
        raise
    finally:
        sel.close()
    return socks


def exchange_all(socks, requests, expected, timeout=60.0):
    """Sends requests[i] on socks[i] and reads until expected[i] arrived, all at once through
    one selector; returns the replies that differ (index -> bytes)."""
    sel = selectors.DefaultSelector()
    out = {i: memoryview(requests[i]) for i in range(len(socks))}
    got = {i: bytearray() for i in range(len(socks))}
    for i, s in enumerate(socks):
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE, i)
    waiting = len(socks)
    deadline = time.monotonic() + timeout
    bad = {}
    try:
        while waiting:
            assert time.monotonic() < deadline, "%d clients still wait for replies" % waiting
            for key, ev in sel.select(timeout=1.0):
                i, s = key.data, key.fileobj
                if ev & selectors.EVENT_WRITE and out[i]:
                    n = s.send(out[i])
                    out[i] = out[i][n:]
                    if not out[i]:
                        sel.modify(s, selectors.EVENT_READ, i)
                if ev & selectors.EVENT_READ:
                    chunk = s.recv(65536)
                    got[i] += chunk
                    if not chunk or len(got[i]) >= len(expected[i]):
                        if bytes(got[i]) != expected[i]:
                            bad[i] = bytes(got[i])
                        sel.unregister(s)
                        waiting -= 1
    finally:
        sel.close()
    return bad


def call_on(sock, *args, timeout=10.0):
    """One command on a non-blocking socket of open_many; returns the reply's value."""
    sock.setblocking(True)
    sock.settimeout(timeout)
    try:
        sock.sendall(encode_command(*args))
        buf = bytearray()
        while True:
            try:
                return parse_reply(buf, 0)[0].val
            except NeedMore:
                chunk = sock.recv(65536)
                assert chunk, "closed by the server"
                buf += chunk
    finally:
        sock.setblocking(False)


def test_ten_thousand_concurrent_clients_and_maxclients_plus_one(server_factory, own_fd_limit,
                                                               child_nofile):
    if CTE_KIND != "cte":
        pytest.skip("checks cte-server's own descriptor-limit handling")
    # the server starts with a soft limit far below what 10,000 clients need, as under a
    # default systemd or login session, and must raise it itself (the hard limit allows it)
    child_nofile(1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    s = server_factory([])  # the default maxclients, 10000
    with s.conn() as c:
        assert c.py("CONFIG", "GET", "maxclients") == [b"maxclients", b"10000"]
    assert soft_nofile(s.pid) >= NCLIENTS + 32
    assert wait_for(lambda: connected_clients(s) == 1)  # the start-up probe has gone
    rejected = info_stat(s, "stats", "rejected_connections")

    socks = open_many(s.port, NCLIENTS)
    try:
        requests, expected = [], []
        for i in range(NCLIENTS):
            key, val = "c:%d" % i, "v%d" % (i * 7919)
            requests.append(encode_command("PING") + encode_command("SET", key, val) +
                            encode_command("GET", key))
            expected.append(b"+PONG\r\n+OK\r\n$%d\r\n%s\r\n" % (len(val), val.encode()))
        bad = exchange_all(socks, requests, expected, timeout=120.0 if SANITIZE else 60.0)
        assert not bad, "%d clients got wrong replies, e.g. %r" % (len(bad),
                                                                    sorted(bad.items())[:3])
        info = call_on(socks[0], "INFO", "clients")
        assert b"connected_clients:%d\r\n" % NCLIENTS in info, info
        # maxclients + 1: all 10,000 places are taken
        extra = raw_socket(s)
        try:
            assert recv_until_close(extra, timeout=10) == \
                b"-ERR max number of clients reached\r\n"
        finally:
            extra.close()
        # the first ones are still served (a PING each, on a sample)
        sample = socks[:50] + socks[-50:]
        bad = exchange_all(sample, [encode_command("PING")] * len(sample),
                           [b"+PONG\r\n"] * len(sample))
        assert not bad, bad
    finally:
        for sock in socks:
            sock.close()
    assert wait_for(lambda: clients_now(s) == 1, timeout=30)
    assert info_stat(s, "stats", "rejected_connections") == rejected + 1
    with s.conn() as c:
        assert c.py("DBSIZE") == NCLIENTS
        assert c.py("GET", "c:9999") == b"v%d" % (9999 * 7919)
    assert_healthy(s)


def test_maxclients_shrinks_to_fit_a_low_hard_descriptor_limit(server_factory, child_nofile):
    if CTE_KIND != "cte":
        pytest.skip("checks cte-server's own descriptor-limit handling")
    # 256 descriptors, hard: the server cannot raise it, so maxclients becomes 256 - 32 and the
    # clients past that get the error instead of a failed accept
    child_nofile(256, 256)
    s = server_factory(["--maxclients", "10000"])
    with s.conn() as c:
        assert c.py("CONFIG", "GET", "maxclients") == [b"maxclients", b"224"]
    assert "maxclients has been reduced to 224" in s.log_text()
    assert wait_for(lambda: connected_clients(s) == 1)
    socks = open_many(s.port, 224)
    try:
        bad = exchange_all(socks, [encode_command("PING")] * 224, [b"+PONG\r\n"] * 224)
        assert not bad, bad
        extra = raw_socket(s)
        try:
            assert recv_until_close(extra, timeout=10) == \
                b"-ERR max number of clients reached\r\n"
        finally:
            extra.close()
    finally:
        for sock in socks:
            sock.close()
    assert wait_for(lambda: clients_now(s) == 1, timeout=10)
    assert_healthy(s)


def test_query_buffer_limit_is_per_client_and_counted(server_factory):
    s = server_factory(["--client-query-buffer-limit", "1mb"])
    assert info_stat(s, "stats", "client_query_buffer_limit_disconnections") in (0, None)
    with s.conn() as pipeliner, s.conn() as halfway:
        # a pipeline of 2 MB of complete commands is fine: each is consumed as it arrives
        value = "p" * 1000
        pipeliner.send_raw(b"".join(encode_command("SET", "p:%d" % i, value)
                                    for i in range(2000)))
        # another client is halfway through a command (500 KB, under the limit)
        halfway.send_raw(b"*3\r\n$3\r\nSET\r\n$4\r\nhalf\r\n$1000000\r\n" + b"h" * 500000)
        # the offender: one argument of 3 MB (proto-max-bulk-len allows it), sent whole
        bad = raw_socket(s)
        try:
            bad.sendall(b"*3\r\n$3\r\nSET\r\n$3\r\nbad\r\n$3000000\r\n")
            try:
                for _ in range(48):  # 3 MB
                    bad.sendall(b"x" * 65536)
            except (BrokenPipeError, ConnectionResetError):
                pass
            assert recv_until_close(bad, timeout=10) == b""
        finally:
            bad.close()
        for _ in range(2000):
            assert pipeliner.read_reply()[1] == b"+OK\r\n"
        halfway.send_raw(b"h" * 500000 + b"\r\n")
        assert halfway.read_reply()[1] == b"+OK\r\n"
        assert halfway.call_raw("STRLEN", "half") == b":1000000\r\n"
        assert halfway.call_raw("EXISTS", "bad") == b":0\r\n"
        assert pipeliner.call_raw("DBSIZE") == b":2001\r\n"
    assert info_stat(s, "stats", "client_query_buffer_limit_disconnections") in (1, None)
    assert_healthy(s)


def _drain_until_closed(sock, timeout=10.0):
    """Reads and drops until EOF or reset; True if the peer closed within timeout."""
    sock.settimeout(timeout)
    try:
        while sock.recv(1 << 20):
            pass
    except ConnectionResetError:
        pass
    except socket.timeout:
        return False
    return True


def test_output_buffer_limit_normal_class_is_per_client_and_counted(server_factory):
    s = server_factory(["--client-output-buffer-limit", "normal 1mb 0 0"])
    with s.conn() as ok:
        ok.call("SET", "big", "v" * 100000)
        greedy = raw_socket(s, rcvbuf=4096)
        try:
            try:
                greedy.settimeout(5)
                for _ in range(10):  # 10 MB of replies asked for, never read
                    greedy.sendall(encode_command("GET", "big") * 10)
                    time.sleep(0.05)
            except (BrokenPipeError, ConnectionResetError, socket.timeout):
                pass
            assert _drain_until_closed(greedy), "the client that never read is still open"
        finally:
            greedy.close()
        # a reader that takes its 500 KB reply as it comes is not affected
        ok.send(*(["MGET"] + ["big"] * 5))
        assert len(ok.read_reply()[0].val) == 5
        assert ok.call_raw("PING") == b"+PONG\r\n"
    assert info_stat(s, "stats", "client_output_buffer_limit_disconnections") in (1, None)
    assert_healthy(s)


def test_output_buffer_limit_pubsub_class_drops_a_slow_subscriber(server_factory):
    s = server_factory(["--client-output-buffer-limit", "pubsub 256kb 128kb 1"])
    msg = "m" * 20000
    with s.conn() as pub, s.conn() as quiet, s.conn() as normal:
        normal.call("SET", "big", "v" * 100000)
        assert quiet.call("SUBSCRIBE", "quiet").kind == "*"
        slow = raw_socket(s, rcvbuf=4096)
        try:
            slow.sendall(encode_command("SUBSCRIBE", "news"))
            time.sleep(0.1)
            # small messages, one at a time: the output piles up behind a write in flight
            # that never completes, past the 256 KB hard limit of the pubsub class
            receivers = []
            for _ in range(2000):  # up to 40 MB
                receivers.append(pub.py("PUBLISH", "news", msg))
                if receivers[-1] == 0:
                    break
            assert receivers[0] == 1 and receivers[-1] == 0, \
                "still subscribed after %d messages" % len(receivers)
            assert _drain_until_closed(slow), "the slow subscriber was not disconnected"
        finally:
            slow.close()
        # the normal class has no limit: a 1 MB reply to a normal client is fine
        normal.send(*(["MGET"] + ["big"] * 10))
        assert len(normal.read_reply()[0].val) == 10
        # the other subscriber is still subscribed and gets its message
        assert pub.py("PUBLISH", "quiet", "hi") == 1
        assert quiet.read_reply()[1] == b"*3\r\n$7\r\nmessage\r\n$5\r\nquiet\r\n$2\r\nhi\r\n"
    assert info_stat(s, "stats", "client_output_buffer_limit_disconnections") in (1, None)
    assert_healthy(s)


def test_config_set_proto_max_bulk_len_applies_to_connected_clients(server_factory):
    s = server_factory([])
    with s.conn() as early, s.conn() as admin:
        assert early.call_raw("PING") == b"+PONG\r\n"  # connected before the change
        assert admin.call_raw("CONFIG", "SET", "proto-max-bulk-len", "1mb") == b"+OK\r\n"
        early.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % ((1 << 20) + 1))
        assert early.read_until_close(timeout=5) == b"-ERR Protocol error: invalid bulk length\r\n"
        assert admin.call_raw("SET", "k", "x" * (1 << 20)) == b"+OK\r\n"
    assert_healthy(s)


@pytest.mark.skipif(CTE_KIND != "cte", reason="Redis 7.0 aborts or runs out of memory here")
def test_one_command_cannot_kill_or_grow_the_server(server_factory):
    s = server_factory(["--client-output-buffer-limit", "normal 64mb 32mb 5"])
    with s.conn() as c:
        c.call("ZADD", "z", 0, "a")
        c.call("SADD", "s", "a")
        assert c.call_raw("ZRANDMEMBER", "z", "-9223372036854775808") == (
            b"-ERR value is out of range, value must between -9223372036854775807 and "
            b"9223372036854775807\r\n")
        # refused before anything is built: it could never fit
        assert c.call_raw("SRANDMEMBER", "s", "-9223372036854775807") == (
            b"-ERR reply of at least 55340232221128654842 bytes would exceed "
            b"client-output-buffer-limit (67108864 bytes)\r\n")
        assert c.call_raw("ZRANDMEMBER", "z", "-100000000000", "WITHSCORES") == (
            b"-ERR reply of at least 1200000000000 bytes would exceed "
            b"client-output-buffer-limit (67108864 bytes)\r\n")
        for i in range(3):
            c.call("SADD", "big", "%d" % i + "x" * 1000)
    # members of 1000 bytes: the least-size estimate lets it start, the hard limit stops it
    before = proc_kb(s.pid, "VmRSS")
    greedy = raw_socket(s, rcvbuf=4096)
    try:
        greedy.sendall(encode_command("SRANDMEMBER", "big", "-1000000"))  # 1 GB of replies
        assert _drain_until_closed(greedy, timeout=30), "the client is still open"
    finally:
        greedy.close()
    after = proc_kb(s.pid, "VmRSS")
    assert after - before < 200 * 1024, "grew from %d to %d KB" % (before, after)
    assert info_stat(s, "stats", "client_output_buffer_limit_disconnections") == 1
    assert_healthy(s)


def _non_loopback_ipv4():
    """An address of this host that is not loopback (None if it has none)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: only picks the route's address
        addr = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if addr.startswith("127.") else addr


@pytest.mark.skipif(_non_loopback_ipv4() is None, reason="no non-loopback IPv4 address here")
def test_protected_mode_refuses_non_loopback_peers_whatever_bind_says(server_factory):
    addr = _non_loopback_ipv4()
    s = server_factory(["--bind", "127.0.0.1 %s" % addr])
    remote = socket.create_connection((addr, s.port), timeout=5)
    try:
        got = b""  # the refusal comes at accept, before any request
        while True:
            chunk = remote.recv(4096)
            if not chunk:
                break
            got += chunk
        assert got.startswith(b"-DENIED Redis is running in protected mode"), got[:80]
    finally:
        remote.close()
    with s.conn() as c:  # loopback is served
        assert c.call_raw("PING") == b"+PONG\r\n"
