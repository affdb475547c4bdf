"""Torture: many connections at once send malformed, truncated, oversized, binary-garbage and
half-sent commands, disconnect at random (FIN or RST) in the middle of a command, and mix
valid pipelines with garbage, while well-behaved clients keep writing. Afterwards the server
still answers on a fresh connection, every write a well-behaved client saw acknowledged (before
or during the torture) reads back intact, and at teardown the server exits 0 on SIGTERM (the
server_factory fixture checks that).

Where the server's answer to hostile input is determined (a protocol error, a limit), the
torture client checks it byte for byte; random garbage only has to leave the server standing.
The run is seeded (CTE_TORTURE_SEED, printed on failure) and bounded by CTE_TORTURE_SECONDS
(default 15) of torture.
"""
import os
import random
import socket
import struct
import threading
import time

from conftest import CTE_KIND, SANITIZE, RespConn, encode_command

from test_protocol import assert_healthy, connected_clients, wait_for

SECONDS = float(os.environ.get("CTE_TORTURE_SECONDS", "15"))
SEED = int(os.environ.get("CTE_TORTURE_SEED", "0")) or random.randrange(1, 1 << 31)
WORKERS = 12
LINGERING = 300  # connections half-way through a command for the whole run
MAX_BULK = 2 << 20  # --proto-max-bulk-len 2mb
QBUF_LIMIT = 1 << 20  # --client-query-buffer-limit 1mb (below MAX_BULK on purpose)
ARGS = ["--proto-max-bulk-len", "2mb", "--client-query-buffer-limit", "1mb",
        "--client-output-buffer-limit", "normal 8mb 4mb 5", "--timeout", "0"]

E_BULK = b"-ERR Protocol error: invalid bulk length\r\n"
E_MBULK = b"-ERR Protocol error: invalid multibulk length\r\n"
E_INLINE = b"-ERR Protocol error: too big inline request\r\n"
E_QUOTES = b"-ERR Protocol error: unbalanced quotes in request\r\n"


class Torturer:
    """One thread: opens connections one after another and runs a random scenario on each."""

    def __init__(self, port, seed, deadline):
        self.port = port
        self.rnd = random.Random(seed)
        self.deadline = deadline
        self.errors = []
        self.counts = {}

    def connect(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(("127.0.0.1", self.port))
        return s

    def close(self, s):
        if self.rnd.random() < 0.5:  # RST instead of FIN
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()

    def send(self, s, data):
        """Sends data in random pieces; False if the server closed meanwhile."""
        try:
            while data:
                n = self.rnd.choice((1, 7, 100, 4096, 1 << 20))
                s.sendall(data[:n])
                data = data[n:]
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def read_until_close(self, s, timeout=10):
        """(bytes, reset): what arrived until EOF, and whether the close was a reset (the
        server closed with our bytes unread, so the kernel may have dropped its last reply)."""
        s.settimeout(timeout)
        data = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return data, False
                data += chunk
        except ConnectionResetError:
            return data, True

    def check_reply(self, what, got, reset, want):
        """got must be want, or a prefix of it when the connection was reset."""
        if got != want and not (reset and want.startswith(got)):
            self.errors.append("%s: got %r, want %r (reset: %s)" % (what, got[-200:], want[-200:],
                                                                    reset))

    def expect_close_with(self, s, what, data, want):
        self.send(s, data)
        self.check_reply(what, *self.read_until_close(s), want)

    # ---- scenarios: each gets a fresh connection and closes it ----

    def garbage(self, s):
        self.send(s, os.urandom(self.rnd.choice((1, 10, 1000, 70000))))
        if self.rnd.random() < 0.5:
            s.settimeout(0.2)
            try:
                s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                pass

    def malformed(self, s):
        bad = self.rnd.choice([
            (b"*abc\r\n", E_MBULK), (b"*-5x\r\n", E_MBULK),
            (b"*99999999999999999999\r\n", E_MBULK), (b"*2147483648\r\n", E_MBULK),
            (b"*2\r\n$3\r\nGET\r\n:1\r\n", b"-ERR Protocol error: expected '$', got ':'\r\n"),
            (b"*1\r\n$-1\r\n", E_BULK), (b"*1\r\n$abc\r\n", E_BULK),
            (b"*1\r\n$%d\r\n" % (MAX_BULK + 1), E_BULK),
            (b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$99999999999\r\n", E_BULK),
            (b'SET "abc\r\n', E_QUOTES), (b"GET 'x\r\n", E_QUOTES),
            (b"x" * 70000, E_INLINE), (b"*" + b"1" * 70000, b"-ERR Protocol error: too big "
                                                           b"mbulk count string\r\n"),
        ])
        self.expect_close_with(s, "malformed %r" % bad[0][:40], *bad)

    def truncated(self, s):
        cmd = encode_command("SET", "junk:%d" % self.rnd.randrange(100), "v" * 100)
        self.send(s, cmd[:self.rnd.randrange(1, len(cmd))])
        time.sleep(self.rnd.random() * 0.05)

    def half_sent_big(self, s):
        # declares a bulk under proto-max-bulk-len, sends part of it, disconnects
        n = self.rnd.randrange(1000, MAX_BULK)
        self.send(s, b"*3\r\n$3\r\nSET\r\n$8\r\njunk:big\r\n$%d\r\n" % n +
                  b"b" * self.rnd.randrange(0, min(n, QBUF_LIMIT // 2)))

    def past_query_buffer_limit(self, s):
        # a bulk under proto-max-bulk-len, past client-query-buffer-limit before it completes:
        # the server must drop the client without a reply
        n = QBUF_LIMIT + 500000
        ok = self.send(s, b"*3\r\n$3\r\nSET\r\n$8\r\njunk:qbl\r\n$%d\r\n" % n +
                       b"q" * (QBUF_LIMIT + 100000))
        got = self.read_until_close(s)[0] if ok else b""
        if got:
            self.errors.append("past the query buffer limit: got %r" % got[:200])

    def pipeline_then_garbage(self, s):
        n = self.rnd.randrange(1, 50)
        keys = ["pipe:%d:%d" % (self.rnd.randrange(1 << 30), i) for i in range(n)]
        req = b"".join(encode_command("SET", k, k) + encode_command("GET", k) for k in keys)
        want = b"".join(b"+OK\r\n$%d\r\n%s\r\n" % (len(k), k.encode()) for k in keys)
        bad, err = self.rnd.choice([(b"*1\r\n$-7\r\n", E_BULK), (b"*x\r\n", E_MBULK),
                                    (b'ECHO "unterminated\r\n', E_QUOTES)])
        self.send(s, req + bad + encode_command("SET", "never", "written"))
        self.check_reply("pipeline then garbage", *self.read_until_close(s), want + err)

    def many_args_few_sent(self, s):
        self.send(s, b"*1000000\r\n" + b"$1\r\na\r\n" * self.rnd.randrange(0, 1000))

    def errors_keep_the_connection(self, s):
        # wrong arity, unknown commands and binary names: error replies, connection stays
        self.send(s, encode_command("GET") + encode_command(b"\x00\xff\r\nxx", "a") +
                  encode_command("SET", "k") + encode_command("PING"))
        s.settimeout(10)
        got = b""
        while not got.endswith(b"+PONG\r\n"):
            chunk = s.recv(65536)
            if not chunk:
                self.errors.append("closed after error replies: %r" % got)
                return
            got += chunk
        if got.count(b"\r\n-ERR") + got.startswith(b"-ERR") != 3:
            self.errors.append("error replies: %r" % got)

    def subscribe_then_garbage(self, s):
        self.send(s, encode_command("SUBSCRIBE", "torture") + os.urandom(200))

    def big_reply_then_vanish(self, s):
        self.send(s, encode_command("GET", "before:big") * self.rnd.randrange(1, 20))
        time.sleep(self.rnd.random() * 0.02)

    SCENARIOS = [garbage, malformed, malformed, truncated, half_sent_big, past_query_buffer_limit,
                 pipeline_then_garbage, pipeline_then_garbage, many_args_few_sent,
                 errors_keep_the_connection, subscribe_then_garbage, big_reply_then_vanish]

    def run(self):
        while time.monotonic() < self.deadline and len(self.errors) < 5:
            scenario = self.rnd.choice(self.SCENARIOS)
            self.counts[scenario.__name__] = self.counts.get(scenario.__name__, 0) + 1
            try:
                s = self.connect()
            except OSError as e:
                self.errors.append("connect failed: %s" % e)
                continue
            try:
                scenario(self, s)
            except socket.timeout:
                self.errors.append("%s: timed out" % scenario.__name__)
            except (ConnectionResetError, BrokenPipeError):
                pass
            finally:
                self.close(s)


class Writer:
    """A well-behaved client that writes during the torture and remembers what was
    acknowledged."""

    def __init__(self, port, deadline):
        self.port = port
        self.deadline = deadline
        self.acked = {}
        self.errors = []
        self.max_latency = 0.0

    def run(self):
        try:
            with RespConn(port=self.port, timeout=10) as c:
                i = 0
                while time.monotonic() < self.deadline:
                    key, val = "during:%d" % i, os.urandom(self.size(i))
                    t0 = time.monotonic()
                    r = c.call_raw("SET", key, val)
                    self.max_latency = max(self.max_latency, time.monotonic() - t0)
                    if r != b"+OK\r\n":
                        self.errors.append("SET %s: %r" % (key, r))
                        return
                    self.acked[key] = val
                    if i % 10 == 0:
                        r = c.call_raw("RPUSH", "during:list", key)
                        assert r == b":%d\r\n" % (i // 10 + 1), r
                    i += 1
        except Exception as e:  # reported by the test, not lost in the thread
            self.errors.append("writer: %r" % e)

    @staticmethod
    def size(i):
        return (1, 100, 5000, 100000)[i % 4]


def test_torture_leaves_the_server_up_and_the_data_intact(server_factory):
    s = server_factory(ARGS)
    rnd = random.Random(SEED)
    before = {}
    with s.conn() as c:
        # data written before the torture: strings (binary), a big value, a hash, a list
        for i in range(2000):
            before["before:%d" % i] = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(64)))
        c.send_raw(b"".join(encode_command("SET", k, v) for k, v in before.items()))
        for _ in before:
            assert c.read_reply()[1] == b"+OK\r\n"
        before["before:big"] = os.urandom(300000)
        assert c.call_raw("SET", "before:big", before["before:big"]) == b"+OK\r\n"
        assert c.call_raw("HSET", "before:hash", "f1", "v1", "f2", b"\x00\r\n") == b":2\r\n"
        assert c.call_raw("RPUSH", "before:list", "a", "b", "c") == b":3\r\n"

    # connections that stay half-way through a command for the whole torture: afterwards each
    # finishes it and must get its own reply (the parser state of each survived the rest)
    lingering = []
    for i in range(LINGERING):
        val = os.urandom(rnd.randrange(1, 3000))
        cmd = encode_command("SET", "linger:%d" % i, val)
        cut = rnd.randrange(1, len(cmd))
        sock = socket.create_connection(("127.0.0.1", s.port), timeout=10)
        sock.sendall(cmd[:cut])
        lingering.append((sock, cmd, cut))
        before["linger:%d" % i] = val

    seconds = SECONDS * (0.5 if SANITIZE else 1)
    deadline = time.monotonic() + seconds
    torturers = [Torturer(s.port, SEED + i, deadline) for i in range(WORKERS)]
    writer = Writer(s.port, deadline)
    threads = [threading.Thread(target=t.run, daemon=True) for t in torturers]
    threads.append(threading.Thread(target=writer.run, daemon=True))
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=seconds + 60)
    assert not any(t.is_alive() for t in threads), "a torture thread hangs (seed %d)" % SEED
    assert s.alive(), "the server died under torture (seed %d)" % SEED

    errors = [e for t in torturers for e in t.errors] + writer.errors
    assert not errors, "seed %d:\n%s" % (SEED, "\n".join(errors[:20]))
    counts = {}
    for t in torturers:
        for k, v in t.counts.items():
            counts[k] = counts.get(k, 0) + v
    print("torture seed %d: %s; %d acknowledged writes, slowest %.3f s" % (
        SEED, counts, len(writer.acked), writer.max_latency))
    assert len(counts) == len(set(f.__name__ for f in Torturer.SCENARIOS)), counts
    assert len(writer.acked) > 50, "the well-behaved writer was starved: %d writes" % len(
        writer.acked)

    for i, (sock, cmd, cut) in enumerate(lingering):
        sock.sendall(cmd[cut:])
    for i, (sock, cmd, cut) in enumerate(lingering):
        got = b""
        while len(got) < 5:
            chunk = sock.recv(5 - len(got))
            assert chunk, "lingering connection %d was closed (seed %d)" % (i, SEED)
            got += chunk
        assert got == b"+OK\r\n", (i, got)
        sock.close()

    # a fresh connection is answered, and every torture connection is gone
    assert_healthy(s)
    assert wait_for(lambda: connected_clients(s) == 1, timeout=20)
    with s.conn() as c:
        items = list(before.items()) + list(writer.acked.items())
        for at in range(0, len(items), 20):  # batches: under the 8 MB output limit
            batch = items[at:at + 20]
            c.send_raw(b"".join(encode_command("GET", key) for key, _ in batch))
            for key, val in batch:
                got = c.read_reply()[1]
                assert got == b"$%d\r\n%s\r\n" % (len(val), val), \
                    "%s lost or changed (seed %d)" % (key, SEED)
        assert c.py("HGETALL", "before:hash") == [b"f1", b"v1", b"f2", b"\x00\r\n"]
        assert c.py("LRANGE", "before:list", 0, -1) == [b"a", b"b", b"c"]
        assert c.py("LLEN", "during:list") == (len(writer.acked) + 9) // 10
        # nothing a hostile client sent after its error, or past a limit, was written
        assert c.py("EXISTS", "never", "junk:big", "junk:qbl") == 0
        if CTE_KIND == "cte":  # Redis 7.0 has no such counter
            stats = c.call("INFO", "stats").val
            assert b"client_query_buffer_limit_disconnections:0\r\n" not in stats, stats
