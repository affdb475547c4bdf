"""Memory goes back to the OS (the real binary, redis-py): after FLUSHALL, or after DELs that
free a large part of the heap, the server's RSS falls back near where it started within a few
seconds instead of staying at its peak, and INFO memory reports the allocator's fields as Redis
7.0 names them. A behaviour check with loose bounds, not a benchmark (tools/bench-memory
compares with redis-server).

    CTE_SERVER=$PWD/build/cte-server /usr/bin/python3 -m pytest -q tests/integration/test_memory.py
"""
import time

import pytest

from conftest import CTE_KIND, SANITIZE, proc_kb

MB = 1 << 20
KEYS = 100000  # about 100 MB of 1 KiB values

pytestmark = pytest.mark.skipif(SANITIZE, reason="an ASan build does not allocate with jemalloc")


def rss(server):
    return proc_kb(server.proc.pid, "VmRSS") * 1024


def fill(r, n, size=1024, batch=1000):
    value = b"v" * size
    for start in range(0, n, batch):
        p = r.pipeline(transaction=False)
        for i in range(start, min(n, start + batch)):
            p.set("key:%d" % i, value)
        p.execute()


def wait_rss_below(server, bound, timeout):
    deadline = time.time() + timeout
    while True:
        now = rss(server)
        if now < bound:
            return now
        assert time.time() < deadline, "RSS still %.1f MB after %g s (bound %.1f MB)" % (
            now / MB, timeout, bound / MB)
        time.sleep(0.1)


def loaded(server_factory):
    s = server_factory(["--appendonly", "no"])
    r = s.redis()
    base = rss(s)
    fill(r, KEYS)
    peak = rss(s)
    assert peak > base + 80 * MB, (base, peak)
    return s, r, base


def test_rss_falls_back_after_flushall(server_factory):
    s, r, base = loaded(server_factory)
    assert r.flushall()
    wait_rss_below(s, base + 30 * MB, 3)


@pytest.mark.skipif(CTE_KIND == "redis", reason="Redis leaves DEL's freed pages to jemalloc's "
                    "decay; cte-server's cron purges after a large fall")
def test_rss_falls_back_after_deleting_most_keys(server_factory):
    s, r, base = loaded(server_factory)
    for start in range(0, KEYS, 1000):
        assert r.delete(*["key:%d" % i for i in range(start, start + 1000)]) == 1000
    wait_rss_below(s, base + 30 * MB, 10)  # the cron's purge: slower on a loaded machine
    assert r.dbsize() == 0


def test_info_memory_has_the_allocator_fields(server_factory):
    s, r, base = loaded(server_factory)
    m = r.info("memory")
    for k in ("allocator_allocated", "allocator_active", "allocator_resident",
              "allocator_frag_ratio", "allocator_frag_bytes", "allocator_rss_ratio",
              "allocator_rss_bytes", "rss_overhead_ratio", "rss_overhead_bytes",
              "mem_fragmentation_ratio", "mem_fragmentation_bytes"):
        assert k in m, k
    assert m["allocator_allocated"] >= 100 * MB
    assert m["allocator_active"] >= m["allocator_allocated"]
    assert m["allocator_resident"] >= m["allocator_active"] - 1 * MB
    # near 1 with 100 MB of data; Redis shows the same ratios in the same state
    assert 0.9 < m["mem_fragmentation_ratio"] < 1.5, m["mem_fragmentation_ratio"]
    assert 1.0 <= m["allocator_frag_ratio"] < 1.3, m["allocator_frag_ratio"]
    assert m["mem_allocator"].startswith("jemalloc-")
    r.flushall()
    # the data is purged at once; the query buffer the pipelined load grew (large when the
    # server fell behind the client on a loaded machine) goes with the cron, within seconds
    deadline = time.time() + 10
    while r.info("memory")["allocator_resident"] >= 40 * MB and time.time() < deadline:
        time.sleep(0.2)
    m = r.info("memory")
    assert m["allocator_resident"] < 40 * MB, m["allocator_resident"]


def info_memory(r):
    return r.info("memory")


@pytest.mark.skipif(CTE_KIND == "redis", reason="tags and tiers are cte-server's")
def test_ram_tier_blobs_are_counted_in_16_byte_blocks_and_their_pages_go_back(server_factory):
    """The RAM tier hands out 16-byte blocks of a region of its own: used_memory counts them
    (a 1,000-byte blob costs 1,008), and freeing them gives the pages back to the OS."""
    s = server_factory(["--appendonly", "no"])
    r = s.redis()
    base, base_rss = info_memory(r)["used_memory"], rss(s)
    n, size = 20000, 4000  # 80 MB of blobs on the RAM tier
    value = b"b" * size
    for start in range(0, n, 1000):
        p = r.pipeline(transaction=False)
        for i in range(start, start + 1000):
            p.execute_command("TPUT", "t", "blob:%d" % i, 0, value)
        p.execute()
    tiers = r.execute_command("TIERS")
    ram = dict(zip(tiers[0][::2], tiers[0][1::2]))
    assert ram[b"used"] == n * 4000  # 4,000 is a multiple of 16: no rounding
    assert r.execute_command("TPUT", "t", "odd", 0, b"x" * 1000) == 1000
    tiers = r.execute_command("TIERS")
    assert dict(zip(tiers[0][::2], tiers[0][1::2]))[b"used"] == n * 4000 + 1008
    used = info_memory(r)["used_memory"]
    assert used - base >= n * 4000, (base, used)
    assert rss(s) > base_rss + 70 * MB
    assert r.flushall()
    tiers = r.execute_command("TIERS")
    assert dict(zip(tiers[0][::2], tiers[0][1::2]))[b"used"] == 0
    assert info_memory(r)["used_memory"] < base + 4 * MB
    wait_rss_below(s, base_rss + 20 * MB, 3)


@pytest.mark.skipif(CTE_KIND == "redis", reason="tags and the search catalogue are cte-server's")
def test_the_search_catalogue_gives_its_entries_back_when_every_blob_is_gone(server_factory):
    """The catalogue keeps a 32-byte entry per blob in chunks that never move while entries are
    in use; once no blob is left (FLUSHALL, or the last TDEL) the chunks go too, so
    search_names_memory does not stay at 32 bytes for every blob once held."""
    s = server_factory(["--appendonly", "no"])
    r = s.redis()
    empty = r.info("search")["search_names_memory"]
    for rnd in range(2):
        for start in range(0, 50000, 5000):
            p = r.pipeline(transaction=False)
            for i in range(start, start + 5000):
                p.execute_command("TPUT", "t%d" % (i % 3), "b:%d" % i, 0, b"v")
            p.execute()
        assert r.info("search")["search_names_memory"] > empty + 50000 * 32
        if rnd == 0:
            assert r.flushall()
        else:
            for t in ("t0", "t1", "t2"):
                names = [x.decode() for x in r.execute_command("TLIST", t, "COUNT", 50000)]
                for start in range(0, len(names), 5000):
                    p = r.pipeline(transaction=False)
                    for n in names[start:start + 5000]:
                        p.execute_command("TDEL", t, n)
                    p.execute()
        assert r.info("search")["search_blobs"] == 0
        assert r.info("search")["search_names_memory"] < empty + 64 * 1024, rnd
    assert r.execute_command("TPUT", "t", "again", 0, b"x") == 1  # numbering starts over
    assert r.execute_command("TGET", "t", "again") == b"x"
