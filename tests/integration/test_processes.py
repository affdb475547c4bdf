"""The server as a process among others: one server per Unix socket, per --dir and per tier
file; the command line; CONFIG GET dir; -LOADING while the append-only file loads; the time
SIGTERM takes.

A second server that must be refused is run directly (subprocess.run with a timeout), not
through the fixtures, which retry a start that failed on an address in use."""
import os
import signal
import socket
import subprocess
import time

import pytest

from conftest import (CTE_KIND, CTE_SERVER, SANITIZE, START_TIMEOUT, STOP_TIMEOUT, R, RespConn,
                      free_port)

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="cte-server's own process rules")


def run_second(args, timeout=START_TIMEOUT, cwd=None):
    """Runs a cte-server that is expected to refuse to start; returns (status, output)."""
    p = subprocess.run([CTE_SERVER] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout.decode("utf-8", "replace")


def second_args(tmp, **over):
    """Arguments for a second server with its own port, dir and socket unless overridden."""
    opts = {"port": str(free_port()), "bind": "127.0.0.1", "dir": str(tmp / "d2"),
            "unixsocket": str(tmp / "s2.sock"), "appendonly": "no"}
    opts.update(over)
    out = []
    for k, v in opts.items():
        out += ["--" + k, v]
    return out


@pytest.fixture
def first(server_factory):
    return server_factory(["--appendfsync", "always", "--appendonly", "yes"])


# ---- one server per Unix socket ---------------------------------------------------------


def test_a_live_unix_socket_is_not_taken_over(first, tmp_path):
    rc, out = run_second(second_args(tmp_path, unixsocket=first.unixsocket))
    assert rc != 0, out
    assert first.unixsocket in out and "in use" in out, out
    assert os.path.exists(first.unixsocket), "the refused start removed the socket file"
    with first.conn(unix=True) as c:
        assert c.call("PING") == R("+", b"PONG")


def test_a_stale_unix_socket_file_is_replaced(server_factory, tmp_path):
    path = str(tmp_path / "stale.sock")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)  # bound, never listening, closed: what a killed server leaves behind
    s.close()
    assert os.path.exists(path)
    srv = server_factory(["--unixsocket", path])
    with RespConn(unix=path) as c:
        assert c.call("PING") == R("+", b"PONG")
    srv.stop()
    assert not os.path.exists(path)


# ---- one server per --dir and per tier file ---------------------------------------------


def test_a_second_server_on_the_same_dir_is_refused_naming_the_dir_and_the_pid(first, tmp_path):
    with first.conn() as c:
        assert c.call("TPUT", "t", "b", 0, b"first's bytes", "0") == R(":", 13)
    rc, out = run_second(second_args(tmp_path, dir=first.tmpdir))
    assert rc != 0, out
    assert first.tmpdir in out and "pid %d" % first.pid in out, out
    with first.conn() as c:
        assert c.call("TGET", "t", "b") == R("$", b"first's bytes"), "the tier file was reused"
        for i in range(100):
            assert c.call("SET", "k%d" % i, i) == R("+", b"OK")
        assert c.call("BGREWRITEAOF").kind == "+"
    with open(os.path.join(first.tmpdir, "cte-server.lock")) as f:
        assert f.read().strip() == str(first.pid)


def daemon_pid(port, timeout=START_TIMEOUT):
    """The pid of the daemon answering on port (the parent exits before the child listens)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with RespConn(port=port, timeout=5) as c:
                info = c.py("INFO", "server").decode()
            return int(info.split("process_id:")[1].split("\r\n")[0])
        except OSError:
            time.sleep(0.02)
    return None


def test_a_daemonizing_second_server_is_refused_before_it_forks(first, tmp_path):
    port = free_port()
    rc, out = run_second(second_args(tmp_path, dir=first.tmpdir, daemonize="yes", port=str(port)))
    if rc == 0:  # it forked: stop the daemon it left before failing
        pid = daemon_pid(port)
        if pid:
            os.kill(pid, signal.SIGTERM)
    assert rc != 0, "the parent exited 0: the refusal went to the daemon's log only"
    assert "pid %d" % first.pid in out, out


def test_a_daemon_holds_the_dir_lock_under_its_own_pid(tmp_path):
    d = tmp_path / "d"
    port = free_port()
    rc, out = run_second(second_args(tmp_path, dir=str(d), daemonize="yes", port=str(port),
                                     logfile=str(tmp_path / "log")))
    assert rc == 0, out
    pid = daemon_pid(port)
    assert pid, "the daemon never answered"
    try:
        assert (d / "cte-server.lock").read_text().strip() == str(pid)
    finally:
        os.kill(pid, signal.SIGTERM)


def test_the_dir_lock_goes_with_the_process_even_after_kill_9(server_factory, tmp_path):
    a = server_factory(["--appendonly", "yes", "--appendfsync", "always"])
    with a.conn() as c:
        assert c.call("SET", "k", "v") == R("+", b"OK")
    a.kill9()
    b = server_factory(["--dir", a.tmpdir, "--appendonly", "yes"])
    with b.conn() as c:
        assert c.call("GET", "k") == R("$", b"v")
    b.stop()  # before the fixture removes a's dir, which b uses


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a read-only tmpfs needs root")
def test_a_read_only_dir_starts_without_the_lock(server_factory, tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", str(d)], check=True)
    try:
        srv = server_factory(["--dir", str(d), "--tier", "ram:ram:1mb"])
        with srv.conn() as c:
            assert c.call("SET", "k", "v") == R("+", b"OK")
        assert "starting without it" in srv.log_text()
        srv.stop()
    finally:
        subprocess.run(["umount", str(d)])


def test_a_tier_file_another_server_holds_is_refused_and_left_alone(server_factory, tmp_path):
    tiers = ["--tier", "ram:ram:1mb", "--tier", "f:file:1mb:%s:0" % (tmp_path / "shared")]
    a = server_factory(tiers)
    with a.conn() as c:
        assert c.call("TPUT", "t", "b", 0, b"held", "0") == R(":", 4)
    rc, out = run_second(second_args(tmp_path) + tiers)
    assert rc != 0, out
    data = str(tmp_path / "shared" / "f.data")
    assert data in out and "pid %d" % a.pid in out, out
    with a.conn() as c:
        assert c.call("TGET", "t", "b") == R("$", b"held")


# ---- the command line -------------------------------------------------------------------


def test_an_option_without_a_value_names_the_option(tmp_path):
    rc, out = run_second(["--port"], cwd=str(tmp_path))
    assert rc != 0
    assert "'--port' needs a value" in out, out


def test_a_config_file_after_options_is_read_as_the_config_file(server_factory, tmp_path):
    conf = tmp_path / "x.yaml"
    conf.write_text("hz: 17\n")
    srv = server_factory(["--appendonly", "no", str(conf)])
    with srv.conn() as c:
        assert c.py("CONFIG", "GET", "hz") == [b"hz", b"17"]
        assert c.py("CONFIG", "GET", "appendonly") == [b"appendonly", b"no"]


def test_help_documents_the_config_file_rule():
    out = subprocess.run([CTE_SERVER, "--help"], stdout=subprocess.PIPE, timeout=5).stdout
    assert b"takes one value" in out, out


def test_config_get_dir_answers_the_absolute_path(server_factory):
    srv = server_factory(["--dir", "data"])  # relative to the server's working directory
    with srv.conn() as c:
        got = c.py("CONFIG", "GET", "dir")[1].decode()
    assert got == os.path.realpath(os.path.join(srv.tmpdir, "data")), got


# ---- -LOADING while the append-only file loads ------------------------------------------


def write_big_aof(path, n):
    parts = []
    for i in range(n):
        k, v = b"key:%d" % i, b"value-%d" % i
        parts.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, len(v), v))
    with open(path, "wb") as f:
        f.write(b"".join(parts))


def test_clients_get_loading_while_the_aof_loads_and_then_the_data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    n = 100000 if SANITIZE else 600000  # about 1 s of loading here
    write_big_aof(str(d / "appendonly.aof"), n)
    port = free_port()
    p = subprocess.Popen([CTE_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(d),
                          "--unixsocket", str(tmp_path / "s.sock"), "--appendonly", "yes"],
                         stdout=open(str(tmp_path / "log"), "wb"), stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + START_TIMEOUT
        c = None
        while c is None and time.time() < deadline:
            try:
                c = RespConn(port=port, timeout=10)
            except OSError:
                time.sleep(0.005)
        assert c is not None, "never accepted a connection"
        r = c.call("GET", "key:1")
        assert r == R("-", b"LOADING Redis is loading the dataset in memory"), r
        assert c.call("PING").val.startswith(b"LOADING")
        info = c.py("INFO", "persistence").decode()
        assert "loading:1\r\n" in info, info
        fields = dict(l.split(":", 1) for l in info.split("\r\n") if ":" in l)
        assert int(fields["loading_total_bytes"]) == os.path.getsize(d / "appendonly.aof")
        assert 0 <= int(fields["loading_loaded_bytes"]) <= int(fields["loading_total_bytes"])
        assert "loading_loaded_perc" in fields and "loading_eta_seconds" in fields
        assert c.call("SELECT", 0) == R("+", b"OK"), "SELECT is allowed while loading"
        while c.call("GET", "key:1").kind == "-" and time.time() < deadline:
            time.sleep(0.01)
        assert c.call("GET", "key:1") == R("$", b"value-1")
        assert c.call("GET", "key:%d" % (n - 1)) == R("$", b"value-%d" % (n - 1))
        assert c.call("DBSIZE") == R(":", n)
        assert "loading:0\r\n" in c.py("INFO", "persistence").decode()
        c.close()
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=STOP_TIMEOUT) == 0


def start_loading(tmp_path, n):
    """A server loading an AOF of n SETs; returns (process, connection made during the load,
    AOF path). The connection's first GET is checked to get -LOADING."""
    d = tmp_path / "data"
    d.mkdir()
    aof = str(d / "appendonly.aof")
    write_big_aof(aof, n)
    port = free_port()
    p = subprocess.Popen([CTE_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(d),
                          "--unixsocket", str(tmp_path / "s.sock"), "--appendonly", "yes"],
                         stdout=open(str(tmp_path / "log"), "wb"), stderr=subprocess.STDOUT)
    deadline, c = time.time() + START_TIMEOUT, None
    while c is None and time.time() < deadline:
        try:
            c = RespConn(port=port, timeout=10)
        except OSError:
            time.sleep(0.005)
    assert c is not None, "never accepted a connection"
    assert c.call("GET", "key:1").val.startswith(b"LOADING")
    return p, c, aof


def file_digest(path):
    import hashlib
    with open(path, "rb") as f:
        return hashlib.sha1(f.read()).hexdigest()


@pytest.mark.parametrize("how", ["SIGTERM", "SHUTDOWN SAVE"])
def test_a_shutdown_during_the_load_stops_it_and_leaves_the_aof_as_it_was(tmp_path, how):
    n = 100000 if SANITIZE else 600000
    p, c, aof = start_loading(tmp_path, n)
    before = file_digest(aof)
    t0 = time.monotonic()
    if how == "SIGTERM":
        p.send_signal(signal.SIGTERM)
    else:
        c.send("SHUTDOWN", "SAVE")
        assert c.is_closed_by_peer(STOP_TIMEOUT)
    assert p.wait(timeout=STOP_TIMEOUT) == 0
    took = time.monotonic() - t0
    c.close()
    log = open(str(tmp_path / "log")).read()
    assert "stopped for the shutdown" in log, log
    assert file_digest(aof) == before, "the AOF changed: a save during the load kept a part"
    assert not os.path.exists(str(tmp_path / "s.sock"))
    assert took < (STOP_TIMEOUT if SANITIZE else 0.5), "took %.3f s" % took


def test_a_corrupt_aof_stops_the_start_and_leaves_no_socket_file(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "appendonly.aof").write_bytes(b"*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n"
                                       b"*1\r\n$3\r\nXXX\r\n")
    sock = str(tmp_path / "s.sock")
    rc, out = run_second(second_args(tmp_path, dir=str(d), unixsocket=sock, appendonly="yes"))
    assert rc == 1, out
    assert "Unknown command 'XXX'" in out, out
    assert not os.path.exists(sock), "the listeners opened for the load left their socket file"


# ---- shutdown -----------------------------------------------------------------------------


def test_an_idle_server_exits_promptly_after_sigterm(server_factory):
    srv = server_factory()
    with srv.conn() as c:
        assert c.call("SET", "k", "v") == R("+", b"OK")
    time.sleep(0.3)
    t0 = time.monotonic()
    srv.signal(signal.SIGTERM)
    assert srv.wait_exit(5) == 0
    took = time.monotonic() - t0
    limit = STOP_TIMEOUT if SANITIZE else 0.5  # LeakSanitizer scans the heap at exit
    assert took < limit, "exited %.3f s after SIGTERM" % took
