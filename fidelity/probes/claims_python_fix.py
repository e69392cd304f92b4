# claims_python_fix.py: the three settings of the Python service's fix,
# read back from inside CPython.  Run it with jemalloc preloaded: it asks
# jemalloc (mallctl, through ctypes) for opt.narenas and
# opt.background_thread, then makes 100,000 small objects (bytes of 64,
# 97 bytes each) and prints how many bytes of them are live in jemalloc:
# all of them when PYTHONMALLOC=malloc sends CPython's small objects to
# malloc, none when pymalloc keeps them in its own arenas (which it maps
# from the kernel itself).  Prints narenas=, background_thread=,
# objects_bytes=, malloc_live_bytes=.  Exit 77 when malloc is not jemalloc.
import ctypes
import sys

libc = ctypes.CDLL(None)
try:
    mallctl = libc.mallctl
except AttributeError:
    print("claims_python_fix: malloc is not jemalloc (no mallctl)", file=sys.stderr)
    sys.exit(77)
mallctl.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t),
                    ctypes.c_void_p, ctypes.c_size_t]


def read(name, ctype):
    value = ctype()
    size = ctypes.c_size_t(ctypes.sizeof(value))
    if mallctl(name.encode(), ctypes.byref(value), ctypes.byref(size), None, 0):
        sys.exit("claims_python_fix: mallctl %s failed" % name)
    return value.value


def live_bytes():
    """This thread's bytes allocated minus freed, as jemalloc counts them."""
    return read("thread.allocated", ctypes.c_uint64) - read("thread.deallocated", ctypes.c_uint64)


print("narenas=%d" % read("opt.narenas", ctypes.c_uint))
print("background_thread=%d" % read("opt.background_thread", ctypes.c_bool))
count = 100000
objs = [None] * count  # the list's own array is allocated before counting
before = live_bytes()
for i in range(count):
    objs[i] = bytes(64)
after = live_bytes()
print("objects_bytes=%d" % sum(map(sys.getsizeof, objs)))
print("malloc_live_bytes=%d" % (after - before))
