"""A full or small disk under a file tier or the append-only file, against the real binary.

A file tier's capacity may exceed the free space of the file system under it; these tests put
tiers (and for the rewrite test, the server's directory) on small tmpfs mounts and check that
an acknowledged write is never lost or turned into zeros, and a write that fails changes
nothing, the append-only file included:

  - a TPUT that finds the disk full fails with nothing changed (new blob absent, an existing
    blob keeps its bytes and size, no AOF record: a restart does not bring it back); on a file
    system without fallocate (a loop-mounted ext2) the tier write itself fails, and the write
    is undone, in the keyspace and by a record in the AOF that the loader honours;
  - loading the AOF onto a tier with too little room stops the start naming the tier and the
    bytes missing, or places the blobs on another tier that has room; never zeros;
  - a background rewrite that fails for lack of space backs off (a few forks, not one per
    cron tick), removes its temp file and says so in INFO persistence and the log;
  - a TGET of a large blob is streamed: the server's memory stays bounded and the bytes are
    right.

Mounting needs root: without it the tests skip (the streaming tests need no mount). Run with Debian's interpreter:

    CTE_SERVER=$PWD/build/cte-server /usr/bin/python3 -m pytest -q tests/integration/test_disk_faults.py
"""
import hashlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time

import pytest

from conftest import CTE_KIND, SANITIZE, proc_kb

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="tiers are cte-server's own")

KB = 1 << 10
MB = 1 << 20
BLOCK = 4096


def blocks(n):
    return (n + BLOCK - 1) // BLOCK * BLOCK


@pytest.fixture
def tmpfs():
    """tmpfs(size) -> path of a fresh tmpfs mount of that size (e.g. "8m"), unmounted after."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounts = []

    def make(size):
        d = tempfile.mkdtemp(prefix="cte-tmpfs-")
        rc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", d],
                            capture_output=True, text=True)
        if rc.returncode != 0:
            os.rmdir(d)
            pytest.skip("cannot mount tmpfs: %s" % rc.stderr.strip())
        mounts.append(d)
        return d

    yield make
    for d in mounts:
        subprocess.run(["umount", "-l", d], capture_output=True)
        try:
            os.rmdir(d)
        except OSError:
            pass


def client(s):
    return s.redis(decode_responses=False, socket_timeout=60)


def tiers(r):
    out = {}
    for t in r.execute_command("TIERS"):
        d = dict(zip(t[::2], t[1::2]))
        out[d[b"name"].decode()] = d
    return out


def pattern(n, seed):
    """n bytes that differ per seed and per position (no zero runs)."""
    unit = hashlib.sha256(b"%d" % seed).digest()
    return (unit * (n // len(unit) + 1))[:n]


def start(server_factory, disk_dir, disk_cap="64mb", extra=()):
    args = ["--tier", "ram:ram:64kb", "--tier", "disk:file:%s:%s" % (disk_cap, disk_dir),
            "--max-blob-size", "4gb", "--appendonly", "yes", "--appendfsync", "always"]
    return server_factory(args + list(extra))


def aof_text(s):
    with open(os.path.join(s.tmpdir, "appendonly.aof"), "rb") as f:
        return f.read()


# ---- a TPUT that finds the disk full ----


def test_tput_that_finds_the_disk_full_changes_nothing(server_factory, tmpfs):
    disk = tmpfs("8m")  # the tier claims 64 MiB: the file system runs out first
    s = start(server_factory, disk)
    r = client(s)
    old = pattern(3 * MB, 1)
    assert r.execute_command("TPUT", "t", "a", 0, old) == 3 * MB
    before = tiers(r)["disk"]
    aof_before = aof_text(s)

    # a new blob bigger than the room left
    with pytest.raises(Exception) as e:
        r.execute_command("TPUT", "t", "new", 0, pattern(6 * MB, 2))
    assert re.match(r"OOM no tier has room for the blob \(tier 'disk': its file system has "
                    r"\d+ bytes free\)", str(e.value)), e.value
    assert r.execute_command("TLEN", "t") == 1
    assert r.execute_command("TSIZE", "t", "new") is None
    assert r.execute_command("TGET", "t", "new") is None

    # an existing blob grown past the room left keeps its size and bytes
    with pytest.raises(Exception):
        r.execute_command("TPUT", "t", "a", 2 * MB, pattern(7 * MB, 3))
    assert r.execute_command("TSIZE", "t", "a") == 3 * MB
    assert r.execute_command("TGET", "t", "a") == old

    after = tiers(r)["disk"]
    for k in (b"used", b"blobs"):
        assert after[k] == before[k], (k, before, after)
    assert aof_text(s) == aof_before  # neither failed write was logged

    # the room that is left still takes writes, and everything survives a restart
    small = pattern(1 * MB, 4)
    assert r.execute_command("TPUT", "t", "b", 0, small) == MB
    s.restart_same_dir()
    r = client(s)
    assert r.execute_command("TGET", "t", "a") == old
    assert r.execute_command("TGET", "t", "b") == small
    assert r.execute_command("TSIZE", "t", "new") is None
    assert r.execute_command("TLEN", "t") == 2


def test_ttruncate_past_the_disk_changes_nothing(server_factory, tmpfs):
    disk = tmpfs("4m")
    s = start(server_factory, disk)
    r = client(s)
    data = pattern(MB, 5)
    r.execute_command("TPUT", "t", "a", 0, data)
    with pytest.raises(Exception):
        r.execute_command("TTRUNCATE", "t", "a", 64 * MB)
    assert r.execute_command("TSIZE", "t", "a") == MB
    assert r.execute_command("TGET", "t", "a") == data
    assert b"TTRUNCATE" not in aof_text(s).upper()


@pytest.fixture
def ext2():
    """ext2(size_mb) -> a fresh loop-mounted ext2 of that size: a file system without
    fallocate, where a full disk still shows up as ENOSPC from a tier write."""
    if os.geteuid() != 0:
        pytest.skip("loop-mounting an ext2 image needs root")
    made = []

    def make(size_mb):
        img = tempfile.mktemp(prefix="cte-ext2-", suffix=".img")
        d = tempfile.mkdtemp(prefix="cte-ext2-")
        with open(img, "wb") as f:
            f.truncate(size_mb * MB)
        ok = subprocess.run(["mkfs.ext2", "-q", "-F", img], capture_output=True).returncode == 0
        ok = ok and subprocess.run(["mount", "-o", "loop", img, d],
                                   capture_output=True).returncode == 0
        made.append((img, d))
        if not ok:
            pytest.skip("cannot make and loop-mount an ext2 image")
        return d

    yield make
    for img, d in made:
        subprocess.run(["umount", "-l", d], capture_output=True)
        for f in (img,):
            try:
                os.unlink(f)
            except OSError:
                pass
        try:
            os.rmdir(d)
        except OSError:
            pass


def test_tier_write_that_fails_anyway_is_undone_and_not_replayed(server_factory, ext2):
    disk = ext2(8)  # no fallocate: nothing can be reserved, the tier write itself fails
    s = start(server_factory, disk)
    r = client(s)
    old = pattern(3 * MB, 21)
    assert r.execute_command("TPUT", "t", "a", 0, old) == 3 * MB
    with pytest.raises(Exception) as e:
        r.execute_command("TPUT", "u", "new", 0, pattern(7 * MB, 22))
    assert "No space left on device" in str(e.value), e.value
    assert r.exists("u") == 0  # the tag made for the write went with its blob
    with pytest.raises(Exception) as e:
        r.execute_command("TPUT", "t", "a", 3 * MB, pattern(7 * MB, 23))  # an append
    assert "No space left on device" in str(e.value), e.value
    assert r.execute_command("TSIZE", "t", "a") == 3 * MB
    assert r.execute_command("TGET", "t", "a") == old
    assert r.execute_command("TLEN", "t") == 1
    s.restart_same_dir()
    r = client(s)
    assert r.exists("u") == 0
    assert r.execute_command("TSIZE", "t", "a") == 3 * MB
    assert r.execute_command("TGET", "t", "a") == old


def test_a_failed_write_leaves_a_blob_made_anew_meanwhile_alone(server_factory, ext2):
    """While a write that will fail is in flight, another client deletes the blob and makes it
    anew: the failed write's undo must not reach the new blob, in memory or in the AOF (it was
    found by name, and logged a TDEL of the new, acknowledged blob)."""
    disk = ext2(8)
    s = start(server_factory, disk, extra=["--enable-debug-command", "yes"])
    r = client(s)
    assert r.execute_command("TPUT", "t", "a", 0, pattern(3 * MB, 30)) == 3 * MB
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 300000)
    a = s.conn(timeout=20)
    try:
        a.send("TPUT", "u", "new", 0, pattern(7 * MB, 31))
        deadline = time.time() + 10  # until the server ran it: its tier write is in flight
        while r.info("commandstats").get("cmdstat_tput", {}).get("calls", 0) < 2:
            assert time.time() < deadline, "the write never ran"
            time.sleep(0.01)
        assert r.execute_command("TDEL", "u", "new") == 1
        assert r.execute_command("TPUT", "u", "new", 0, b"fresh") == 5
        rep = a.read_reply()[0]
        assert rep.kind == "-" and b"No space left on device" in rep.val, rep
    finally:
        a.close()
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    assert r.execute_command("TGET", "u", "new") == b"fresh"
    s.restart_same_dir()
    r = client(s)
    assert r.execute_command("TGET", "u", "new") == b"fresh"


# ---- loading onto a tier with too little room ----


def fill_for_load(r, n, size):
    blobs = {}
    for i in range(n):
        blobs["b%d" % i] = pattern(size, 100 + i)
        assert r.execute_command("TPUT", "t", "b%d" % i, 0, blobs["b%d" % i]) == size
    return blobs


def test_load_onto_a_small_disk_stops_the_start_naming_tier_and_bytes(server_factory, tmpfs):
    big, small = tmpfs("24m"), tmpfs("8m")
    s = start(server_factory, big)
    r = client(s)
    fill_for_load(r, 40, 256 * KB)  # 10 MiB: more than the small disk holds
    s.proc.send_signal(15)
    assert s.wait_exit() == 0
    s.extra_args = [a.replace(big, small) for a in s.extra_args]
    aof = aof_text(s)
    before = s.log_size()
    with pytest.raises(Exception):
        s.start(same_dir=True, attempts=1)
    log = s.log_text(before)
    assert s.proc.returncode not in (None, 0), log
    assert re.search(r"tier 'disk' \d+ \(its file system is full\)", log), log
    m = re.search(r"needs (\d+) more bytes.*: (\d+) bytes missing", log)
    assert m, log
    assert 0 < int(m.group(2)) <= int(m.group(1)) == 256 * KB
    assert aof_text(s) == aof  # the file is left as it was for a start with more room


def test_load_places_blobs_on_another_tier_that_has_room(server_factory, tmpfs):
    big, small, spare = tmpfs("24m"), tmpfs("8m"), tmpfs("24m")
    s = start(server_factory, big)
    r = client(s)
    blobs = fill_for_load(r, 40, 256 * KB)
    s.proc.send_signal(15)
    assert s.wait_exit() == 0
    s.extra_args = [a.replace(big, small) for a in s.extra_args] + [
        "--tier", "spare:file:64mb:%s" % spare]
    s.start(same_dir=True, attempts=1)
    r = client(s)
    for k, v in blobs.items():
        assert r.execute_command("TGET", "t", k) == v, k
    t = tiers(r)
    assert t["spare"][b"blobs"] > 0 and t["disk"][b"blobs"] > 0
    # a rewrite keeps them all
    r.execute_command("BGREWRITEAOF")
    deadline = time.time() + 20
    while time.time() < deadline:
        info = r.info("persistence")
        if not info["aof_rewrite_in_progress"] and not info["aof_rewrite_scheduled"]:
            break
        time.sleep(0.05)
    s.restart_same_dir()
    r = client(s)
    for k, v in blobs.items():
        assert r.execute_command("TGET", "t", k) == v, k


# ---- a rewrite that finds the disk full ----


def test_failed_rewrite_backs_off_removes_its_temp_file_and_says_so(server_factory, tmpfs):
    d = tmpfs("8m")  # the server's directory: the AOF and the rewrite's temp file live here
    s = server_factory(["--dir", d, "--tier", "ram:ram:64mb", "--appendonly", "yes",
                        "--auto-aof-rewrite-min-size", "1mb",
                        "--auto-aof-rewrite-percentage", "100"])
    r = client(s)
    # the AOF grows past the min size: the rewrite starts by itself and keeps wanting to
    filler = os.path.join(d, "filler")
    with open(filler, "wb") as f:
        f.write(b"\0" * (3 * MB))
    for i in range(12):
        r.set("k%d" % i, pattern(256 * KB, i))
    log0 = s.log_size()
    t0 = time.time()
    time.sleep(3.5)
    log = s.log_text(log0)
    forks = log.count("rewriting started")
    info = r.info("persistence")
    # a fork per cron tick (10 per second) before; now 1 s, 2 s, 4 s apart
    assert 1 <= forks <= 3, log
    # one line per failure (a fork started before the window may fail inside it)
    assert 1 <= log.count("Background AOF rewrite failed") <= forks + 1, log
    assert "No space left on device" in log, log
    assert info["aof_last_bgrewrite_status"] == "err"
    assert info["aof_rewrites_consecutive_failures"] >= 1
    assert info["aof_rewrite_retry_in_sec"] >= 0
    assert "space" in str(info["aof_last_bgrewrite_error"])
    # no temp file is left behind by a failed try: look between tries (a retry that is running
    # has its own temp file), i.e. with no rewrite in progress before and after the listing
    # and no try having ended in between
    deadline = time.time() + 10
    while True:
        before = r.info("persistence")
        left = [f for f in os.listdir(d) if f.startswith("temp-rewriteaof")]
        after = r.info("persistence")
        if (not before["aof_rewrite_in_progress"] and not after["aof_rewrite_in_progress"] and
                before["aof_rewrites_consecutive_failures"] ==
                after["aof_rewrites_consecutive_failures"]):
            break
        assert time.time() < deadline, "a rewrite was always in progress"
        time.sleep(0.05)
    assert not left, left
    # writes still work meanwhile, and once there is room the next try succeeds
    os.unlink(filler)
    deadline = time.time() + 30  # the backoff after three failures is 8 s
    while time.time() < deadline:
        info = r.info("persistence")
        if info["aof_last_bgrewrite_status"] == "ok" and not info["aof_rewrite_in_progress"]:
            break
        time.sleep(0.1)
    assert info["aof_last_bgrewrite_status"] == "ok", info
    assert info["aof_rewrites_consecutive_failures"] == 0
    s.restart_same_dir()
    r = client(s)
    assert r.get("k11") == pattern(256 * KB, 11)


# ---- a large TGET is streamed ----


def put_big(r, name, size, piece=32 * MB):
    """Writes a blob of size bytes in pieces; returns its sha256."""
    h = hashlib.sha256()
    unit = pattern(piece, 7)
    for off in range(0, size, piece):
        chunk = unit[:min(piece, size - off)]
        # vary each piece so that a misplaced piece changes the hash
        chunk = (b"%016d" % off) + chunk[16:]
        assert r.execute_command("TPUT", "t", name, off, chunk) == off + len(chunk)
        h.update(chunk)
    return h.hexdigest()


def tget_hash(port, name, slow_bytes=0):
    """TGET over a raw socket, hashing the bulk as it arrives; returns (length, sha256).
    The first slow_bytes are read slowly (a 2 ms pause per read), so that the server's sends
    meet a full socket, then the rest at full speed."""
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(b"*3\r\n$4\r\nTGET\r\n$1\r\nt\r\n$%d\r\n%s\r\n" % (len(name), name.encode()))
    buf = b""
    while b"\r\n" not in buf:
        buf += s.recv(65536)
    hdr, rest = buf.split(b"\r\n", 1)
    assert hdr.startswith(b"$"), hdr
    n = int(hdr[1:])
    h = hashlib.sha256()
    got = 0
    want = n + 2
    data = rest
    while True:
        take = data[:max(0, min(len(data), n - got))]
        h.update(take)
        got += len(take)
        want -= len(data)
        if want <= 0:
            break
        if got < slow_bytes:
            time.sleep(0.002)
        data = s.recv(1 << 20)
        assert data, "connection closed after %d of %d bytes" % (got, n)
    s.close()
    return n, h.hexdigest()


def put_sparse_big(r, name, size, piece=32 * MB):
    """Writes a blob of size bytes as a few pieces (at the start, in the middle and across the
    end) with zero gaps between them, which the blob reads as zero bytes; returns its sha256.
    The server stores the gaps too (the tier counts every byte), so a read of the blob reads
    all of it from the tier, without the test pushing gigabytes through the socket."""
    unit = pattern(2 * piece, 7)
    offsets = sorted({0, (size // 2) // piece * piece, max(0, size - 2 * piece)})
    h = hashlib.sha256()
    at = 0
    zeros = bytes(piece)
    for off in offsets:
        assert off >= at, "pieces overlap: the blob is too small for this layout"
        chunk = ((b"%016d" % off) + unit[16:])[:min(2 * piece, size - off)]
        assert r.execute_command("TPUT", "t", name, off, chunk) >= off + len(chunk)
        while at < off:
            n = min(piece, off - at)
            h.update(zeros[:n])
            at += n
        h.update(chunk)
        at = off + len(chunk)
    assert at == size
    return h.hexdigest()


@pytest.mark.parametrize("kind", ["file", "ram"])
def test_large_tget_is_streamed_with_bounded_memory(server_factory, kind):
    # past 2 GiB on a file tier (the old reply buffer aborted there), 256 MiB on RAM
    size = 2048 * MB + 4 * MB if kind == "file" else 256 * MB
    tier = ("disk:file:3gb:disk" if kind == "file" else "ram:ram:512mb")
    s = server_factory(["--tier", tier, "--max-blob-size", "4gb",
                        "--proto-max-bulk-len", "64mb"])
    r = client(s)
    digest = put_sparse_big(r, "big", size)
    tiers = {t[1]: t for t in r.execute_command("TIERS")}
    used = tiers[b"disk" if kind == "file" else b"ram"]
    assert used[used.index(b"used") + 1] >= size  # every byte is on the tier, gaps too
    base_vm, base_rss = proc_kb(s.pid, "VmSize"), proc_kb(s.pid, "VmRSS")
    peak = [base_vm, base_rss]
    import threading
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], proc_kb(s.pid, "VmSize"))
            peak[1] = max(peak[1], proc_kb(s.pid, "VmRSS"))
            time.sleep(0.01)

    w = threading.Thread(target=watch)
    w.start()
    try:
        # slowly for the first 384 MiB, so that the stream runs against a full socket for a
        # while; the bound must hold over the whole reply, 2 GiB boundary included
        n, got = tget_hash(s.port, "big", slow_bytes=384 * MB)
        # other clients are served while the reply streams out
        assert r.ping()
    finally:
        done.set()
        w.join()
    assert n == size and got == digest
    grew_vm, grew_rss = (peak[0] - base_vm) * KB, (peak[1] - base_rss) * KB
    print("TGET %s %d MiB: VmSize +%d MiB, RSS +%d MiB" % (kind, size // MB, grew_vm // MB,
                                                      grew_rss // MB))
    # a few MiB per reply in flight (plus allocator slack), never the blob's size
    assert grew_rss < 64 * MB, "RSS grew by %d MiB" % (grew_rss // MB)
    assert grew_vm < 160 * MB, "VmSize grew by %d MiB" % (grew_vm // MB)
    # the blob is not busy afterwards: a write to it goes through
    assert r.execute_command("TPUT", "t", "big", 0, b"x") == size


def read_replies(sock, n):
    """Reads n RESP2 replies (bulk, simple, integer, error) from a raw socket; bulks as bytes."""
    buf = bytearray()
    out = []

    def fill():
        d = sock.recv(1 << 20)
        assert d, "connection closed"
        buf.extend(d)

    pos = 0
    while len(out) < n:
        while buf.find(b"\r\n", pos) < 0:
            fill()
        end = buf.find(b"\r\n", pos)
        line = bytes(buf[pos:end])
        if line[:1] == b"$" and line != b"$-1":
            ln = int(line[1:])
            while len(buf) < end + 2 + ln + 2:
                fill()
            out.append(bytes(buf[end + 2:end + 2 + ln]))
            pos = end + 2 + ln + 2
        else:
            out.append(line)
            pos = end + 2
        if pos > 64 * MB:
            del buf[:pos]
            pos = 0
    return out


def test_streamed_tgets_keep_reply_order_and_survive_writes_and_hangups(server_factory):
    s = server_factory(["--tier", "ram:ram:64mb", "--tier", "disk:file:512mb:disk",
                        "--max-blob-size", "4gb", "--enable-debug-command", "yes"])
    r = client(s)
    a, b = pattern(40 * MB, 11), pattern(24 * MB, 12)
    for name, data in (("a", a), ("b", b)):
        for off in range(0, len(data), 8 * MB):
            r.execute_command("TPUT", "t", name, off, data[off:off + 8 * MB], 0.0)
    r.execute_command("TPUT", "t", "small", 0, b"tiny", 0.0)
    # a slow tier: the small late reply before the streams finishes last
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 50000)
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=60)
    cmds = [("TGET", "t", "small"), ("TGET", "t", "a"), ("PING",), ("TGET", "t", "b"),
            ("TGET", "t", "a", 5, 10), ("TGET", "t", "b", MB, 5 * MB)]
    from conftest import encode_command
    sock.sendall(b"".join(encode_command(*c) for c in cmds))
    time.sleep(0.05)
    # a write to a blob being streamed waits for the stream, then applies
    import threading
    wrote = []
    w = threading.Thread(target=lambda: wrote.append(
        client(s).execute_command("TPUT", "t", "a", 0, b"NEW")))
    w.start()
    got = read_replies(sock, len(cmds))
    w.join()
    assert wrote == [40 * MB]
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    assert got[0] == b"tiny"
    assert got[1] == a  # the bytes as they were when the read began
    assert got[2] == b"+PONG"
    assert got[3] == b
    assert got[4] == a[5:15]
    assert got[5] == b[MB:6 * MB]
    sock.close()
    assert r.execute_command("TGET", "t", "a", 0, 3) == b"NEW"

    # more pipelined large TGETs than a client may have late replies (it stops reading
    # commands for a while, and must resume): all come back, in order, in bounded memory
    r.execute_command("TPUT", "t", "c", 0, a[:5 * MB])  # RAM
    r.execute_command("TPUT", "t", "d", 0, b[:4 * MB], 0.0)  # file tier
    cmds = []
    for i in range(150):
        cmds += [("TGET", "t", "d" if i % 2 else "c"), ("PING",)]
    sock = socket.create_connection(("127.0.0.1", s.port), timeout=60)
    sock.sendall(b"".join(encode_command(*c) for c in cmds))
    got = read_replies(sock, len(cmds))
    sock.close()
    for i, g in enumerate(got):
        want = b"+PONG" if i % 2 else (b[:4 * MB] if (i // 2) % 2 else a[:5 * MB])
        assert g == want, i
    if not SANITIZE:  # ASan's quarantine keeps up to 256 MiB of freed memory resident
        assert proc_kb(s.pid, "VmHWM") < 256 * 1024  # 75 x 5 + 75 x 4 MiB would be 675 MiB

    # a client that hangs up in the middle of a stream: the blob is released
    for _ in range(3):
        h = socket.create_connection(("127.0.0.1", s.port), timeout=60)
        h.sendall(encode_command("TGET", "t", "a"))
        h.recv(65536)
        h.close()
    deadline = time.time() + 10
    while time.time() < deadline:
        info = r.info("tiers")
        if info.get("tier_io_inflight") == 0:
            break
        time.sleep(0.05)
    assert r.info("tiers").get("tier_io_inflight") == 0
    assert r.execute_command("TPUT", "t", "a", 0, b"AFTER") == 40 * MB
    assert r.execute_command("TGET", "t", "a", 0, 5) == b"AFTER"
    assert r.ping()


def test_load_whose_tier_writes_fail_stops_naming_the_blobs(server_factory, ext2):
    big, small = ext2(24), ext2(8)  # no fallocate: the replayed writes themselves fail
    s = start(server_factory, big)
    r = client(s)
    fill_for_load(r, 40, 256 * KB)
    s.proc.send_signal(15)
    assert s.wait_exit() == 0
    s.extra_args = [a.replace(big, small) for a in s.extra_args]
    before = s.log_size()
    with pytest.raises(Exception):
        s.start(same_dir=True, attempts=1)
    log = s.log_text(before)
    assert s.proc.returncode not in (None, 0), log
    assert re.search(r"the write of blob 'b\d+' of tag 't' \(db 0\) failed on its tier "
                     r"\(No space left on device\)", log), log


def test_large_tget_under_an_address_space_limit_streams_or_gets_an_error(server_factory):
    if not shutil.which("prlimit"):
        pytest.skip("prlimit(1) not installed")
    if SANITIZE:
        pytest.skip("ASan maps terabytes of shadow memory: an address-space limit stops it")
    size = 512 * MB
    s = server_factory(["--tier", "disk:file:1gb:disk", "--max-blob-size", "4gb",
                        "--proto-max-bulk-len", "64mb"])
    r = client(s)
    digest = put_big(r, "big", size)
    vm = proc_kb(s.pid, "VmSize") * KB
    # room for the server as it is plus 256 MiB: less than the blob
    subprocess.run(["prlimit", "--pid", str(s.pid), "--as=%d" % (vm + 256 * MB)], check=True)
    n, got = tget_hash(s.port, "big")
    assert n == size and got == digest
    # inside MULTI the reply is built whole: too big for the limit, it is an error, not a crash
    p = r.pipeline(transaction=True)
    p.execute_command("TGET", "t", "big")
    p.execute_command("TSIZE", "t", "big")
    res = p.execute(raise_on_error=False)
    assert isinstance(res[0], Exception) and "OOM" in str(res[0]), str(res[0])[:200]
    assert res[1] == size
    assert r.ping()
    # CLIENT REPLY OFF: nothing to send, nothing read
    raw = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    from conftest import encode_command
    raw.sendall(encode_command("CLIENT", "REPLY", "OFF") + encode_command("TGET", "t", "big") +
                encode_command("CLIENT", "REPLY", "ON"))
    assert raw.recv(100) == b"+OK\r\n"
    raw.close()
    assert r.ping()


def test_a_large_tget_that_arrives_during_a_move_streams_the_moved_bytes(server_factory):
    """A streamed TGET reads its blob piece by piece: opened while a move of the blob was in
    flight, it went on reading extents the move's end had handed to the new list, and the
    server crashed. It now waits for the move, then streams what the blob holds."""
    s = server_factory(["--tier", "ram:ram:2mb::0.5", "--tier", "disk:file:64mb:disk:0",
                        "--enable-debug-command", "yes"])
    r = client(s)
    data = pattern(6 * MB, 21)
    assert r.execute_command("TPUT", "t", "b", 0, data[:MB], 1) == MB  # RAM
    assert r.execute_command("TPUT", "t", "b", MB, data[MB:]) == 6 * MB  # spills to disk
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 1000000)
    mover = socket.create_connection(("127.0.0.1", s.port), timeout=60)
    from conftest import encode_command
    mover.sendall(encode_command("REORG", "t", "b", 0))  # shares the disk extents, copies RAM
    time.sleep(0.2)
    reader = socket.create_connection(("127.0.0.1", s.port), timeout=60)
    reader.sendall(encode_command("TGET", "t", "b"))
    assert read_replies(mover, 1) == [b"disk"]
    r.execute_command("DEBUG", "TIER-DELAY", "disk", 0)
    assert read_replies(reader, 1) == [data]
    reader.close()
    mover.close()
    assert r.ping()


def test_a_client_that_never_reads_a_streamed_tget_is_closed_after_the_stall_timeout(
        server_factory):
    """A streamed TGET holds writes to its blob off until its last byte left: a client that
    reads none of it must not hold them off forever (tget-stall-timeout)."""
    s = server_factory(["--tier", "ram:ram:64mb", "--tget-stall-timeout", "1"])
    r = client(s)
    data = pattern(16 * MB, 41)
    for off in range(0, len(data), 8 * MB):
        r.execute_command("TPUT", "t", "b", off, data[off:off + 8 * MB])
    idle = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    idle.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    from conftest import encode_command
    idle.sendall(encode_command("TGET", "t", "b"))  # streamed; never read
    time.sleep(0.3)
    t0 = time.time()
    w = client(s)
    assert w.execute_command("TPUT", "t", "b", 0, b"y") == 16 * MB  # waited for the close
    waited = time.time() - t0
    assert 0.5 < waited < 10, waited
    assert r.execute_command("TGET", "t", "b", 0, 2) == b"y" + data[1:2]
    idle.close()
    # a client that reads steadily is never closed, however long its reply takes
    reader = socket.create_connection(("127.0.0.1", s.port), timeout=30)
    reader.sendall(encode_command("TGET", "t", "b"))
    got = bytearray()
    while len(got) < 16 * MB + 12:
        chunk = reader.recv(256 * 1024)
        assert chunk, "closed while reading"
        got += chunk
        time.sleep(0.02)  # 16 MiB at ~12 MB/s: longer than the timeout
    reader.close()
    assert bytes(got[got.index(b"\r\n") + 2:-2]) == b"y" + data[1:]
