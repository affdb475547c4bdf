"""Integration-test fixtures: start the real cte-server (and Debian's redis-server, for the
differential test) on free loopback ports, each with its own temp dir, Unix socket and log
file, and stop them with SIGTERM, checking that they exit 0.

Run with Debian's interpreter (it has python3-redis and pytest):

    /usr/bin/python3 -m pytest -q tests/integration

Environment:
    CTE_SERVER     path of the cte-server binary (default: build/cte-server in the repo);
                   a path to a redis-server runs the suite against Redis, to check the tests
    CTE_SANITIZE   ON when the binary is an ASan/UBSan build: start and stop may take longer
    REDIS_SERVER   path of the reference redis-server (default /usr/bin/redis-server)
    CTE_KEEP_TMP   1 keeps every server's temp dir (logs) after the run

Also here (imported by the test modules with `from conftest import ...`): a raw RESP2/RESP3
client, RespConn, that returns replies as typed trees together with their exact bytes.

Server logs: when a test fails, the part of every server's log written while the test ran is
attached to the failure report.
"""
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections import namedtuple
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CTE_SERVER = os.environ.get("CTE_SERVER") or str(ROOT / "build" / "cte-server")
REDIS_SERVER = os.environ.get("REDIS_SERVER") or "/usr/bin/redis-server"
REDIS_CLI = "/usr/bin/redis-cli"
SANITIZE = os.environ.get("CTE_SANITIZE", "").strip().upper() in ("ON", "1", "TRUE", "YES")
START_TIMEOUT = 60.0 if SANITIZE else 15.0
STOP_TIMEOUT = 30.0 if SANITIZE else 5.0
KEEP_TMP = os.environ.get("CTE_KEEP_TMP", "") == "1"
LOG_TAIL = 20000  # characters of log attached to a failure report, per server


def proc_kb(pid, field):
    """A /proc/<pid>/status field in kB ("VmRSS", "VmHWM", "VmSize")."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


# ----------------------------------------------------------------------------------------
# Raw RESP client


class R(namedtuple("R", "kind val")):
    """One reply: kind is the RESP type byte as a str ('+', '-', ':', '$', '*', '_', ',',
    '#', '(', '=', '%', '~', '>', '|'); val is bytes for + - $ , ( = ; int for :; bool for #;
    None for nulls ($-1, *-1, _); a list of R for * ~ > ; a list of (R, R) pairs for % |."""

    __slots__ = ()

    def __repr__(self):
        return "R(%r, %r)" % (self.kind, self.val)


class NeedMore(Exception):
    pass


class ProtocolViolation(Exception):
    pass


def encode_command(*args):
    """Encodes args (bytes, str or int) as a RESP multibulk request."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def encode_reply(r):
    """Canonical RESP bytes of a reply tree (used to compare normalized replies)."""
    k, v = r.kind, r.val
    if k in "+-":
        return k.encode() + v + b"\r\n"
    if k == ":":
        return b":%d\r\n" % v
    if k == "$":
        return b"$-1\r\n" if v is None else b"$%d\r\n%s\r\n" % (len(v), v)
    if k == "_":
        return b"_\r\n"
    if k == ",":
        return b"," + v + b"\r\n"
    if k == "#":
        return b"#t\r\n" if v else b"#f\r\n"
    if k == "(":
        return b"(" + v + b"\r\n"
    if k == "=":
        return b"=%d\r\n%s\r\n" % (len(v), v)
    if k in "*~>":
        if v is None:
            return b"*-1\r\n"
        return k.encode() + b"%d\r\n" % len(v) + b"".join(encode_reply(x) for x in v)
    if k in "%|":
        return (k.encode() + b"%d\r\n" % len(v) +
                b"".join(encode_reply(a) + encode_reply(b) for a, b in v))
    raise ValueError("unknown kind %r" % k)


def parse_reply(buf, pos):
    """Parses one reply from buf at pos; returns (R, newpos) or raises NeedMore."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        if len(buf) - pos > 1 << 20:
            raise ProtocolViolation("reply header line longer than 1 MB")
        raise NeedMore()
    if end == pos:
        raise ProtocolViolation("empty reply line")
    kind = chr(buf[pos])
    line = bytes(buf[pos + 1:end])
    pos = end + 2
    if kind in "+-":
        return R(kind, line), pos
    if kind == ":":
        return R(kind, int(line)), pos
    if kind == "_":
        return R(kind, None), pos
    if kind in ",(":
        return R(kind, line), pos
    if kind == "#":
        return R(kind, line == b"t"), pos
    if kind in "$=!":
        n = int(line)
        if n < 0:
            return R("$", None), pos
        if len(buf) < pos + n + 2:
            raise NeedMore()
        if buf[pos + n:pos + n + 2] != b"\r\n":
            raise ProtocolViolation("bulk not terminated by CRLF")
        data = bytes(buf[pos:pos + n])
        return R("-" if kind == "!" else kind, data), pos + n + 2
    if kind in "*~>":
        n = int(line)
        if n < 0:
            return R(kind, None), pos
        items = []
        for _ in range(n):
            item, pos = parse_reply(buf, pos)
            items.append(item)
        return R(kind, items), pos
    if kind in "%|":
        n = int(line)
        items = []
        for _ in range(n):
            a, pos = parse_reply(buf, pos)
            b, pos = parse_reply(buf, pos)
            items.append((a, b))
        return R(kind, items), pos
    raise ProtocolViolation("unknown reply type byte %r in %r" %
                            (kind, bytes(buf[pos - 2 - len(line) - 1:end + 2])))


def to_py(r):
    """Plain Python value of a reply: bytes, int, None, list, dict (maps), bool; errors
    become RespErrorValue instances (not raised)."""
    k, v = r.kind, r.val
    if k == "-":
        return RespErrorValue(v)
    if k in "*~>":
        return None if v is None else [to_py(x) for x in v]
    if k in "%|":
        return {_hashable(to_py(a)): to_py(b) for a, b in v}
    return v


def _hashable(x):
    return tuple(x) if isinstance(x, list) else x


class RespErrorValue(bytes):
    """An error reply's text (without the leading '-')."""


class RespConn:
    """A blocking RESP connection that keeps the exact bytes of each reply."""

    def __init__(self, host="127.0.0.1", port=None, unix=None, timeout=10.0):
        if unix:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            addr = unix
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            addr = (host, port)
        self.sock.settimeout(timeout)
        self.sock.connect(addr)
        self.buf = bytearray()
        self.pos = 0

    def settimeout(self, t):
        self.sock.settimeout(t)

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, *args):
        self.sock.sendall(encode_command(*args))

    def _fill(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise ConnectionError("connection closed by the server")
        if self.pos and self.pos == len(self.buf):
            self.buf.clear()
            self.pos = 0
        self.buf += chunk

    def read_reply(self):
        """Returns (R, raw bytes) of the next reply."""
        while True:
            try:
                r, end = parse_reply(self.buf, self.pos)
            except NeedMore:
                self._fill()
                continue
            raw = bytes(self.buf[self.pos:end])
            self.pos = end
            if self.pos > (1 << 20):
                del self.buf[:self.pos]
                self.pos = 0
            return r, raw

    def call(self, *args):
        """Sends one command, returns its reply as R."""
        self.send(*args)
        return self.read_reply()[0]

    def call_raw(self, *args):
        """Sends one command, returns its reply's exact bytes."""
        self.send(*args)
        return self.read_reply()[1]

    def py(self, *args):
        """Sends one command, returns its reply as plain Python values (see to_py)."""
        return to_py(self.call(*args))

    def read_until_close(self, timeout=5.0):
        """Reads until the server closes the connection (or resets it); returns the bytes
        not yet consumed. Raises socket.timeout if the connection stays open."""
        self.sock.settimeout(timeout)
        data = bytes(self.buf[self.pos:])
        self.buf.clear()
        self.pos = 0
        while True:
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk

    def is_closed_by_peer(self, timeout=5.0):
        try:
            self.read_until_close(timeout)
            return True
        except socket.timeout:
            return False

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ----------------------------------------------------------------------------------------
# Server processes


def free_port():
    """A TCP port that was free on 127.0.0.1 a moment ago (bind to 0, read, close)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


_ALL_SERVERS = []


def _die_with_parent():
    """In the server child before exec: SIGTERM when the test process dies, however it dies
    (prctl PR_SET_PDEATHSIG), so that a killed pytest leaves no server behind."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except Exception:  # not Linux, no ctypes: the session-finish hook still stops servers
        pass


class ServerStartError(RuntimeError):
    pass


class Server:
    """One server process (cte-server or redis-server) on 127.0.0.1:port and a Unix socket.

    Unpacks as (host, port, unixsocket)."""

    def __init__(self, kind, binary, extra_args=(), env=None, name=None, ready_check=True):
        self.kind = kind  # "cte" or "redis"
        self.binary = binary
        self.extra_args = list(extra_args)
        self.env = dict(os.environ)
        if env:
            self.env.update(env)
        self.name = name or kind
        self.ready_check = ready_check
        self.host = "127.0.0.1"
        self.port = None
        self.unixsocket = None
        self.proc = None
        self.tmpdir = None
        self.logpath = None
        self.returncode = None
        self.stopped_at = None
        self.started_at = None
        self.password = None
        for i, a in enumerate(self.extra_args):
            if a == "--requirepass" and i + 1 < len(self.extra_args):
                self.password = self.extra_args[i + 1]

    def __iter__(self):
        return iter((self.host, self.port, self.unixsocket))

    def __repr__(self):
        return "<%s %s port=%s pid=%s>" % (self.name, self.binary, self.port,
                                           self.proc.pid if self.proc else None)

    @property
    def addr(self):
        return (self.host, self.port, self.unixsocket)

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def argv(self):
        if self.kind == "redis":
            base = [self.binary, "--save", "", "--appendonly", "no", "--port", str(self.port),
                    "--bind", "127.0.0.1", "--daemonize", "no", "--unixsocket",
                    self.unixsocket, "--dir", self.tmpdir]
        else:
            base = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                    "--unixsocket", self.unixsocket, "--dir", self.tmpdir,
                    "--appendonly", "no"]
        return base + self.extra_args

    def _fresh_dir(self):
        """A new temp dir for a run (a subclass may put files in it)."""
        self.tmpdir = tempfile.mkdtemp(prefix="cte-it-%s-" % self.kind)

    def _ports_fixed(self):
        """Whether the ports are given (then one attempt, no new ports on a clash)."""
        return False

    def _pick_ports(self):
        self.port = free_port()

    def start(self, attempts=5, same_dir=False):
        """Starts the server on a fresh temp dir, or with same_dir on the dir of its last run
        (persistence tests: the restarted server finds its files)."""
        if not os.path.exists(self.binary):
            raise ServerStartError("%s binary not found: %s (build it first, or set "
                                   "CTE_SERVER)" % (self.name, self.binary))
        last = ""
        fixed = self._ports_fixed()
        for _ in range(1 if fixed else attempts):
            if not (same_dir and self.tmpdir and os.path.isdir(self.tmpdir)):
                self._fresh_dir()
            self.unixsocket = os.path.join(self.tmpdir, "s.sock")
            self.logpath = os.path.join(self.tmpdir, "server.log")
            if not fixed:
                self._pick_ports()
            with open(self.logpath, "ab" if same_dir else "wb") as log:
                self.proc = subprocess.Popen(self.argv(), stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, cwd=self.tmpdir,
                                             env=self.env, preexec_fn=_die_with_parent)
            self.started_at = time.time()
            self.stopped_at = None
            _ALL_SERVERS.append(self)
            ok, why = self._wait_ready()
            if ok:
                return self
            last = "%s\n--- log ---\n%s" % (why, self.log_text())
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self.returncode = self.proc.returncode
            self.stopped_at = time.time()
            if not same_dir:
                self.cleanup()
            if "in use" not in last.lower() and "eaddrinuse" not in last.lower() \
                    and "another process" not in why:
                break
        raise ServerStartError("%s did not start: %s" % (self.name, last))

    def _wait_ready(self):
        deadline = time.time() + START_TIMEOUT
        why = "timed out after %.0f s waiting for PING" % START_TIMEOUT
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return False, "exited with status %s before answering PING" % self.proc.returncode
            try:
                with RespConn(port=self.port, timeout=2.0) as c:
                    r = c.call("PING")
                    if r.kind == "-" and r.val.startswith(b"LOADING"):
                        raise OSError("loading")
                    if r == R("+", b"PONG") and self.ready_check:
                        info = c.call("INFO", "server")
                        if info.kind == "$" and info.val:
                            for line in info.val.split(b"\r\n"):
                                if line.startswith(b"process_id:"):
                                    if int(line.split(b":")[1]) != self.proc.pid:
                                        return False, ("another process answers on port %d" %
                                                       self.port)
                    return True, ""
            except (OSError, ConnectionError, ProtocolViolation, ValueError):
                time.sleep(0.02)
        return False, why

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait_exit(self, timeout=None):
        """Waits for the process to exit; returns its status, or raises if it does not."""
        timeout = STOP_TIMEOUT if timeout is None else timeout
        try:
            self.returncode = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.returncode = self.proc.returncode
            self.stopped_at = time.time()
            raise AssertionError("%s (pid %d) did not exit within %.0f s; killed" %
                                 (self.name, self.proc.pid, timeout))
        self.stopped_at = time.time()
        return self.returncode

    def stop(self, check=True):
        """SIGTERM, then waits; with check, asserts a clean exit (status 0)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        rc = self.wait_exit()
        if check and rc != 0:
            raise AssertionError("%s exited with status %s after SIGTERM\n--- log tail ---\n%s"
                                 % (self.name, rc, self.log_text()[-LOG_TAIL:]))
        self.cleanup()
        return rc

    def cleanup(self):
        """Removes the temp dir of a server that has exited (kept with CTE_KEEP_TMP=1)."""
        if KEEP_TMP or not self.tmpdir or self.alive():
            return
        shutil.rmtree(self.tmpdir, ignore_errors=True)

    def log_size(self):
        try:
            return os.path.getsize(self.logpath)
        except (OSError, TypeError):
            return 0

    def log_text(self, offset=0):
        try:
            with open(self.logpath, "rb") as f:
                f.seek(offset)
                return f.read().decode("utf-8", "replace")
        except (OSError, TypeError):
            return "(no log)"

    def conn(self, unix=False, timeout=10.0, auth=True):
        """A new raw RESP connection (authenticated when the server has requirepass)."""
        c = RespConn(port=self.port, unix=self.unixsocket if unix else None, timeout=timeout)
        if auth and self.password:
            r = c.call("AUTH", self.password)
            assert r == R("+", b"OK"), r
        return c

    def redis(self, unix=False, **kw):
        """A redis-py client on this server."""
        import redis
        if self.password and "password" not in kw:
            kw["password"] = self.password
        if unix:
            return redis.Redis(unix_socket_path=self.unixsocket, **kw)
        return redis.Redis(host=self.host, port=self.port, **kw)

    def restart(self):
        if self.alive():
            self.stop(check=False)
        return self.start()

    def kill9(self):
        """SIGKILL, as a crash: the temp dir stays for a restart with same_dir."""
        if self.alive():
            self.proc.kill()
        self.returncode = self.proc.wait()
        self.stopped_at = time.time()

    def restart_same_dir(self, stop=True):
        """Stops the server (SIGTERM, checking a clean exit; stop=False: it already exited)
        and starts it again on the same directory."""
        if stop and self.alive():
            self.proc.send_signal(signal.SIGTERM)
            rc = self.wait_exit()
            assert rc == 0, "exit status %s\n%s" % (rc, self.log_text()[-LOG_TAIL:])
        return self.start(same_dir=True)


# CTE_SERVER=/usr/bin/redis-server runs the whole suite against Redis itself: the way to check
# that a test expects what Redis 7.0 does (COMMANDS.md section 1).
CTE_KIND = "redis" if os.path.basename(CTE_SERVER).startswith("redis-server") else "cte"


def start_cte(extra_args=(), env=None, name="cte-server"):
    return Server(CTE_KIND, CTE_SERVER, extra_args, env=env, name=name).start()


def start_redis(extra_args=(), env=None, name="redis-server"):
    return Server("redis", REDIS_SERVER, extra_args, env=env, name=name).start()


# ----------------------------------------------------------------------------------------
# Failure reports carry the server logs


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item._cte_t0 = time.time()
    item._cte_offsets = {id(s): s.log_size() for s in _ALL_SERVERS if s.alive()}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed:
        return
    t0 = getattr(item, "_cte_t0", 0)
    offsets = getattr(item, "_cte_offsets", {})
    for s in _ALL_SERVERS:
        died_unnoticed = s.proc is not None and s.proc.poll() is not None and not s.stopped_at
        if not (s.alive() or died_unnoticed or (s.stopped_at and s.stopped_at >= t0)):
            continue
        text = s.log_text(offsets.get(id(s), 0))
        if len(text) > LOG_TAIL:
            text = "...\n" + text[-LOG_TAIL:]
        status = "running" if s.alive() else "exited %s" % s.proc.poll()
        rep.sections.append(("%s log (port %s, %s, %s)" % (s.name, s.port, status, s.logpath),
                             text or "(empty)"))


def pytest_sessionfinish(session, exitstatus):
    """The safety net: no server outlives the run, whatever happened (SIGKILL after a grace
    period), and no temp dir stays (unless CTE_KEEP_TMP=1)."""
    for s in _ALL_SERVERS:
        if s.alive():
            s.proc.send_signal(signal.SIGTERM)
            try:
                s.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                s.proc.kill()
                s.proc.wait()
        s.cleanup()


# ----------------------------------------------------------------------------------------
# Fixtures


class _Shared:
    """A session-wide server that is restarted if a test killed it (the test that did is
    failed in its teardown)."""

    def __init__(self, factory):
        self.factory = factory
        self.server = None
        self.error = None

    def get(self):
        if self.server is None or not self.server.alive():
            if self.server is not None:
                self.server.stopped_at = self.server.stopped_at or time.time()
            self.server = self.factory()
        return self.server

    def close(self):
        if self.server is not None and self.server.alive():
            self.server.stop(check=True)


@pytest.fixture(scope="session")
def _cte_shared():
    shared = _Shared(lambda: start_cte(["--enable-debug-command", "yes"]))
    yield shared
    shared.close()


@pytest.fixture(scope="module")  # only the differential test needs it: not kept running after
def _redis_shared():
    if not os.path.exists(REDIS_SERVER):
        pytest.skip("no redis-server at %s" % REDIS_SERVER)
    shared = _Shared(lambda: start_redis())
    yield shared
    shared.close()


def _flushall(server):
    with server.conn() as c:
        r = c.call("FLUSHALL")
        assert r == R("+", b"OK"), "FLUSHALL failed on %s: %r" % (server.name, r)


def _check_alive_after(server):
    if not server.alive():
        rc = server.proc.poll()
        server.returncode = rc
        server.stopped_at = time.time()
        pytest.fail("%s died during this test (exit status %s)\n--- log tail ---\n%s" %
                    (server.name, rc, server.log_text()[-LOG_TAIL:]), pytrace=False)


@pytest.fixture
def cte_server(_cte_shared):
    """The session's cte-server (host, port, unixsocket; a Server), flushed for this test."""
    s = _cte_shared.get()
    _flushall(s)
    yield s
    _check_alive_after(s)


@pytest.fixture
def redis_server(_redis_shared):
    """The session's reference redis-server, flushed for this test."""
    s = _redis_shared.get()
    _flushall(s)
    yield s
    _check_alive_after(s)


@pytest.fixture
def server_factory():
    """Starts extra servers for one test: factory(extra_args, env=None, kind="cte").
    Each is stopped at the end with SIGTERM (status 0 required) unless it already exited."""
    started = []

    def factory(extra_args=(), env=None, kind="cte", name=None):
        if kind == "cte":
            s = start_cte(extra_args, env=env, name=name or "cte-server(custom)")
        else:
            s = start_redis(extra_args, env=env, name=name or "redis-server(custom)")
        started.append(s)
        return s

    yield factory
    errors = []
    for s in started:
        if s.proc.poll() is not None:
            s.cleanup()
            continue  # the test stopped it (and checked how) itself
        try:
            s.stop(check=True)
        except AssertionError as e:
            errors.append(str(e))
            s.cleanup()
    if errors:
        pytest.fail("\n".join(errors), pytrace=False)


@pytest.fixture(params=["tcp", "unix"])
def transport(request):
    return request.param
