"""`cmake --install` of the build tree the tested binary comes from: every file under the
prefix (GNUInstallDirs layout), nothing outside it, and a systemd unit whose paths are those
of this installation. Skipped when CTE_SERVER is not in a CMake build tree."""
import glob
import os
import shutil
import subprocess

import pytest

from conftest import CTE_SERVER, SANITIZE, start_cte

BUILD = os.path.dirname(os.path.abspath(CTE_SERVER))
CMAKE = shutil.which("cmake")

pytestmark = pytest.mark.skipif(
    not CMAKE or not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")),
    reason="needs cmake and the build tree of %s" % CTE_SERVER)

LAYOUT = ["bin/cte-server", "bin/cte-bench", "etc/cte-server/cte-server.yaml",
          "lib/systemd/system/cte-server.service", "share/doc/cte-server/README.md",
          "share/doc/cte-server/docs/architecture.md", "share/doc/cte-server/docs/cluster-bus.md",
          "share/doc/cte-server/docs/commands.md", "share/doc/cte-server/docs/migrate.md",
          "share/doc/cte-server/docs/libcte.md", "share/doc/cte-server/docs/python.md",
          "share/doc/cte-server/docs/shm.md", "share/doc/cte-server/docs/ycsb-compare.svg",
          "share/doc/cte-server/docs/checkpoints.svg",
          "include/cte/cte.h", "include/cte/dataset.h", "lib/libcte.a", "lib/libcte.so", "lib/libcte.so.0",
          "lib/libcte.so.0.1.0", "lib/pkgconfig/cte.pc", "bin/cte-ycsb"] + \
    ["share/cte-server/ycsb/workloads/workload" + w for w in "abcdef"]


def _python_layout():
    """python/cte's three files, when the build has the module (python/CMakeLists.txt)."""
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            dirs = [l.split("=", 1)[1].strip() for l in f
                    if l.startswith("CTE_PYTHON_INSTALL_DIR:")]
    except OSError:
        return []
    exts = glob.glob(os.path.join(BUILD, "python", "cte", "_cte.*so"))
    if not dirs or not exts:
        return []
    return [dirs[0] + "/cte/__init__.py", dirs[0] + "/cte/_dataset.py",
            dirs[0] + "/cte/" + os.path.basename(exts[0])]


LAYOUT += _python_layout()


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


# A program built only from what is installed: the header, cte.pc and the library.
LIBCTE_EXAMPLE = r"""
#include <cte/cte.h>
#include <cte/dataset.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    if (cte_dtype_size(CTE_FLOAT64) != 8 || strcmp(cte_dtype_name(CTE_INT16), "int16")) return 2;
    cte_conn_t *c;
    char buf[16];
    size_t len;
    int rc = cte_connect(argv[1], 0, &c);
    if (rc) { printf("connect: %s\n", cte_strerror(rc)); return 1; }
    if ((rc = cte_put(c, "tag", "blob", 0, "hello", 5, -1, NULL)) ||
        (rc = cte_get(c, "tag", "blob", 0, -1, buf, sizeof buf, &len))) {
        printf("%s: %s\n", cte_strerror(rc), cte_conn_errmsg(c));
        return 1;
    }
    printf("%.*s\n", (int)len, buf);
    cte_conn_free(c);
    return 0;
}
"""


@pytest.mark.skipif(not shutil.which("pkg-config") or not shutil.which("cc"),
                    reason="needs pkg-config and cc")
@pytest.mark.parametrize("link", ["shared", "static"])
def test_a_program_builds_against_the_installed_libcte_with_pkg_config(tmp_path, link):
    prefix = str(tmp_path / "p")
    install(prefix)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs"] +
                           (["--static"] if link == "static" else []) + ["cte"], env=env,
                           stdout=subprocess.PIPE, check=True).stdout.decode().split()
    assert "-I%s/include" % prefix in flags and "-L%s/lib" % prefix in flags, flags
    src = tmp_path / "example.c"
    src.write_text(LIBCTE_EXAMPLE)
    exe = str(tmp_path / "example")
    if link == "static":  # the archive itself, so the program cannot pick up libcte.so
        flags = [f for f in flags if f != "-lcte"] + [os.path.join(prefix, "lib/libcte.a")]
        extra = []
    else:
        extra = ["-Wl,-rpath,%s/lib" % prefix]
    if SANITIZE:  # an ASan+UBSan build installs a sanitized libcte: the program needs the runtimes
        extra.append("-fsanitize=address,undefined")
    p = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", str(src), "-o", exe] + flags + extra,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    assert p.returncode == 0, p.stdout.decode("utf-8", "replace")
    srv = start_cte()
    try:
        out = subprocess.run([exe, "unix:" + srv.unixsocket], stdout=subprocess.PIPE, timeout=30)
        assert out.returncode == 0 and out.stdout == b"hello\n", out.stdout
        if link == "static":
            ldd = subprocess.run(["ldd", exe], stdout=subprocess.PIPE).stdout
            assert b"libcte" not in ldd, ldd
    finally:
        srv.stop()
