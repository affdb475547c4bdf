"""cte - the Python client of cte-server, on libcte (docs/python.md).

    import cte
    with cte.Client("shm:/run/cte-server/cte.sock") as client:
        tag = client.tag("ckpt")
        tag.put_blob("step-1", b"...")
        data = tag.get_blob("step-1")

Datasets (numpy arrays stored as chunked blobs, libcte's cte/dataset.h):
    tag.write_dataset("u", array, chunks=(8, 256, 256), attrs={"step": 40})
    u = tag.read_dataset("u", start=(0, 0, 0), count=(8, 256, 256))

A cluster of cte-servers (Redis Cluster protocol): cte.Cluster(["tcp://h1:7000", ...]) has the
same calls, routed by hash slot; queries run on every primary and are merged; pipeline() sends
many commands at once, each to its node.

Addresses: tcp://[:password@]host[:port][/db], unix:PATH, shm:PATH (PATH: the server's Unix
socket; shared memory needs the server's uid). Errors are cte.Error subclasses.

The compiled half (_cte) is found next to this file (an installed copy), else in a CMake build
tree: $CTE_BUILD_DIR/python/cte, else build/python/cte of this repository (so that
`PYTHONPATH=python` works in a source checkout after `cmake --build build`).
"""
import os as _os

__all__ = ["Client", "Cluster", "Pipeline", "Tag", "Error", "ConnectionError", "TimeoutError", "AddressError",
           "ResponseError", "WrongTypeError", "AuthenticationError", "NotFoundError",
           "ViewInUseError"]
__version__ = "0.1.0"


def _build_dirs():
    here = _os.path.dirname(_os.path.abspath(__file__))
    dirs = []
    if _os.environ.get("CTE_BUILD_DIR"):
        dirs.append(_os.path.join(_os.environ["CTE_BUILD_DIR"], "python", "cte"))
    dirs.append(_os.path.join(_os.path.dirname(_os.path.dirname(here)), "build", "python", "cte"))
    return [d for d in dirs if _os.path.isdir(d)]


try:
    from . import _cte
except ImportError as _first:
    __path__.extend(_build_dirs())
    try:
        from . import _cte
    except ImportError as _e:
        raise ImportError(
            "cte: the compiled module _cte was not found next to %s nor in a build tree (%s): "
            "build it with CMake (it needs python3-dev) or set CTE_BUILD_DIR to the build "
            "directory (%s)" % (__file__, ", ".join(__path__[1:]) or "none found", _e)) from None

from ._cte import (Client, Tag, Error, ConnectionError, TimeoutError, AddressError,  # noqa: E402
                   ResponseError, WrongTypeError, AuthenticationError, NotFoundError,
                   ViewInUseError)


class Pipeline:
    """Commands collected by a Cluster and sent together by execute(): each goes to the node
    owning its first key (the argument after the command's name), all nodes at once, with
    redirects followed. Replies come back in the order the commands were added."""

    def __init__(self, cluster):
        self._cluster = cluster
        self._commands = []

    def command(self, *args):
        """Adds any command (arguments as Client.command takes them); returns the pipeline."""
        if not args:
            raise TypeError("command() needs the command's name")
        self._commands.append(args)
        return self

    def put_blob(self, tag, name, data, offset=0, score=None):
        """Adds a TPUT (its reply: the blob's size after the write)."""
        args = ("TPUT", tag, name, offset, data)
        return self.command(*(args if score is None else args + (score,)))

    def get_blob(self, tag, name, size=None, offset=0):
        """Adds a TGET (its reply: bytes, or None when the blob does not exist)."""
        args = ("TGET", tag, name, offset)
        return self.command(*(args if size is None else args + (size,)))

    def execute(self, raise_on_error=True):
        """Sends the commands and returns their replies (the pipeline is emptied). An error
        reply is a ResponseError instance in the list, raised instead with raise_on_error."""
        commands, self._commands = self._commands, []
        replies = self._cluster._execute(commands)
        if raise_on_error:
            for r in replies:
                if isinstance(r, Error):
                    raise r
        return replies

    def __len__(self):
        return len(self._commands)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._commands = []
        return False


class Cluster(_cte.Cluster):
    __doc__ = _cte.Cluster.__doc__

    def pipeline(self):
        """A Pipeline on this cluster."""
        return Pipeline(self)
