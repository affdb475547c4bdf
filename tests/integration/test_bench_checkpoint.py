"""tools/bench-checkpoint on a tiny grid (seconds): every arm checkpoints and restarts
bit-exact, the report has its table and its last line, the chart and the JSON are written; a
damaged checkpoint makes the restart fail and the last line name the arm; cte-checkpoint
refuses bad options. Behaviour, not speed: the figures are not judged.

CTE_CHECKPOINT names the simulation binary; by default it is cte-checkpoint beside CTE_SERVER."""
import json
import os
import re
import subprocess

import pytest

from conftest import CTE_KIND, CTE_SERVER, ROOT, SANITIZE

SIM = os.environ.get("CTE_CHECKPOINT") or os.path.join(os.path.dirname(CTE_SERVER),
                                                        "cte-checkpoint")
TOOL = str(ROOT / "tools" / "bench-checkpoint")
TIMEOUT = 300 if SANITIZE else 90
LAST = re.compile(r"^cte/hdf5 x[\d.,]+ cte/thread x[\d.,]+ restart ok$")

pytestmark = [
    pytest.mark.skipif(not os.path.exists(SIM), reason="no cte-checkpoint at %s (needs HDF5)" % SIM),
    pytest.mark.skipif(CTE_KIND != "cte", reason="datasets need cte-server"),
]


def run_tool(tmp_path, *extra):
    p = subprocess.run(["/usr/bin/python3", TOOL, "--size", "24", "--steps", "12", "--every", "5",
                        "--server", CTE_SERVER, "--sim", SIM, "--dir", str(tmp_path),
                        "--svg", str(tmp_path / "c.svg"), "--json", str(tmp_path / "c.json"),
                        *extra], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=TIMEOUT)
    return p.returncode, p.stdout, p.stderr


def test_a_tiny_run_checkpoints_and_restarts_every_arm_bit_exact(tmp_path):
    rc, out, err = run_tool(tmp_path)
    assert rc == 0, out + err
    lines = out.strip().splitlines()
    assert LAST.match(lines[-1]), lines[-1]
    for title in ("cte: async datasets over shm, RAM tier", "HDF5", "writer thread",
                  "inline pwrite", "cte: async datasets over shm, file tier"):
        row = [l for l in lines if l.startswith("| " + title)]
        assert row and "bit-exact" in row[0], (title, out)
    assert "dd of" in out
    assert re.search(r"memset of 64 MiB in this process: [\d,]+ MB/s on memory never touched", out)
    assert "restart from step 10: bit-exact, and at step 12 too" in err
    with open(tmp_path / "c.json") as f:
        figures = json.load(f)
    for arm in ("cte", "hdf5", "thread", "inline"):
        r = figures["main"][arm]
        assert r["restart"] and r["checkpoints"] == 2 and r["bytes"] == 2 * 2 * 24 ** 3 * 8
        assert r["stall"] > 0 and r["total"] >= r["stall"]
    assert figures["file_tier"]["cte"]["restart"]
    svg = (tmp_path / "c.svg").read_text()
    assert svg.startswith("<svg") and svg.rstrip().endswith("</svg>") and "dd (fdatasync)" in svg
    assert [p for p in os.listdir(tmp_path) if p.startswith("bench-checkpoint-")] == [], \
        "the run's directory was not removed"


def test_checkpoints_round_slots_written_over_in_place_restart_bit_exact(tmp_path):
    rc, out, err = run_tool(tmp_path, "--skip-file-tier", "--slots", "1", "--steps", "16")
    assert rc == 0, out + err
    assert "round 1 slot, written over in place" in out
    assert LAST.match(out.strip().splitlines()[-1]), out
    assert "restart from step 15: bit-exact, and at step 16 too" in err


@pytest.mark.parametrize("arm", ["cte", "hdf5", "thread"])
def test_a_damaged_checkpoint_fails_the_restart_and_is_named(tmp_path, arm):
    rc, out, err = run_tool(tmp_path, "--skip-file-tier", "--damage", arm)
    assert rc == 1, out + err
    last = out.strip().splitlines()[-1]
    assert last.endswith("restart FAILED: " + arm), last
    assert "fields differ from step 10's" in out


@pytest.mark.parametrize("args", [["--every", "9", "--steps", "3"], ["--arms", "cte,nfs"],
                                  ["--arms", "cte"], ["--size", "2"], []])
def test_cte_checkpoint_refuses_bad_options(tmp_path, args):
    argv = [SIM] + (["--dir", str(tmp_path)] if args else []) + args
    p = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert p.returncode == 2, p.stderr
    assert "usage" in p.stderr or "needs --uri" in p.stderr or "unknown arm" in p.stderr
