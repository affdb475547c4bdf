"""The wire protocol and the process, over raw sockets: pipelining, split requests, protocol
errors and the exact texts Redis 7.0 sends, limits (proto-max-bulk-len, client-query-buffer-limit,
maxclients, client-output-buffer-limit, timeout), abrupt disconnects, SHUTDOWN and SIGTERM,
systemd notification, and bad command lines.

Tests that need special options start their own server (server_factory); the others use the
session's server. Every server is stopped at the end, also when a test fails (conftest.py)."""
import os
import signal
import socket
import struct
import subprocess
import tempfile
import time

import pytest

from conftest import (CTE_KIND, CTE_SERVER, RespConn, STOP_TIMEOUT, encode_command,
                      free_port)


def raw_socket(server, timeout=10.0, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(timeout)
    s.connect((server.host, server.port))
    return s


def recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed after %d of %d bytes: %r" % (len(data), n, data))
        data += chunk
    return data


def recv_until_close(sock, timeout=5.0):
    """All bytes until the peer closes (EOF or reset); raises socket.timeout otherwise."""
    sock.settimeout(timeout)
    data = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return data
        if not chunk:
            return data
        data += chunk


def assert_healthy(server):
    """Another client is served normally."""
    with server.conn() as c:
        assert c.call_raw("PING") == b"+PONG\r\n"
        assert c.call_raw("SET", "health", "ok") == b"+OK\r\n"
        assert c.call_raw("GET", "health") == b"$2\r\nok\r\n"


def connected_clients(server):
    with server.conn() as c:
        info = c.call("INFO", "clients").val
    for line in info.split(b"\r\n"):
        if line.startswith(b"connected_clients:"):
            return int(line.split(b":")[1])
    raise AssertionError("no connected_clients in INFO clients")


def wait_for(pred, timeout=5.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


# ---------------------------------------------------------------------------------------
# Pipelining and framing


def test_thousand_pipelined_commands_in_one_write_are_answered_in_order(cte_server):
    reqs, expected = [], []
    for i in range(250):
        reqs.append(encode_command("SET", "k%d" % i, "v%d" % i))
        expected.append(b"+OK\r\n")
        reqs.append(encode_command("INCR", "n"))
        expected.append(b":%d\r\n" % (i + 1))
        reqs.append(encode_command("GET", "k%d" % i))
        expected.append(b"$%d\r\nv%d\r\n" % (len(b"v%d" % i), i))
        reqs.append(encode_command("ECHO", "e%d" % i))
        expected.append(b"$%d\r\ne%d\r\n" % (len(b"e%d" % i), i))
    with cte_server.conn() as c:
        c.send_raw(b"".join(reqs))  # one write
        got = [c.read_reply()[1] for _ in range(len(reqs))]
    assert len(got) == 1000
    assert got == expected


def test_pipelined_reads_see_the_writes_queued_before_them(cte_server):
    """A pipeline in one write: every read answers what the commands before it left, whatever
    the case of the names, and an unknown name or a wrong arity stays an error."""
    big = b"x" * 20000
    steps = [
        (("SET", "pk", "one"), b"+OK\r\n"),
        (("GET", "pk"), b"$3\r\none\r\n"),
        (("SET", "pk", big), b"+OK\r\n"),
        (("get", "pk"), b"$20000\r\n" + big + b"\r\n"),
        (("DEL", "pk"), b":1\r\n"),
        (("GeT", "pk"), b"$-1\r\n"),
        (("TPUT", "pt", "b", "0", "hello"), b":5\r\n"),
        (("TGET", "pt", "b"), b"$5\r\nhello\r\n"),
        (("TPUT", "pt", "b", "2", "XYZW"), b":6\r\n"),
        (("TGET", "pt", "b", "1", "3"), b"$3\r\neXY\r\n"),
        (("TTRUNCATE", "pt", "b", "1"), b":1\r\n"),
        (("tget", "pt", "b"), b"$1\r\nh\r\n"),
        (("TDEL", "pt", "b"), b":1\r\n"),
        (("TGET", "pt", "b"), b"$-1\r\n"),
        (("TGET", "pt", "b", "-1"), None),
        (("SELECT", "1"), b"+OK\r\n"),
        (("SET", "pk", "db1"), b"+OK\r\n"),
        (("SELECT", "0"), b"+OK\r\n"),
        (("GET", "pk"), b"$-1\r\n"),
        (("NOSUCHCMD", "pk"), None),
        (("GET",), None),
        (("GET", "pk", "extra"), None),
        (("PING",), b"+PONG\r\n"),
    ]
    payload = b"".join(encode_command(*args) for args, _ in steps)
    with cte_server.conn() as c:
        c.send_raw(payload)  # one write: each read arrives right behind the write it must see
        for args, want in steps:
            got = c.read_reply()[1]
            if want is None:
                assert got.startswith(b"-ERR"), (args, got)
            else:
                assert got == want, (args, got[:80])
    with cte_server.conn() as c:
        assert c.call_raw("SELECT", "1") == b"+OK\r\n"
        assert c.call_raw("GET", "pk") == b"$3\r\ndb1\r\n"


def test_requests_split_byte_by_byte(cte_server):
    payload = (encode_command("SET", "split", "a\r\nb") + encode_command("GET", "split") +
               b"PING\r\n" + encode_command("APPEND", "split", "\x00"))
    with cte_server.conn() as c:
        for i in range(len(payload)):
            c.send_raw(payload[i:i + 1])
            time.sleep(0.002)  # separate segments, so the server really sees partial reads
        assert c.read_reply()[1] == b"+OK\r\n"
        assert c.read_reply()[1] == b"$4\r\na\r\nb\r\n"
        assert c.read_reply()[1] == b"+PONG\r\n"
        assert c.read_reply()[1] == b":5\r\n"


def test_request_split_at_every_position(cte_server):
    cmd = encode_command("SET", "k", "0123456789")
    with cte_server.conn() as c:
        for cut in range(1, len(cmd)):
            c.send_raw(cmd[:cut])
            time.sleep(0.002)
            c.send_raw(cmd[cut:])
            assert c.read_reply()[1] == b"+OK\r\n", cut


def test_inline_commands(cte_server):
    with cte_server.conn() as c:
        c.send_raw(b"PING\r\n")
        assert c.read_reply()[1] == b"+PONG\r\n"
        c.send_raw(b"SET a b\r\n")
        assert c.read_reply()[1] == b"+OK\r\n"
        c.send_raw(b"GET a\n")  # a bare LF ends an inline command too
        assert c.read_reply()[1] == b"$1\r\nb\r\n"
        c.send_raw(b'SET q "hello world\\n\\x41"\r\n')
        assert c.read_reply()[1] == b"+OK\r\n"
        assert c.call_raw("GET", "q") == b"$13\r\nhello world\nA\r\n"
        c.send_raw(b"   \r\n\r\nECHO   'x y'  \r\n")  # empty lines are skipped
        assert c.read_reply()[1] == b"$3\r\nx y\r\n"
        c.send_raw(b'SET "unbalanced\r\n')
        assert c.read_reply()[1] == b"-ERR Protocol error: unbalanced quotes in request\r\n"
        assert c.is_closed_by_peer()
    assert_healthy(cte_server)


# ---------------------------------------------------------------------------------------
# Protocol errors: the reply, then the connection closes; others are unaffected


@pytest.mark.parametrize("request_bytes,error", [
    (b"*abc\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
    (b"*1\r\n$abc\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n$-5\r\n", b"-ERR Protocol error: invalid bulk length\r\n"),
    (b"*1\r\n+PING\r\n", b"-ERR Protocol error: expected '$', got '+'\r\n"),
    (b"*3000000000\r\n", b"-ERR Protocol error: invalid multibulk length\r\n"),
], ids=["bad-multibulk-len", "bad-bulk-len", "negative-bulk-len", "not-a-bulk",
        "huge-multibulk-len"])
def test_protocol_error_closes_only_that_connection(cte_server, request_bytes, error):
    with cte_server.conn() as bystander:
        bystander.call("SET", "by", "stander")
        with cte_server.conn() as c:
            c.send_raw(request_bytes)
            assert c.read_until_close(timeout=5) == error
        assert bystander.call_raw("GET", "by") == b"$7\r\nstander\r\n"
    assert_healthy(cte_server)


def test_too_big_inline_request_and_mbulk_count(cte_server):
    with cte_server.conn() as c:
        try:
            c.send_raw(b"A" * (70 * 1024))  # no newline within 64 KB
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert c.read_until_close(timeout=5) == b"-ERR Protocol error: too big inline request\r\n"
    with cte_server.conn() as c:
        try:
            c.send_raw(b"*" + b"1" * (70 * 1024))
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert c.read_until_close(timeout=5) == \
            b"-ERR Protocol error: too big mbulk count string\r\n"
    assert_healthy(cte_server)


def test_empty_multibulk_and_zero_length_args(cte_server):
    with cte_server.conn() as c:
        c.send_raw(b"*0\r\n*-1\r\n")  # ignored, as in Redis
        assert c.call_raw("ECHO", "") == b"$0\r\n\r\n"
        assert c.call_raw("SET", "", "") == b"+OK\r\n"
        assert c.call_raw("GET", "") == b"$0\r\n\r\n"


def test_unknown_command_text_is_exactly_redis(cte_server):
    with cte_server.conn() as c:
        assert c.call_raw("FOO", "a", "b") == \
            b"-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"
        assert c.call_raw("foo") == b"-ERR unknown command 'foo', with args beginning with: \r\n"
        c.send_raw(b"nosuchcmd x\r\n")
        assert c.read_reply()[1] == \
            b"-ERR unknown command 'nosuchcmd', with args beginning with: 'x' \r\n"
        # CR and LF in the echo are replaced by spaces, as Redis does
        assert c.call_raw("FOO", "a\r\nb") == \
            b"-ERR unknown command 'FOO', with args beginning with: 'a  b' \r\n"
        # at most about 128 bytes of arguments, and 128 of the name (Redis 7.0.15)
        long_arg = "x" * 300
        got = c.call_raw("FOO", long_arg, "second")
        assert got == (b"-ERR unknown command 'FOO', with args beginning with: '" + b"x" * 128 +
                       b"' \r\n")
        got = c.call_raw("FOO", "x" * 100, "z" * 100, "third")
        assert got == (b"-ERR unknown command 'FOO', with args beginning with: '" + b"x" * 100 +
                       b"' '" + b"z" * 25 + b"' \r\n")
        got = c.call_raw("Y" * 200)
        assert got == (b"-ERR unknown command '" + b"Y" * 128 +
                       b"', with args beginning with: \r\n")
        assert c.call_raw("CONFIG", "NOSUCHSUB") == \
            b"-ERR unknown subcommand 'NOSUCHSUB'. Try CONFIG HELP.\r\n"
        assert c.call_raw("PING") == b"+PONG\r\n"  # the connection stays open


def test_wrong_arity_text_is_exactly_redis(cte_server):
    with cte_server.conn() as c:
        assert c.call_raw("GET") == b"-ERR wrong number of arguments for 'get' command\r\n"
        assert c.call_raw("GET", "a", "b") == \
            b"-ERR wrong number of arguments for 'get' command\r\n"
        assert c.call_raw("set", "a") == b"-ERR wrong number of arguments for 'set' command\r\n"
        assert c.call_raw("HSET", "h", "f") == \
            b"-ERR wrong number of arguments for 'hset' command\r\n"
        assert c.call_raw("CONFIG", "GET") == \
            b"-ERR wrong number of arguments for 'config|get' command\r\n"
        assert c.call_raw("PING") == b"+PONG\r\n"


# ---------------------------------------------------------------------------------------
# Limits


def test_bulk_longer_than_proto_max_bulk_len_is_refused(server_factory):
    s = server_factory(["--proto-max-bulk-len", "1mb"])
    with s.conn() as ok:
        ok.call("SET", "k", "v")
        with s.conn() as c:
            assert c.call_raw("SET", "fits", "x" * (1 << 20)) == b"+OK\r\n"
            c.send_raw(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$%d\r\n" % ((1 << 20) + 1))
            assert c.read_until_close(timeout=5) == \
                b"-ERR Protocol error: invalid bulk length\r\n"
        assert ok.call_raw("GET", "k") == b"$1\r\nv\r\n"
        assert ok.call_raw("STRLEN", "fits") == b":1048576\r\n"
        # and SETRANGE/APPEND stop at the same limit
        assert ok.call_raw("SETRANGE", "k", str(1 << 20), "x") == \
            b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"


def test_query_buffer_limit_closes_only_that_client(server_factory):
    s = server_factory(["--client-query-buffer-limit", "1mb"])
    with s.conn() as bystander:
        bystander.call("SET", "by", "stander")
        c = raw_socket(s)
        try:
            # one argument of 4 MB that never completes: the query buffer passes 1 MB
            c.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$4194304\r\n")
            chunk = b"z" * 65536
            try:
                for _ in range(40):  # 2.5 MB
                    c.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
            assert recv_until_close(c, timeout=10) == b""
        finally:
            c.close()
        assert bystander.call_raw("GET", "by") == b"$7\r\nstander\r\n"
        assert bystander.call_raw("EXISTS", "k") == b":0\r\n"
    assert_healthy(s)


def test_maxclients_refuses_the_next_client(server_factory):
    s = server_factory(["--maxclients", "3"])
    assert wait_for(lambda: connected_clients(s) == 1)  # the start-up probe has gone
    conns = [s.conn()]
    try:
        conns[0].call("PING")
        conns.append(s.conn())
        conns.append(s.conn())
        for c in conns:
            assert c.call_raw("PING") == b"+PONG\r\n"
        with RespConn(port=s.port) as extra:
            assert extra.read_until_close(timeout=5) == b"-ERR max number of clients reached\r\n"
        with RespConn(unix=s.unixsocket) as extra:
            assert extra.read_until_close(timeout=5) == b"-ERR max number of clients reached\r\n"
        for c in conns:
            assert c.call_raw("PING") == b"+PONG\r\n"
        assert b"rejected_connections:2\r\n" in conns[0].call("INFO", "stats").val
        conns.pop().close()  # a place frees up (once the server has seen the close)
        assert wait_for(lambda: _can_connect(s))
    finally:
        for c in conns:
            c.close()


def _can_connect(s):
    try:
        with RespConn(port=s.port, timeout=2) as c:
            return c.call_raw("PING") == b"+PONG\r\n"
    except (ConnectionError, OSError):
        return False


def test_output_buffer_limit_drops_a_client_that_never_reads(server_factory):
    s = server_factory(["--client-output-buffer-limit", "normal 1mb 512kb 1"])
    value_len = 100000
    with s.conn() as ok:
        ok.call("SET", "big", "v" * value_len)
        greedy = raw_socket(s, rcvbuf=4096)
        greedy.settimeout(5)
        req = encode_command("GET", "big") * 100  # 10 MB of replies per write
        asked = 0
        try:
            for _ in range(10):  # up to 100 MB asked for, never read
                greedy.sendall(req)
                asked += 100 * value_len
                # the others are served meanwhile
                assert ok.call_raw("PING") == b"+PONG\r\n"
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed by the server already
        except socket.timeout:
            pass  # the server stopped reading from it: it must close it now
        assert ok.call_raw("GET", "big")[:10] == b"$100000\r\nv"
        # the greedy client gets what was in flight, then EOF (or a reset): far less than asked
        got, closed = 0, False
        greedy.settimeout(10)
        try:
            while got <= asked:
                chunk = greedy.recv(1 << 20)
                if not chunk:
                    closed = True
                    break
                got += len(chunk)
        except ConnectionResetError:
            closed = True
        except socket.timeout:
            pass
        greedy.close()
        assert closed, "the client that never read was not disconnected (%d bytes of %d)" % (
            got, asked)
        assert got < asked // 2, (got, asked)
        assert wait_for(lambda: ok.call("CLIENT", "LIST").val.count(b"\n") == 1)
    assert_healthy(s)


def test_connection_reset_by_peer_leaves_the_server_healthy(cte_server):
    before = connected_clients(cte_server)
    for payload in (b"", encode_command("SET", "k", "v")[:10], encode_command("GET", "x") * 5000):
        s = raw_socket(cte_server)
        if payload:
            s.sendall(payload)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()  # RST instead of FIN
    assert_healthy(cte_server)
    assert wait_for(lambda: connected_clients(cte_server) == before)


def test_idle_clients_are_closed_after_timeout(server_factory):
    s = server_factory(["--timeout", "1"])
    with s.conn() as idle, s.conn() as busy, s.conn() as subscriber:
        subscriber.call("SUBSCRIBE", "ch")  # Pub/Sub clients are exempt, as in Redis
        t0 = time.monotonic()
        while time.monotonic() - t0 < 2.5:
            assert busy.call_raw("PING") == b"+PONG\r\n"
            time.sleep(0.3)
        assert idle.is_closed_by_peer(timeout=3)
        assert busy.call_raw("PING") == b"+PONG\r\n"
        assert busy.call_raw("PUBLISH", "ch", "still-here") == b":1\r\n"
        assert subscriber.read_reply()[1] == \
            b"*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$10\r\nstill-here\r\n"
    with s.conn() as c:
        assert c.call_raw("CONFIG", "GET", "timeout") == b"*2\r\n$7\r\ntimeout\r\n$1\r\n1\r\n"


# ---------------------------------------------------------------------------------------
# Stopping


def test_shutdown_command_stops_the_server_and_removes_the_socket(server_factory):
    s = server_factory([])
    assert os.path.exists(s.unixsocket)
    with s.conn() as other:
        with s.conn() as c:
            c.send("SHUTDOWN")
            assert c.read_until_close(timeout=STOP_TIMEOUT) == b""  # no reply on success
        assert other.read_until_close(timeout=STOP_TIMEOUT) == b""
    assert s.wait_exit() == 0
    assert not os.path.exists(s.unixsocket)
    assert not _can_connect(s)


def test_shutdown_nosave_and_bad_arguments(server_factory):
    s = server_factory([])
    with s.conn() as c:
        assert c.call_raw("SHUTDOWN", "BOGUS") == b"-ERR syntax error\r\n"
        c.send("SHUTDOWN", "NOSAVE")
        assert c.read_until_close(timeout=STOP_TIMEOUT) == b""
    assert s.wait_exit() == 0


def test_sigterm_stops_the_server_cleanly(server_factory):
    s = server_factory([])
    with s.conn() as c:
        c.call("SET", "k", "v")
        s.signal(signal.SIGTERM)
        assert c.read_until_close(timeout=STOP_TIMEOUT) == b""
    assert s.wait_exit() == 0
    assert not os.path.exists(s.unixsocket)
    # as Redis logs "Redis is now ready to exit, bye bye..."
    assert "ready to exit" in s.log_text().lower()


def test_sigint_stops_the_server_cleanly(server_factory):
    s = server_factory([])
    s.signal(signal.SIGINT)
    assert s.wait_exit() == 0


# ---------------------------------------------------------------------------------------
# systemd


def test_systemd_notify_ready_and_stopping(server_factory):
    tmp = tempfile.mkdtemp(prefix="cte-it-notify-")
    path = os.path.join(tmp, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(15)
    try:
        extra = ["--supervised", "systemd"] if CTE_KIND == "redis" else []
        s = server_factory(extra, env={"NOTIFY_SOCKET": path})
        msgs = []
        while not any(b"READY=1" in m.split(b"\n") for m in msgs):
            msgs.append(sock.recv(4096))
        assert any(b"READY=1" in m.split(b"\n") for m in msgs), msgs
        s.signal(signal.SIGTERM)
        msgs = []
        while not any(b"STOPPING=1" in m.split(b"\n") for m in msgs):
            msgs.append(sock.recv(4096))
        assert s.wait_exit() == 0
    finally:
        sock.close()
        os.unlink(path)
        os.rmdir(tmp)


def test_no_notify_socket_no_problem(server_factory):
    env = {"NOTIFY_SOCKET": "/nonexistent/dir/notify.sock"}
    extra = ["--supervised", "systemd"] if CTE_KIND == "redis" else []
    s = server_factory(extra, env=env)  # starts and answers although nobody listens
    assert_healthy(s)


# ---------------------------------------------------------------------------------------
# Bad command lines


@pytest.mark.parametrize("args,names", [
    (["--port", "abc"], "port"),
    (["--nosuchkey", "1"], "nosuchkey"),
    (["--maxclients", "-5"], "maxclients"),
    (["--appendonly", "maybe"], "appendonly"),
], ids=["port-abc", "unknown-key", "negative-maxclients", "bad-bool"])
def test_bad_config_exits_nonzero_naming_the_key(args, names):
    tmp = tempfile.mkdtemp(prefix="cte-it-badcfg-")
    try:
        argv = [CTE_SERVER, "--bind", "127.0.0.1", "--port", str(free_port()),
                "--dir", tmp] + args
        if CTE_KIND == "redis":
            argv[1:1] = ["--save", ""]
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, cwd=tmp, timeout=STOP_TIMEOUT + 10)
        out = p.stdout.decode("utf-8", "replace")
        assert p.returncode != 0, out
        assert names in out, out
    finally:
        subprocess.run(["rm", "-rf", tmp])


def _wmem_max():
    try:
        with open("/proc/sys/net/core/wmem_max") as f:
            return int(f.read())
    except OSError:
        return 0


@pytest.mark.skipif(CTE_KIND == "redis", reason="Redis keeps the Unix socket's default buffer")
@pytest.mark.skipif(_wmem_max() < (1 << 20), reason="net.core.wmem_max below 1 MiB caps SO_SNDBUF")
def test_unix_socket_takes_a_whole_1m_reply_at_once(cte_server):
    """A Unix connection asks for a 4 MiB send buffer: a 1 MiB reply is queued whole in one
    go, where the default (net.core.wmem_default) held only about 200 KB of it until the client
    read, one write and one wake-up of the client per piece."""
    import fcntl
    import termios
    value = b"u" * (1 << 20)
    with cte_server.conn() as c:
        assert c.py("SET", "big", value) in ("OK", b"OK")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(cte_server.unixsocket)
    try:
        s.sendall(encode_command("GET", "big"))
        want = len(value) + len(b"$1048576\r\n\r\n")
        deadline = time.time() + 3
        queued = 0
        while time.time() < deadline:
            buf = fcntl.ioctl(s.fileno(), termios.FIONREAD, struct.pack("i", 0))
            queued = struct.unpack("i", buf)[0]
            if queued >= want:
                break
            time.sleep(0.05)
        assert queued == want, "only %d of %d reply bytes queued before the client read" % (
            queued, want)
        got = b""
        while len(got) < want:
            got += s.recv(want - len(got))
        assert got == b"$1048576\r\n" + value + b"\r\n"
    finally:
        s.close()
