"""`cmake --install` of the build tree the tested binary comes from: every file under the
prefix (GNUInstallDirs layout), nothing outside it, and a systemd unit whose paths are those
of this installation. Skipped when CTE_SERVER is not in a CMake build tree."""
import os
import shutil
import subprocess

import pytest

from conftest import CTE_SERVER

BUILD = os.path.dirname(os.path.abspath(CTE_SERVER))
CMAKE = shutil.which("cmake")

pytestmark = pytest.mark.skipif(
    not CMAKE or not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")),
    reason="needs cmake and the build tree of %s" % CTE_SERVER)

LAYOUT = ["bin/cte-server", "bin/cte-bench", "etc/cte-server/cte-server.yaml",
          "lib/systemd/system/cte-server.service", "share/doc/cte-server/README.md",
          "share/doc/cte-server/docs/architecture.md", "share/doc/cte-server/docs/commands.md"]


def install(prefix, destdir=None):
    env = dict(os.environ)
    env.pop("DESTDIR", None)
    if destdir:
        env["DESTDIR"] = destdir
    p = subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    assert p.returncode == 0, out
    return out


def unit_lines(path):
    with open(path) as f:
        return {l.split("=", 1)[0]: l.split("=", 1)[1].strip() for l in f if "=" in l
                and not l.startswith("#")}


def files_under(root):
    return sorted(os.path.relpath(os.path.join(d, f), root)
                  for d, _, fs in os.walk(root) for f in fs)


def test_everything_goes_under_the_prefix_and_the_unit_names_its_paths(tmp_path):
    prefix = str(tmp_path / "p")
    out = install(prefix)
    assert files_under(prefix) == sorted(LAYOUT)
    for line in out.splitlines():  # "-- Installing: /path" / "-- Up-to-date: /path"
        if ": /" in line:
            assert line.split(": ", 1)[1].startswith(prefix + "/"), line
    assert os.access(os.path.join(prefix, "bin/cte-server"), os.X_OK)
    with open(os.path.join(prefix, "etc/cte-server/cte-server.yaml")) as f:
        assert "tiers:" in f.read()
    unit = unit_lines(os.path.join(prefix, "lib/systemd/system/cte-server.service"))
    exec_start = unit["ExecStart"].split()
    assert exec_start[0] == prefix + "/bin/cte-server", unit["ExecStart"]
    assert exec_start[1] == prefix + "/etc/cte-server/cte-server.yaml", unit["ExecStart"]
    assert unit["Documentation"] == "file://%s/share/doc/cte-server/README.md" % prefix
    for path in (exec_start[0], exec_start[1], unit["Documentation"][len("file://"):]):
        assert os.path.exists(path), path


def test_the_installed_config_and_binary_start(tmp_path):
    prefix = str(tmp_path / "p")
    install(prefix)
    p = subprocess.run([prefix + "/bin/cte-server", "--version"], stdout=subprocess.PIPE,
                       timeout=10)
    assert p.returncode == 0 and p.stdout.startswith(b"cte-server v="), p.stdout


def test_destdir_stages_the_files_but_the_unit_names_the_final_paths(tmp_path):
    stage = str(tmp_path / "stage")
    install("/opt/cte", destdir=stage)
    assert files_under(os.path.join(stage, "opt/cte")) == sorted(LAYOUT)
    unit = unit_lines(os.path.join(stage, "opt/cte/lib/systemd/system/cte-server.service"))
    assert unit["ExecStart"].startswith(
        "/opt/cte/bin/cte-server /opt/cte/etc/cte-server/cte-server.yaml "), unit["ExecStart"]


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
def test_the_installed_unit_verifies(tmp_path):
    prefix = str(tmp_path / "p")
    install(prefix)
    unit = os.path.join(prefix, "lib/systemd/system/cte-server.service")
    p = subprocess.run(["systemd-analyze", "verify", unit], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    assert p.returncode == 0, p.stdout.decode("utf-8", "replace")
