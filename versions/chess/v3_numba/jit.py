"""The compilation helpers of the rung: a `kernel` decorator and three bit intrinsics.

`kernel` is `@njit(cache=True)` whose on-disk cache is keyed on every source file of this
folder, not only on the file that defines the function. Numba stamps a cached function with
its own file's mtime and size, but the machine code it keeps has its callees compiled in:
a kernel in rollout.py would go on running the old move generator after movegen.py changed.
Adding a hash of all the folder's sources to the stamp makes any edit here recompile every
kernel (the cache lives in __pycache__/ beside the files, or in $NUMBA_CACHE_DIR).

popcount, lsb (count trailing zeros) and bswap (the vertical flip of a bitboard) are the
LLVM intrinsics ctpop, cttz and bswap, one instruction each on x86-64.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from llvmlite import ir
from numba import njit, types
from numba.core.caching import NullCache
from numba.core.extending import intrinsic

HERE = Path(__file__).resolve().parent


def sources_hash() -> str:
    """SHA-256 over the names and bytes of this folder's .py files."""
    h = hashlib.sha256()
    for f in sorted(HERE.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


SOURCES = sources_hash()


def kernel(fn):
    """njit(cache=True), its cache invalidated by a change to any file of the rung."""
    d = njit(cache=True)(fn)
    cache_file = getattr(getattr(d, "_cache", None), "_cache_file", None)
    if cache_file is None or not hasattr(cache_file, "_source_stamp"):
        d._cache = NullCache()          # Numba's internals moved: compile, never run stale code
    else:
        cache_file._source_stamp = (cache_file._source_stamp, SOURCES)
    return d


def stamped(d) -> bool:
    """Whether a kernel's cache carries the folder's hash (tests check it)."""
    cf = getattr(getattr(d, "_cache", None), "_cache_file", None)
    return cf is not None and isinstance(cf._source_stamp, tuple) and cf._source_stamp[-1] == SOURCES


@intrinsic
def popcount(typingctx, b):
    """Set bits of a uint64, as int64."""
    if b != types.uint64:
        return None

    def codegen(context, builder, sig, args):
        return builder.ctpop(args[0])
    return types.int64(types.uint64), codegen


@intrinsic
def lsb(typingctx, b):
    """Index of the lowest set bit of a non-zero uint64, as int64."""
    if b != types.uint64:
        return None

    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))
    return types.int64(types.uint64), codegen


@intrinsic
def bswap(typingctx, b):
    """Bytes of a uint64 reversed: ranks mirrored, files kept."""
    if b != types.uint64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bswap(args[0])
    return types.uint64(types.uint64), codegen
