"""ONNX models on the emulated Graphcore IPU (C600), from Python.

    import ipu
    m = ipu.compile("model.onnx", dtype="f16")
    y = m.run(x=array)          # numpy out; m.stats: cycles, time, MFU

A thin ctypes layer over libipu.so, which the project's build makes next to
this file (build/python/ipu/); the importer, compiler and emulator are the
C ones of `ipu run onnx` (docs/onnx.md). Needs only CPython and numpy.
"""
import ctypes
import os

import numpy as np

__all__ = ["compile", "Model", "IpuError"]


class IpuError(Exception):
    """A model the importer, compiler or emulator refuses, with its reason."""


def _load():
    path = os.environ.get("IPU_LIBRARY") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "libipu.so")
    if not os.path.exists(path):
        raise ImportError(
            f"ipu: {path} is missing: build the project (cmake --build "
            "build), then use build/python on PYTHONPATH")
    lib = ctypes.CDLL(path)
    c = ctypes
    lib.ipu_py_open.restype = c.c_void_p
    lib.ipu_py_open.argtypes = [c.c_char_p, c.c_char_p, c.c_char_p, c.c_int,
                                c.c_char_p, c.c_size_t]
    lib.ipu_py_close.argtypes = [c.c_void_p]
    lib.ipu_py_ports.argtypes = [c.c_void_p, c.c_int]
    lib.ipu_py_port.restype = c.c_char_p
    lib.ipu_py_port.argtypes = [c.c_void_p, c.c_int, c.c_int,
                                c.POINTER(c.c_int),
                                c.POINTER(c.c_longlong)]
    lib.ipu_py_run.argtypes = [c.c_void_p, c.POINTER(c.c_void_p),
                               c.POINTER(c.c_void_p),
                               c.POINTER(c.c_double), c.c_char_p, c.c_size_t]
    lib.ipu_py_notes.restype = c.c_char_p
    lib.ipu_py_notes.argtypes = [c.c_void_p]
    return lib


_lib = _load()


class Model:
    """An ONNX model compiled and loaded on an emulated C600."""

    def __init__(self, path, dtype="f32", cache_dir=None, threads=2):
        err = ctypes.create_string_buffer(2048)
        h = _lib.ipu_py_open(os.fsencode(path), dtype.encode(),
                             os.fsencode(cache_dir) if cache_dir else None,
                             threads, err, len(err))
        if not h:
            raise IpuError(err.value.decode(errors="replace"))
        self._h = h
        self.inputs = self._ports(0)    # [(name, shape)]
        self.outputs = self._ports(1)
        self.notes = _lib.ipu_py_notes(h).decode()
        self.stats = None

    def _ports(self, output):
        ports = []
        for i in range(_lib.ipu_py_ports(self._h, output)):
            rank = ctypes.c_int()
            dims = (ctypes.c_longlong * 8)()
            name = _lib.ipu_py_port(self._h, output, i, ctypes.byref(rank),
                                    dims)
            ports.append((name.decode(), tuple(dims[:rank.value])))
        return ports

    def run(self, *args, **kwargs):
        """Run once. Inputs by ONNX name (or positionally, in the model's
        order); returns the output array, or a dict of them by name if the
        model has several. self.stats then holds the run's cycles,
        predicted cycles, seconds at the chip's clock, MFU and host
        seconds."""
        if args and len(args) + len(kwargs) > len(self.inputs):
            raise TypeError(f"the model has {len(self.inputs)} inputs")
        given = dict(zip((n for n, _ in self.inputs), args))
        for k, v in kwargs.items():
            if k in given:
                raise TypeError(f"input {k} given twice")
            given[k] = v
        names = [n for n, _ in self.inputs]
        for k in given:
            if k not in names:
                raise TypeError(f"the model has no input {k}; its inputs "
                                f"are {', '.join(names)}")
        arrays = []
        for name, shape in self.inputs:
            if name not in given:
                raise TypeError(f"input {name} {list(shape)} is missing")
            a = np.asarray(given[name])
            if (np.issubdtype(a.dtype, np.integer) and a.size
                    and np.abs(a).max() >= 1 << 24):
                raise ValueError(f"input {name}: integers from 2^24 on "
                                 f"are not exact as float32 values")
            a = np.ascontiguousarray(a, dtype=np.float32)
            if a.shape != shape:
                raise ValueError(f"input {name} has shape {a.shape}, the "
                                 f"model wants {shape}")
            arrays.append(a)
        outs = [np.empty(shape, dtype=np.float32) for _, shape in self.outputs]
        vp = ctypes.c_void_p
        ins = (vp * max(1, len(arrays)))(*[a.ctypes.data for a in arrays])
        ops = (vp * max(1, len(outs)))(*[o.ctypes.data for o in outs])
        st = (ctypes.c_double * 5)()
        err = ctypes.create_string_buffer(2048)
        if _lib.ipu_py_run(self._h, ins, ops, st, err, len(err)):
            raise IpuError(err.value.decode(errors="replace"))
        self.stats = {"cycles": int(st[0]), "predicted_cycles": int(st[1]),
                      "seconds": st[2], "mfu": st[3],
                      "host_seconds": st[4]}
        if len(outs) == 1:
            return outs[0]
        return {n: o for (n, _), o in zip(self.outputs, outs)}

    def close(self):
        if getattr(self, "_h", None):
            _lib.ipu_py_close(self._h)
            self._h = None

    def __del__(self):
        self.close()


def compile(path, dtype="f32", cache_dir=None, threads=2):
    """Import the ONNX model at path, compile it for the C600 in dtype
    ("f32", "f16" or "f8") and load it on an emulated chip."""
    return Model(path, dtype, cache_dir, threads)
