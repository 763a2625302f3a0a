"""npy_ref.py write|check DIR - numpy's side of tests/test_npy.c.

write: numpy.save files the C reader must read (f32, f16, u8, i32, i64, a scalar,
an empty array, version 2.0) or refuse (Fortran order, big-endian,
float64).
check: load the files the C writer made and compare them, their dtype,
shape and header layout with numpy's own; exits 1 on any difference.
Element i of every array is value(i) below, in both directions.
"""
import os
import sys

import numpy as np

mode, out = sys.argv[1], sys.argv[2]


def value(dtype, shape):
    i = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    if dtype == np.uint8:
        return ((i * 7) % 256).astype(np.uint8)
    if dtype == np.int32:
        return (i * 40503 - 1000000).astype(np.int32)
    if dtype == np.int64:
        return (i * 3000000007 - (1 << 40)).astype(np.int64)
    if dtype == np.float16:
        return ((i % 97) * 0.125 - 3).astype(np.float16)
    return ((i % 251) * 0.25 - 17).astype(np.float32)


ARRAYS = {  # name: dtype, shape (the C side writes the same set)
    "f32": (np.float32, (2, 3, 4)),
    "f16": (np.float16, (5, 7)),
    "u8": (np.uint8, (300,)),
    "i32": (np.int32, (3, 5)),
    "i64": (np.int64, (2, 8)),
    "scalar": (np.float32, ()),
    "rank5": (np.float32, (1, 2, 1, 3, 2)),
    "empty": (np.float32, (0, 4)),
}

if mode == "write":
    for name, (dt, shape) in ARRAYS.items():
        np.save(os.path.join(out, f"np_{name}.npy"), value(dt, shape))
    with open(os.path.join(out, "np_v2.npy"), "wb") as f:
        np.lib.format.write_array(f, value(np.float32, (3, 3)),
                                  version=(2, 0))
    np.save(os.path.join(out, "np_fortran.npy"),
            np.asfortranarray(value(np.float32, (2, 3))))
    np.save(os.path.join(out, "np_big.npy"),
            value(np.float32, (4,)).astype(">f4"))
    np.save(os.path.join(out, "np_f64.npy"), np.zeros(3))
else:
    bad = 0
    for name, (dt, shape) in ARRAYS.items():
        p = os.path.join(out, f"c_{name}.npy")
        a = np.load(p)
        with open(p, "rb") as f:
            version = np.lib.format.read_magic(f)
            head = f.tell() + 2
            hlen = int.from_bytes(open(p, "rb").read()[8:10], "little")
        want = value(dt, shape)
        if (a.dtype != want.dtype or a.shape != want.shape
                or not np.array_equal(a, want) or version != (1, 0)
                or (head + hlen) % 64):
            print(f"{p}: {a.dtype} {a.shape} v{version} header {hlen}")
            bad = 1
    sys.exit(bad)
