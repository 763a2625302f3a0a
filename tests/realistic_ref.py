"""The realistic generator (`ipu model gen --realistic`) written again from
its description in docs/models.md ("Realistic checkpoints"), for the tests.

Run with Debian's /usr/bin/python3 (numpy):
    realistic_ref.py WEIGHTS CONFIG_JSON SEED

Regenerates every tensor of the checkpoint (use a small config: this is
plain Python) and compares each value with the file's, within one rounding
of the file's dtype. Prints one line per failing tensor and exits 1 if any,
else prints "ok".
"""
import math
import sys

import numpy as np

from siglip_ref import MASK, expected, read_safetensors, stats

# docs/models.md, "Realistic checkpoints": the recipe's constants
LN_GAIN_STD, LN_BIAS_STD = 0.25, 0.1
SYS_BIAS, SYS_LN_BIAS = 4.0, 0.5
SYS_GAIN = {"layer_norm1": 2.5, "layer_norm2": 6.0}
MASS_GAIN = {"layer_norm1": 2.0, "layer_norm2": 12.0}
TRIGGER, REG_IN, REG_BIAS, REG_OUT = 30.0, 5.0, 15.0, 5.0
SINK_KEY, SINK_QUERY, SINK_VALUE = 0.3, 2.0, 0.1
N_MASS, N_REG = 2, 4


def fnv(text):
    h = 0xcbf29ce484222325
    for b in text.encode():
        h = ((h ^ b) * 0x100000001b3) & MASK
    return h


class Stream:
    """splitmix64 started at seed ^ FNV-1a-64(key)."""

    def __init__(self, seed, key):
        self.state = seed ^ fnv(key)

    def next(self):
        self.state = (self.state + 0x9e3779b97f4a7c15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
        return z ^ (z >> 31)

    def normals(self, n):
        out = []
        while len(out) < n:
            u = (self.next() >> 11) * 2.0 ** -52 - 1.0
            v = (self.next() >> 11) * 2.0 ** -52 - 1.0
            s = u * u + v * v
            if s >= 1 or s == 0:
                continue
            k = math.sqrt(-2 * math.log(s) / s)
            out += [u * k, v * k]
        return np.array(out[:n])

    def chi2_6(self):
        p = 1.0
        for _ in range(3):
            p *= ((self.next() >> 11) + 1) * 2.0 ** -53
        return -2 * math.log(p)

    def choose(self, n, k):
        a = list(range(n))
        for i in range(k):
            j = i + self.next() % (n - i)
            a[i], a[j] = a[j], a[i]
        return a[:k]


def shape_of(cfg):
    vc = cfg.get("vision_config", cfg)
    d = vc.get("hidden_size", 768)
    f = vc.get("intermediate_size", 3072)
    heads = vc.get("num_attention_heads", 12)
    n = (vc.get("image_size", 224) // vc.get("patch_size", 16)) ** 2
    return d, f, heads, n


class Choices:
    def __init__(self, cfg, seed):
        d, f, self.heads, n = shape_of(cfg)
        self.d, self.f, self.seed = d, f, seed
        self.nsys = max(2, d // 256)
        ch = Stream(seed, "realistic.channels").choose(d, self.nsys + N_MASS)
        self.sys, self.mass = ch[:self.nsys], ch[self.nsys:]
        self.trig = Stream(seed, "realistic.tokens").choose(n, max(1, (2 * n + 50) // 100))
        self.reg = Stream(seed, "realistic.neurons").choose(f, N_REG)
        s = Stream(seed, "realistic.signs")
        self.sign = {c: (-1.0 if s.next() >> 63 else 1.0) for c in ch}
        u = Stream(seed, "realistic.u").normals(d)
        u[self.sys + self.mass] = 0
        others = [i for i in range(d) if i not in self.sys + self.mass]
        u[others] -= u.sum() / len(others)
        self.u = u / math.sqrt(float(np.sum(u * u)))

    def sink_dirs(self, layer):
        r = Stream(self.seed, "realistic.sink.%d" % layer).normals(self.d)
        dh = self.d // self.heads
        for h in range(self.heads):
            v = r[h * dh:(h + 1) * dh]
            r[h * dh:(h + 1) * dh] = v / math.sqrt(float(np.sum(v * v)))
        return r


def values(name, shape, kind, d, seed, ch):
    mean, std = stats(kind, shape, d)
    if kind == "lnw":
        std = LN_GAIN_STD
    if kind == "lnb":
        std = LN_BIAS_STD
    n = int(np.prod(shape))
    v = mean + std * Stream(seed, name).normals(n)
    if kind in ("linear", "conv"):
        rows = shape[0]
        cols = n // rows
        st, sr = Stream(seed, name + "#t"), Stream(seed, name + "#row")
        for i in range(rows):
            row = math.sqrt(sr.chi2_6() / 6)
            for k in range(cols):
                v[i * cols + k] *= math.sqrt(4 / st.chi2_6()) * row
    layer, suffix = -1, ""
    pre = "vision_model.encoder.layers."
    if name.startswith(pre):
        rest = name[len(pre):]
        layer, suffix = int(rest.split(".")[0]), rest.split(".", 1)[1]
    if name == "vision_model.embeddings.patch_embedding.bias":
        for c in ch.sys:
            v[c] += SYS_BIAS * ch.sign[c]
    if name == "vision_model.embeddings.position_embedding.weight":
        for t in ch.trig:
            v[t * d:(t + 1) * d] += TRIGGER * ch.u
    for ln in ("layer_norm1", "layer_norm2"):
        if layer >= 0 and suffix == ln + ".weight":
            v[ch.sys] *= SYS_GAIN[ln]
            v[ch.mass] = MASS_GAIN[ln]
        if layer >= 0 and suffix == ln + ".bias":
            for c in ch.sys:
                v[c] += SYS_LN_BIAS * ch.sign[c]
    if layer == 0 and suffix == "mlp.fc1.weight":
        gain = values(pre + "0.layer_norm2.weight", [d], "lnw", d, seed, ch)
        for j in ch.reg:
            v[j * d:(j + 1) * d] += REG_IN * ch.u / gain
    if layer == 0 and suffix == "mlp.fc1.bias":
        v[ch.reg] = -REG_BIAS
    if layer == 0 and suffix == "mlp.fc2.weight":
        for m in ch.mass:
            for j in ch.reg:
                v[m * ch.f + j] = REG_OUT * ch.sign[m]
    if layer >= 1 and suffix in ("self_attn.k_proj.weight", "self_attn.q_proj.bias"):
        r = ch.sink_dirs(layer)
        if suffix.endswith("bias"):
            v += SINK_QUERY * r
        else:
            for m in ch.mass:
                v[np.arange(d) * d + m] = SINK_KEY * r * ch.sign[m]
    if layer >= 1 and suffix == "self_attn.v_proj.weight":
        for m in ch.mass:
            v[np.arange(d) * d + m] *= SINK_VALUE
    return v


def main():
    import json
    path, cfg_path, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cfg = json.load(open(cfg_path))
    meta, tensors = read_safetensors(path)
    if meta.get("realistic") != "1":
        print("FAIL __metadata__ realistic is %r, not \"1\"" % meta.get("realistic"))
        sys.exit(1)
    exp, d = expected(cfg)
    ch = Choices(cfg, seed)
    bad = 0
    for name, (shape, kind) in sorted(exp.items()):
        dtype, _, got = tensors[name]
        ulp = {"F32": 2.0 ** -23, "F16": 2.0 ** -10, "BF16": 2.0 ** -7}[dtype]
        ref = values(name, shape, kind, d, seed, ch)
        err = np.abs(got.astype(np.float64) - ref) > ulp * np.abs(ref) + 1e-30
        if err.any():
            i = int(np.argmax(err))
            print("FAIL %s[%d] = %.9g, the recipe gives %.9g" % (name, i, got[i], ref[i]))
            bad += 1
    if bad:
        sys.exit(1)
    print("ok: %d tensors regenerated (sys %s, mass %s, %d trigger tokens, neurons %s)" % (
        len(exp), ch.sys, ch.mass, len(ch.trig), ch.reg))


main()
