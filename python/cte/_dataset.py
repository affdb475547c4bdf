"""Datasets with numpy: Tag.write_dataset, Tag.read_dataset and Tag.dataset_info (the C half
forwards them here, with the tag first). The storage is libcte's (cte/dataset.h): one blob per
chunk plus a metadata blob, so the C library and this module read each other's datasets.

numpy is imported on first use (Debian: python3-numpy)."""

_TYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32",
          "float64")
_CHUNK_BYTES = 4 << 20


def _np():
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - numpy is a dependency of these calls only
        raise ImportError("cte datasets need numpy (Debian: apt-get install python3-numpy)") from e
    return numpy


def _type_name(np, dtype):
    name = np.dtype(dtype).newbyteorder("=").name
    if name not in _TYPES:
        raise TypeError("unsupported element type %s (supported: %s)" % (dtype, ", ".join(_TYPES)))
    return name


def default_chunks(shape, itemsize):
    """About 4 MiB per chunk: the trailing dimensions whole as long as they fit, the first one
    that does not cut to fit, the ones before it 1."""
    chunks = [1] * len(shape)
    for k in range(len(shape)):
        rest = itemsize
        for n in shape[k + 1:]:
            rest *= n
        if rest <= _CHUNK_BYTES:
            chunks[k] = min(shape[k], max(1, _CHUNK_BYTES // rest))
            chunks[k + 1:] = shape[k + 1:]
            break
    return tuple(chunks)


def _ints(what, v, rank):
    v = tuple(int(x) for x in v)
    if len(v) != rank:
        raise ValueError("%s needs %d entries, not %d" % (what, rank, len(v)))
    return v


def write_dataset(tag, name, array, chunks=None, start=None, shape=None, score=None, attrs=None):
    np = _np()
    a = np.asarray(array)
    if a.ndim < 1 or a.ndim > 8:
        raise ValueError("datasets have 1 to 8 dimensions, not %d" % a.ndim)
    tname = _type_name(np, a.dtype)
    a = np.ascontiguousarray(a, dtype=np.dtype(tname))  # native byte order, C order
    shape = _ints("shape", shape, a.ndim) if shape is not None else a.shape
    start = _ints("start", start, a.ndim) if start is not None else (0,) * a.ndim
    chunks = _ints("chunks", chunks, a.ndim) if chunks is not None else \
        default_chunks(shape, a.itemsize)
    tag._dataset_write(name, tname, shape, chunks, a, start, a.shape, score)
    for k, v in (attrs or {}).items():
        tag._dataset_set_attr(name, str(k), None if v is None else str(v))


def dataset_info(tag, name):
    np = _np()
    tname, shape, chunks, attrs = tag._dataset_info(name)
    return {"dtype": np.dtype(tname), "shape": shape, "chunks": chunks, "attrs": attrs}


def read_dataset(tag, name, start=None, count=None):
    np = _np()
    tname, shape, _, _ = tag._dataset_info(name)
    rank = len(shape)
    start = _ints("start", start, rank) if start is not None else (0,) * rank
    if count is None:
        count = tuple(max(0, n - s) for n, s in zip(shape, start))
    count = _ints("count", count, rank)
    out = np.empty(count, dtype=np.dtype(tname))
    tag._dataset_read(name, start, count, out)
    return out
