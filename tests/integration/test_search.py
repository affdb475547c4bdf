"""Integration tests of TQUERY and TSEARCH (COMMANDS.md sections 2 and 4) against the real
binary with redis-py: rankings equal a plain-Python BM25 over a random corpus, the index follows
writes, deletes, RENAME, MOVE, SWAPDB, expiry and FLUSHALL, file-tier blobs are indexed and
found by the client that wrote them (also pipelined), a long TQUERY lets other clients in
between its steps, and the index comes back after a restart from the append-only file.

    CTE_SERVER=$PWD/build-search/cte-server /usr/bin/python3 -m pytest -q tests/integration/test_search.py
"""
import math
import random
import re
import select
import time

import pytest

from conftest import CTE_KIND, RespConn

pytestmark = pytest.mark.skipif(CTE_KIND != "cte", reason="TQUERY/TSEARCH are cte-server's own")


def tokens(text):
    return [t.lower() for t in re.findall(rb"[A-Za-z0-9]+", text) if len(t) >= 2]


def utf8(b):
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def reference(docs, query, k=10, db_filter=None):
    """Section 4 written out: docs maps (tag, blob) -> bytes; returns [(tag, blob, score)].
    Blobs that are not UTF-8 are not indexed (search-skip-binary yes, the default): a write at
    a random offset can cut a multi-byte character."""
    toks = {key: tokens(v) for key, v in docs.items() if utf8(v)}
    n = len(toks)
    avgdl = sum(len(t) for t in toks.values()) / n if n else 0
    terms = []
    for t in tokens(query):
        if t not in terms:
            terms.append(t)
    df = {t: sum(1 for d in toks.values() if t in d) for t in terms}
    hits = []
    for key, d in toks.items():
        if db_filter and not db_filter(key):
            continue
        score, held = 0.0, False
        for t in terms:
            tf = d.count(t)
            if not tf:
                continue
            held = True
            idf = math.log((n - df[t] + 0.5) / (df[t] + 0.5) + 1.0)
            score += idf * (tf * 2.5) / (tf + 1.5 * (1 - 0.75 + 0.75 * len(d) / avgdl))
        if held:
            hits.append((key[0], key[1], score))
    hits.sort(key=lambda h: (-h[2], h[0], h[1]))
    return hits[:k]


def check_ranking(r, docs, query, k=10):
    want = reference(docs, query, k)
    got = r.execute_command("TSEARCH", query, "LIMIT", k, "WITHSCORES")
    assert [(g[0], g[1]) for g in got] == [(w[0], w[1]) for w in want] or \
        _same_up_to_ties(got, want), (query, got, want)
    for g, w in zip(got, want):
        assert abs(float(g[2]) - w[2]) < 1e-9, (query, g, w)


def _same_up_to_ties(got, want):
    """Scores that tie in exact arithmetic may differ in the last bit between C and Python:
    then only the scores must agree."""
    if len(got) != len(want):
        return False
    return all(abs(float(g[2]) - w[2]) < 1e-9 for g, w in zip(got, want))


WORDS = [b"alpha", b"beta", b"gamma", b"delta", b"epsilon", b"zeta", b"eta", b"theta", b"iota",
         b"kappa", b"lambda", b"mu", b"nu", b"xi", b"omicron", b"pi", b"rho", b"sigma", b"tau",
         b"Upsilon", b"PHI", b"chi", b"psi", b"omega", b"a", b"42", b"x9"]


def random_text(rng, n):
    seps = [b" ", b", ", b".\n", b"-", b"_", b" \xc3\xa9 "]
    return b"".join(rng.choice(WORDS[: rng.randint(3, len(WORDS))]) + rng.choice(seps)
                    for _ in range(n))


@pytest.fixture
def r(cte_server):
    c = cte_server.redis(decode_responses=False, socket_timeout=30)
    yield c
    c.close()


def test_tquery_and_tsearch_basics(r):
    r.execute_command("TPUT", "logs", "2024-01", 0, b"disk full on node7")
    r.execute_command("TPUT", "logs", "2024-02", 0, b"node7 rebooted; disk replaced")
    r.execute_command("TPUT", "metrics", "cpu", 0, b"\xff\xfe\x00 cpu")
    assert r.execute_command("TQUERY", "TAGS", "l.*") == [1, b"logs"]
    assert r.execute_command("TQUERY", "BLOBS", ".*", "2024-.*", "LIMIT", 1) == \
        [2, [b"logs", b"2024-01"]]
    assert r.execute_command("TSEARCH", "disk") == [[b"logs", b"2024-01"], [b"logs", b"2024-02"]]
    assert r.execute_command("TSEARCH", "NODE7 replaced", "LIMIT", 1) == [[b"logs", b"2024-02"]]
    with pytest.raises(Exception, match="invalid regex"):
        r.execute_command("TQUERY", "TAGS", "a(")
    info = r.info("search")
    assert info["search_documents"] == 2  # the binary blob is skipped
    assert info["search_blobs"] == 3
    assert info["search_terms"] > 0 and info["search_bytes"] == 18 + 29


def test_rankings_equal_a_reference_bm25(r):
    rng = random.Random(3)
    docs = {}
    for i in range(300):
        key = (b"t%d" % rng.randrange(8), b"b%d" % i)
        docs[key] = random_text(rng, rng.randrange(0, 80))
        r.execute_command("TPUT", key[0], key[1], 0, docs[key])
    for _ in range(40):
        q = b" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        check_ranking(r, docs, q, k=rng.choice([1, 10, 1000]))
    # changes: overwrite in the middle, truncate, delete, then rank again
    for i in range(100):
        key = rng.choice(sorted(docs))
        op = rng.randrange(3)
        if op == 0:
            off = rng.randrange(len(docs[key]) + 5)
            data = random_text(rng, 3)
            r.execute_command("TPUT", key[0], key[1], off, data)
            old = docs[key] + b"\x00" * max(0, off - len(docs[key]))
            docs[key] = old[:off] + data + old[off + len(data):]
        elif op == 1:
            size = rng.randrange(len(docs[key]) + 3)
            r.execute_command("TTRUNCATE", key[0], key[1], size)
            docs[key] = (docs[key] + b"\x00" * size)[:size]
        else:
            r.execute_command("TDEL", key[0], key[1])
            del docs[key]
    for _ in range(40):
        q = b" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        check_ranking(r, docs, q, k=1000)


def test_tag_and_blob_filters_do_not_change_scores(r):
    r.execute_command("TPUT", "a", "x", 0, b"red green")
    r.execute_command("TPUT", "b", "y", 0, b"red red blue")
    r.execute_command("TPUT", "b", "z", 0, b"green")
    full = r.execute_command("TSEARCH", "red", "WITHSCORES")
    only = r.execute_command("TSEARCH", "red", "TAG", "b", "BLOB", "y|q", "WITHSCORES")
    assert only == [g for g in full if g[0] == b"b"]


def test_index_follows_keyspace_commands(r):
    r.execute_command("TPUT", "t", "a", 0, b"needle in a haystack")
    r.rename("t", "u")
    assert r.execute_command("TSEARCH", "needle") == [[b"u", b"a"]]
    assert r.execute_command("TQUERY", "TAGS", ".*") == [1, b"u"]
    r.move("u", 3)
    assert r.execute_command("TSEARCH", "needle") == []
    r.execute_command("SWAPDB", 0, 3)
    assert r.execute_command("TSEARCH", "needle") == [[b"u", b"a"]]
    r.pexpire("u", 50)
    time.sleep(0.3)  # active expiry or lazy: either way, gone
    assert r.execute_command("TSEARCH", "needle") == []
    assert r.execute_command("TQUERY", "TAGS", ".*") == [0]
    r.execute_command("TPUT", "v", "a", 0, b"needle again")
    r.flushall()
    assert r.execute_command("TSEARCH", "needle") == []
    assert r.info("search")["search_documents"] == 0


def test_time_windows(r):
    r.execute_command("TPUT", "w", "first", 0, b"x")
    t1 = int(r.execute_command("TINFO", "w", "first")[9])
    time.sleep(0.01)
    r.execute_command("TPUT", "w", "second", 0, b"x")
    t2 = int(r.execute_command("TINFO", "w", "second")[9])
    assert t2 > t1
    assert r.execute_command("TQUERY", "BLOBS", "w", ".*", "SINCE", t1, "UNTIL", t2) == \
        [2, [b"w", b"first"], [b"w", b"second"]]
    assert r.execute_command("TQUERY", "BLOBS", "w", ".*", "SINCE", t2) == [1, [b"w", b"second"]]
    assert r.execute_command("TQUERY", "BLOBS", "w", ".*", "UNTIL", t1) == [1, [b"w", b"first"]]
    time.sleep(0.01)
    r.execute_command("TPUT", "w", "first", 0, b"y")  # rewritten: now the newest
    assert r.execute_command("TQUERY", "BLOBS", "w", ".*", "SINCE", t1) == \
        [2, [b"w", b"second"], [b"w", b"first"]]


def test_file_tier_blobs_are_found_by_their_writer(server_factory):
    s = server_factory(["--tier", "ram:ram:64kb::0.5", "--tier", "disk:file:64mb:disk:0"])
    r = s.redis(decode_responses=False, socket_timeout=30)
    p = r.pipeline(transaction=False)
    for i in range(300):
        p.execute_command("TPUT", "cold", "b%d" % i, 0, b"word%d shared text" % i, 0)
        p.execute_command("TSEARCH", "word%d" % i)
    res = p.execute()
    for i in range(300):
        assert res[2 * i + 1] == [[b"cold", b"b%d" % i]], i
    assert r.execute_command("TINFO", "cold", "b1")[5] == b"disk"
    r.execute_command("TPUT", "cold", "b1", 0, b"changed")  # "changedhared text"
    assert r.execute_command("TSEARCH", "word1") == []
    assert r.execute_command("TSEARCH", "changedhared") == [[b"cold", b"b1"]]
    r.execute_command("TTRUNCATE", "cold", "b1", 7)
    assert r.execute_command("TSEARCH", "changed text") == [[b"cold", b"b1"]] + \
        [[b"cold", b"b%d" % i] for i in sorted(set(range(300)) - {1}, key=lambda i: b"b%d" % i)][:9]
    # the index's own reads are not accesses
    assert r.execute_command("TINFO", "cold", "b2")[13] == 0
    r.close()


def test_a_long_tquery_lets_other_clients_in(server_factory):
    s = server_factory()
    r = s.redis(decode_responses=False, socket_timeout=60)
    n = 400000
    for start in range(0, n, 20000):
        p = r.pipeline(transaction=False)
        for i in range(start, start + 20000):
            p.execute_command("TPUT", "t%d" % (i % 50), "blob-%07d" % i, 0, b"")
        p.execute()
    a, b = s.conn(timeout=60), s.conn(timeout=60)
    a.send("TQUERY", "BLOBS", ".*", ".*1", "LIMIT", 3)
    time.sleep(0.002)
    b.send("PING")
    got_ping = b.read_reply()[0]
    # the PING was answered while the query was still stepping: nothing for a yet
    readable, _, _ = select.select([a.sock], [], [], 0)
    got = a.read_reply()[0]
    assert got_ping.val == b"PONG"
    assert not readable, "the PING waited for the whole query"
    assert got.val[0].val == n // 10
    # and the answer is complete: every name ending in 1
    assert r.execute_command("TQUERY", "BLOBS", "t1", "blob-.*1", "LIMIT", 0) == [n // 50]
    a.close()
    b.close()
    r.close()


def test_index_comes_back_after_a_restart(server_factory):
    s = server_factory(["--appendonly", "yes", "--appendfsync", "always"])
    r = s.redis(decode_responses=False, socket_timeout=30)
    rng = random.Random(9)
    for i in range(100):
        r.execute_command("TPUT", "t%d" % (i % 4), "b%d" % i, 0, random_text(rng, 30))
    r.execute_command("TPUT", "t0", "b0", 5, b" rewritten middle ")
    r.execute_command("TDEL", "t1", "b1")
    queries = [b"alpha", b"beta gamma", b"rewritten", b"omega psi chi"]
    before = [r.execute_command("TSEARCH", q, "LIMIT", 50, "WITHSCORES") for q in queries]
    names = r.execute_command("TQUERY", "BLOBS", ".*", ".*")
    r.close()
    s.restart_same_dir()
    r = s.redis(decode_responses=False, socket_timeout=30)
    assert [r.execute_command("TSEARCH", q, "LIMIT", 50, "WITHSCORES") for q in queries] == before
    assert r.execute_command("TQUERY", "BLOBS", ".*", ".*") == names
    r.close()
