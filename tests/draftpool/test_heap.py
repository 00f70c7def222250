"""bound_heap: after it, a buffer above the fixed threshold (but under glibc's default 128 KB) gets its own mapping,
given back to the system on free. Checked in a fresh interpreter through glibc's own count of mapped blocks."""

import subprocess
import sys
import textwrap

import pytest

from draftpool.heap import bound_heap

PROBE = textwrap.dedent("""
    import ctypes, sys
    from draftpool.heap import bound_heap

    class Info(ctypes.Structure):  # glibc's struct mallinfo2 (malloc.h), all size_t
        _fields_ = [(n, ctypes.c_size_t) for n in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                     "fsmblks", "uordblks", "fordblks", "keepcost")]

    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = Info
    libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    if sys.argv[1] == "bound":
        assert bound_heap()

    def mapped_by(size):
        before = libc.mallinfo2().hblks
        p = libc.malloc(size)
        during = libc.mallinfo2().hblks
        libc.free(p)
        return during - before, libc.mallinfo2().hblks - before

    print(*mapped_by(96 * 1024))
""")


def _glibc() -> bool:
    import platform

    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not _glibc(), reason="mallopt / mallinfo2 are glibc's")
def test_a_bounded_heap_maps_a_96kb_buffer_apart_and_gives_it_back():
    def run(mode: str) -> str:
        return subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                              check=True).stdout.split()

    assert run("default") == ["0", "0"]  # glibc's default: 96 KB is served from the heap
    assert run("bound") == ["1", "0"]  # bounded: its own mapping while held, none after free


def test_it_says_whether_it_applied():
    assert bound_heap() is _glibc()
