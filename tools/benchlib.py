"""benchlib - what the Python benchmark drivers in tools/ share (bench-shm-targets,
bench-checkpoint): a server process on a free loopback port (start, wait for PING, stop with
SIGTERM), one RESP command over a fresh connection, the load average, building missing
binaries with CMake, and a horizontal bar chart as SVG. resp_value reads a whole reply and
cluster_info a node's CLUSTER INFO (tools/cluster, bench-cluster).

Import it from a tool with
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import benchlib
Standard library only (Debian's /usr/bin/python3).
"""

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from xml.sax.saxutils import escape

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def logger(tool):
    """A log(msg) that writes '[tool HH:MM:SS] msg' on stderr."""
    def log(msg):
        sys.stderr.write("[%s %s] %s\n" % (tool, time.strftime("%H:%M:%S"), msg))
        sys.stderr.flush()
    return log


def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def resp_call(port, *args, timeout=30.0):
    """Sends one command over TCP; returns the first line of the reply (b'+OK', b'-ERR ..')."""
    req = b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a), a) for a in (x.encode() for x in args))
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(req)
        buf = b""
        while b"\r\n" not in buf:
            chunk = s.recv(4096)
            if not chunk:
                raise ConnectionError("connection closed")
            buf += chunk
    return buf.split(b"\r\n", 1)[0]


def _read_value(f):
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise ConnectionError("connection closed")
    kind, rest = line[:1], line[1:-2]
    if kind == b"+":
        return rest.decode("utf-8", "replace")
    if kind == b"-":
        return RuntimeError(rest.decode("utf-8", "replace"))
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)
        if len(data) != n + 2:
            raise ConnectionError("connection closed")
        return data[:-2].decode("utf-8", "replace")
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read_value(f) for _ in range(n)]
    raise ConnectionError("unexpected reply %r" % line[:40])


def resp_value(port, *args, host="127.0.0.1", timeout=5.0):
    """One command over a fresh RESP2 connection; the whole reply as str (simple and bulk
    strings, decoded), int, list, None, or a RuntimeError object for an error reply. Raises
    OSError (ConnectionError) when the server does not answer."""
    req = b"*%d\r\n" % len(args) + b"".join(
        b"$%d\r\n%s\r\n" % (len(a), a) for a in (str(x).encode() for x in args))
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(req)
        with s.makefile("rb") as f:
            return _read_value(f)


def cluster_info(port):
    """CLUSTER INFO of the node on port as a dict, or None when it does not answer or
    refuses the command."""
    try:
        r = resp_value(port, "CLUSTER", "INFO", timeout=2.0)
    except OSError:
        return None
    if not isinstance(r, str):
        return None
    return dict(l.split(":", 1) for l in r.splitlines() if ":" in l)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


class Server:
    """One server process: start (waits for PING and its Unix socket), alive, stop (SIGTERM,
    then SIGKILL). argv_fn(port) gives its command line; dirpath is its working directory
    (its log is dirpath/server.log); sock is its Unix socket; env (optional) extra
    environment variables."""

    def __init__(self, name, argv_fn, dirpath, sock, env=None):
        self.name, self.argv_fn, self.dir, self.sock = name, argv_fn, dirpath, sock
        self.env = dict(os.environ, **(env or {}))
        self.proc = self.port = self.logf = None
        os.makedirs(dirpath, exist_ok=True)

    def start(self, timeout=20.0):
        self.port = free_port()
        argv = self.argv_fn(self.port)
        self.logf = open(os.path.join(self.dir, "server.log"), "ab")
        self.logf.write(("==== %s\n" % shlex.join(argv)).encode())
        self.logf.flush()
        self.proc = subprocess.Popen(argv, stdout=self.logf, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, cwd=self.dir, env=self.env)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s at start; log: %s" % (
                    self.name, self.proc.returncode, self.log_tail()))
            try:
                if resp_call(self.port, "PING", timeout=1.0) == b"+PONG" and \
                        os.path.exists(self.sock):
                    return
            except OSError:
                pass
            time.sleep(0.1)
        raise RuntimeError("%s did not answer PING within %.0f s" % (self.name, timeout))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def flushall(self):
        r = resp_call(self.port, "FLUSHALL")
        if r != b"+OK":
            raise RuntimeError("FLUSHALL on %s: %r" % (self.name, r))

    def uri(self, kind):
        """tcp:// or redis:// (TCP), else <kind>:<socket> (unix:, shm:, redis+unix:)."""
        if kind in ("tcp", "redis"):
            return "%s://127.0.0.1:%d" % (kind, self.port)
        return "%s:%s" % (kind, self.sock)

    def log_tail(self, n=10):
        try:
            with open(os.path.join(self.dir, "server.log"), "rb") as f:
                return " | ".join(f.read().decode("utf-8", "replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self):
        """SIGTERM and wait; returns the exit status (None if it was not running)."""
        rc = None
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
        if self.logf:
            self.logf.close()
            self.logf = None
        return rc


def ensure_built(paths, targets, log, build=None):
    """Builds the CMake targets when one of paths is missing (build/ of the repository,
    RelWithDebInfo, -j2). Raises RuntimeError when the build fails."""
    missing = [p for p in paths if not os.path.exists(p)]
    if not missing:
        return
    build = build or os.path.join(REPO, "build")
    log("building %s" % ", ".join(missing))
    if subprocess.run(["cmake", "-S", REPO, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo"],
                      stdout=subprocess.DEVNULL).returncode or \
            subprocess.run(["cmake", "--build", build, "-j2", "--target"] + list(targets),
                           stdout=subprocess.DEVNULL).returncode:
        raise RuntimeError("build failed")


def svg_bars(title, groups, unit, note=""):
    """A horizontal bar chart: groups is [(group title, [(label, value, highlight[, text]),
    ...])], each group drawn on its own scale, each bar labelled with its value and unit (and
    text after it, when given). Returns the SVG text."""
    width, left, bar, gap, head = 880, 170, 22, 6, 30
    height = 40 + sum(head + len(rows) * (bar + gap) + 14 for _, rows in groups) + (24 if note else 0)
    el = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
          'font-family="sans-serif" font-size="13">' % (width, height),
          '<rect width="100%" height="100%" fill="white"/>',
          '<text x="10" y="24" font-size="16" font-weight="bold">%s</text>' % escape(title)]
    y = 40
    for gtitle, rows in groups:
        el.append('<text x="10" y="%d" font-weight="bold">%s</text>' % (y + 18, escape(gtitle)))
        y += head
        top = max([r[1] for r in rows if r[1] is not None] + [1e-12])
        for row in rows:
            label, value, hl = row[:3]
            w = 0 if value is None else (width - left - 240) * value / top
            el.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (
                left - 8, y + bar - 6, escape(label)))
            el.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>' % (
                left, y, w, bar, "#d9534f" if hl else "#5b8ff9"))
            txt = "n/a" if value is None else \
                "{:,.0f} {}".format(value, unit) if value >= 100 else "%.3g %s" % (value, unit)
            if len(row) > 3 and row[3]:
                txt += " " + row[3]
            el.append('<text x="%.1f" y="%d">%s</text>' % (left + w + 6, y + bar - 6, escape(txt)))
            y += bar + gap
        y += 14
    if note:
        el.append('<text x="10" y="%d" font-size="11" fill="#555">%s</text>' % (y + 6, escape(note)))
    el.append("</svg>")
    return "\n".join(el) + "\n"
