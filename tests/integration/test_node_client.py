"""A third, independent client stack against cte-server: ioredis (Node.js, from the npm
registry) runs a realistic session (tests/integration/node/session.js) — strings with EX,
hashes, lists, sets, sorted sets, a 1000-command pipeline, MULTI/EXEC, WATCH with a conflicting
write, pub/sub, BLPOP woken by RPUSH, scanStream, CLIENT SETNAME/GETNAME, INFO, binary Buffers,
and the TPUT/TGET tag commands through ioredis' call().

The same session also runs against Debian's redis-server (without the tag commands) to prove
that the script expects what Redis does.

The exact ioredis version is pinned in node/package.json and node/package-lock.json; when
node/node_modules is missing (or holds another ioredis version) this test runs
`npm ci --no-audit --no-fund` there first. node_modules is not committed (node/.gitignore).

Skips, with the reason, when node or npm is missing or the npm registry cannot be reached;
CTE_NODE_REQUIRED=1 turns those skips into failures (for machines that must run it).
"""
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import CTE_KIND

NODE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "node")
SESSION = os.path.join(NODE_DIR, "session.js")
REQUIRED = os.environ.get("CTE_NODE_REQUIRED", "") == "1"
NPM_TIMEOUT = 300
SESSION_TIMEOUT = 90  # the script's own watchdog (CTE_SESSION_TIMEOUT_MS) fires first
NETWORK_ERRORS = re.compile(r"ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|"
                            r"EHOSTUNREACH|network|socket hang up|UNABLE_TO_GET_ISSUER|"
                            r"SELF_SIGNED_CERT|proxy", re.I)


def _unavailable(reason):
    if REQUIRED:
        pytest.fail(reason + " (CTE_NODE_REQUIRED=1)", pytrace=False)
    pytest.skip(reason)


def _pinned_version():
    with open(os.path.join(NODE_DIR, "package.json")) as f:
        return json.load(f)["dependencies"]["ioredis"]


def _installed_version():
    try:
        with open(os.path.join(NODE_DIR, "node_modules", "ioredis", "package.json")) as f:
            return json.load(f)["version"]
    except (OSError, ValueError, KeyError):
        return None


@pytest.fixture(scope="module")
def node():
    """The node binary, with ioredis installed in tests/integration/node/node_modules."""
    node_bin = shutil.which("node") or shutil.which("nodejs")
    if not node_bin:
        _unavailable("node is not installed (Debian packages nodejs and npm)")
    out = subprocess.run([node_bin, "--version"], stdout=subprocess.PIPE, text=True).stdout
    m = re.match(r"v(\d+)\.", out.strip())
    if not m or int(m.group(1)) < 16:
        _unavailable("node %s is too old (need >= 16)" % out.strip())

    want = _pinned_version()
    if _installed_version() != want:
        npm_bin = shutil.which("npm")
        if not npm_bin:
            _unavailable("npm is not installed (Debian package npm), and %s has no "
                         "node_modules with ioredis %s" % (NODE_DIR, want))
        try:
            p = subprocess.run([npm_bin, "ci", "--no-audit", "--no-fund"], cwd=NODE_DIR,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=NPM_TIMEOUT)
        except subprocess.TimeoutExpired:
            _unavailable("`npm ci` did not finish within %d s (npm registry unreachable?)"
                         % NPM_TIMEOUT)
        if p.returncode != 0:
            if NETWORK_ERRORS.search(p.stdout):
                _unavailable("`npm ci` could not reach the npm registry:\n" + p.stdout[-3000:])
            pytest.fail("`npm ci` failed (status %d) in %s:\n%s"
                        % (p.returncode, NODE_DIR, p.stdout[-5000:]), pytrace=False)
        got = _installed_version()
        assert got == want, "npm ci installed ioredis %s, package.json pins %s" % (got, want)
    return node_bin


def run_session(node_bin, server, skip_tags):
    env = dict(os.environ)
    env["CTE_SKIP_TAGS"] = "1" if skip_tags else "0"
    env["CTE_SESSION_TIMEOUT_MS"] = str((SESSION_TIMEOUT - 15) * 1000)
    env.pop("NODE_OPTIONS", None)
    try:
        p = subprocess.run([node_bin, SESSION, server.host, str(server.port)], cwd=NODE_DIR,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=SESSION_TIMEOUT)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode("utf-8", "replace") if isinstance(e.stdout, bytes) else e.stdout
        pytest.fail("node session.js against %s did not finish within %d s\n--- output ---\n%s"
                    % (server.name, SESSION_TIMEOUT, out or ""), pytrace=False)
    assert p.returncode == 0, ("node session.js against %s exited with status %d\n"
                               "--- output ---\n%s" % (server.name, p.returncode, p.stdout))
    assert "PASS: ioredis session completed" in p.stdout, p.stdout
    if skip_tags:
        assert "skip tag commands" in p.stdout, p.stdout
    else:
        assert "ok   tag commands TPUT/TGET" in p.stdout, p.stdout
    return p.stdout


def test_ioredis_session_against_cte_server(node, cte_server):
    # CTE_SERVER=/usr/bin/redis-server runs the suite against Redis: no tag commands there.
    out = run_session(node, cte_server, skip_tags=(CTE_KIND == "redis"))
    print(out)


def test_ioredis_session_against_redis_server(node, redis_server):
    """The same script against Redis 7.0 itself: proves the session expects what Redis does."""
    out = run_session(node, redis_server, skip_tags=True)
    print(out)
