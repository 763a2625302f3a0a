#!/usr/bin/python3
"""ONNX models exported by torch.onnx.export (Debian's python3-torch) with
seeded random weights, run through the Python package (python/ipu) and the
`ipu` command on the emulated C600, checked against PyTorch's own outputs:
cosine >= 0.9999 in f32, >= 0.999 in f16 (and >= 0.99 in f8; docs/onnx.md).  Malformed and
unsupported files must fail with errors that say what and where.

Usage: test_onnx_models.py BUILD_DIR [unittest names, e.g. Models Cli].
Exits 77 (a skip) without torch."""

import math
import os
import subprocess
import sys
import tempfile
import unittest
import warnings

try:
    import numpy as np
    import torch
except ImportError as e:
    print(f"SKIP: test_onnx_models needs python3-torch and python3-numpy ({e})")
    sys.exit(77)

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else "build"
sys.path.insert(0, os.path.join(BUILD, "python"))
import ipu  # noqa: E402

IPU = os.path.join(BUILD, "ipu")
TMP = tempfile.mkdtemp(prefix="ipu-onnx-")


class Attention(torch.nn.Module):
    """A pre-norm transformer block as an encoder layer writes it."""

    def __init__(self, d=64, heads=4, mlp=128):
        super().__init__()
        self.h = heads
        self.ln1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        self.ln2 = torch.nn.LayerNorm(d)
        self.fc1 = torch.nn.Linear(d, mlp)
        self.fc2 = torch.nn.Linear(mlp, d)

    def forward(self, x):
        B, S, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
        q, k, v = (t.reshape(B, S, self.h, D // self.h).transpose(1, 2)
                   for t in (q, k, v))
        a = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(D // self.h),
                          dim=-1)
        x = x + self.out((a @ v).transpose(1, 2).reshape(B, S, D))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


class BertLayer(torch.nn.Module):
    def __init__(s, d, h, f):
        super().__init__(); s.h = h
        s.q = torch.nn.Linear(d, d); s.k = torch.nn.Linear(d, d); s.v = torch.nn.Linear(d, d)
        s.o = torch.nn.Linear(d, d); s.ln1 = torch.nn.LayerNorm(d, eps=1e-12)
        s.f1 = torch.nn.Linear(d, f); s.f2 = torch.nn.Linear(f, d); s.ln2 = torch.nn.LayerNorm(d, eps=1e-12)
    def forward(s, x, bias):
        B, S, D = x.shape
        sp = lambda t: t.view(B, S, s.h, D // s.h).permute(0, 2, 1, 3)
        q, k, v = sp(s.q(x)), sp(s.k(x)), sp(s.v(x))
        sc = q @ k.transpose(-1, -2) / math.sqrt(D // s.h) + bias
        a = (torch.softmax(sc, dim=-1) @ v).permute(0, 2, 1, 3).contiguous().view(B, S, D)
        x = s.ln1(x + s.o(a))
        return s.ln2(x + s.f2(torch.nn.functional.gelu(s.f1(x))))

class Bert(torch.nn.Module):
    """A BERT-style text encoder in plain PyTorch: token ids (an int64
    input) through token, position and token-type embeddings, post-norm
    layers, an attention mask of ones made from the ids as Hugging Face
    writes it (its bias folds to zeros and drops out). The token lookup
    is a Gather with computed indices; the position and type lookups have
    fixed ids and fold."""

    def __init__(s, d=64, h=4, f=256, layers=12, maxpos=64, vocab=1000):
        super().__init__()
        s.tok = torch.nn.Embedding(vocab, d)
        s.pos = torch.nn.Embedding(maxpos, d); s.typ = torch.nn.Embedding(2, d)
        s.ln = torch.nn.LayerNorm(d, eps=1e-12)
        s.layers = torch.nn.ModuleList(BertLayer(d, h, f) for _ in range(layers))
    def forward(s, ids):  # ids: token ids [B, S]
        B, S = ids.shape
        pos = torch.arange(S).unsqueeze(0).expand(B, S)
        x = s.ln(s.tok(ids) + s.pos(pos) + s.typ(torch.zeros_like(ids)))
        mask = torch.ones_like(ids)
        bias = ((1.0 - mask[:, None, None, :].to(torch.float32)) *
                torch.finfo(torch.float32).min)
        for l in s.layers:
            x = l(x, bias)
        return x


class MaskedBert(Bert):
    """The encoder with the attention mask as a second int64 input [B, S],
    its bias (1 - mask) * finfo(float32).min added to the scores [B, H, S,
    S] as [B, 1, 1, S], as Hugging Face writes it (the constant, infinite
    in f16, is clamped to f16's range by the import)."""

    def forward(s, ids, mask):
        B, S = ids.shape
        pos = torch.arange(S).unsqueeze(0).expand(B, S)
        x = s.ln(s.tok(ids) + s.pos(pos) + s.typ(torch.zeros_like(ids)))
        bias = ((1.0 - mask[:, None, None, :].to(torch.float32)) *
                torch.finfo(torch.float32).min)
        for l in s.layers:
            x = l(x, bias)
        return x


def bert(layers, **kw):
    return lambda: Bert(layers=layers, **kw)


def token_ids(vocab):
    """An input maker: int64 ids over the whole vocabulary, both ends in."""
    def make(shape):
        ids = torch.randint(0, vocab, shape)
        ids.view(-1)[:2] = torch.tensor([0, vocab - 1])
        return ids
    return make

class Cnn(torch.nn.Module):
    """A small CNN: a patch convolution (kernel = stride 4), GELU, a 1x1
    convolution, GELU, the mean over the image as pooling, a classifier."""

    def __init__(s):
        super().__init__()
        s.patch = torch.nn.Conv2d(3, 32, 4, stride=4)
        s.pw = torch.nn.Conv2d(32, 64, 1)
        s.fc = torch.nn.Linear(64, 10)

    def forward(s, x):
        x = torch.nn.functional.gelu(s.patch(x))
        x = torch.nn.functional.gelu(s.pw(x))
        return s.fc(x.mean(dim=(2, 3)))


class CnnRelu(torch.nn.Module):
    """ReLU and pooling: a patch convolution, ReLU, 2x2 average pooling,
    a 1x1 convolution, ReLU, global average pooling, a classifier."""

    def __init__(s):
        super().__init__()
        s.patch = torch.nn.Conv2d(3, 16, 4, stride=4)
        s.pool = torch.nn.AvgPool2d(2)
        s.pw = torch.nn.Conv2d(16, 32, 1)
        s.gap = torch.nn.AdaptiveAvgPool2d(1)
        s.fc = torch.nn.Linear(32, 10)

    def forward(s, x):
        x = s.pool(torch.relu(s.patch(x)))
        x = s.gap(torch.relu(s.pw(x)))
        return s.fc(torch.flatten(x, 1))


class CnnMax(torch.nn.Module):
    """Max pooling: a patch convolution, ReLU, 3x3 max pooling of stride 2
    and padding 1 (ResNet's stem), 2x2 max pooling (windows that tile the
    image), a classifier."""

    def __init__(s):
        super().__init__()
        s.patch = torch.nn.Conv2d(3, 16, 2, stride=2)
        s.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
        s.pool2 = torch.nn.MaxPool2d(2)
        s.fc = torch.nn.Linear(64, 10)

    def forward(s, x):
        x = s.pool2(s.pool(torch.relu(s.patch(x))))
        return s.fc(torch.flatten(x, 1))


class CnnPad(torch.nn.Module):
    """Padded convolutions: 3x3 of stride 1 and padding 1, ReLU, 3x3 of
    stride 2 and padding 1, ReLU, 2x2 max pooling, a classifier."""

    def __init__(s):
        super().__init__()
        s.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        s.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        s.pool = torch.nn.MaxPool2d(2)
        s.fc = torch.nn.Linear(64, 10)

    def forward(s, x):
        x = torch.relu(s.c2(torch.relu(s.c1(x))))
        return s.fc(torch.flatten(s.pool(x), 1))


class CnnWin(torch.nn.Module):
    """Windows of every kind: a dilated Conv, grouped and depthwise Convs,
    MaxPool with ceil_mode and with dilation, AvgPool padded (counting
    the padding: PyTorch's Pad then AveragePool) and with ceil_mode (not
    counting it), a classifier."""

    def __init__(s, cin=4, c=8):  # the fuzz seed windows.onnx: 2, 4
        super().__init__()
        s.dil = torch.nn.Conv2d(cin, c, 3, padding=2, dilation=2)
        s.grp = torch.nn.Conv2d(c, c, 3, padding=1, groups=2)
        s.dw = torch.nn.Conv2d(c, c, 3, padding=1, groups=c)
        s.fc = torch.nn.Linear(4 * c, 10)
        F = torch.nn
        s.pools = F.Sequential(
            F.MaxPool2d(3, 2, ceil_mode=True), F.AvgPool2d(3, 1, 1),
            F.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
            F.MaxPool2d(2, 1, dilation=2))

    def forward(s, x):
        x = s.dw(torch.relu(s.grp(torch.relu(s.dil(x)))))
        return s.fc(torch.flatten(s.pools(x), 1))


def vit_b16(image=32, layers=2):
    """torchvision's ViT-B/16 (widths, heads, patch) with fewer layers and a
    smaller image, so that it emulates in seconds: patch Conv, class token
    Concat, nn.MultiheadAttention, token-0 Gather."""
    from torchvision.models.vision_transformer import VisionTransformer
    return lambda: VisionTransformer(image_size=image, patch_size=16,
                                     num_layers=layers, num_heads=12,
                                     hidden_dim=768, mlp_dim=3072)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(48, 96), torch.nn.GELU(),
                               torch.nn.Linear(96, 32))


def mlp_tanh():
    return torch.nn.Sequential(torch.nn.Linear(48, 96),
                               torch.nn.GELU(approximate="tanh"),
                               torch.nn.Linear(96, 32))


def layernorm():
    return torch.nn.Sequential(torch.nn.Linear(64, 64),
                               torch.nn.LayerNorm(64, eps=1e-6))


def export(name, model, shape, opset=13, make=torch.randn, **kw):
    """The model's ONNX file, its input (make(shape)) and PyTorch's
    output."""
    torch.manual_seed(0)
    m = model()
    for p in m.parameters():  # weights away from PyTorch's init scale
        p.data.normal_(0, 0.5 / math.sqrt(p.shape[-1]))
    m.eval()
    x = make(shape)
    path = os.path.join(TMP, f"{name}.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (x,), path, opset_version=opset,
                          input_names=["x"], output_names=["y"], **kw)
    with torch.no_grad():
        return path, x.numpy(), m(x).numpy()


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


class Checked:
    """Export, run in each dtype, compare with PyTorch."""

    def check(self, name, model, shape, opset=13,
              dtypes=(("f32", 0.9999), ("f16", 0.999), ("f8", 0.99)),
              make=torch.randn):
        path, x, ref = export(name, model, shape, opset, make)
        for dtype, bound in dtypes:
            m = ipu.compile(path, dtype=dtype)
            y = m.run(x=x)
            c = cosine(y, ref)
            print(f"{name} {dtype}: cosine {c:.7f}, max |err| "
                  f"{np.abs(y - ref).max():.2e}, {m.stats['cycles']} cycles, "
                  f"MFU {100 * m.stats['mfu']:.4f}%", file=sys.stderr)
            self.assertEqual(y.shape, ref.shape)
            self.assertGreaterEqual(c, bound, f"{name} in {dtype}")
            self.assertGreater(m.stats["cycles"], 0)
            m.close()



class Models(Checked, unittest.TestCase):
    def test_mlp(self):
        self.check("mlp", mlp, (16, 48))

    def test_gelu_tanh(self):
        # the tanh form is the IR's own gelu: no approximation, no note
        path, x, ref = export("mlp_tanh", mlp_tanh, (16, 48))
        m = ipu.compile(path)
        self.assertEqual(m.notes, "")
        self.assertLess(np.abs(m.run(x=x) - ref).max(), 1e-5)
        self.check("mlp_tanh", mlp_tanh, (16, 48))

    def test_layernorm_decomposed(self):
        self.check("ln13", layernorm, (8, 64), opset=13)

    def test_layernorm_op(self):
        self.check("ln17", layernorm, (8, 64), opset=17)

    # Models export at opset 13 unless they name another: each of 14-17
    # is in the suite once at no extra cost; class Opsets runs them all
    def test_attention_block(self):
        self.check("attn", Attention, (2, 16, 64), opset=15)

    def test_cnn(self):
        self.check("cnn", Cnn, (2, 3, 32, 32))

    def test_cnn_relu_pool(self):
        self.check("cnn_relu", CnnRelu, (2, 3, 32, 32))

    def test_cnn_maxpool(self):
        self.check("cnn_max", CnnMax, (2, 3, 16, 16), opset=16,
                   dtypes=(("f32", 0.9999), ("f16", 0.999)))
        # exact, also on a 3-channel image (f16 pads it to 4 channels,
        # cut after): PyTorch's values, in f16 those of x rounded
        path, x, ref = export("max3", lambda: torch.nn.MaxPool2d(3, 2, 1),
                              (1, 3, 8, 8))
        for dtype, want in (("f32", ref),
                            ("f16", ref.astype(np.float16).astype(np.float32))):
            m = ipu.compile(path, dtype=dtype)
            self.assertTrue(np.array_equal(m.run(x=x), want), dtype)
            m.close()

    def test_cnn_padded_conv(self):
        self.check("cnn_pad", CnnPad, (2, 3, 8, 8),
                   dtypes=(("f32", 0.9999), ("f16", 0.999)))

    def test_cnn_windows(self):
        # f32 to rounding (a window's count or tap wrong at an edge moves
        # a few outputs, which a cosine alone could miss)
        path, x, ref = export("cnn_win", CnnWin, (2, 4, 12, 12), opset=17)
        for dtype, bound in (("f32", 0.9999), ("f16", 0.999)):
            m = ipu.compile(path, dtype=dtype)
            y = m.run(x=x)
            err = np.abs(y - ref).max()
            print(f"cnn_win {dtype}: cosine {cosine(y, ref):.7f}, max "
                  f"|err| {err:.2e}, {m.stats['cycles']} cycles, MFU "
                  f"{100 * m.stats['mfu']:.4f}%", file=sys.stderr)
            self.assertGreaterEqual(cosine(y, ref), bound)
            if dtype == "f32":
                self.assertLess(err, 1e-5 * np.abs(ref).max())
            m.close()

    def test_vit(self):
        try:
            import torchvision  # noqa: F401
        except ImportError:
            self.skipTest("needs python3-torchvision")
        self.check("vit", vit_b16(), (1, 3, 32, 32),
                   dtypes=(("f32", 0.9999), ("f16", 0.999)))

    def test_bert_ids(self):
        # token ids in, 2 layers: the embedding lookup on the chip
        self.check("bert2", bert(2), (2, 16), opset=14, make=token_ids(1000),
                   dtypes=(("f32", 0.9999), ("f16", 0.999)))

    def test_lookup_split(self):
        # a table too large for one gather (9000 rows: blocks of 1800 rows
        # in f32, 3000 in f16), ids on every block's edges: PyTorch's rows
        # exactly (in f16 rounded), none from two blocks or a zero row
        edges = [0, 1799, 1800, 2999, 3000, 3599, 3600, 5399, 5400, 5999,
                 6000, 7199, 7200, 8999, 4500, 17]
        def make(shape):
            return torch.tensor(edges * 2).reshape(shape)
        path, x, ref = export("lookup_split",
                              lambda: torch.nn.Embedding(9000, 16), (2, 16),
                              make=make)
        for dtype, want in (("f32", ref),
                            ("f16", ref.astype(np.float16).astype(np.float32))):
            m = ipu.compile(path, dtype=dtype)
            y = m.run(x=x)
            print(f"lookup_split {dtype}: {m.stats['cycles']} cycles",
                  file=sys.stderr)
            self.assertTrue(np.array_equal(y, want), dtype)
            m.close()

    def test_bad_ids(self):
        path, x, _ = export("bert_ids", bert(1, vocab=50), (1, 8),
                            make=token_ids(50))
        m = ipu.compile(path)
        self.assertEqual(m.run(x=x).shape, (1, 8, 64))
        for bad, word in ((50, "50"), (-51, "-51"), (2.5, "2.5")):
            y = x.astype(np.float64)
            y[0, 3] = bad
            with self.assertRaisesRegex(ipu.IpuError, "element 3 is " + word):
                m.run(x=y)
        # negatives count from the end, as in Gather
        y = x.copy()
        y[0, 5] = -1
        z = x.copy()
        z[0, 5] = 49
        self.assertTrue(np.array_equal(m.run(x=y), m.run(x=z)))

    def test_bert_mask(self):
        # the mask a model input: its bias [B, 1, 1, S] repeated over the
        # heads' rows on the chip; the second sequence padded
        torch.manual_seed(0)
        m = MaskedBert(layers=1, vocab=50)
        for p in m.parameters():
            p.data.normal_(0, 0.5 / math.sqrt(p.shape[-1]))
        m.eval()
        ids = token_ids(50)((2, 8))
        mask = torch.ones(2, 8, dtype=torch.int64)
        mask[1, 5:] = 0
        path = os.path.join(TMP, "bert_mask.onnx")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(m, (ids, mask), path, opset_version=13,
                              input_names=["ids", "mask"],
                              output_names=["y"])
        with torch.no_grad():
            ref = m(ids, mask).numpy()
            unmasked = m(ids, torch.ones_like(mask)).numpy()
        # the mask matters far more than the error (cosine alone would
        # pass without it)
        moved = np.abs(ref - unmasked).max()
        self.assertGreater(moved, 1e-3)
        for dtype, bound, part in (("f32", 0.9999, 0.01), ("f16", 0.999, 0.5)):
            c = ipu.compile(path, dtype=dtype)
            y = c.run(ids=ids.numpy(), mask=mask.numpy())
            print(f"bert_mask {dtype}: cosine {cosine(y, ref):.7f}, max "
                  f"|err| {np.abs(y - ref).max():.2e} (the mask moves "
                  f"{moved:.2e}), {c.stats['cycles']} cycles",
                  file=sys.stderr)
            self.assertGreaterEqual(cosine(y, ref), bound)
            self.assertLess(np.abs(y - ref).max(), part * moved)
            self.assertEqual("clamped" in c.notes, dtype == "f16")
            with self.assertRaisesRegex(ipu.IpuError, "element 3 is 0.5"):
                c.run(ids=ids.numpy(), mask=np.where(
                    np.arange(16).reshape(2, 8) == 3, 0.5, mask.numpy()))
            c.close()

    def test_runs_again_same(self):
        path, x, _ = export("mlp_again", mlp, (16, 48))
        m = ipu.compile(path)
        self.assertTrue(np.array_equal(m.run(x), m.run(x=x)))


class Opsets(unittest.TestCase):
    """The small models at every opset 13-17 in f32 (test_onnx_opsets,
    label long: about 4 minutes): PyTorch's output, and at 14-17 the
    cycles of 13 (the exporter's forms of an op differ across opsets;
    the IR graph they map to must not)."""

    def test_opsets(self):
        models = (("mlp", mlp, (16, 48), torch.randn),
                  ("ln", layernorm, (8, 64), torch.randn),
                  ("attn", Attention, (2, 16, 64), torch.randn),
                  ("bert1", bert(1, vocab=50), (2, 8), token_ids(50)),
                  ("cnn", Cnn, (2, 3, 32, 32), torch.randn),
                  ("cnn_relu", CnnRelu, (2, 3, 32, 32), torch.randn),
                  ("cnn_max", CnnMax, (2, 3, 16, 16), torch.randn),
                  ("cnn_pad", CnnPad, (2, 3, 8, 8), torch.randn),
                  ("cnn_win", CnnWin, (2, 4, 12, 12), torch.randn))
        for name, model, shape, make in models:
            cycles = {}
            for opset in range(13, 18):
                with self.subTest(name=name, opset=opset):
                    path, x, ref = export(f"{name}_{opset}", model, shape,
                                          opset, make)
                    m = ipu.compile(path)
                    self.assertGreaterEqual(cosine(m.run(x=x), ref), 0.9999)
                    cycles[opset] = m.stats["cycles"]
                    m.close()
            print(f"{name}: cycles at opsets 13-17 {cycles}", file=sys.stderr)
            self.assertEqual(len(set(cycles.values())), 1, name)


class BertEncoder(Checked, unittest.TestCase):
    """Its own ctest entry (test_onnx_bert): about a minute of emulation."""

    def test_bert(self):
        self.check("bert", bert(12), (2, 16), make=token_ids(1000),
                   dtypes=(("f32", 0.9999), ("f16", 0.999)))


class BertBase(Checked, unittest.TestCase):
    """BERT-base at full size from token ids (d 768, 12 heads, FFN 3072,
    12 layers, vocabulary 30522, 128 tokens) in f16: test_onnx_bert_base,
    labels real;long (23 minutes on a shared 2-core machine)."""

    def test_bert_base(self):
        self.check("bert_base", bert(12, d=768, h=12, f=3072, maxpos=512,
                                     vocab=30522),
                   (1, 128), make=token_ids(30522), dtypes=(("f16", 0.999),))


class Cli(unittest.TestCase):
    def ipu(self, *args):
        return subprocess.run([IPU, *args], capture_output=True, text=True)

    def test_run_and_compile(self):
        path, x, ref = export("cli", mlp, (16, 48))
        xin, yout = os.path.join(TMP, "cli_x.npy"), os.path.join(TMP, "cli_y.npy")
        np.save(xin, x)
        r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}",
                     "--out", f"y={yout}", "--cache", os.path.join(TMP, "cache"))
        self.assertEqual(r.returncode, 0, r.stderr)
        for word in ("cycles", "time", "MFU"):
            self.assertIn(word, r.stdout)
        self.assertGreaterEqual(cosine(np.load(yout), ref), 0.9999)
        # the second time from the cache, and never over the output
        r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}",
                     "--out", f"y={yout}", "--cache", os.path.join(TMP, "cache"),
                     "--force")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("package from the cache", r.stdout)
        r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}",
                     "--out", f"y={yout}")
        self.assertEqual(r.returncode, 1)
        pkg = os.path.join(TMP, "cli.pkg")
        r = self.ipu("compile", path, "-o", pkg, "--dtype", "f16")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.getsize(pkg) > 96 * 48 * 2)  # weights inside

    def test_device_model(self):
        # through the card model (docs/hardware.md): sim's output bytes
        # and cycles, and the register log
        path, x, _ = export("dev", mlp, (16, 48))
        xin = os.path.join(TMP, "dev_x.npy")
        np.save(xin, x)
        outs, cycles = [], []
        for dev in ("sim", "model:c600:log=" + os.path.join(TMP, "dev.log")):
            y = os.path.join(TMP, f"dev_{len(outs)}.npy")
            r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}",
                         "--out", f"y={y}", "--force", "--device", dev,
                         "--cache", os.path.join(TMP, "cache"))
            self.assertEqual(r.returncode, 0, r.stderr)
            cycles.append(r.stdout.split("cycles")[1].split()[0])
            with open(y, "rb") as f:
                outs.append(f.read())
        self.assertEqual(outs[0], outs[1])
        self.assertEqual(cycles[0], cycles[1])
        with open(os.path.join(TMP, "dev.log")) as f:
            self.assertIn("<- 00000001 HSP_GS1", f.read())
        r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}",
                     "--device", "model:gc200")
        self.assertEqual(r.returncode, 2)
        self.assertIn("the card model is of the C600 only", r.stderr)

    def test_wrong_input_shape(self):
        path, x, _ = export("shape", mlp, (16, 48))
        bad = os.path.join(TMP, "bad_x.npy")
        np.save(bad, x[:8])
        r = self.ipu("run", "onnx", "--model", path, "--in", f"x={bad}")
        self.assertEqual(r.returncode, 1)
        self.assertIn("[16, 48]", r.stderr)
        with self.assertRaisesRegex(ValueError, r"\(16, 48\)"):
            ipu.compile(path).run(x=x[:8])


    def test_ids_npy(self):
        # token ids as int64 and int32 .npy; other dtypes and ids outside
        # the table refused naming the input
        path, x, ref = export("cli_ids", bert(1, vocab=50), (1, 8),
                              make=token_ids(50))
        outs = []
        for dt in (np.int64, np.int32):
            xin = os.path.join(TMP, f"ids_{dt.__name__}.npy")
            y = os.path.join(TMP, f"ids_y_{dt.__name__}.npy")
            np.save(xin, x.astype(dt))
            r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}",
                         "--out", f"y={y}", "--force",
                         "--cache", os.path.join(TMP, "cache"))
            self.assertEqual(r.returncode, 0, r.stderr)
            outs.append(np.load(y))
        self.assertGreaterEqual(cosine(outs[0], ref), 0.9999)
        self.assertTrue(np.array_equal(outs[0], outs[1]))
        for bad, word in ((x.astype(np.float32), "int64 or int32"),
                          (x.astype(np.int16), "'<i2' is not supported"),
                          (x[:, :4], "int64 or int32 .npy of shape [1, 8]")):
            xin = os.path.join(TMP, "ids_bad.npy")
            np.save(xin, bad)
            r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}")
            self.assertEqual(r.returncode, 1)
            self.assertIn(word, r.stderr)
        far = x.copy()
        far[0, 2] = (1 << 40) + 1  # not exact as a float: named as given
        np.save(xin, far)
        r = self.ipu("run", "onnx", "--model", path, "--in", f"x={xin}")
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"element 2 is {(1 << 40) + 1}, not an index", r.stderr)


class Errors(unittest.TestCase):
    def refused(self, path, *words):
        with self.assertRaises(ipu.IpuError) as e:
            ipu.compile(path)
        for w in words:
            self.assertIn(w, str(e.exception))
        return str(e.exception)

    def test_truncated(self):
        path, _, _ = export("trunc", mlp, (4, 48))
        with open(path, "rb") as f:
            data = f.read()
        cut = os.path.join(TMP, "cut.onnx")
        with open(cut, "wb") as f:
            f.write(data[: len(data) * 2 // 3])
        self.refused(cut, "cut.onnx", "not a valid ONNX protobuf")

    def test_unknown_op(self):
        sig = lambda: torch.nn.Sequential(torch.nn.Linear(8, 8),  # noqa
                                          torch.nn.Sigmoid())
        path, _, _ = export("sigmoid", sig, (4, 8))
        self.refused(path, "Sigmoid", "/1/Sigmoid", "not supported")

    def test_pad_refused(self):
        # a Pad of zeros before a MaxPool (only a Conv or AveragePool
        # takes one)
        pool = lambda: torch.nn.Sequential(  # noqa
            torch.nn.ZeroPad2d(1), torch.nn.MaxPool2d(2))
        path, _, _ = export("pad_max", pool, (1, 2, 8, 8))
        self.refused(path, "(Pad)", "attribute mode, inputs pads",
                     "Conv or AveragePool")

    def test_ids_other_use(self):
        # an integer input read other than as Gather indices or a mask
        # (reshaped, cast to float)
        class Add(torch.nn.Module):
            def forward(s, ids):
                return (ids + 1).to(torch.float32)
        path, _, _ = export("ids_add", Add, (2, 4), make=token_ids(10))
        self.refused(path, "integer input 'x'", "Gather", "mask")

    def test_dynamic_shape(self):
        path, _, _ = export("dyn", mlp, (4, 48),
                            dynamic_axes={"x": {0: "batch"}})
        self.refused(path, "input 'x'", "batch", "fixed")

    def test_not_onnx(self):
        junk = os.path.join(TMP, "junk.onnx")
        with open(junk, "wb") as f:
            f.write(b"\x08\x07not a model at all")
        self.refused(junk, "junk.onnx")


if __name__ == "__main__":
    try:
        unittest.main(verbosity=2)
    finally:
        import shutil
        shutil.rmtree(TMP, ignore_errors=True)
