"""cte - the Python client of cte-server, on libcte (docs/python.md).

    import cte
    with cte.Client("shm:/run/cte-server/cte.sock") as client:
        tag = client.tag("ckpt")
        tag.put_blob("step-1", b"...")
        data = tag.get_blob("step-1")

Datasets (numpy arrays stored as chunked blobs, libcte's cte/dataset.h):
    tag.write_dataset("u", array, chunks=(8, 256, 256), attrs={"step": 40})
    u = tag.read_dataset("u", start=(0, 0, 0), count=(8, 256, 256))

Addresses: tcp://[:password@]host[:port][/db], unix:PATH, shm:PATH (PATH: the server's Unix
socket; shared memory needs the server's uid). Errors are cte.Error subclasses.

The compiled half (_cte) is found next to this file (an installed copy), else in a CMake build
tree: $CTE_BUILD_DIR/python/cte, else build/python/cte of this repository (so that
`PYTHONPATH=python` works in a source checkout after `cmake --build build`).
"""
import os as _os

__all__ = ["Client", "Tag", "Error", "ConnectionError", "TimeoutError", "AddressError",
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
