#!/usr/bin/python3
"""An independent reference of the SigLIP vision tower, written from the
semantics in the project's model notes (shared/reference/model.md, sections
1-6), not from any existing implementation.

It reads the same safetensors checkpoint and images as the compiler and
computes the pooled embedding (and last_hidden_state) with plain tensor
arithmetic: every operator is spelled out here as matmuls, sums, exp and tanh,
so torch's own layer_norm, gelu, softmax, conv2d and MultiheadAttention stay
free to serve as independent checks (tools/test_siglip_ref.py).

Run it with Debian's /usr/bin/python3 (python3-torch, python3-numpy,
python3-pil). `siglip_ref.py --help` lists the commands; docs/reference-model.md
describes them and the measured precision.
"""

import argparse
import json
import math
import mmap
import os
import re
import struct
import sys
from dataclasses import dataclass

import numpy as np
import torch


class RefError(Exception):
    """A problem with the user's input: printed as one line, never a traceback."""


# --------------------------------------------------------------------------
# safetensors: 8-byte little-endian header length, a JSON header, raw data.

# dtype string -> (numpy little-endian dtype of the stored element, torch dtype)
_ST_DTYPES = {
    "F64": ("<f8", torch.float64),
    "F32": ("<f4", torch.float32),
    "F16": ("<f2", torch.float16),
    "BF16": ("<i2", torch.bfloat16),  # reinterpreted bit for bit
    "I64": ("<i8", torch.int64),
    "I32": ("<i4", torch.int32),
    "I16": ("<i2", torch.int16),
    "I8": ("i1", torch.int8),
    "U8": ("u1", torch.uint8),
    "BOOL": ("u1", torch.bool),
    "F8_E4M3": ("u1", None),  # torch 1.13 has no fp8: decoded to float32
    "F8_E5M2": ("u1", None),
    "F8_E4M3FNUZ": ("u1", None),  # the IPU's F143 and F152 (ipu quant's codes)
    "F8_E5M2FNUZ": ("u1", None),
}
_TORCH_TO_ST = {t: name for name, (_, t) in _ST_DTYPES.items() if t is not None}


def _fp8_table(exp_bits, man_bits, ocp_e4m3):
    """Value of each of the 256 codes of an OCP FP8 format (bias 2^(e-1)-1).
    E4M3 has no infinities and only S.1111.111 as NaN; E5M2 is IEEE-like."""
    bias = (1 << (exp_bits - 1)) - 1
    emax_code = (1 << exp_bits) - 1
    table = np.empty(256, dtype=np.float32)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        e = (code >> man_bits) & emax_code
        m = code & ((1 << man_bits) - 1)
        if ocp_e4m3 and e == emax_code and m == (1 << man_bits) - 1:
            value = math.nan
        elif not ocp_e4m3 and e == emax_code:
            value = math.inf if m == 0 else math.nan
        elif e == 0:
            value = m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            value = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        table[code] = sign * value
    return table


def _fnuz_table(exp_bits, man_bits):
    """The 256 codes of an FNUZ format (bias 2^(e-1), no infinities, no
    negative zero: 0x80 is the only NaN): F143 (max 240) and F152 (57344)."""
    bias = 1 << (exp_bits - 1)
    table = np.empty(256, dtype=np.float32)
    for code in range(256):
        e = (code >> man_bits) & ((1 << exp_bits) - 1)
        m = code & ((1 << man_bits) - 1)
        frac = m / (1 << man_bits)
        value = frac * 2.0 ** (1 - bias) if e == 0 else (1 + frac) * 2.0 ** (e - bias)
        table[code] = math.nan if code == 0x80 else (-value if code & 0x80 else value)
    return table


_FP8_TABLES = {"F8_E4M3": _fp8_table(4, 3, True), "F8_E5M2": _fp8_table(5, 2, False),
               "F8_E4M3FNUZ": _fnuz_table(4, 3), "F8_E5M2FNUZ": _fnuz_table(5, 2)}


def read_safetensors(path):
    """All tensors of a safetensors file as {name: torch tensor} (F8 as float32)."""
    try:
        with open(path, "rb") as f:
            # mapped, not read: each tensor is copied out once, so a checkpoint
            # costs its own size in memory, not twice that
            blob = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if os.fstat(f.fileno()).st_size else b""
    except OSError as e:
        raise RefError(f"{path}: cannot read weights: {e.strerror}")
    try:
        return _parse_safetensors(path, blob)
    finally:
        if isinstance(blob, mmap.mmap):
            blob.close()


def _parse_safetensors(path, blob):
    if len(blob) < 8:
        raise RefError(f"{path}: not a safetensors file (shorter than its 8-byte header length)")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > len(blob) - 8:
        raise RefError(f"{path}: header length {header_len} runs past the end of the file ({len(blob)} bytes)")
    try:
        header = json.loads(blob[8:8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RefError(f"{path}: header is not valid JSON: {e}")
    if not isinstance(header, dict):
        raise RefError(f"{path}: header is not a JSON object")
    data_start = 8 + header_len
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        tensors[name] = _decode_entry(path, name, entry, blob, data_start)
    return tensors


def _decode_entry(path, name, entry, blob, data_start):
    where = f"{path}: tensor '{name}'"
    try:
        dtype, shape, (begin, end) = entry["dtype"], list(entry["shape"]), entry["data_offsets"]
    except (KeyError, TypeError, ValueError):
        raise RefError(f"{where}: header entry lacks dtype, shape or a [begin, end] data_offsets")
    if not isinstance(dtype, str) or dtype not in _ST_DTYPES:
        raise RefError(f"{where}: unsupported dtype {dtype} (supported: {', '.join(_ST_DTYPES)})")
    if not all(type(n) is int and n >= 0 for n in shape):
        raise RefError(f"{where}: shape {shape} is not a list of non-negative integers")
    np_dtype, torch_dtype = _ST_DTYPES[dtype]
    count = math.prod(shape)
    data_len = len(blob) - data_start
    if not (type(begin) is int and type(end) is int and 0 <= begin <= end <= data_len):
        raise RefError(f"{where}: data_offsets [{begin}, {end}] outside the {data_len} data bytes")
    if end - begin != count * np.dtype(np_dtype).itemsize:
        raise RefError(f"{where}: {end - begin} bytes do not hold {dtype} {shape}")
    raw = np.frombuffer(blob, dtype=np_dtype, count=count, offset=data_start + begin).reshape(shape)
    if torch_dtype is None:
        return torch.from_numpy(_FP8_TABLES[dtype][raw])
    if dtype == "BF16":
        return torch.from_numpy(raw.astype(np.int16)).view(torch.bfloat16)
    if dtype == "BOOL":
        return torch.from_numpy(raw != 0)
    return torch.from_numpy(raw.astype(raw.dtype.newbyteorder("=")))


def write_safetensors(path, tensors, metadata=None, force=False):
    """Write {name: torch tensor} (F64/F32/F16/BF16/integer) as safetensors.
    Refuses to replace an existing file unless forced."""
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    chunks, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        if t.dtype not in _TORCH_TO_ST:
            raise RefError(f"{path}: cannot store tensor '{name}' of dtype {t.dtype}")
        if t.dtype == torch.bfloat16:
            raw = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            raw = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _TORCH_TO_ST[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # keeps the data 8-byte aligned
    with _create(path, force) as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for raw in chunks:
            f.write(raw)


def _create(path, force=False):
    """Open a new output file; an existing one is replaced only when forced."""
    try:
        return open(path, "wb" if force else "xb")
    except FileExistsError:
        raise _exists(path)
    except OSError as e:
        raise RefError(f"{path}: cannot write: {e.strerror}")


def _exists(path):
    return RefError(f"{path}: already exists; not overwriting it (pass --force to replace it)")


def _refuse_existing(paths, force):
    """Checked before the slow part, so a run is not wasted on an output it may not write."""
    for path in paths:
        if path and os.path.exists(path) and not force:
            raise _exists(path)


# --------------------------------------------------------------------------
# config.json

@dataclass
class VisionConfig:
    """The vision tower's shape; defaults are SiglipVisionConfig's (model.md section 2)."""
    hidden_size: int = 768
    intermediate_size: int = 3072
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    num_channels: int = 3
    image_size: int = 224
    patch_size: int = 16
    layer_norm_eps: float = 1e-6
    hidden_act: str = "gelu_pytorch_tanh"
    vision_use_head: bool = True

    @property
    def grid(self):
        return self.image_size // self.patch_size

    @property
    def num_patches(self):
        return self.grid * self.grid

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads


def parse_config(obj, where="config"):
    """A VisionConfig from a SiglipVisionConfig dict or a SiglipConfig with vision_config."""
    if not isinstance(obj, dict):
        raise RefError(f"{where}: not a JSON object")
    if "vision_config" in obj:
        obj = obj["vision_config"] or {}
        where += ": vision_config"
        if not isinstance(obj, dict):
            raise RefError(f"{where}: not a JSON object")
    cfg = VisionConfig()
    for field, default in vars(VisionConfig()).items():
        if field in obj:
            value = obj[field]
            if type(value) is not type(default) and not (isinstance(default, float) and type(value) is int):
                raise RefError(f"{where}: {field} = {value!r} is not a {type(default).__name__}")
            setattr(cfg, field, type(default)(value))
    _check_config(cfg, where)
    return cfg


def _check_config(cfg, where):
    if cfg.hidden_act != "gelu_pytorch_tanh":
        raise RefError(f"{where}: hidden_act {cfg.hidden_act!r} is not supported (only gelu_pytorch_tanh)")
    for field in ("hidden_size", "intermediate_size", "num_attention_heads", "num_channels",
                  "image_size", "patch_size"):
        if getattr(cfg, field) <= 0:
            raise RefError(f"{where}: {field} must be positive")
    if cfg.num_hidden_layers < 0:
        raise RefError(f"{where}: num_hidden_layers must not be negative")
    if cfg.hidden_size % cfg.num_attention_heads:
        raise RefError(f"{where}: hidden_size {cfg.hidden_size} is not a multiple of "
                       f"num_attention_heads {cfg.num_attention_heads}")
    if cfg.patch_size > cfg.image_size:
        raise RefError(f"{where}: patch_size {cfg.patch_size} is larger than image_size {cfg.image_size}")


def read_config(path):
    try:
        with open(path, encoding="utf-8") as f:
            obj = json.load(f)
    except OSError as e:
        raise RefError(f"{path}: cannot read config: {e.strerror}")
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RefError(f"{path}: not valid JSON: {e}")
    return parse_config(obj, path)


# --------------------------------------------------------------------------
# Checkpoint tensors (model.md section 3)

def expected_shapes(cfg):
    """{name without the 'vision_model.' prefix: shape} of every tensor the tower reads."""
    d, f, p, c = cfg.hidden_size, cfg.intermediate_size, cfg.patch_size, cfg.num_channels
    shapes = {
        "embeddings.patch_embedding.weight": [d, c, p, p],
        "embeddings.patch_embedding.bias": [d],
        "embeddings.position_embedding.weight": [cfg.num_patches, d],
        "post_layernorm.weight": [d],
        "post_layernorm.bias": [d],
    }
    mlp = {"mlp.fc1.weight": [f, d], "mlp.fc1.bias": [f], "mlp.fc2.weight": [d, f], "mlp.fc2.bias": [d]}
    for i in range(cfg.num_hidden_layers):
        layer = f"encoder.layers.{i}."
        for ln in ("layer_norm1", "layer_norm2"):
            shapes[f"{layer}{ln}.weight"] = [d]
            shapes[f"{layer}{ln}.bias"] = [d]
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            shapes[f"{layer}self_attn.{proj}.weight"] = [d, d]
            shapes[f"{layer}self_attn.{proj}.bias"] = [d]
        shapes.update({layer + k: v for k, v in mlp.items()})
    if cfg.vision_use_head:
        shapes.update({
            "head.probe": [1, 1, d],
            "head.attention.in_proj_weight": [3 * d, d],
            "head.attention.in_proj_bias": [3 * d],
            "head.attention.out_proj.weight": [d, d],
            "head.attention.out_proj.bias": [d],
            "head.layernorm.weight": [d],
            "head.layernorm.bias": [d],
        })
        shapes.update({"head." + k: v for k, v in mlp.items()})
    return shapes


def vision_weights(tensors, cfg, where):
    """The tower's tensors, keyed without their prefix, checked against cfg.
    The prefix is whatever precedes 'embeddings.patch_embedding.weight'
    ('vision_model.' in SigLIP checkpoints)."""
    anchor = "embeddings.patch_embedding.weight"
    prefixes = sorted(n[:-len(anchor)] for n in tensors if n.endswith(anchor))
    if not prefixes:
        raise RefError(f"{where}: no tensor named 'vision_model.{anchor}' (is this a SigLIP checkpoint?)")
    prefix = "vision_model." if "vision_model." in prefixes else prefixes[0]
    weights = {}
    for name, shape in expected_shapes(cfg).items():
        full = prefix + name
        if full not in tensors:
            raise RefError(f"{where}: missing tensor '{full}' (expected shape {shape})")
        t = tensors[full]
        if list(t.shape) != shape:
            raise RefError(f"{where}: tensor '{full}' has shape {list(t.shape)}, the config needs {shape}")
        if not t.is_floating_point():
            raise RefError(f"{where}: tensor '{full}' is {t.dtype}, not floating point")
        weights[name] = t
    return weights


def random_weights(cfg, seed=0):
    """A checkpoint of random float32 weights with SigLIP's names and shapes.
    Scales keep activations O(1) through the layers so outputs are not degenerate."""
    gen = torch.Generator().manual_seed(seed)
    tensors = {}
    for name, shape in expected_shapes(cfg).items():
        normal = torch.randn(shape, generator=gen, dtype=torch.float32)
        if name.endswith("layer_norm1.weight") or name.endswith("layer_norm2.weight") \
                or name.endswith("layernorm.weight"):
            t = 1.0 + 0.1 * normal
        elif name.endswith("weight") and len(shape) >= 2 and "position" not in name:
            fan_in = math.prod(shape[1:])
            t = normal / math.sqrt(fan_in)
        elif name == "head.probe" or "position" in name:
            t = normal
        else:  # biases and LayerNorm shifts
            t = 0.02 * normal
        tensors["vision_model." + name] = t
    return tensors


# --------------------------------------------------------------------------
# Preprocessing (model.md section 6: SiglipImageProcessor)

def load_image(path, size):
    """[3, size, size] float32: RGB, PIL bicubic resize to size x size (no crop),
    x/255, then (x - 0.5)/0.5.  Computed in float64 and rounded once to float32."""
    from PIL import Image, UnidentifiedImageError
    try:
        with Image.open(path) as img:
            rgb = img.convert("RGB").resize((size, size), resample=Image.BICUBIC)
    except FileNotFoundError:
        raise RefError(f"{path}: no such image")
    except (UnidentifiedImageError, OSError) as e:
        raise RefError(f"{path}: cannot read image: {e}")
    u8 = np.asarray(rgb, dtype=np.uint8)            # [size, size, 3]
    pixels = (u8.astype(np.float64) * (1.0 / 255.0) - 0.5) / 0.5
    return pixels.transpose(2, 0, 1).astype(np.float32)


def load_images(paths, size):
    return np.stack([load_image(p, size) for p in paths])


# --------------------------------------------------------------------------
# Operators.  Each computes in the dtype of its inputs; `rnd` is applied to
# every intermediate tensor that a real pipeline would store (identity for
# float64/float32, rounding to f16 for the f16 emulation).

def _same(t):
    return t


class KBlockWeight:
    """A weight with per-K-block scales as the device runs it (quant-check
    --device-blocks): w [out, in] the codes times 2^scale, c [out, blocks] the
    scales; each block's product is rounded, multiplied by its scales (rounded)
    and added to the running sum (rounded), block by block."""

    def __init__(self, w, c, block):
        self.w, self.c, self.block = w, c, block
        self.dtype = w.dtype

    def to(self, dtype):
        return KBlockWeight(self.w.to(dtype), self.c.to(dtype), self.block)

    def half(self):
        return KBlockWeight(self.w.half(), self.c.half(), self.block)

    def __getitem__(self, rows):
        return KBlockWeight(self.w[rows], self.c[rows], self.block)

    def product(self, x, rnd):
        acc = None
        for b in range(self.c.shape[1]):
            cols = slice(b * self.block, (b + 1) * self.block)
            p = rnd(torch.matmul(x[..., cols], self.w[:, cols].transpose(0, 1)))
            p = rnd(p * self.c[:, b])
            acc = p if acc is None else rnd(acc + p)
        return acc


def linear(x, weight, bias=None, rnd=_same):
    """x @ weight^T + bias, with weight [out, in] as PyTorch stores it (or a
    KBlockWeight)."""
    if isinstance(weight, KBlockWeight):
        y = weight.product(x, rnd)
    else:
        y = torch.matmul(x, weight.transpose(0, 1))
    if bias is not None:
        y = y + bias
    return rnd(y)


def layer_norm(x, weight, bias, eps, rnd=_same):
    """Normalise the last axis: population variance, eps inside the square root."""
    n = x.shape[-1]
    mean = x.sum(dim=-1, keepdim=True) / n
    centred = x - mean
    var = (centred * centred).sum(dim=-1, keepdim=True) / n
    return rnd(centred / torch.sqrt(var + eps) * weight + bias)


def gelu_tanh(x, rnd=_same):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
    return rnd(0.5 * x * (1.0 + torch.tanh(inner)))


def softmax(x, rnd=_same):
    """Softmax over the last axis, shifted by the row maximum so exp cannot overflow."""
    shifted = x - x.max(dim=-1, keepdim=True).values
    e = torch.exp(shifted)
    return rnd(e / e.sum(dim=-1, keepdim=True))


def _split_heads(x, heads):
    b, n, d = x.shape
    return x.reshape(b, n, heads, d // heads).permute(0, 2, 1, 3)   # [b, heads, n, hd]


def attention(q, k, v, heads, rnd=_same, pv=None, qk=None):
    """Multi-head scaled dot-product attention, no mask.  q [B, Nq, d],
    k and v [B, Nk, d]; head h uses columns h*hd .. (h+1)*hd-1; scale hd^-0.5.
    pv(p, vh) -> (p, vh), qk(qh, kh) -> (qh, kh): the products' operands as
    the device casts them."""
    b, nq, d = q.shape
    qh, kh, vh = (_split_heads(t, heads) for t in (q, k, v))
    if qk:
        qh, kh = qk(qh, kh)
    scores = rnd(torch.matmul(qh, kh.transpose(-1, -2)) * (d // heads) ** -0.5)
    p = softmax(scores, rnd)
    if pv:
        p, vh = pv(p, vh)
    out = rnd(torch.matmul(p, vh))                                # [b, heads, nq, hd]
    return out.permute(0, 2, 1, 3).reshape(b, nq, d)


def _no_act(pos, x):
    return x


def mlp(x, w, prefix, rnd=_same, act=_no_act, pos=""):
    h = gelu_tanh(linear(act(pos + "fc1", x), w[prefix + "fc1.weight"], w[prefix + "fc1.bias"], rnd), rnd)
    return linear(act(pos + "fc2", h), w[prefix + "fc2.weight"], w[prefix + "fc2.bias"], rnd)


def patch_embed(pixels, weight, bias, rnd=_same):
    """The stride-P, kernel-P conv as one matmul: pixels [B, C, H, W] -> tokens
    [B, (H//P)(W//P), d], token = row*grid + col, each patch flattened (c, y, x).
    Like the conv's "valid" padding, pixels past the last whole patch are
    unused (384 = 27*14 + 6 for so400m)."""
    b, c, h, w_px = pixels.shape
    d, _, p, _ = weight.shape
    gh, gw = h // p, w_px // p
    patches = pixels[:, :, :gh * p, :gw * p].reshape(b, c, gh, p, gw, p)
    patches = patches.permute(0, 2, 4, 1, 3, 5).reshape(b, gh * gw, c * p * p)
    return linear(patches, weight.reshape(d, c * p * p), bias, rnd)


def encoder_layer(x, w, prefix, cfg, rnd=_same, act=_no_act):
    """Pre-LN: x + attn(LN1(x)), then + MLP(LN2(.)).  act(position, x) sees
    (and may replace) each dense GEMM's input (GEMM_POSITIONS)."""
    eps, heads = cfg.layer_norm_eps, cfg.num_attention_heads
    h = act("qkv", layer_norm(x, w[prefix + "layer_norm1.weight"], w[prefix + "layer_norm1.bias"], eps, rnd))
    q, k, v = (linear(h, w[f"{prefix}self_attn.{n}_proj.weight"], w[f"{prefix}self_attn.{n}_proj.bias"], rnd)
               for n in ("q", "k", "v"))
    a = act("out", attention(q, k, v, heads, rnd, getattr(act, "pv", None), getattr(act, "qk", None)))
    x = rnd(x + linear(a, w[prefix + "self_attn.out_proj.weight"], w[prefix + "self_attn.out_proj.bias"], rnd))
    h = layer_norm(x, w[prefix + "layer_norm2.weight"], w[prefix + "layer_norm2.bias"], eps, rnd)
    return rnd(x + mlp(h, w, prefix + "mlp.", rnd, act, ""))


def map_head(x, w, cfg, rnd=_same, act=_no_act):
    """Multihead attention pooling: the learned probe attends over all tokens
    (in_proj rows stack q, k, v), out_proj, then y = a + MLP(LN(a)); -> [B, d]."""
    d = cfg.hidden_size
    in_w, in_b = w["head.attention.in_proj_weight"], w["head.attention.in_proj_bias"]
    probe = act("head.q", w["head.probe"].expand(x.shape[0], 1, d))
    x = act("head.kv", x)
    q = linear(probe, in_w[:d], in_b[:d], rnd)
    k = linear(x, in_w[d:2 * d], in_b[d:2 * d], rnd)
    v = linear(x, in_w[2 * d:], in_b[2 * d:], rnd)
    a = act("head.out", attention(q, k, v, cfg.num_attention_heads, rnd))
    a = linear(a, w["head.attention.out_proj.weight"], w["head.attention.out_proj.bias"], rnd)
    h = layer_norm(a, w["head.layernorm.weight"], w["head.layernorm.bias"], cfg.layer_norm_eps, rnd)
    return rnd(a + mlp(h, w, "head.mlp.", rnd, act, "head."))[:, 0]


# --------------------------------------------------------------------------
# Precision and the whole tower

def _round_f16(t):
    return t.half().to(t.dtype)


# name -> (arithmetic dtype, rounding of stored tensors)
PRECISIONS = {
    "f64": (torch.float64, _same),   # the reference truth
    "f32": (torch.float32, _same),
    # f16 storage: weights, pixels and every operator's output rounded to
    # f16; arithmetic inside an operator (matmul sums, LN statistics, softmax
    # sums) in f32, as an f16 pipeline accumulating in f32 would do.
    "f16": (torch.float32, _round_f16),
    # f16 as above, but the dense GEMMs take F143 operands (f8_weights,
    # F8Activations): `ipu run siglip --dtype f8`.
    "f8": (torch.float32, _round_f16),
}

# The dense GEMMs by the activation they read (siglip_graph.h's SiglipGemm).
# "q" and "k": an encoder layer's QK^T (siglip_graph.c scores_times_v).
GEMM_POSITIONS = ("qkv", "out", "fc1", "fc2", "head.q", "head.kv", "head.out", "head.fc1", "head.fc2", "q", "k")
F143_MAX = 240.0
P_SCALE = -7   # the attention's probabilities as F143 (siglip_graph.c SIGLIP_P_SCALE)


def f8_scale(max_abs):
    """The smallest power-of-two scale N with max_abs <= 240 * 2^N (-32..31)."""
    if not max_abs > 0:
        return 0
    s = math.ceil(math.log2(max_abs / F143_MAX))
    while math.ldexp(F143_MAX, s) < max_abs:
        s += 1
    while math.ldexp(F143_MAX, s - 1) >= max_abs:
        s -= 1
    return min(max(s, -32), 31)


# format -> (significant bits, smallest normal exponent, largest value)
FP8_GRIDS = {"F143": (4, -7, F143_MAX), "F152": (3, -15, 57344.0)}


def quantize_fp8(t, scale, fmt="F143"):
    """t rounded to fmt * 2^scale as the IPU's casts do: nearest even, steps of
    the smallest normal's below it, saturating at the largest value
    (docs/emulator-float.md); computed in float64, where it is exact."""
    bits, emin, top = FP8_GRIDS[fmt]
    x = t.to(torch.float64) * 2.0 ** -scale
    _, e = torch.frexp(x)                               # |x| in [2^(e-1), 2^e)
    step = torch.pow(2.0, (e - 1).clamp(min=emin).to(torch.float64) - (bits - 1))
    q = (torch.round(x / step) * step).clamp(-top, top)
    return (q * 2.0 ** scale).to(t.dtype)


def quantize_f143(t, scale):
    """t rounded to F143 * 2^scale: 4 significant bits, the smallest normal
    2^-7, saturating at +-240."""
    return quantize_fp8(t, scale, "F143")


def fp8_scale(max_abs, fmt="F143"):
    """The smallest power-of-two scale N with max_abs <= top * 2^N (-32..31)."""
    top = FP8_GRIDS[fmt][2]
    if not max_abs > 0:
        return 0
    s = math.ceil(math.log2(max_abs / top))
    while math.ldexp(top, s) < max_abs:
        s += 1
    while math.ldexp(top, s - 1) >= max_abs:
        s -= 1
    return min(max(s, -32), 31)


def _is_dense(name):
    return name.endswith(("_proj.weight", "fc1.weight", "fc2.weight"))


def _scale_group(name):
    """The weights that share one F143 scale on the device: an encoder layer's
    with the same weight of every layer (one loop body runs all the layers),
    and its q, k and v projections together (one fused GEMM)."""
    m = re.match(r"(.*encoder\.layers\.)\d+\.(.*)$", name)
    if not m:
        return name
    return m.group(1) + "*." + re.sub(r"self_attn\.[qkv]_proj\.", "self_attn.qkv_proj.", m.group(2))


def f8_weights(weights, cfg):
    """The dense GEMM weights quantized to F143, each with the scale of the
    largest |w| of its group (_scale_group; the head's in_proj per q, k, v
    part, as the graph splits it)."""
    group_max = {}
    for k, v in weights.items():
        if _is_dense(k):
            g = _scale_group(k)
            group_max[g] = max(group_max.get(g, 0.0), float(v.abs().max()))
    out = {}
    for k, v in weights.items():
        if _is_dense(k):
            v = quantize_f143(v, f8_scale(group_max[_scale_group(k)]))
        elif k == "head.attention.in_proj_weight":
            v = torch.cat([quantize_f143(p, f8_scale(float(p.abs().max())))
                           for p in v.split(cfg.hidden_size)])
        out[k] = v
    return out


def fold_layernorms(weights, cfg):
    """The device's --fold-ln (ipu run siglip --dtype f8, the default; its
    --no-fold-ln keeps them): each LayerNorm read only by linear layers
    (layer_norm1 -> q, k, v; layer_norm2 -> fc1; the post-LayerNorm -> the
    head's k and v; the head's -> its fc1) loses gamma and beta, folded into
    those layers: W' = W diag(gamma), b' = b + W beta, in f64 (weights must be
    f64 already), before f8_weights quantizes W'.  The same function of the
    input in exact arithmetic; the last hidden state is then z, not the
    post-LayerNorm's y (the pooled embedding is the tower's)."""
    w = dict(weights)
    d = cfg.hidden_size

    def fold(ln, targets, rows=slice(None)):
        g, b = w[ln + ".weight"], w[ln + ".bias"]
        for t in targets:
            W = w[t + "weight"].clone()
            bias = w[t + "bias"].clone()
            bias[rows] = bias[rows] + W[rows] @ b
            W[rows] = W[rows] * g
            w[t + "weight"], w[t + "bias"] = W, bias
        w[ln + ".weight"], w[ln + ".bias"] = torch.ones_like(g), torch.zeros_like(b)

    for i in range(cfg.num_hidden_layers):
        p = f"encoder.layers.{i}."
        fold(p + "layer_norm1", [p + f"self_attn.{n}_proj." for n in "qkv"])
        fold(p + "layer_norm2", [p + "mlp.fc1."])
    if cfg.vision_use_head:
        fold("post_layernorm", ["head.attention.in_proj_"], slice(d, 3 * d))
        fold("head.layernorm", ["head.mlp.fc1."])
    return w


class F8Activations:
    """act(): each dense GEMM's input cast to F143 with its position's scale."""

    def __init__(self, scales):
        self.scales = scales

    def __call__(self, pos, x):
        return quantize_f143(x, self.scales[pos])

    def pv(self, p, vh):
        """An encoder layer's PV product in F143 (siglip_graph.c
        attend_heads): P at 2^-7, V at out_proj's input scale."""
        return quantize_f143(p, P_SCALE), quantize_f143(vh, self.scales["out"])

    def qk(self, qh, kh):
        """An encoder layer's QK^T in F143: q and k at their own scales."""
        return quantize_f143(qh, self.scales["q"]), quantize_f143(kh, self.scales["k"])


class ActivationRanges:
    """act() for calibration: the largest |x| seen at each GEMM position."""

    def __init__(self):
        self.max = {}

    def __call__(self, pos, x):
        self.max[pos] = max(self.max.get(pos, 0.0), float(x.abs().max()))
        return x

    def qk(self, qh, kh):
        return self("q", qh), self("k", kh)


def parse_f8_scales(text):
    """"qkv=-2,fc1=1,..." -> {position: scale}; every position is needed."""
    scales = {}
    for item in filter(None, text.split(",")):
        pos, eq, n = item.partition("=")
        if pos not in GEMM_POSITIONS or not eq:
            raise RefError(f"--f8-scales: '{item}' is not POSITION=N (positions {', '.join(GEMM_POSITIONS)})")
        try:
            scales[pos] = int(n)
        except ValueError:
            raise RefError(f"--f8-scales: {pos} wants an integer, got '{n}'")
    missing = [p for p in GEMM_POSITIONS if p not in scales]
    if missing:
        raise RefError(f"--f8-scales: no scale for {', '.join(missing)} (ipu run siglip --dtype f8 prints all)")
    return scales


def tower(pixels, weights, cfg, precision="f64", act=_no_act, fold_ln=False):
    """(pooled [B, d] or None without a head, last_hidden_state [B, N, d]), float32
    numpy arrays.  pixels is [B, C, S, S] (numpy or torch).  For f8, act is an
    F8Activations; otherwise it may watch the GEMM inputs (ActivationRanges);
    fold_ln (f8 only): the LayerNorms folded as the device does
    (fold_layernorms)."""
    dtype, rnd = PRECISIONS[precision]
    if fold_ln and precision != "f8":
        raise RefError("--fold-ln mirrors the device's f8 tower: with --dtype f8 only")
    if precision == "f8":
        w64 = {k: v.to(torch.float64) for k, v in weights.items()}
        weights = f8_weights(fold_layernorms(w64, cfg) if fold_ln else w64, cfg)
    w = {k: rnd(v.to(dtype)) for k, v in weights.items()}
    x = rnd(torch.as_tensor(np.asarray(pixels)).to(dtype))
    with torch.no_grad():
        h = patch_embed(x, w["embeddings.patch_embedding.weight"], w["embeddings.patch_embedding.bias"], rnd)
        h = rnd(h + w["embeddings.position_embedding.weight"])
        for i in range(cfg.num_hidden_layers):
            h = encoder_layer(h, w, f"encoder.layers.{i}.", cfg, rnd, act)
        hidden = layer_norm(h, w["post_layernorm.weight"], w["post_layernorm.bias"], cfg.layer_norm_eps, rnd)
        pooled = map_head(hidden, w, cfg, rnd, act) if cfg.vision_use_head else None
    as_np = lambda t: t.to(torch.float32).numpy()
    return (None if pooled is None else as_np(pooled)), as_np(hidden)


def check_pixels(pixels, cfg, where):
    want = (cfg.num_channels, cfg.image_size, cfg.image_size)
    if pixels.shape == want:
        pixels = pixels[None]
    if pixels.ndim != 4 or pixels.shape[1:] != want:
        raise RefError(f"{where}: pixels have shape {list(pixels.shape)}, the config needs [B, {', '.join(map(str, want))}]")
    if pixels.shape[0] == 0:
        raise RefError(f"{where}: no images in the batch")
    return pixels


# --------------------------------------------------------------------------
# Comparison

def compare(a, b):
    """Cosine similarity (overall and per item along the first axis), max abs
    error, and max abs error relative to max |b|; computed in float64."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    rows = a64.reshape(a64.shape[0], -1) if a64.ndim >= 2 else a64.reshape(1, -1)
    rows_b = b64.reshape(rows.shape)
    cos = lambda x, y: float(np.dot(x, y) / max(np.linalg.norm(x) * np.linalg.norm(y), 1e-300))
    err = np.abs(a64 - b64)
    scale = float(np.max(np.abs(b64))) if b64.size else 0.0
    return {
        "cosine": cos(a64.ravel(), b64.ravel()),
        "item_cosines": [cos(x, y) for x, y in zip(rows, rows_b)],
        "max_abs_error": float(err.max()) if err.size else 0.0,
        "max_rel_error": (float(err.max()) / scale) if scale > 0 else 0.0,
    }


# --------------------------------------------------------------------------
# Command line

def _load_npy(path):
    try:
        arr = np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise RefError(f"{path}: no such file")
    except (OSError, ValueError) as e:
        raise RefError(f"{path}: not a readable .npy array: {e}")
    if arr.dtype.kind not in "fiu":
        raise RefError(f"{path}: dtype {arr.dtype} is not numeric")
    return arr


def _save_npy(path, arr, force):
    with _create(path, force) as f:
        np.save(f, np.ascontiguousarray(arr, dtype=np.float32))


def _cmd_preprocess(args):
    if args.size <= 0:
        raise RefError(f"preprocess: --size {args.size} must be positive")
    _refuse_existing([args.out], args.force)
    _save_npy(args.out, load_images(args.image, args.size), args.force)


def _tower_inputs(args, cfg):
    """The pixel values (--pixels or --image) and the vision weights
    (--weights) of a command with the tower's inputs."""
    if args.pixels:
        pixels = check_pixels(_load_npy(args.pixels), cfg, args.pixels)
    else:
        pixels = load_images(args.image, cfg.image_size)
    return pixels, vision_weights(read_safetensors(args.weights), cfg, args.weights)


def _cmd_run(args):
    cfg = read_config(args.config)
    if not cfg.vision_use_head and args.out:
        raise RefError(f"{args.config}: vision_use_head is false, so there is no pooled embedding; use --hidden only")
    if not args.out and not args.hidden:
        raise RefError("run: give --out and/or --hidden")
    _refuse_existing([args.out, args.hidden], args.force)
    pixels, weights = _tower_inputs(args, cfg)
    if (args.dtype == "f8") != bool(args.f8_scales):
        raise RefError("run: --f8-scales goes with --dtype f8, and --dtype f8 needs them")
    act = F8Activations(parse_f8_scales(args.f8_scales)) if args.f8_scales else _no_act
    pooled, hidden = tower(pixels, weights, cfg, args.dtype, act, args.fold_ln)
    if args.out:
        _save_npy(args.out, pooled, args.force)
    if args.hidden:
        _save_npy(args.hidden, hidden, args.force)


def _cmd_calibrate(args):
    cfg = read_config(args.config)
    pixels, weights = _tower_inputs(args, cfg)
    ranges = ActivationRanges()
    tower(pixels, weights, cfg, "f64", ranges)
    scales = {}
    print(f"{'position':10} {'max |x|':>12} {'scale':>5}  (F143 covers 240 * 2^scale)")
    for pos in GEMM_POSITIONS:
        m = ranges.max.get(pos, 0.0)
        scales[pos] = f8_scale(m) + args.headroom
        print(f"{pos:10} {m:12.6g} {scales[pos]:5d}")
    print("--f8-scales " + ",".join(f"{p}={s}" for p, s in scales.items()))


def activation_stats(pixels, weights, cfg):
    """Per layer, in f64: each dense GEMM input's largest |x|, median |x| and
    the ratio; the residual stream's largest |x|, its median, the count of
    massive activations (|x| > 100 and > 1000 x the median |x| of their
    hidden state: Sun et al. 2024) and of high-norm tokens (norm > 5 x the
    median token norm); the attention mass on the top 2% of keys (by the
    attention they receive), averaged over queries, heads and images.
    Returns a list of (layer, {statistic: value}), the last entry the
    post-LayerNorm output and the head."""
    w = {k: v.to(torch.float64) for k, v in weights.items()}
    x = torch.as_tensor(np.asarray(pixels)).to(torch.float64)
    eps, heads = cfg.layer_norm_eps, cfg.num_attention_heads
    rows = []

    def gemm(row, pos, t):
        a = t.abs()
        row[pos + ".max"] = float(a.max())
        row[pos + ".median"] = float(a.flatten().median())

    def resid(row, h):
        a = h.abs()
        med = a.flatten(1).median(dim=1).values          # per image
        row["resid.max"] = float(a.max())
        row["resid.median"] = float(med.mean())
        row["massive"] = int(((a > 100) & (a > 1000 * med[:, None, None])).sum()) / a.shape[0]
        norm = h.norm(dim=-1)
        row["high_norm"] = float((norm > 5 * norm.median(dim=-1, keepdim=True).values).float().mean())

    def attend(row, q, k, v):
        b, n, d = q.shape
        qh, kh, vh = (_split_heads(t, heads) for t in (q, k, v))
        p = softmax(torch.matmul(qh, kh.transpose(-1, -2)) * (d // heads) ** -0.5)
        top = p.sum(2).topk(max(1, round(0.02 * n)), dim=-1).indices   # [b, heads, top]
        mass = torch.gather(p, 3, top[:, :, None, :].expand(-1, -1, p.shape[2], -1)).sum(-1)
        row["sink_mass"] = float(mass.mean())
        return torch.matmul(p, vh).permute(0, 2, 1, 3).reshape(b, n, d)

    with torch.no_grad():
        h = patch_embed(x, w["embeddings.patch_embedding.weight"], w["embeddings.patch_embedding.bias"])
        h = h + w["embeddings.position_embedding.weight"]
        for i in range(cfg.num_hidden_layers):
            p, row = f"encoder.layers.{i}.", {}
            a = layer_norm(h, w[p + "layer_norm1.weight"], w[p + "layer_norm1.bias"], eps)
            gemm(row, "qkv", a)
            q, k, v = (linear(a, w[f"{p}self_attn.{n}_proj.weight"], w[f"{p}self_attn.{n}_proj.bias"])
                       for n in "qkv")
            o = attend(row, q, k, v)
            gemm(row, "out", o)
            h = h + linear(o, w[p + "self_attn.out_proj.weight"], w[p + "self_attn.out_proj.bias"])
            a = layer_norm(h, w[p + "layer_norm2.weight"], w[p + "layer_norm2.bias"], eps)
            gemm(row, "fc1", a)
            g = gelu_tanh(linear(a, w[p + "mlp.fc1.weight"], w[p + "mlp.fc1.bias"]))
            gemm(row, "fc2", g)
            h = h + linear(g, w[p + "mlp.fc2.weight"], w[p + "mlp.fc2.bias"])
            resid(row, h)
            rows.append((str(i), row))
        row = {}
        resid(row, h)
        last = layer_norm(h, w["post_layernorm.weight"], w["post_layernorm.bias"], eps)
        if cfg.vision_use_head:
            ranges = ActivationRanges()
            map_head(last, w, cfg, act=ranges)
            for pos in GEMM_POSITIONS[4:9]:   # the head's
                row[pos + ".max"] = ranges.max[pos]
        rows.append(("head", row))
    return rows


def _cmd_stats(args):
    cfg = read_config(args.config)
    pixels, weights = _tower_inputs(args, cfg)
    rows = activation_stats(pixels, weights, cfg)
    cols = ("qkv", "out", "fc1", "fc2")
    print("| layer | " + " | ".join(f"{c} max (max/median)" for c in cols)
          + " | residual max (median) | massive / image | high-norm tokens | attention on top 2% keys |")
    print("|---" * (len(cols) + 5) + "|")
    for layer, r in rows[:-1]:
        gem = " | ".join(f"{r[c + '.max']:.3g} ({r[c + '.max'] / max(r[c + '.median'], 1e-300):.0f})" for c in cols)
        print(f"| {layer} | {gem} | {r['resid.max']:.4g} ({r['resid.median']:.3g}) | {r['massive']:g} "
              f"| {100 * r['high_norm']:.2f}% | {r['sink_mass']:.3f} |")
    head = rows[-1][1]
    print("head inputs, largest |x|: " + ", ".join(f"{k[:-4]} {v:.3g}" for k, v in head.items() if k.endswith(".max")
                                                 and k.startswith("head")))


# --------------------------------------------------------------------------
# Quantization (ipu quant): the algorithms written again from
# docs/quantization.md, to check a quantized checkpoint against

def read_metadata(path):
    """The __metadata__ object of a safetensors file ({} if none)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n).decode("utf-8")).get("__metadata__", {})


class _Calibration:
    """act(): the largest |x| per GEMM position; per encoder layer the
    channel maxima of the qkv and fc1 inputs; with keep, the inputs (by
    position, and by (layer, position), layer -1 for the head's)."""

    def __init__(self, keep=False):
        self.max, self.chan, self.inputs, self.layer, self.keep = {}, {}, {}, -1, keep
        self.by_layer = {}

    def __call__(self, pos, x):
        if pos == "qkv":
            self.layer += 1
        a = x.abs()
        self.max[pos] = max(self.max.get(pos, 0.0), float(a.max()))
        if pos in ("qkv", "fc1"):
            m = a.reshape(-1, a.shape[-1]).max(0).values
            key = (self.layer, pos)
            self.chan[key] = m if key not in self.chan else torch.maximum(self.chan[key], m)
        if self.keep:
            self.inputs.setdefault(pos, []).append(x.clone())
            key = (-1 if pos.startswith("head.") else self.layer, pos)
            self.by_layer.setdefault(key, []).append(x.reshape(-1, x.shape[-1]).clone())
        return x


def _f16(x):
    return float(torch.tensor(x, dtype=torch.float64).half().double())


def _sse(w, s, c=1.0, fmt="F143"):
    return float(((quantize_fp8(w / c, s, fmt) * c - w) ** 2).sum())


def smooth_weights(w, chan, layers, alpha):
    """SmoothQuant on f64 weights w (in place): for LayerNorm channel j feeding
    qkv or fc1, s_j = amax_j^alpha / wmax_j^(1 - alpha) (amax over the
    calibration inputs, wmax over the fed weights' column j, s_j in
    [1e-4, 1e4]; channels with either 0 keep s_j = 1); the LayerNorm's gain
    and bias divided by s_j, the column multiplied."""
    for i in range(layers):
        p = f"encoder.layers.{i}."
        for ln, pos, fed in (("layer_norm1", "qkv", ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj")),
                             ("layer_norm2", "fc1", ("mlp.fc1",))):
            amax = chan[(i, pos)]
            wmax = torch.stack([w[p + f + ".weight"].abs().max(0).values for f in fed]).max(0).values
            ok = (amax > 0) & (wmax > 0)
            s = torch.where(ok, (amax.clamp(min=1e-300) ** alpha / wmax.clamp(min=1e-300) ** (1 - alpha))
                            .clamp(1e-4, 1e4), torch.ones_like(amax))
            w[p + ln + ".weight"] = w[p + ln + ".weight"] / s
            w[p + ln + ".bias"] = w[p + ln + ".bias"] / s
            for f in fed:
                w[p + f + ".weight"] = w[p + f + ".weight"] * s


def _pct_scale(xs, pct, fmt):
    """The scale of the nearest-rank P-th percentile of |x| over xs (a zero
    percentile: -32)."""
    a = torch.cat([x.abs().reshape(-1) for x in xs]).sort().values
    k = max(math.ceil(pct * a.numel() / 100), 1)
    v = float(a[k - 1])
    return fp8_scale(v, fmt) if v > 0 else -32


def act_scales(calib, mse, pct=None, fmt_choice=False):
    """Each position's (scale, format): the max's scale, or with pct the
    percentile's; with mse the best (least squared error over the
    calibration inputs) of it and the three below, the first best; with
    fmt_choice F152 at its own max's (or percentile's) scale where its
    error is strictly less."""
    out = {}
    for pos in GEMM_POSITIONS:
        xs = calib.inputs.get(pos)
        s = _pct_scale(xs, pct, "F143") if pct and xs else f8_scale(calib.max.get(pos, 0.0))
        err = None
        if (mse or fmt_choice) and xs:
            errs = [sum(_sse(x, s - k) for x in xs) for k in range(4 if mse else 1)]
            err = min(errs)
            s -= errs.index(err)
        out[pos] = (s, "F143")
        if fmt_choice and xs:
            s152 = _pct_scale(xs, pct, "F152") if pct else fp8_scale(calib.max.get(pos, 0.0), "F152")
            if sum(_sse(x, s152, 1.0, "F152") for x in xs) < err:
                out[pos] = (s152, "F152")
    return out


def _groups(w, cfg):
    """Scale groups: {group: [(name, rows slice or None)]}: an encoder layer's
    weight with the same weight of every layer and q, k, v together; the
    head's in_proj per part; the other head weights alone."""
    groups = {}
    for k in w:
        if _is_dense(k) and not k.startswith("embeddings."):
            groups.setdefault(_scale_group(k), []).append((k, None))
    d = cfg.hidden_size
    for i, part in enumerate("qkv"):
        groups["head.in_proj." + part] = [("head.attention.in_proj_weight", slice(i * d, (i + 1) * d))]
    return groups


def _channel_scales(t, s, mse, fmt):
    """Per row of t: c = f16(rowmax / (top 2^s)) (at least 2^-14), with mse
    the best of c0 f / 20 for f = 20..10, the first best; and the sum of the
    rows' squared errors."""
    cs, total = [], 0.0
    for row in t:
        m = float(row.abs().max())
        c0 = m / math.ldexp(FP8_GRIDS[fmt][2], s) if m > 0 else 1.0
        c = max(_f16(c0), 2.0 ** -14)
        best = _sse(row, s, c, fmt)
        if mse:
            for f in range(19, 9, -1):
                cf = max(_f16(c0 * f / 20), 2.0 ** -14)
                e = _sse(row, s, cf, fmt)
                if e < best:
                    best, c = e, cf
        cs.append(c)
        total += best
    return torch.tensor(cs, dtype=torch.float64), total


def weight_group_scale(tensors, channel, mse, formats=("F143",)):
    """One scale group's (scale, format): per format the scale of the group's
    max, with mse (per tensor) the best of it and the two below; with two
    formats the one of less squared error (nearest rounding, with the
    channel scales), F143 first."""
    mx = max(float(t.abs().max()) for t in tensors)
    best = None
    for fmt in formats:
        s0 = fp8_scale(mx, fmt)
        for s in range(s0, s0 - 3 if mse and not channel else s0 - 1, -1):
            if channel:
                e = sum(_channel_scales(t, s, mse, fmt)[1] for t in tensors)
            else:
                e = sum(_sse(t, s, 1.0, fmt) for t in tensors)
            if best is None or e < best[0]:
                best = (e, s, fmt)
    return best[1], best[2]


def quantize_weight_group(tensors, channel, mse, s, fmt="F143"):
    """One scale group's weights [out, in] (f64) at 2^s in fmt, nearest:
    [(codes as values at 2^s, channel scales or None)]."""
    if not channel:
        return [(quantize_fp8(t, s, fmt), None) for t in tensors]
    out = []
    for t in tensors:
        cs = _channel_scales(t, s, mse, fmt)[0]
        out.append((quantize_fp8(t / cs[:, None], s, fmt), cs))
    return out


def block_scales(t, s, block, fmt="F143"):
    """Per row of t [out, in] and block of `block` columns: the block's max
    over the format's top at 2^s, rounded to f16, at least 2^-14 (1 for an
    all-zero block) -> [out, blocks], and the same spread over [out, in]."""
    top = FP8_GRIDS[fmt][2]
    out = []
    for b0 in range(0, t.shape[1], block):
        m = t[:, b0:b0 + block].abs().amax(1)
        c = torch.tensor([max(_f16(float(v) / math.ldexp(top, s)), 2.0 ** -14) if v > 0 else 1.0 for v in m],
                         dtype=torch.float64)
        out.append(c)
    bs = torch.stack(out, 1)
    return bs, bs.repeat_interleave(block, 1)[:, :t.shape[1]]


def gptq_weight(w, h, s, fmt, cs, damp):
    """GPTQ (Frantar et al. 2022) of w [out, in] (f64) against the inputs'
    Hessian h = X^T X, written again one column at a time (no blocks): h
    dampened by damp times its mean diagonal (a column never used: h_jj = 1,
    its weights 0), U the upper Cholesky factor of h^-1; each column coded
    (nearest at 2^s in fmt, times the channel scales cs [out], or the
    scales of each element cs [out, in]), its error over
    U_ii carried into the later columns by U's row. -> the coded values."""
    w = w.clone()
    h = h.clone()
    dead = torch.diagonal(h) == 0
    h[dead, dead] = 1
    w[:, dead] = 0
    h += damp * torch.diagonal(h).mean() * torch.eye(h.shape[0], dtype=h.dtype)
    u = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
    c = torch.ones(w.shape[0], dtype=w.dtype) if cs is None else cs
    c = c if c.dim() == 2 else c[:, None].expand(w.shape)
    q = torch.empty_like(w)
    for i in range(w.shape[1]):
        q[:, i] = quantize_fp8(w[:, i] / c[:, i], s, fmt) * c[:, i]
        err = (w[:, i] - q[:, i]) / u[i, i]
        w[:, i:] -= err[:, None] * u[i, i:][None, :]
    return q


class _PolicyActivations:
    """act() of a quantized checkpoint: the input of each f8 weight cast to
    F143 at its position's scale (per layer: mixed policies differ)."""

    def __init__(self, policy):
        self.p, self.layer = policy, -1
        self.of = {"qkv": "self_attn.q_proj.weight", "out": "self_attn.out_proj.weight",
                   "fc1": "mlp.fc1.weight", "fc2": "mlp.fc2.weight"}
        self.head = {"head.q": "head.attention.in_proj_weight", "head.kv": "head.attention.in_proj_weight",
                     "head.out": "head.attention.out_proj.weight", "head.fc1": "head.mlp.fc1.weight",
                     "head.fc2": "head.mlp.fc2.weight"}

    def __call__(self, pos, x):
        if pos == "qkv":
            self.layer += 1
        name = self.head.get(pos) or f"encoder.layers.{self.layer}.{self.of[pos]}"
        if self.p["weights"]["vision_model." + name] == "f16":
            return x
        a = self.p["activations"][pos]
        return quantize_fp8(x, a["scale"], a["format"])


def _reads(name, rows, d):
    """The GEMM position whose input weight `name` (rows of it) reads."""
    if name.startswith("head."):
        if "in_proj" in name:
            return "head.q" if rows.start == 0 else "head.kv"
        return {"head.attention.out_proj.weight": "head.out", "head.mlp.fc1.weight": "head.fc1",
                "head.mlp.fc2.weight": "head.fc2"}[name]
    for key, pos in (("_proj.weight", "qkv"), ("fc1", "fc1"), ("fc2", "fc2")):
        if key in name:
            return "out" if "out_proj" in name else pos
    raise RefError(f"{name}: not a dense GEMM weight")


def _search_units(cfg):
    """The mixed-precision search's units as ipu quant forms them: the weights
    that run as one GEMM (a layer's q, k and v) or one weight."""
    units = []
    for i in range(cfg.num_hidden_layers):
        p = f"encoder.layers.{i}."
        units += [[p + f"self_attn.{n}_proj.weight" for n in "qkv"], [p + "self_attn.out_proj.weight"],
                  [p + "mlp.fc1.weight"], [p + "mlp.fc2.weight"]]
    return units + [["head.attention.in_proj_weight"], ["head.attention.out_proj.weight"],
                    ["head.mlp.fc1.weight"], ["head.mlp.fc2.weight"]]


def mixed_search(pixels, w, f8, acts, cfg):
    """ipu quant's --target-cos search written again on the reference's
    decoding (f16 storage, the policy's casts; a kept unit's weights f16, its
    inputs not cast), judged as ipu quant judges it: the smallest cosine over
    the calibration images, here against the f64 tower.  w: the float weights
    (f64), f8: {name: [(rows, decoded f8 values)]}, acts: {position: (scale,
    format)}.  -> (each unit's gain alone over all f8, best first: [(unit's
    first weight, gain)]; the cosine with the first n of that ranking kept,
    n = 0 .. all)."""
    ref, _ = tower(pixels, w, cfg, "f64")
    units = _search_units(cfg)
    activations = {pos: {"scale": s, "format": fmt} for pos, (s, fmt) in acts.items()}

    def cos(kept):
        wq, names = dict(w), {}
        for i, u in enumerate(units):
            for k in u:
                names["vision_model." + k] = "f16" if i in kept else "f8"
                if i not in kept:
                    wq[k] = torch.cat([v for _, v in f8[k]])
        got, _ = tower(pixels, wq, cfg, "f16", _PolicyActivations({"weights": names, "activations": activations}))
        return min(compare(got, ref)["item_cosines"])

    base = cos(set())
    gains = sorted(((cos({i}) - base, i) for i in range(len(units))), key=lambda g: -g[0])
    curve = [cos({i for _, i in gains[:n]}) for n in range(len(units) + 1)]
    return [("vision_model." + units[i][0], g) for g, i in gains], curve


def _search_tol(cos):
    """How far ipu quant's host model and the reference's decoding may put
    one cosine (or a gain over an all-f8 cosine) apart: they round to f16 at
    other points (the product before the bias add, the attention scores
    before their scale), which moves elements across F143's rounding ties,
    so they differ by a part of the error itself.  Measured on the d-64
    --realistic test checkpoint (docs/quantization.md): gains 9.9e-4 apart
    at 1 - cos 2.5e-3 (`tensor`), 4.5% of 1 - cos apart at 0.27
    (`percentile` at P 97); twice each."""
    return 2e-3 + 0.1 * (1 - cos)


def check_search(log_path, gains, curve, policy):
    """ipu quant's search (its log, the kept weights in its policy) against
    mixed_search's: the all-f8 cosine and every unit's gain within
    _search_tol; the choice (the fewest of the ranking kept whose cosine
    reaches the target) the same, which the check requires to be decided by
    margins above _search_tol: the units kept and the others' gains apart by
    twice it, every prefix's cosine that far on its side of the target.
    -> the failures."""
    with open(log_path) as f:
        log = f.read()
    m = re.search(r"search: all f8: cosine ([0-9.]+) \(target ([0-9.]+)\)", log)
    if not m:
        return [f"{log_path}: no search in ipu quant's log"]
    base, target = float(m.group(1)), float(m.group(2))
    theirs = {n: float(g) for n, g in re.findall(r"search: gain (\S+) (\S+)", log)}
    fails, tol = [], _search_tol(curve[0])
    print(f"search: all f8: cosine {base:.6f} (ipu quant), {curve[0]:.6f} (reference), tolerance {tol:.2g}")
    if abs(base - curve[0]) > tol:
        fails.append(f"search: all-f8 cosine {base:.6f}, the reference's {curve[0]:.6f}")
    for n, g in gains:
        got = theirs.get(n)
        print(f"search: gain {n} {got if got is None else f'{got:.2e}'} (ipu quant), {g:.2e} (reference)")
        if theirs and not (got is not None and abs(got - g) <= tol):
            fails.append(f"search: {n}'s gain {got}, the reference's {g:.2e}")
    print("search: the reference's cosine with the first n kept: " + " ".join(f"{c:.6f}" for c in curve))
    n = next((i for i, c in enumerate(curve) if c >= target), len(curve) - 1)
    decided = (all(c < target - _search_tol(c) for c in curve[:n])
               and (n == 0 or all(c >= target + _search_tol(c) for c in curve[n:-1]))
               and (n in (0, len(gains)) or gains[n - 1][1] - gains[n][1] > 2 * tol))
    if not decided:
        return fails + [f"search: target {target} is not decided by margins above the tolerance here"]
    kept = {k for k, e in policy["weights"].items() if e == "f16"}
    want = {k for k, _ in gains[:n]}
    theirs_kept = {k for k, _ in gains if k in kept}
    print(f"search: the reference keeps {n} in f16 ({', '.join(sorted(want))}), ipu quant {len(theirs_kept)}")
    if theirs_kept != want:
        fails.append(f"search: ipu quant kept {sorted(theirs_kept)}, the reference {sorted(want)}")
    return fails


def _cmd_quant_check(args):
    cfg = read_config(args.config)
    _refuse_existing([args.out], args.force)
    policy = json.loads(read_metadata(args.quantized).get("ipu.quant", "null") or "null")
    if not isinstance(policy, dict):
        raise RefError(f"{args.quantized}: no ipu.quant metadata")
    methods = set(policy.get("methods", "tensor").split(","))
    channel, mse, smooth = "channel" in methods, "mse" in methods, "smooth" in methods
    pct = args.percentile if "percentile" in methods else None
    gptq, bias, fmt_choice = "gptq" in methods, "bias" in methods, "format" in methods
    block = args.block if "block" in methods else 0
    pixels = load_images(args.image, cfg.image_size)
    orig = vision_weights(read_safetensors(args.weights), cfg, args.weights)
    qt = read_safetensors(args.quantized)
    w = {k: v.to(torch.float64) for k, v in orig.items()}
    fails = []
    if smooth:
        calib = _Calibration()
        tower(pixels, w, cfg, "f64", calib)
        smooth_weights(w, calib.chan, cfg.num_hidden_layers, args.alpha)
        for k in w:
            if ".layer_norm" in k:
                got = qt["vision_model." + k].double()
                if not torch.allclose(got, w[k], rtol=1e-4, atol=1e-7):
                    fails.append(f"{k}: smoothed LayerNorm differs by {float((got - w[k]).abs().max()):.3g}")
    calib = _Calibration(keep=mse or pct is not None or gptq or bias or fmt_choice)
    tower(pixels, w, cfg, "f64", calib)
    acts = act_scales(calib, mse, pct, fmt_choice)
    for pos, (s, fmt) in acts.items():
        entry = policy["activations"].get(pos)
        if isinstance(entry, dict) and (entry["scale"], entry["format"]) != (s, fmt):
            fails.append(f"activation {pos}: {entry['format']} at scale {entry['scale']}, the reference chose "
                         f"{fmt} at {s}")
    tol = 1e-3 if smooth else 0.0   # smoothing in f32 moves a few ties
    checked = 0
    formats = ("F143", "F152") if fmt_choice else ("F143",)
    d = cfg.hidden_size
    f8 = {}   # the reference's own f8 weights, nearest rounding: {name: [(rows, values)]}
    head_in = "head.attention.in_proj_weight"
    chosen = {g: weight_group_scale([w[k] if rows is None else w[k][rows] for k, rows in members],
                                    channel, mse, formats)
              for g, members in _groups(w, cfg).items()}
    parts = [chosen["head.in_proj." + p][1] for p in "qkv"]
    if len(set(parts)) > 1:   # one tensor, one format: F143 unless all chose F152
        for p in "qkv":
            g = "head.in_proj." + p
            chosen[g] = weight_group_scale([w[k][rows] for k, rows in _groups(w, cfg)[g]], channel, mse)
    for group, members in _groups(w, cfg).items():
        tensors = [w[k] if rows is None else w[k][rows] for k, rows in members]
        s, fmt = chosen[group]
        if block:   # a scale per row and block of K instead of the channel scales
            quant = []
            for t in tensors:
                cs = block_scales(t, s, block, fmt)[1]
                quant.append((quantize_fp8(t / cs, s, fmt), cs))
        else:
            quant = quantize_weight_group(tensors, channel, mse, s, fmt)
        for (k, rows), t, (q, cs) in zip(members, tensors, quant):
            f8.setdefault(k, []).append((rows, q * cs if block else q * cs[:, None] if channel else q))
            full = "vision_model." + k
            entry = policy["weights"][full]
            got = qt[full].double()
            if rows is not None:
                got = got[rows]
            if entry == "f16":
                if not torch.allclose(got, t, rtol=1e-5, atol=1e-7):
                    fails.append(f"{k}: kept in f16, but its values differ")
                continue
            scale = entry["scale"] if rows is None else entry["scale"][rows.start // d]
            if (scale, entry["format"]) != (s, fmt):
                fails.append(f"{k}: weight {entry['format']} at scale {scale}, the reference chose {fmt} at {s}")
                continue
            got = got.reshape(q.shape) * 2.0 ** scale
            if block:
                if entry.get("k_block") != block:
                    fails.append(f"{k}: k_block {entry.get('k_block')}, the reference's {block}")
                    continue
                kb = qt[full + "_kscale"].double()
                kb = kb if rows is None else kb[rows]
                want = block_scales(t, s, block, fmt)[0]
                if kb.shape != want.shape or bool((kb != want).any()):
                    fails.append(f"{k}: K-block scales differ from the reference's")
                    continue
                got = got * cs
                q = q * cs
            elif channel:
                c = qt[full + "_scale"].double()
                if rows is not None:
                    c = c[rows]
                cbad = float((c != cs).double().mean())
                if cbad > max(tol, 0) * 10:
                    fails.append(f"{k}: {100 * cbad:.2f}% of the channel scales differ")
                got = got * c[:, None]
                q = q * cs[:, None]
            pos = _reads(k, rows, d)
            layer = -1 if pos.startswith("head.") else int(k.split(".")[2])
            if gptq:
                x = torch.cat(calib.by_layer[(layer, pos)])
                h = x.transpose(0, 1) @ x
                ref = gptq_weight(t, h, s, fmt, cs, args.damp)
                obj = lambda v: float(torch.trace((v - t) @ h @ (v - t).transpose(0, 1)))
                bad = float((got != ref).double().mean())
                print(f"gptq {k}: {100 * bad:.2f}% of codes differ from the reference's; objective "
                      f"{obj(got):.4g}, the reference's {obj(ref):.4g}, nearest {obj(q):.4g}")
                if bad > 0.01 or obj(got) > 1.02 * obj(ref) or not obj(got) < obj(q):
                    fails.append(f"{k}: gptq differs from the reference's ({100 * bad:.2f}% of codes, "
                                 f"objective {obj(got):.4g} against {obj(ref):.4g}, nearest {obj(q):.4g})")
            else:
                bad = float((got != q).double().mean())
                if bad > tol:
                    fails.append(f"{k}: {100 * bad:.4f}% of the codes differ from the reference's")
            bname = full[:-len("weight")] + "bias"
            b0 = w[k[:-len("weight")] + "bias"]
            b0 = b0 if rows is None else b0[rows]
            gotb = qt[bname].double()
            gotb = gotb if rows is None else gotb[rows]
            if bias:
                m = torch.cat(calib.by_layer[(layer, pos)]).mean(0)
                delta = (got - t) @ m
                want = b0 - delta
                tolb = 1e-4 * (b0.abs() + ((got - t).abs() @ m.abs())) + 1e-6
                if not bool(((gotb - want).abs() <= tolb).all()) or not bool((delta.abs() > tolb).any()):
                    fails.append(f"{bname}: corrected bias differs from b - E[x] (W_q - W) by "
                                 f"{float((gotb - want).abs().max()):.3g}")
            elif not torch.allclose(gotb, b0, rtol=1e-6, atol=1e-7):
                fails.append(f"{bname}: changed without bias correction")
            checked += 1
    if args.search_log:
        if gptq or bias:
            raise RefError("--search-log: the search is written again for nearest rounding only (not gptq, bias)")
        fails += check_search(args.search_log, *mixed_search(pixels, w, f8, acts, cfg), policy)
    for f in fails:
        print("FAIL " + f)
    # the checkpoint as decoded, against the f64 tower of the original
    ev = load_images(args.eval_image, cfg.image_size) if args.eval_image else pixels
    wq = {}
    for k in orig:
        full = "vision_model." + k
        v = qt[full].double()
        entry = policy["weights"].get(full)
        if isinstance(entry, dict):
            sc = entry["scale"]
            parts = v.split(cfg.hidden_size) if isinstance(sc, list) else [v]
            scs = sc if isinstance(sc, list) else [sc]
            v = torch.cat([p * 2.0 ** s for p, s in zip(parts, scs)])
            if entry.get("channel_scales"):
                c = qt[full + "_scale"].double()
                v = v * c.reshape([-1] + [1] * (v.dim() - 1))
            if entry.get("k_block") and args.device_blocks:
                v = KBlockWeight(v, qt[full + "_kscale"].double(), entry["k_block"])
            elif entry.get("k_block"):
                kb = qt[full + "_kscale"].double()
                v = v * kb.repeat_interleave(entry["k_block"], 1)[:, :v.shape[1]]
        wq[k] = v
    ref, _ = tower(ev, orig, cfg, "f64")
    got, _ = tower(ev, wq, cfg, "f16", _PolicyActivations(policy))
    if args.out:
        _save_npy(args.out, got, args.force)
    cos = compare(got, ref)["item_cosines"]
    print("cosine against f64: " + " ".join(f"{c:.6f}" for c in cos)
          + f" (min {min(cos):.6f} mean {sum(cos) / len(cos):.6f})")
    if args.min_cos is not None and min(cos) < args.min_cos:
        print(f"FAIL the smallest cosine {min(cos):.6f} is below {args.min_cos}")
        return 1
    if fails:
        return 1
    print(f"ok: {checked} weights, {len(acts)} activation scales as the reference chooses them ({policy['methods']})")
    return 0


_OP_ARITY = {"layernorm": (3, 3), "gelu": (1, 1), "softmax": (1, 1), "attention": (3, 3),
             "linear": (2, 3), "patch_embed": (3, 3)}


def _cmd_op(args):
    lo, hi = _OP_ARITY[args.name]
    if not lo <= len(args.inputs) <= hi:
        want = str(lo) if lo == hi else f"{lo} or {hi}"
        raise RefError(f"op {args.name}: needs {want} --in arrays, got {len(args.inputs)}")
    _refuse_existing([args.out], args.force)
    dtype, rnd = PRECISIONS[args.dtype]
    xs = [rnd(torch.from_numpy(_load_npy(p).astype(np.float64)).to(dtype)) for p in args.inputs]
    shapes = [list(x.shape) for x in xs]
    name = args.name
    try:
        if any(not shape for shape in shapes):
            raise ValueError("every input needs at least one dimension")
        with torch.no_grad():
            if name == "layernorm":
                if shapes[1] != shapes[0][-1:] or shapes[2] != shapes[0][-1:]:
                    raise ValueError("weight and bias must be 1-D of the input's last dimension")
                y = layer_norm(xs[0], xs[1], xs[2], args.eps, rnd)
            elif name == "gelu":
                y = gelu_tanh(xs[0], rnd)
            elif name == "softmax":
                y = softmax(xs[0], rnd)
            elif name == "attention":
                y = _op_attention(xs, args.heads, rnd)
            elif name == "linear":
                if len(shapes[1]) != 2 or shapes[0][-1:] != shapes[1][1:] or (len(xs) == 3 and shapes[2] != shapes[1][:1]):
                    raise ValueError("needs x [..., in], weight [out, in], bias [out]")
                y = linear(xs[0], xs[1], xs[2] if len(xs) == 3 else None, rnd)
            else:
                if len(shapes[0]) != 4 or len(shapes[1]) != 4 or shapes[0][1] != shapes[1][1] \
                        or shapes[1][2] != shapes[1][3] or min(shapes[0][2:]) < shapes[1][2] \
                        or shapes[2] != shapes[1][:1]:
                    raise ValueError("needs pixels [B, C, H, W], weight [d, C, P, P] with P <= H, W, bias [d]")
                y = patch_embed(xs[0], xs[1], xs[2], rnd)
    except ValueError as e:
        raise RefError(f"op {name}: input shapes {shapes}: {e}")
    _save_npy(args.out, y.to(torch.float64).numpy(), args.force)


def _op_attention(xs, heads, rnd):
    q, k, v = xs
    unbatched = q.dim() == 2
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    if q.dim() != 3 or k.shape != v.shape or k.dim() != 3 or q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
        raise ValueError("needs q [B, Nq, d], k and v [B, Nk, d] (or without B)")
    if heads <= 0 or q.shape[2] % heads:
        raise ValueError(f"--heads {heads} does not divide d = {q.shape[2]}")
    y = attention(q, k, v, heads, rnd)
    return y[0] if unbatched else y


def _cmd_compare(args):
    a, b = _load_npy(args.a), _load_npy(args.b)
    if a.shape != b.shape:
        raise RefError(f"compare: {args.a} has shape {list(a.shape)}, {args.b} has {list(b.shape)}")
    r = compare(a, b)
    worst = min(r["item_cosines"]) if r["item_cosines"] else r["cosine"]
    print(f"shape {list(a.shape)}")
    print(f"cosine {r['cosine']:.12f}  (1 - cos = {1 - r['cosine']:.3g})")
    print("item_cosines " + " ".join(f"{c:.12f}" for c in r["item_cosines"]))
    print(f"max_abs_error {r['max_abs_error']:.6g}")
    print(f"max_rel_error {r['max_rel_error']:.6g}  (max abs error / max |B|)")
    if args.min_cos is not None and not worst >= args.min_cos:
        print(f"FAIL: lowest item cosine {worst:.12f} < {args.min_cos}")
        return 1
    return 0


def _cmd_random_weights(args):
    cfg = read_config(args.config)
    _refuse_existing([args.out], args.force)
    tensors = random_weights(cfg, args.seed)
    cast = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    write_safetensors(args.out, {k: v.to(cast) for k, v in tensors.items()}, {"seed": args.seed}, args.force)


def _parser():
    p = argparse.ArgumentParser(prog="siglip_ref.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    force = argparse.ArgumentParser(add_help=False)
    force.add_argument("--force", action="store_true", help="replace existing output files")
    dt = argparse.ArgumentParser(add_help=False)
    dt.add_argument("--dtype", choices=list(PRECISIONS), default="f64",
                    help="arithmetic: f64 (reference truth), f32, f16 (f16 storage, f32 sums), f8 (f16 with "
                         "F143 dense GEMM operands); default f64")
    tower_in = argparse.ArgumentParser(add_help=False)  # the tower's checkpoint and inputs
    tower_in.add_argument("--weights", required=True, help="safetensors checkpoint")
    tower_in.add_argument("--config", required=True, help="config.json (SiglipVisionConfig or SiglipConfig)")
    src = tower_in.add_mutually_exclusive_group(required=True)
    src.add_argument("--image", action="append", help="an image file (repeat for a batch)")
    src.add_argument("--pixels", help="pixel_values .npy, [B, 3, S, S] or [3, S, S]")

    s = sub.add_parser("preprocess", parents=[force], help="images -> pixel_values [B, 3, N, N] float32 .npy")
    s.add_argument("--image", action="append", required=True, help="an image file (repeat for a batch)")
    s.add_argument("--size", type=int, required=True, help="image_size of the model (224, 384, ...)")
    s.add_argument("--out", required=True)
    s.set_defaults(func=_cmd_preprocess)

    s = sub.add_parser("run", parents=[tower_in, force, dt], help="the tower: pooled embedding [B, d], float32 .npy")
    s.add_argument("--out", help="pooled embedding (pooler_output) [B, d]")
    s.add_argument("--hidden", help="last_hidden_state [B, N, d]")
    s.add_argument("--f8-scales", help="with --dtype f8: each GEMM position's activation scale, "
                                       "qkv=N,out=N,... as ipu run siglip --dtype f8 prints them")
    s.add_argument("--fold-ln", action="store_true",
                   help="with --dtype f8: the LayerNorms' gamma and beta folded into the next "
                        "GEMM's weights and bias before they are quantized, as the device's f8 "
                        "tower does by default (not with its --no-fold-ln)")
    s.set_defaults(func=_cmd_run)

    s = sub.add_parser("calibrate", parents=[tower_in], help="largest |x| at each dense GEMM's input (f64) and the F143 scales "
                                         "that cover it, as --f8-scales")
    s.add_argument("--headroom", type=int, default=0,
                   help="binades added to each scale, for inputs larger than the calibration images' (default 0)")
    s.set_defaults(func=_cmd_calibrate)

    s = sub.add_parser("stats", parents=[tower_in], help="activation statistics per layer (f64): GEMM input ranges, massive "
                                     "activations, high-norm tokens, attention sinks (docs/models.md)")
    s.set_defaults(func=_cmd_stats)

    s = sub.add_parser("quant-check", parents=[force], help="check a checkpoint ipu quant wrote against the algorithms written "
                                           "again here, and its cosine against the f64 tower")
    s.add_argument("--weights", required=True, help="the original checkpoint")
    s.add_argument("--quantized", required=True, help="the checkpoint ipu quant wrote from it")
    s.add_argument("--config", required=True, help="config.json")
    s.add_argument("--image", action="append", required=True, help="a calibration image, as given to ipu quant")
    s.add_argument("--eval-image", action="append", help="a held-out image (default: the calibration images)")
    s.add_argument("--alpha", type=float, default=0.5, help="smooth's alpha as given to ipu quant (0.5)")
    s.add_argument("--percentile", type=float, default=99.99, help="percentile's P as given to ipu quant (99.99)")
    s.add_argument("--block", type=int, default=128, help="block's columns per K block as given to ipu quant (128)")
    s.add_argument("--damp", type=float, default=0.01, help="gptq's dampening as given to ipu quant (0.01)")
    s.add_argument("--min-cos", type=float, help="exit 1 if a held-out image's cosine is below this")
    s.add_argument("--search-log", help="ipu quant --target-cos's output: check its search against the reference's")
    s.add_argument("--device-blocks", action="store_true",
                   help="decode per-K-block scales as the device runs them: each block's product rounded to f16, "
                        "scaled and summed in f16 (default: the weights' values, one product)")
    s.add_argument("--out", help="the decoded checkpoint's pooled embedding of the held-out images (f16 "
                                 "storage, F143 GEMM inputs) [B, d]")
    s.set_defaults(func=_cmd_quant_check)

    s = sub.add_parser("op", parents=[force, dt], help="one operator on .npy inputs, float32 .npy output")
    s.add_argument("name", choices=list(_OP_ARITY),
                   help="layernorm (x, w, b), gelu (x), softmax (x, last axis), attention (q, k, v; --heads), "
                        "linear (x, w [out, in], [b]), patch_embed (pixels, conv weight, bias)")
    s.add_argument("--in", dest="inputs", action="append", required=True, help="an input .npy, in order")
    s.add_argument("--out", required=True)
    s.add_argument("--eps", type=float, default=1e-6, help="layernorm epsilon (default 1e-6)")
    s.add_argument("--heads", type=int, default=1, help="attention heads (default 1)")
    s.set_defaults(func=_cmd_op)

    s = sub.add_parser("compare", help="cosine similarity and errors of A against B")
    s.add_argument("a")
    s.add_argument("b")
    s.add_argument("--min-cos", type=float, help="exit 1 if the lowest per-item cosine is below this")
    s.set_defaults(func=_cmd_compare)

    s = sub.add_parser("random-weights", parents=[force], help="a random checkpoint for a config (for tests)")
    s.add_argument("--config", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32", help="stored dtype (default f32)")
    s.set_defaults(func=_cmd_random_weights)
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except RefError as e:
        print(f"siglip_ref.py: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
