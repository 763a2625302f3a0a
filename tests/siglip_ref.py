"""An independent reader of SigLIP safetensors checkpoints, for the tests.

Run with Debian's /usr/bin/python3 (numpy):
    siglip_ref.py WEIGHTS CONFIG_JSON SEED

Parses the safetensors format itself (there is no safetensors package in
Debian), derives the expected tensor names and shapes from config.json with
its own table (model.md section 3), and checks
  - the layout: data offsets tile the data section, sizes match shapes;
  - names, shapes and one shared dtype (F32, F16 or BF16);
  - per tensor, the mean and standard deviation against the statistics
    docs/models.md documents for the generator;
  - the first values of several tensors against its own implementation of
    the documented generator (splitmix64, polar method, math.log).
Prints one line per failure and exits 1 if any, else prints "ok".
"""
import json
import math
import struct
import sys

import numpy as np

MASK = (1 << 64) - 1
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL", msg)


def read_safetensors(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    meta = header.pop("__metadata__", {})
    size = {"F32": 4, "F16": 2, "BF16": 2}
    spans = sorted((v["data_offsets"][0], v["data_offsets"][1], k)
                   for k, v in header.items())
    at = 0
    for b, e, k in spans:
        if b != at:
            fail("%s starts at %d, previous tensor ends at %d" % (k, b, at))
        at = e
    if at != len(data):
        fail("tensors end at %d, data section has %d bytes" % (at, len(data)))
    tensors = {}
    for k, v in header.items():
        b, e = v["data_offsets"]
        count = int(np.prod(v["shape"], dtype=np.int64))
        if e - b != count * size[v["dtype"]]:
            fail("%s: %d bytes for shape %s" % (k, e - b, v["shape"]))
            continue
        buf = data[b:e]
        if v["dtype"] == "F32":
            a = np.frombuffer(buf, dtype="<f4")
        elif v["dtype"] == "F16":
            a = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        else:
            a = (np.frombuffer(buf, dtype="<u2").astype(np.uint32)
                 << 16).view(np.float32)
        tensors[k] = (v["dtype"], list(v["shape"]), a)
    return meta, tensors


def expected(cfg):
    """name -> (shape, kind); written from model.md section 3."""
    vc = cfg.get("vision_config", cfg)
    d = vc.get("hidden_size", 768)
    f = vc.get("intermediate_size", 3072)
    layers = vc.get("num_hidden_layers", 12)
    c = vc.get("num_channels", 3)
    p = vc.get("patch_size", 16)
    n = (vc.get("image_size", 224) // p) ** 2
    e = {}
    pre = "vision_model."
    e[pre + "embeddings.patch_embedding.weight"] = ([d, c, p, p], "conv")
    e[pre + "embeddings.patch_embedding.bias"] = ([d], "bias")
    e[pre + "embeddings.position_embedding.weight"] = ([n, d], "pos")
    for i in range(layers):
        lp = pre + "encoder.layers.%d." % i
        for ln in ("layer_norm1", "layer_norm2"):
            e[lp + ln + ".weight"] = ([d], "lnw")
            e[lp + ln + ".bias"] = ([d], "lnb")
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            e[lp + "self_attn." + proj + ".weight"] = ([d, d], "linear")
            e[lp + "self_attn." + proj + ".bias"] = ([d], "bias")
        e[lp + "mlp.fc1.weight"] = ([f, d], "linear")
        e[lp + "mlp.fc1.bias"] = ([f], "bias")
        e[lp + "mlp.fc2.weight"] = ([d, f], "linear")
        e[lp + "mlp.fc2.bias"] = ([d], "bias")
    e[pre + "post_layernorm.weight"] = ([d], "lnw")
    e[pre + "post_layernorm.bias"] = ([d], "lnb")
    if vc.get("vision_use_head", True):
        h = pre + "head."
        e[h + "probe"] = ([1, 1, d], "probe")
        e[h + "attention.in_proj_weight"] = ([3 * d, d], "linear")
        e[h + "attention.in_proj_bias"] = ([3 * d], "bias")
        e[h + "attention.out_proj.weight"] = ([d, d], "linear")
        e[h + "attention.out_proj.bias"] = ([d], "bias")
        e[h + "layernorm.weight"] = ([d], "lnw")
        e[h + "layernorm.bias"] = ([d], "lnb")
        e[h + "mlp.fc1.weight"] = ([f, d], "linear")
        e[h + "mlp.fc1.bias"] = ([f], "bias")
        e[h + "mlp.fc2.weight"] = ([d, f], "linear")
        e[h + "mlp.fc2.bias"] = ([d], "bias")
    return e, d


def stats(kind, shape, d):
    """(mean, std) as docs/models.md documents them."""
    if kind == "linear":
        return 0.0, math.sqrt(2.0 / (shape[0] + shape[1]))
    if kind == "conv":
        return 0.0, 1.0 / math.sqrt(shape[1] * shape[2] * shape[3])
    if kind in ("pos", "probe"):
        return 0.0, 1.0 / math.sqrt(d)
    return {"bias": (0.0, 0.02), "lnw": (1.0, 0.05), "lnb": (0.0, 0.02)}[kind]


def generator(name, seed, mean, std, count):
    """The documented generator, written again from its description."""
    h = 0xcbf29ce484222325
    for b in name.encode():
        h = ((h ^ b) * 0x100000001b3) & MASK
    state = seed ^ h

    def next64():
        nonlocal state
        state = (state + 0x9e3779b97f4a7c15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
        return z ^ (z >> 31)

    out = []
    while len(out) < count:
        u = (next64() >> 11) * 2.0 ** -52 - 1.0
        v = (next64() >> 11) * 2.0 ** -52 - 1.0
        s = u * u + v * v
        if s >= 1 or s == 0:
            continue
        k = math.sqrt(-2 * math.log(s) / s)
        out += [mean + std * u * k, mean + std * v * k]
    return out[:count]


def main():
    path, cfg_path, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cfg = json.load(open(cfg_path))
    meta, tensors = read_safetensors(path)
    exp, d = expected(cfg)
    if meta.get("seed") != str(seed):
        fail("__metadata__ seed %r, expected %d" % (meta.get("seed"), seed))
    if set(tensors) != set(exp):
        fail("names differ: missing %s, extra %s" % (
            sorted(set(exp) - set(tensors))[:3],
            sorted(set(tensors) - set(exp))[:3]))
    dtypes = {t[0] for t in tensors.values()}
    if len(dtypes) != 1:
        fail("more than one dtype: %s" % sorted(dtypes))
    dtype = dtypes.pop()
    # a relative error of one rounding of the file's dtype, and a margin
    ulp = {"F32": 2.0 ** -23, "F16": 2.0 ** -10, "BF16": 2.0 ** -7}[dtype]
    checked = 0
    for name, (shape, kind) in sorted(exp.items()):
        if name not in tensors:
            continue
        _, fshape, a = tensors[name]
        if fshape != shape:
            fail("%s: shape %s, expected %s" % (name, fshape, shape))
            continue
        mean, std = stats(kind, shape, d)
        n = a.size
        # sampling error of the mean and of the std, 6 sigma, plus rounding
        m, s = float(np.mean(a, dtype=np.float64)), float(np.std(a, dtype=np.float64))
        if abs(m - mean) > 6 * std / math.sqrt(n) + ulp * (abs(mean) + std):
            fail("%s: mean %.6g, expected %.6g" % (name, m, mean))
        if abs(s - std) > 6 * std / math.sqrt(2 * n) + ulp * (abs(mean) + std):
            fail("%s: std %.6g, expected %.6g" % (name, s, std))
        if n >= 1000:
            # normal, not uniform: 4.55% beyond 2 sigma (binomial, 6 sigma)
            frac = float(np.mean(np.abs(a - mean) > 2 * std))
            if abs(frac - 0.0455) > 6 * math.sqrt(0.0455 * 0.9545 / n):
                fail("%s: %.4f beyond 2 std, a normal has 0.0455" % (name, frac))
        if checked < 12 or kind in ("conv", "probe"):
            ref = np.array(generator(name, seed, mean, std, 64))
            got = a[:64].astype(np.float64)
            tol = ulp * np.abs(ref) + 1e-30
            bad = np.abs(got - ref) > tol
            if bad.any():
                i = int(np.argmax(bad))
                fail("%s[%d] = %.9g, the generator gives %.9g" % (
                    name, i, got[i], ref[i]))
            checked += 1
    if failures:
        sys.exit(1)
    print("ok: %d tensors, %s, %d values regenerated" % (len(tensors), dtype, 64 * checked))


if __name__ == "__main__":
    main()
