"""The cte Python module (python/cte, on libcte) against the real server, over every transport:
tcp://, unix: and shm: (the session's cte-server has a Unix socket and shm enabled).

The module under test is the one built in the build tree of $CTE_SERVER (CTE_BUILD_DIR). An
ASan build's extension only loads into a Python started with the ASan runtime preloaded: in
such a build this file skips itself inside integration_python, and the ctest
integration_python_cte runs it with libasan preloaded (python/CMakeLists.txt)."""
import array
import errno
import gc
import glob
import os
import random
import shutil
import subprocess
import sys
import threading
import time
import tracemalloc

import pytest

from conftest import CTE_KIND, CTE_SERVER, ROOT, SANITIZE

BUILD = os.path.dirname(os.path.abspath(CTE_SERVER))
EXT = glob.glob(os.path.join(BUILD, "python", "cte", "_cte.*so"))
ASAN_RUNTIME = os.environ.get("CTE_PYTHON_ASAN", "")


def _asan_loaded():
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


def _configured():
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            return "CTE_PYTHON_INSTALL_DIR" in f.read()
    except OSError:
        return False


if CTE_KIND != "cte":
    pytest.skip("the cte module needs cte-server", allow_module_level=True)
if not EXT:
    if _configured():  # CMake found Python's headers: the module should have been built
        raise RuntimeError("python/cte is configured in %s but %s/python/cte/_cte*.so is "
                           "missing: build the tree" % (BUILD, BUILD))
    pytest.skip("python/cte not built in %s (CMake found no Python headers)" % BUILD,
                allow_module_level=True)
if SANITIZE and not _asan_loaded():
    pytest.skip("ASan build: runs as the ctest integration_python_cte, with the ASan runtime "
                "preloaded", allow_module_level=True)
if ASAN_RUNTIME:  # the preload served this process; servers get the suite's usual environment
    for _k in ("LD_PRELOAD", "ASAN_OPTIONS", "PYTHONMALLOC"):
        os.environ.pop(_k, None)

os.environ["CTE_BUILD_DIR"] = BUILD
sys.path.insert(0, str(ROOT / "python"))
import cte  # noqa: E402

TRANSPORTS = ["tcp", "unix", "shm"]


def uri_of(server, transport, query=""):
    if transport == "tcp":
        return "tcp://127.0.0.1:%d%s" % (server.port, query)
    return "%s:%s%s" % (transport, server.unixsocket, query)


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param


@pytest.fixture
def client(cte_server, transport):
    c = cte.Client(uri_of(cte_server, transport))
    yield c
    c.close()


@pytest.fixture
def tag(client):
    return client.tag("pt")


def fd_count():
    return len(os.listdir("/proc/self/fd"))


# ---- blobs ----------------------------------------------------------------------------------


def test_the_module_comes_from_the_build_tree():
    assert os.path.dirname(cte._cte.__file__) == os.path.join(BUILD, "python", "cte")
    assert cte.Client.__module__ == "cte" and issubclass(cte.ResponseError, cte.Error)


def test_put_and_get_with_offsets_sizes_and_gaps(tag):
    assert tag.put_blob("b", b"hello world") == 11
    assert tag.get_blob("b") == b"hello world"
    assert tag.get_blob("b", 5) == b"hello"
    assert tag.get_blob("b", 5, 6) == b"world"
    assert tag.get_blob("b", size=3, offset=8) == b"rld"
    assert tag.get_blob("b", None, 6) == b"world"
    assert tag.get_blob("b", 100, 6) == b"world"  # past the end: what exists
    assert tag.get_blob("b", offset=50) == b""
    assert tag.get_blob("b", 0) == b""
    assert tag.put_blob("b", b"HELLO") == 11  # overwrite in place, never shrinks
    assert tag.put_blob("b", b"!", offset=14) == 15  # a gap reads as zeros
    assert tag.get_blob("b") == b"HELLO world\0\0\0!"
    assert tag.put_blob("empty", b"") == 0
    assert tag.get_blob("empty") == b"" and tag.get_blob_size("empty") == 0


def test_data_may_be_any_buffer_and_is_stored_as_its_bytes(tag):
    raw = bytes(range(256)) * 4
    cases = {
        "bytes": raw,
        "bytearray": bytearray(raw),
        "memoryview": memoryview(raw)[10:500],
        "array": array.array("i", range(100)),
        "strided": memoryview(raw)[::3],  # not contiguous: gathered first
        "2d": memoryview(bytearray(raw)).cast("B", (32, 32)),
    }
    for name, data in cases.items():
        expect = memoryview(data).tobytes()
        assert tag.put_blob(name, data) == len(expect), name
        assert tag.get_blob(name) == expect, name


def test_scores_info_and_reorganize(cte_server, client, tag):
    assert tag.put_blob("s", b"abc", score=0.25) == 3
    assert tag.get_blob_score("s") == 0.25
    assert tag.put_blob("d", b"abc") == 3
    assert tag.get_blob_score("d") == 1.0  # the default
    info = tag.get_blob_info("s")
    assert info["size"] == 3 and info["score"] == 0.25 and info["writes"] == 1
    assert set(info) == {"size", "score", "tier", "ctime", "mtime", "atime", "reads", "writes"}
    rows = client.command("TIERS")
    tiers = {row[row.index(b"name") + 1].decode() for row in rows}
    tier = tag.reorganize_blob("s", 1.0)
    assert tier in tiers and tag.get_blob_info("s")["tier"] == tier
    assert tag.get_blob_score("s") == 1.0
    assert tag.reorganize_blob("s", 0) in tiers and tag.get_blob_score("s") == 0.0
    assert tag.get_blob("s") == b"abc"  # the move kept the bytes


def test_size_truncate_and_delete(tag):
    tag.put_blob("t", b"0123456789")
    assert tag.get_blob_size("t") == 10
    assert tag.truncate_blob("t", 4) == 4 and tag.get_blob("t") == b"0123"
    assert tag.truncate_blob("t", 6) == 6 and tag.get_blob("t") == b"0123\0\0"
    assert tag.truncate_blob("new", 3) == 3 and tag.get_blob("new") == b"\0\0\0"
    assert tag.del_blob("t") is True
    assert tag.del_blob("t") is False
    with pytest.raises(cte.NotFoundError):
        tag.get_blob_size("t")


def test_contained_blobs_come_back_as_str_whatever_the_name(client, tag):
    names = ["a", "b c", "caf\u00e9", "\u65e5\u672c", "x" * 300]
    for n in names:
        tag.put_blob(n, b"1")
    tag.put_blob(b"raw-bytes", b"1")  # bytes names are accepted too
    client.command("TPUT", "pt", b"bad-\xff", 0, b"1")  # not UTF-8: surrogateescape
    got = tag.get_contained_blobs()
    assert all(isinstance(n, str) for n in got)
    assert sorted(got) == sorted(names + ["raw-bytes", "bad-\udcff"])
    assert tag.get_blob("bad-\udcff") == b"1"  # such a name round-trips
    assert client.tag("nothing-here").get_contained_blobs() == []


def test_tag_and_blob_queries(client):
    for t in ("run-1", "run-2", "other"):
        for b in ("x1", "x2", "y1"):
            client.tag(t).put_blob(b, b"data")
    assert sorted(client.tag_query("run-.*")) == ["run-1", "run-2"]
    assert len(client.tag_query(".*", max_tags=2)) == 2
    assert client.tag_query("none") == []
    got = client.blob_query("run-.*", "x.*")
    assert sorted(got) == [("run-1", "x1"), ("run-1", "x2"), ("run-2", "x1"), ("run-2", "x2")]
    assert all(isinstance(p, tuple) and len(p) == 2 for p in got)
    assert len(client.blob_query(".*", ".*", max_blobs=4)) == 4
    now = int(time.time() * 1000)
    assert client.blob_query(".*", ".*", since=now + 60000) == []
    assert len(client.blob_query(".*", ".*", until=now + 60000)) == 9
    with pytest.raises(cte.ResponseError, match="invalid regex"):
        client.tag_query("(")


def test_search_ranks_blob_contents(client):
    docs = client.tag("docs")
    docs.put_blob("a", b"the tiered store keeps blobs on tiers")
    docs.put_blob("b", b"blobs blobs blobs everywhere")
    docs.put_blob("c", b"nothing relevant here")
    client.tag("misc").put_blob("d", b"blobs")
    hits = client.search("blobs")
    assert {(t, b) for t, b, _ in hits} == {("docs", "a"), ("docs", "b"), ("misc", "d")}
    assert [h[2] for h in hits] == sorted((h[2] for h in hits), reverse=True)
    assert all(isinstance(s, float) and s > 0 for _, _, s in hits)
    assert len(client.search("blobs", k=1)) == 1
    assert {t for t, _, _ in client.search("blobs", tag_regex="docs")} == {"docs"}
    assert [b for _, b, _ in client.search("blobs", blob_regex="d")] == ["d"]
    assert client.search("absent") == []


def test_command_turns_replies_into_python_values(cte_server, transport):
    with cte.Client(uri_of(cte_server, transport)) as c:
        assert c.command("PING") == "PONG"
        assert c.command("SET", "k", b"v\0\r\n") == "OK"
        assert c.command("GET", "k") == b"v\0\r\n"
        assert c.command("GET", "missing") is None
        assert c.command("INCRBY", "n", 41) == 41 and c.command("INCRBYFLOAT", "f", 0.5) == b"0.5"
        assert c.command("RPUSH", "l", "a", bytearray(b"b"), memoryview(b"c")) == 3
        assert c.command("LRANGE", "l", 0, -1) == [b"a", b"b", b"c"]
        c.command("HSET", "h", "f", "v")
        assert c.command("HGETALL", "h") == [b"f", b"v"]  # RESP2: a flat array
        with pytest.raises(cte.WrongTypeError, match="^WRONGTYPE"):
            c.command("LPUSH", "k", "x")
        with pytest.raises(cte.ResponseError, match="unknown command"):
            c.command("NOSUCHCOMMAND")
        assert c.command("MULTI") == "OK"
        assert c.command("INCR", "k") == "QUEUED"
        res = c.command("EXEC")
        assert len(res) == 1 and isinstance(res[0], cte.ResponseError)
        assert "not an integer" in str(res[0])
    with cte.Client(uri_of(cte_server, transport, "?resp=3")) as c:
        assert c.command("HGETALL", "h") == {b"f": b"v"}
        c.command("SADD", "s", "a", "b")
        assert c.command("SMEMBERS", "s") == {b"a", b"b"}
        c.command("ZADD", "z", 1.5, "m")
        assert c.command("ZSCORE", "z", "m") == 1.5
        assert c.command("GET", "missing") is None
        t = c.tag("r3")  # the tag calls read RESP3's shapes too (doubles, maps)
        assert t.put_blob("b", b"resp three words", score=0.5) == 16
        assert t.get_blob_score("b") == 0.5 and t.get_blob_info("b")["score"] == 0.5
        assert t.get_blob("b", 4, 5) == b"thre" and t.get_contained_blobs() == ["b"]
        hits = c.search("three", tag_regex="r3")
        assert [(tg, b) for tg, b, _ in hits] == [("r3", "b")] and hits[0][2] > 0
        assert c.blob_query("r3", ".*") == [("r3", "b")] and c.tag_query("r3") == ["r3"]


def test_command_rejects_what_it_cannot_send(client):
    for bad in (None, True, [1], object()):
        with pytest.raises(TypeError):
            client.command("SET", "k", bad)
    with pytest.raises(TypeError):
        client.command()
    with pytest.raises(TypeError):
        client.command("PING", x=1)
    with pytest.raises(cte.Error, match="not supported"):
        client.command("SUBSCRIBE", "ch")  # libcte refuses: replies would not pair
    assert client.command("PING") == "PONG"


def test_cte_spellings_of_the_calls(client):
    t = client.tag("camel")
    t.PutBlob("b", b"0123456789")
    t.PutBlob(blob_name="b", data=b"AB", off=2)
    assert t.GetBlob("b", 4) == b"01AB"
    assert t.GetBlob(blob_name="b", data_size=3, off=7) == b"789"
    assert t.GetBlobSize("b") == 10 and t.GetBlobScore(blob_name="b") == 1.0
    assert t.GetContainedBlobs() == ["b"]
    assert isinstance(t.ReorganizeBlob(blob_name="b", new_score=0.5), str)
    assert client.TagQuery("cam.*") == ["camel"] and client.TagQuery(tag_regex=".*", max_tags=1)
    assert client.BlobQuery("camel", "b") == [("camel", "b")]
    assert client.BlobQuery(tag_regex=".*", blob_regex=".*", max_blobs=1) == [("camel", "b")]
    with pytest.raises(TypeError):
        t.GetBlob("b")  # data_size is required, as in CTE


# ---- errors ---------------------------------------------------------------------------------


def test_bad_arguments_raise_and_change_nothing(client, tag):
    tag.put_blob("b", b"keep")
    bad_calls = [
        (TypeError, lambda: tag.put_blob("b", "a str")),
        (TypeError, lambda: tag.put_blob("b", 12)),
        (TypeError, lambda: tag.put_blob("b", None)),
        (TypeError, lambda: tag.put_blob(3, b"x")),
        (TypeError, lambda: tag.put_blob("b")),
        (TypeError, lambda: tag.put_blob("b", b"x", 0, 0.5, 9)),
        (TypeError, lambda: tag.put_blob("b", b"x", offest=1)),
        (TypeError, lambda: tag.put_blob("b", b"x", 0, offset=1)),
        (TypeError, lambda: tag.put_blob("b", b"x", offset="1")),
        (TypeError, lambda: tag.put_blob("b", b"x", offset=1.0)),
        (TypeError, lambda: tag.put_blob("b", b"x", score="high")),
        (ValueError, lambda: tag.put_blob("b", b"x", offset=-1)),
        (ValueError, lambda: tag.put_blob("b", b"x", offset=2 ** 64)),
        (ValueError, lambda: tag.put_blob("b", b"x", score=1.5)),
        (ValueError, lambda: tag.put_blob("b", b"x", score=-0.1)),
        (ValueError, lambda: tag.put_blob("b", b"x", score=float("nan"))),
        (ValueError, lambda: tag.put_blob("b\0c", b"x")),
        (ValueError, lambda: client.tag("t\0").put_blob("b", b"x")),
        (ValueError, lambda: tag.get_blob("b", -1)),
        (ValueError, lambda: tag.get_blob("b", 1, -5)),
        (TypeError, lambda: tag.get_blob("b", "3")),
        (TypeError, lambda: tag.get_blob_into("b", b"read-only bytes")),
        (ValueError, lambda: tag.truncate_blob("b", -1)),
        (ValueError, lambda: tag.reorganize_blob("b", 2)),
        (TypeError, lambda: tag.reorganize_blob("b", None)),
        (ValueError, lambda: client.search("x", k=0)),
        (ValueError, lambda: client.tag_query(".*", max_tags=-1)),
        (ValueError, lambda: client.blob_query(".*", ".*", since=-1)),
        (TypeError, lambda: client.tag(None)),
    ]
    for exc, call in bad_calls:
        with pytest.raises(exc):
            call()
    assert tag.get_blob("b") == b"keep" and tag.get_blob_score("b") == 1.0
    assert tag.get_contained_blobs() == ["b"] and client.tag_query(".*") == ["pt"]


def test_a_missing_blob_is_not_found_for_every_reading_call(tag):
    for call in (tag.get_blob, tag.get_blob_view, tag.get_blob_size, tag.get_blob_score,
                 tag.get_blob_info, lambda n: tag.get_blob_into(n, bytearray(4)),
                 lambda n: tag.reorganize_blob(n, 0.5)):
        with pytest.raises(cte.NotFoundError) as e:
            call("nope")
        assert isinstance(e.value, KeyError) and "nope" in str(e.value)
    assert tag.del_blob("nope") is False
    assert tag.get_contained_blobs() == []


def test_server_errors_carry_the_servers_message(client):
    client.command("SET", "str", "x")
    with pytest.raises(cte.WrongTypeError) as e:
        client.tag("str").put_blob("b", b"x")
    assert str(e.value).startswith("WRONGTYPE Operation against a key")
    assert isinstance(e.value, cte.ResponseError) and isinstance(e.value, cte.Error)
    with pytest.raises(cte.WrongTypeError):
        client.tag("str").get_blob("b")
    assert client.command("GET", "str") == b"x"  # usable afterwards, nothing changed


@pytest.mark.parametrize("uri,exc", [
    ("nope://x", cte.AddressError),
    ("tcp://127.0.0.1:99999", cte.AddressError),
    ("tcp://127.0.0.1:6379/notadb", cte.AddressError),
    ("unix:", cte.AddressError),
    ("", cte.AddressError),
    ("tcp://127.0.0.1:1", cte.ConnectionError),
    ("unix:/nonexistent/cte.sock", cte.ConnectionError),
    ("shm:/nonexistent/cte.sock", cte.ConnectionError),
])
def test_bad_addresses_raise_with_a_reason(uri, exc):
    with pytest.raises(exc) as e:
        cte.Client(uri)
    assert str(e.value)
    if exc is cte.AddressError:
        assert isinstance(e.value, ValueError)
    else:
        assert isinstance(e.value, ConnectionError)
        assert e.value.errno in (errno.ECONNREFUSED, errno.ENOENT)


def test_client_arguments_are_checked():
    for args, exc in [((), TypeError), ((5,), TypeError), ((b"tcp://x",), TypeError),
                      (("tcp://127.0.0.1:1\0",), cte.AddressError),
                      (("tcp://127.0.0.1:1", -1), ValueError),
                      (("tcp://127.0.0.1:1", "soon"), TypeError)]:
        with pytest.raises(exc):
            cte.Client(*args)


def test_shm_attach_refused_by_the_server_carries_its_message(server_factory):
    s = server_factory(["--shm-enabled", "no"])
    with pytest.raises(cte.ResponseError, match="shared memory is disabled"):
        cte.Client("shm:%s" % s.unixsocket)
    with cte.Client("unix:%s" % s.unixsocket) as c:  # the socket path works
        assert c.command("PING") == "PONG"


@pytest.mark.parametrize("tr", TRANSPORTS)
def test_a_server_that_goes_away_gives_connection_errors(server_factory, tr):
    s = server_factory()
    c = cte.Client(uri_of(s, tr))
    t = c.tag("t")
    assert t.put_blob("b", b"x" * 100) == 100
    s.stop()  # SIGTERM, exit status 0 checked
    with pytest.raises(cte.ConnectionError):
        t.put_blob("b", b"y")
    with pytest.raises(cte.ConnectionError):  # and stays broken
        t.get_blob("b")
    c.close()
    with pytest.raises(cte.ConnectionError, match="closed"):
        t.get_blob("b")


def test_authentication_and_db_come_from_the_address(server_factory):
    s = server_factory(["--requirepass", "s3cret"])
    with pytest.raises(cte.AuthenticationError, match="WRONGPASS"):
        cte.Client("tcp://:wrong@127.0.0.1:%d" % s.port)
    with cte.Client("tcp://127.0.0.1:%d" % s.port) as c:
        with pytest.raises(cte.AuthenticationError, match="NOAUTH"):
            c.tag("t").put_blob("b", b"x")
    for uri in ("tcp://:s3cret@127.0.0.1:%d/2" % s.port,
                "unix:%s?password=s3cret&db=2" % s.unixsocket,
                "shm:%s?password=s3cret&db=2" % s.unixsocket):
        with cte.Client(uri) as c:
            assert c.tag("t").put_blob(uri[:3], b"x") == 1
    with cte.Client("tcp://:s3cret@127.0.0.1:%d/2" % s.port) as c2, \
            cte.Client("tcp://:s3cret@127.0.0.1:%d" % s.port) as c0:
        assert sorted(c2.tag("t").get_contained_blobs()) == ["shm", "tcp", "uni"]
        assert c0.tag("t").get_contained_blobs() == []


def test_a_timeout_breaks_the_call_and_the_connection(cte_server, transport):
    c = cte.Client(uri_of(cte_server, transport), timeout=0.3)
    t0 = time.monotonic()
    with pytest.raises(cte.TimeoutError) as e:
        c.command("BLPOP", "never-pushed", 5)
    assert time.monotonic() - t0 < 4
    assert isinstance(e.value, cte.ConnectionError) and isinstance(e.value, TimeoutError)
    with pytest.raises(cte.ConnectionError):
        c.command("PING")
    c.close()


# ---- large blobs, views, buffers ------------------------------------------------------------


def test_large_blobs_round_trip(tag):
    big = random.Random(7).randbytes(8 << 20)
    assert tag.put_blob("big", big) == len(big)
    assert tag.get_blob("big") == big
    assert tag.get_blob("big", 1 << 20, 3 << 20) == big[3 << 20:4 << 20]
    with tag.get_blob_view("big") as v:
        assert len(v) == len(big) and v == big
    buf = bytearray(len(big) + 10)
    assert tag.get_blob_into("big", buf) == len(big) and buf[:len(big)] == big
    part = bytes(range(256)) * (12 << 10)  # 3 MiB written at an offset inside
    assert tag.put_blob("big", part, offset=1 << 20) == len(big)
    expect = big[:1 << 20] + part + big[(1 << 20) + len(part):]
    assert tag.get_blob("big") == expect
    assert tag.get_blob_size("big") == len(big)


def test_a_view_reads_without_copy_and_blocks_the_client_until_released(cte_server, client,
                                                                        transport, tag):
    tag.put_blob("v", b"view me")
    v = tag.get_blob_view("v")
    assert isinstance(v, memoryview) and v.readonly and v.tobytes() == b"view me"
    with pytest.raises(TypeError):
        v[0] = 0
    sub = v[1:3]  # derived views keep the export alive too
    v.release()
    with pytest.raises(cte.ViewInUseError) as e:
        tag.put_blob("v", b"CHANGED")
    assert isinstance(e.value, BufferError)
    assert bytes(sub) == b"ie"
    sub.release()
    with cte.Client(uri_of(cte_server, transport)) as other:  # the refused put sent nothing
        assert other.tag("pt").get_blob("v") == b"view me"
    with tag.get_blob_view("v", 4, 1) as w:
        assert w == b"iew "
    assert tag.put_blob("v", b"V") == 7  # released: calls work again
    with tag.get_blob_view("v") as w:
        exporter = w.obj
    tag.get_blob_size("v")  # a call makes that exporter stale
    with pytest.raises(BufferError, match="stale"):
        memoryview(exporter)
    tag.put_blob("empty", b"")
    with tag.get_blob_view("empty") as w:
        assert len(w) == 0 and w.tobytes() == b""


def test_close_with_a_live_view_keeps_its_memory_until_released(cte_server, transport):
    fds = fd_count()
    c = cte.Client(uri_of(cte_server, transport))
    t = c.tag("pt")
    t.put_blob("v", b"x" * 5000)
    v = t.get_blob_view("v")
    exporter = v.obj
    c.close()  # deferred: the view still reads valid memory
    assert c.closed and bytes(v) == b"x" * 5000 and fd_count() > fds
    with pytest.raises(cte.ConnectionError, match="closed"):
        t.get_blob("v")
    v.release()  # the last export: now the connection goes
    assert fd_count() == fds
    with pytest.raises(BufferError, match="stale"):
        memoryview(exporter)


def test_get_blob_into_fills_a_writable_buffer(tag):
    tag.put_blob("i", b"0123456789")
    buf = bytearray(4)
    assert tag.get_blob_into("i", buf) == 4 and buf == b"0123"
    assert tag.get_blob_into("i", buf, offset=8) == 2 and buf == b"8923"
    arr = array.array("b", [0] * 16)
    assert tag.get_blob_into("i", arr) == 10 and arr.tobytes()[:10] == b"0123456789"
    assert tag.get_blob_into("i", bytearray()) == 0


# ---- lifecycle, threads, leaks --------------------------------------------------------------


def test_context_manager_close_and_tag_objects(cte_server, transport):
    uri = uri_of(cte_server, transport)
    with cte.Client(uri) as c:
        assert repr(c) == "<cte.Client %r>" % uri and c.uri == uri and not c.closed
        t = cte.Tag(c, "ctx")
        assert t.name == "ctx" and t.client is c and repr(t) == "<cte.Tag 'ctx'>"
        assert c.tag(b"ctx").name == "ctx"
        t.put_blob("b", b"1")
    assert c.closed and repr(c).endswith(" closed>")
    c.close()  # idempotent
    with pytest.raises(cte.ConnectionError, match="closed"):
        t.get_blob("b")
    with pytest.raises(cte.ConnectionError):
        with c:
            pass
    with pytest.raises(TypeError):
        cte.Tag("not a client", "x")


def test_threads_may_share_a_client_and_the_gil_is_released_while_waiting(cte_server,
                                                                          transport):
    uri = uri_of(cte_server, transport)
    shared = cte.Client(uri)
    errors = []

    def worker(k):
        try:
            t = shared.tag("thr")
            for i in range(200):
                data = (b"%d-%d;" % (k, i)) * (i + 1)
                t.put_blob("w%d-%d" % (k, i), data)
                assert t.get_blob("w%d-%d" % (k, i)) == data
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and len(shared.tag("thr").get_contained_blobs()) == 800

    # A call blocked in the server (BLPOP) lets other Python threads run meanwhile.
    blocked = cte.Client(uri)
    done = threading.Event()
    result = []
    th = threading.Thread(target=lambda: (result.append(blocked.command("BLPOP", "q", 5)),
                                          done.set()))
    th.start()
    ticks = 0
    t0 = time.monotonic()
    while ticks < 20 and time.monotonic() - t0 < 4:
        time.sleep(0.005)
        ticks += 1
    assert ticks == 20 and not done.is_set(), "the main thread could not run while BLPOP waited"
    shared.command("RPUSH", "q", "item")  # another client wakes it
    th.join(10)
    assert result == [[b"q", b"item"]]
    blocked.close()
    shared.close()


def test_calls_leak_neither_objects_nor_descriptors(cte_server, transport):
    uri = uri_of(cte_server, transport)
    with cte.Client(uri) as c:
        t = c.tag("leak")
        payload = b"p" * 4096
        for i in range(5):
            t.put_blob("b%d" % i, payload)

        def round_():
            for i in range(50):
                t.put_blob("b%d" % (i % 5), payload, score=0.5)
                t.get_blob("b%d" % (i % 5))
                with t.get_blob_view("b1") as v:
                    v.tobytes()
                t.get_blob_into("b2", bytearray(16))
                t.get_blob_size("b3")
                t.get_blob_score("b3")
                t.get_blob_info("b3")
                t.get_contained_blobs()
                c.tag_query("le.*")
                c.blob_query("le.*", ".*")
                c.search("p")
                c.command("HSET", "h", "f", i)
                c.command("HGETALL", "h")
                for bad in (lambda: t.get_blob("missing"), lambda: t.put_blob("x", "str")):
                    try:
                        bad()
                    except (cte.Error, TypeError):
                        pass

        round_()  # warm caches
        if SANITIZE:  # LeakSanitizer checks at exit (tracemalloc leaks its own traces there)
            round_()
        else:
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(10):
                round_()
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
            tracemalloc.stop()
            # one small object kept per call would be 500 x 50 bytes or more
            assert grown < 8192, "Python memory grew by %d bytes in 500 loops" % grown
    fds = fd_count()
    for _ in range(30):
        cte.Client(uri).close()
        with cte.Client(uri) as c:
            c.command("PING")
        del c
    gc.collect()
    assert fd_count() == fds


def test_the_installed_module_works_from_its_prefix(cte_server, tmp_path):
    cmake = shutil.which("cmake")
    if not cmake or not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
        pytest.skip("needs cmake and the build tree")
    prefix = str(tmp_path / "p")
    p = subprocess.run([cmake, "--install", BUILD, "--prefix", prefix], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    assert p.returncode == 0, p.stdout.decode("utf-8", "replace")
    pkgs = glob.glob(os.path.join(prefix, "lib", "python3*", "dist-packages"))
    assert len(pkgs) == 1
    env = {k: v for k, v in os.environ.items() if k not in ("CTE_BUILD_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = pkgs[0]
    if ASAN_RUNTIME:
        env.update(LD_PRELOAD=ASAN_RUNTIME, PYTHONMALLOC="malloc")
    code = ("import cte, sys; c = cte.Client(sys.argv[1]); t = c.tag('inst'); "
            "t.put_blob('b', b'installed'); print(cte.__file__); print(t.get_blob('b').decode())")
    p = subprocess.run([sys.executable, "-c", code, "shm:" + cte_server.unixsocket], env=env,
                       cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=60)
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0, out
    assert out.splitlines() == [os.path.join(pkgs[0], "cte", "__init__.py"), "installed"]


# ---- datasets (numpy) -----------------------------------------------------------------------

def _numpy():
    if ASAN_RUNTIME:  # `import numpy` alone leaves 79 blocks to LeakSanitizer at exit
        pytest.skip("numpy's own import leaks under LeakSanitizer: the buffer-level test "
                    "covers the C calls in the ASan run")
    return pytest.importorskip("numpy")


def test_dataset_buffer_calls_round_trip_without_numpy(tag):
    """The C half alone (what the ASan run checks): _dataset_write/_read/_info/_set_attr."""
    data = array.array("d", [i * 0.5 for i in range(6 * 7)])
    tag._dataset_write("buf", "float64", (6, 7), (4, 4), data, (0, 0), (6, 7), 0.5)
    assert tag._dataset_info("buf") == ("float64", (6, 7), (4, 4), {})
    out = array.array("d", bytes(8 * 3 * 3))
    tag._dataset_read("buf", (2, 3), (3, 3), out)
    assert list(out) == [data[(2 + y) * 7 + 3 + x] for y in range(3) for x in range(3)]
    tag._dataset_set_attr("buf", "k", "v")
    assert tag._dataset_info("buf")[3] == {"k": "v"}
    with pytest.raises(ValueError, match="data holds 8 bytes"):
        tag._dataset_write("buf", "float64", (6, 7), (4, 4), b"12345678", (0, 0), (6, 7))
    with pytest.raises(ValueError, match="buffer's size"):
        tag._dataset_read("buf", (0, 0), (1, 1), bytearray(3))
    with pytest.raises(TypeError, match="unsupported element type 'complex64'"):
        tag._dataset_write("c", "complex64", (1,), (1,), b"12345678", (0,), (1,))
    with pytest.raises(ValueError, match="same rank"):
        tag._dataset_write("buf", "float64", (6, 7), (4,), data, (0, 0), (6, 7))
    with pytest.raises(cte.NotFoundError):
        tag._dataset_info("nope")
    assert tag.list_datasets() == ["buf"]


DATASET_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                 "float32", "float64"]


def _random_array(numpy, rng, shape, dtype):
    if numpy.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = numpy.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DATASET_TYPES)
def test_datasets_of_every_type_and_rank_round_trip(tag, dtype):
    numpy = _numpy()
    rng = numpy.random.default_rng(7)
    for shape, chunks in [((1000,), (64,)), ((37, 50), (8, 16)), ((9, 10, 11), (4, 10, 3)),
                          ((3, 4, 5, 7), (2, 3, 5, 4))]:
        a = _random_array(numpy, rng, shape, dtype)
        name = "d%d-%s" % (len(shape), dtype)
        tag.write_dataset(name, a, chunks=chunks)
        back = tag.read_dataset(name)
        assert back.dtype == numpy.dtype(dtype) and back.shape == shape
        assert numpy.array_equal(back, a)
        # a hyperslab across chunk edges, and one chunk's edge exactly
        start = tuple(c - 1 if c < n else 0 for n, c in zip(shape, chunks))
        count = tuple(min(n - s, c + 2) for n, s, c in zip(shape, start, chunks))
        sl = tuple(slice(s, s + c) for s, c in zip(start, count))
        assert numpy.array_equal(tag.read_dataset(name, start=start, count=count), a[sl])
        info = tag.dataset_info(name)
        assert info["shape"] == shape and info["chunks"] == chunks
        assert info["dtype"] == numpy.dtype(dtype)


def test_dataset_hyperslab_writes_fill_a_larger_dataset_and_the_rest_reads_zeros(tag):
    numpy = _numpy()
    full = numpy.zeros((20, 30), dtype="float64")
    piece = numpy.arange(7 * 9, dtype="float64").reshape(7, 9) + 0.5
    tag.write_dataset("grid", piece, chunks=(8, 8), start=(5, 13), shape=(20, 30))
    full[5:12, 13:22] = piece
    tag.write_dataset("grid", piece[:2, :3] * -1, start=(0, 0), shape=(20, 30), chunks=(8, 8))
    full[0:2, 0:3] = piece[:2, :3] * -1
    assert numpy.array_equal(tag.read_dataset("grid"), full)
    assert numpy.array_equal(tag.read_dataset("grid", start=(4, 12)), full[4:, 12:])
    assert tag.read_dataset("grid", start=(3, 3), count=(0, 5)).shape == (0, 5)


def test_datasets_store_values_of_any_layout_and_byte_order(tag):
    numpy = _numpy()
    a = numpy.arange(200, dtype=">i4").reshape(10, 20)  # big-endian, stored by value
    tag.write_dataset("be", a[:, ::2])                  # and not contiguous
    back = tag.read_dataset("be")
    assert back.dtype == numpy.dtype("int32") and numpy.array_equal(back, a[:, ::2])
    tag.write_dataset("fortran", numpy.asfortranarray(a.astype("uint16")))
    assert numpy.array_equal(tag.read_dataset("fortran"), a.astype("uint16"))
    tag.write_dataset("list", [[1.5, 2.5], [3.5, 4.5]])
    assert tag.read_dataset("list").tolist() == [[1.5, 2.5], [3.5, 4.5]]


def test_dataset_attributes_listing_and_deleting(tag):
    numpy = _numpy()
    tag.write_dataset("u", numpy.ones((4, 4)), attrs={"step": 120, "model": "gray-scott"})
    tag.write_dataset("v", numpy.zeros(5, dtype="int8"), score=0.25)
    assert tag.dataset_info("u")["attrs"] == {"step": "120", "model": "gray-scott"}
    tag.write_dataset("u", numpy.ones((4, 4)) * 2, attrs={"step": 130, "model": None})
    assert tag.dataset_info("u")["attrs"] == {"step": "130"}
    assert numpy.array_equal(tag.read_dataset("u"), numpy.ones((4, 4)) * 2)
    assert tag.list_datasets() == ["u", "v"]
    assert "u/meta" in tag.get_contained_blobs()
    assert tag.get_blob_score("v/c.0") == 0.25
    tag.delete_dataset("u")
    assert tag.list_datasets() == ["v"]
    with pytest.raises(cte.NotFoundError, match="no such dataset"):
        tag.read_dataset("u")
    with pytest.raises(cte.NotFoundError):
        tag.delete_dataset("u")


def test_dataset_errors_are_cte_errors_with_messages(tag):
    numpy = _numpy()
    tag.write_dataset("x", numpy.zeros((6, 6), dtype="int16"), chunks=(3, 3))
    with pytest.raises(cte.Error, match="another type, shape or chunk shape"):
        tag.write_dataset("x", numpy.zeros((6, 7), dtype="int16"))
    with pytest.raises(cte.Error, match="another type"):
        tag.write_dataset("x", numpy.zeros((6, 6), dtype="int32"), chunks=(3, 3))
    with pytest.raises(cte.Error, match="exceeds dimension 1 of size 6"):
        tag.read_dataset("x", start=(0, 4), count=(1, 3))
    with pytest.raises(cte.Error, match="exceeds dimension 0"):
        tag.write_dataset("x", numpy.zeros((2, 2), dtype="int16"), start=(5, 0), shape=(6, 6),
                          chunks=(3, 3))
    with pytest.raises(TypeError, match="unsupported element type"):
        tag.write_dataset("c", numpy.zeros(3, dtype="complex128"))
    with pytest.raises(ValueError, match="1 to 8 dimensions"):
        tag.write_dataset("s", numpy.float64(1.0))
    with pytest.raises(ValueError, match="needs 2 entries"):
        tag.read_dataset("x", start=(0,))
    with pytest.raises(ValueError, match="score"):
        tag.write_dataset("y", numpy.zeros(3), score=1.5)
    assert numpy.array_equal(tag.read_dataset("x"), numpy.zeros((6, 6), dtype="int16"))


def test_shm_client_is_answered_busy_during_a_long_script(cte_server):
    """A shared-memory client (attached before) is served through its rings while a script
    is busy: -BUSY, and SCRIPT KILL from it ends the script, as a socket client's would."""
    import redis
    r = cte_server.redis()
    r.config_set("busy-reply-threshold", 50)
    shm = cte.Client("shm:%s" % cte_server.unixsocket, timeout=5)
    assert shm.command("PING") == "PONG"
    result = {}

    def run():
        try:
            cte_server.redis(socket_timeout=30).eval("while true do end", 0)
        except redis.exceptions.ResponseError as e:
            result["err"] = str(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    deadline = time.time() + 10
    try:
        while True:
            try:
                shm.command("PING")
            except cte.ResponseError as e:
                assert str(e).startswith("BUSY Redis is busy running a script"), e
                break
            assert time.time() < deadline, "never -BUSY over shm"
            time.sleep(0.02)
        assert shm.command("SCRIPT", "KILL") == "OK"
        t.join(10)
        assert "Script killed by user" in result["err"]
        assert shm.command("PING") == "PONG"
    finally:
        r.config_set("busy-reply-threshold", 5000)
        shm.close()
