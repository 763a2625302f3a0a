#!/usr/bin/python3
"""Self-checks of tools/siglip_ref.py.  Each operator of the reference is
checked against torch's own implementation of the same function (F.layer_norm,
F.gelu, torch.softmax, F.conv2d, nn.MultiheadAttention), the whole tower
against a tower assembled from those torch modules, and a few cases against
values derived by hand.  Run with Debian's /usr/bin/python3; exits 77 (ctest's
skip code here) when torch, numpy or PIL is missing."""

import contextlib
import io
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
    from PIL import Image
except ImportError as e:
    print(f"SKIP: test_siglip_ref needs python3-torch, python3-numpy and python3-pil ({e})")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import siglip_ref as ref  # noqa: E402

SCRIPT = os.path.join(HERE, "siglip_ref.py")
SKIMAGE_DATA = "/usr/lib/python3/dist-packages/skimage/data"
CHELSEA = os.path.join(SKIMAGE_DATA, "chelsea.png")   # 451 x 300 RGB photo of a cat
CAMERA = os.path.join(SKIMAGE_DATA, "camera.png")     # greyscale

SMALL = {"hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
         "num_attention_heads": 2, "image_size": 32, "patch_size": 8}

torch.set_num_threads(2)


def cosine(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


class TempDirCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.tmp = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)


# --------------------------------------------------------------------------

class SafetensorsTest(TempDirCase):
    def write_raw(self, header, data):
        text = json.dumps(header).encode()
        with open(self.path("raw.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + data)
        return self.path("raw.safetensors")

    def test_reads_hand_built_file(self):
        data = struct.pack("<HH", 0x3C00, 0xC000)          # f16 1, -2
        data += struct.pack("<HH", 0x3F80, 0x4049)         # bf16 1, 3.140625
        data += struct.pack("<f", 0.1)
        path = self.write_raw({
            "__metadata__": {"format": "pt"},
            "a": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]},
            "b": {"dtype": "BF16", "shape": [1, 2], "data_offsets": [4, 8]},
            "c": {"dtype": "F32", "shape": [], "data_offsets": [8, 12]},
        }, data)
        t = ref.read_safetensors(path)
        self.assertEqual(sorted(t), ["a", "b", "c"])
        self.assertEqual(t["a"].dtype, torch.float16)
        self.assertEqual(t["a"].tolist(), [1.0, -2.0])
        self.assertEqual(t["b"].dtype, torch.bfloat16)
        self.assertEqual(t["b"].float().tolist(), [[1.0, 3.140625]])
        self.assertEqual(t["c"].item(), np.float32(0.1))

    def test_fp8_codes(self):
        path = self.write_raw({
            "e4": {"dtype": "F8_E4M3", "shape": [5], "data_offsets": [0, 5]},
            "e5": {"dtype": "F8_E5M2", "shape": [4], "data_offsets": [5, 9]},
        }, bytes([0x7E, 0x01, 0x38, 0xFE, 0x7F, 0x7B, 0x7C, 0x3C, 0x01]))
        t = ref.read_safetensors(path)
        e4 = t["e4"].tolist()
        self.assertEqual(e4[:4], [448.0, 2.0 ** -9, 1.0, -448.0])
        self.assertTrue(math.isnan(e4[4]))
        self.assertEqual(t["e5"].tolist(), [57344.0, math.inf, 1.0, 2.0 ** -16])

    def test_round_trip(self):
        gen = torch.Generator().manual_seed(1)
        tensors = {"f64": torch.randn(3, 2, dtype=torch.float64, generator=gen),
                   "f32": torch.randn(5, generator=gen),
                   "f16": torch.randn(2, 3, 4, generator=gen).half(),
                   "bf16": torch.randn(7, generator=gen).bfloat16(),
                   "i32": torch.arange(-3, 3, dtype=torch.int32)}
        ref.write_safetensors(self.path("w.safetensors"), tensors)
        with open(self.path("w.safetensors"), "rb") as f:
            self.assertEqual(struct.unpack("<Q", f.read(8))[0] % 8, 0)
        back = ref.read_safetensors(self.path("w.safetensors"))
        self.assertEqual(sorted(back), sorted(tensors))
        for name, t in tensors.items():
            self.assertEqual(back[name].dtype, t.dtype, name)
            self.assertTrue(torch.equal(back[name], t), name)

    def test_writer_does_not_overwrite(self):
        path = self.path("keep.safetensors")
        with open(path, "w") as f:
            f.write("precious")
        with self.assertRaisesRegex(ref.RefError, "already exists"):
            ref.write_safetensors(path, {"x": torch.zeros(1)})
        with open(path) as f:
            self.assertEqual(f.read(), "precious")

    def test_bad_files_name_the_problem(self):
        with self.assertRaisesRegex(ref.RefError, "nothere.safetensors: cannot read"):
            ref.read_safetensors(self.path("nothere.safetensors"))
        path = self.write_raw({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8)
        with self.assertRaisesRegex(ref.RefError, "tensor 'w': data_offsets \\[0, 16\\] outside"):
            ref.read_safetensors(path)
        path = self.write_raw({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, b"\0" * 8)
        with self.assertRaisesRegex(ref.RefError, "tensor 'w': 8 bytes do not hold F32 \\[3\\]"):
            ref.read_safetensors(path)
        path = self.write_raw({"w": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8)
        with self.assertRaisesRegex(ref.RefError, "tensor 'w': unsupported dtype C64"):
            ref.read_safetensors(path)
        with open(self.path("short"), "wb") as f:
            f.write(struct.pack("<Q", 1000) + b"{}")
        with self.assertRaisesRegex(ref.RefError, "header length 1000 runs past"):
            ref.read_safetensors(self.path("short"))


class ConfigTest(TempDirCase):
    def test_siglip_config_with_empty_vision_config_gets_base_defaults(self):
        # google/siglip-base-patch16-224 keeps only model_type in vision_config
        cfg = ref.parse_config({"model_type": "siglip", "text_config": {},
                                "vision_config": {"model_type": "siglip_vision_model"}})
        self.assertEqual((cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers,
                          cfg.num_attention_heads, cfg.image_size, cfg.patch_size),
                         (768, 3072, 12, 12, 224, 16))
        self.assertEqual(cfg.layer_norm_eps, 1e-6)
        self.assertTrue(cfg.vision_use_head)
        self.assertEqual((cfg.grid, cfg.num_patches, cfg.head_dim), (14, 196, 64))

    def test_top_level_so400m_config(self):
        path = self.path("config.json")
        with open(path, "w") as f:
            json.dump({"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
                       "num_attention_heads": 16, "image_size": 384, "patch_size": 14}, f)
        cfg = ref.read_config(path)
        self.assertEqual((cfg.grid, cfg.num_patches, cfg.head_dim), (27, 729, 72))   # 384 = 27*14 + 6

    def test_tensor_names_and_counts_match_the_model_notes(self):
        # model.md sections 3-4: 16 L + 16 tensors; 92,884,224 and 428,225,600 parameters
        for fields, tensors, params in (({}, 208, 92_884_224),
                                        ({"hidden_size": 1152, "intermediate_size": 4304, "num_hidden_layers": 27,
                                          "num_attention_heads": 16, "image_size": 384, "patch_size": 14},
                                         448, 428_225_600)):
            shapes = ref.expected_shapes(ref.parse_config(fields))
            self.assertEqual(len(shapes), tensors)
            self.assertEqual(sum(math.prod(s) for s in shapes.values()), params)
        self.assertEqual(shapes["head.attention.in_proj_weight"], [3456, 1152])
        self.assertEqual(shapes["embeddings.position_embedding.weight"], [729, 1152])
        self.assertEqual(shapes["encoder.layers.26.mlp.fc2.weight"], [1152, 4304])

    def test_bad_configs(self):
        with self.assertRaisesRegex(ref.RefError, "hidden_act 'quick_gelu' is not supported"):
            ref.parse_config({"hidden_act": "quick_gelu"})
        with self.assertRaisesRegex(ref.RefError, "hidden_size 100 is not a multiple of num_attention_heads 12"):
            ref.parse_config({"hidden_size": 100})
        with self.assertRaisesRegex(ref.RefError, "patch_size 16 is larger than image_size 8"):
            ref.parse_config({"image_size": 8})
        with self.assertRaisesRegex(ref.RefError, "hidden_size = '768' is not a int"):
            ref.parse_config({"hidden_size": "768"})
        with self.assertRaisesRegex(ref.RefError, "missing.json: cannot read config"):
            ref.read_config(self.path("missing.json"))


# --------------------------------------------------------------------------

class OperatorTest(unittest.TestCase):
    def setUp(self):
        self.gen = torch.Generator().manual_seed(2)

    def randn(self, *shape):
        return torch.randn(*shape, dtype=torch.float64, generator=self.gen)

    def test_layer_norm_hand_case(self):
        # [1,2,3,4]: mean 2.5, variance 1.25, so (x - 2.5)/sqrt(5/4) = (+-3, +-1)/sqrt(5)
        x = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
        y = ref.layer_norm(x, torch.full((4,), 2.0, dtype=torch.float64), torch.ones(4, dtype=torch.float64), 0.0)
        s = 1 / math.sqrt(5)
        expect = [1 - 6 * s, 1 - 2 * s, 1 + 2 * s, 1 + 6 * s]
        for got, want in zip(y.tolist(), expect):
            self.assertAlmostEqual(got, want, places=14)

    def test_layer_norm_against_torch(self):
        x, w, b = self.randn(3, 5, 64) * 3 + 1, self.randn(64), self.randn(64)
        for eps in (1e-6, 1e-5, 0.5):
            diff = ref.layer_norm(x, w, b, eps) - F.layer_norm(x, (64,), w, b, eps)
            self.assertLess(diff.abs().max().item(), 1e-12)
        x32, w32, b32 = x.float(), w.float(), b.float()
        diff = ref.layer_norm(x32, w32, b32, 1e-6) - F.layer_norm(x32, (64,), w32, b32, 1e-6)
        self.assertLess(diff.abs().max().item(), 1e-5)

    def test_gelu(self):
        x = torch.cat([self.randn(1000) * 4, torch.tensor([-30.0, -10.0, 0.0, 10.0, 30.0], dtype=torch.float64)])
        self.assertLess((ref.gelu_tanh(x) - F.gelu(x, approximate="tanh")).abs().max().item(), 1e-12)
        # gelu(1) = 0.5 (1 + tanh(sqrt(2/pi) 1.044715)); gelu(0) = 0; gelu(-30) ~ 0; gelu(30) ~ 30
        one = ref.gelu_tanh(torch.tensor([1.0, 0.0, -30.0, 30.0], dtype=torch.float64)).tolist()
        self.assertAlmostEqual(one[0], 0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715)), places=15)
        self.assertEqual(one[1:3], [0.0, 0.0])
        self.assertEqual(one[3], 30.0)

    def test_softmax(self):
        y = ref.softmax(torch.tensor([0.0, math.log(2), math.log(3)], dtype=torch.float64)).tolist()
        for got, want in zip(y, [1 / 6, 2 / 6, 3 / 6]):
            self.assertAlmostEqual(got, want, places=15)
        x = torch.cat([self.randn(4, 50) * 10, torch.full((1, 50), 1000.0, dtype=torch.float64)])
        x[4, 3] = 1001.0
        y = ref.softmax(x)
        self.assertFalse(torch.isnan(y).any())
        self.assertLess((y - torch.softmax(x, dim=-1)).abs().max().item(), 1e-15)

    def test_attention_with_one_key_returns_its_value(self):
        q, k, v = self.randn(2, 3, 8), self.randn(2, 1, 8), self.randn(2, 1, 8)
        y = ref.attention(q, k, v, heads=2)
        self.assertLess((y - v.expand(2, 3, 8)).abs().max().item(), 1e-15)

    def mha(self, d, heads, in_w, in_b, out_w, out_b):
        m = torch.nn.MultiheadAttention(d, heads, batch_first=True).double()
        with torch.no_grad():
            m.in_proj_weight.copy_(in_w)
            m.in_proj_bias.copy_(in_b)
            m.out_proj.weight.copy_(out_w)
            m.out_proj.bias.copy_(out_b)
        return m.eval()

    def test_self_attention_against_multihead_attention(self):
        d, heads = 48, 4
        x = self.randn(2, 10, d)
        wq, wk, wv, wo = (self.randn(d, d) / math.sqrt(d) for _ in range(4))
        bq, bk, bv, bo = (self.randn(d) for _ in range(4))
        mine = ref.linear(ref.attention(ref.linear(x, wq, bq), ref.linear(x, wk, bk), ref.linear(x, wv, bv), heads),
                          wo, bo)
        m = self.mha(d, heads, torch.cat([wq, wk, wv]), torch.cat([bq, bk, bv]), wo, bo)
        with torch.no_grad():
            theirs, _ = m(x, x, x, need_weights=False)
        self.assertLess((mine - theirs).abs().max().item(), 1e-12)

    def test_patch_embedding_against_conv2d(self):
        pixels, w, b = self.randn(2, 3, 24, 24), self.randn(16, 3, 8, 8), self.randn(16)
        mine = ref.patch_embed(pixels, w, b)
        theirs = F.conv2d(pixels, w, b, stride=8).flatten(2).transpose(1, 2)   # [B, 9, 16], row-major tokens
        self.assertEqual(list(mine.shape), [2, 9, 16])
        self.assertLess((mine - theirs).abs().max().item(), 1e-12)
        # a patch size that does not divide the image: the last 6 rows and columns go unused (so400m's 384/14)
        pixels, w = self.randn(1, 3, 48, 48), self.randn(16, 3, 14, 14)
        mine = ref.patch_embed(pixels, w, b)
        theirs = F.conv2d(pixels, w, b, stride=14).flatten(2).transpose(1, 2)
        self.assertEqual(list(mine.shape), [1, 9, 16])
        self.assertLess((mine - theirs).abs().max().item(), 1e-12)

    def test_map_head_against_torch_modules(self):
        cfg = ref.parse_config(dict(SMALL, num_hidden_layers=0))
        w = {k[len("vision_model."):]: v.double() for k, v in ref.random_weights(cfg, seed=3).items()}
        x = self.randn(2, cfg.num_patches, cfg.hidden_size)
        self.assertLess((ref.map_head(x, w, cfg) - torch_map_head(x, w, cfg)).abs().max().item(), 1e-12)


# --------------------------------------------------------------------------
# The tower assembled from torch's modules: the independent implementation.

def torch_mlp(x, w, prefix):
    h = F.gelu(F.linear(x, w[prefix + "fc1.weight"], w[prefix + "fc1.bias"]), approximate="tanh")
    return F.linear(h, w[prefix + "fc2.weight"], w[prefix + "fc2.bias"])


def torch_mha(d, heads, in_w, in_b, out_w, out_b):
    m = torch.nn.MultiheadAttention(d, heads, batch_first=True).to(in_w.dtype)
    with torch.no_grad():
        m.in_proj_weight.copy_(in_w)
        m.in_proj_bias.copy_(in_b)
        m.out_proj.weight.copy_(out_w)
        m.out_proj.bias.copy_(out_b)
    return m.eval()


def torch_map_head(x, w, cfg):
    d = cfg.hidden_size
    m = torch_mha(d, cfg.num_attention_heads, w["head.attention.in_proj_weight"], w["head.attention.in_proj_bias"],
                  w["head.attention.out_proj.weight"], w["head.attention.out_proj.bias"])
    with torch.no_grad():
        a, _ = m(w["head.probe"].expand(x.shape[0], 1, d), x, x, need_weights=False)
        h = F.layer_norm(a, (d,), w["head.layernorm.weight"], w["head.layernorm.bias"], cfg.layer_norm_eps)
        return (a + torch_mlp(h, w, "head.mlp."))[:, 0]


def torch_tower(pixels, w, cfg):
    d, eps, p = cfg.hidden_size, cfg.layer_norm_eps, cfg.patch_size
    with torch.no_grad():
        x = F.conv2d(pixels, w["embeddings.patch_embedding.weight"], w["embeddings.patch_embedding.bias"], stride=p)
        x = x.flatten(2).transpose(1, 2) + w["embeddings.position_embedding.weight"]
        for i in range(cfg.num_hidden_layers):
            pre = f"encoder.layers.{i}."
            att = lambda n: w[f"{pre}self_attn.{n}"]
            m = torch_mha(d, cfg.num_attention_heads,
                          torch.cat([att("q_proj.weight"), att("k_proj.weight"), att("v_proj.weight")]),
                          torch.cat([att("q_proj.bias"), att("k_proj.bias"), att("v_proj.bias")]),
                          att("out_proj.weight"), att("out_proj.bias"))
            h = F.layer_norm(x, (d,), w[pre + "layer_norm1.weight"], w[pre + "layer_norm1.bias"], eps)
            x = x + m(h, h, h, need_weights=False)[0]
            h = F.layer_norm(x, (d,), w[pre + "layer_norm2.weight"], w[pre + "layer_norm2.bias"], eps)
            x = x + torch_mlp(h, w, pre + "mlp.")
        x = F.layer_norm(x, (d,), w["post_layernorm.weight"], w["post_layernorm.bias"], eps)
        return torch_map_head(x, w, cfg), x


class TowerTest(TempDirCase):
    @classmethod
    def setUpClass(cls):
        cls.cfg = ref.parse_config(SMALL)
        cls.pixels = np.stack([ref.load_image(CHELSEA, 32),
                               np.random.default_rng(4).uniform(-1, 1, (3, 32, 32)).astype(np.float32)])

    def load_small(self, dtype=torch.float32):
        """Random weights written to safetensors and read back by our reader."""
        path = self.path(f"small-{dtype}.safetensors")
        ref.write_safetensors(path, {k: v.to(dtype) for k, v in ref.random_weights(self.cfg, seed=5).items()})
        return ref.vision_weights(ref.read_safetensors(path), self.cfg, path)

    def test_tower_against_torch_modules(self):
        w = self.load_small()
        pooled, hidden = ref.tower(self.pixels, w, self.cfg, "f64")
        w64 = {k: v.double() for k, v in w.items()}
        t_pooled, t_hidden = torch_tower(torch.from_numpy(self.pixels).double(), w64, self.cfg)
        self.assertEqual(pooled.shape, (2, 64))
        self.assertEqual(hidden.shape, (2, 16, 64))
        self.assertGreater(np.std(pooled), 0.1)   # not a degenerate output
        # both returned as float32: agreement to float32 rounding
        self.assertLess(np.abs(pooled - t_pooled.numpy()).max(), 1e-5)
        self.assertLess(np.abs(hidden - t_hidden.numpy()).max(), 1e-5)
        self.assertGreater(cosine(pooled, t_pooled), 1 - 1e-12)

    def test_batch_items_are_independent(self):
        w = self.load_small()
        both, _ = ref.tower(self.pixels, w, self.cfg, "f64")
        for i in range(2):
            one, _ = ref.tower(self.pixels[i:i + 1], w, self.cfg, "f64")
            self.assertLess(np.abs(one[0] - both[i]).max(), 1e-6)
        self.assertLess(cosine(both[0], both[1]), 0.99)   # the two images give different embeddings

    def test_reduced_precision_against_f64(self):
        w = self.load_small()
        truth, _ = ref.tower(self.pixels, w, self.cfg, "f64")
        f32, _ = ref.tower(self.pixels, w, self.cfg, "f32")
        f16, _ = ref.tower(self.pixels, w, self.cfg, "f16")
        for i in range(2):
            self.assertGreater(cosine(f32[i], truth[i]), 0.999999)
            self.assertGreater(cosine(f16[i], truth[i]), 0.9999)
        # the f16 emulation really rounds: it is measurably worse than f32
        self.assertGreater(np.abs(f16 - truth).max(), 10 * np.abs(f32 - truth).max())

    def test_f16_and_bf16_checkpoints(self):
        w32 = self.load_small()
        for dtype in (torch.float16, torch.bfloat16):
            stored = self.load_small(dtype)
            rounded = {k: v.to(dtype) for k, v in w32.items()}
            a, _ = ref.tower(self.pixels, stored, self.cfg, "f64")
            b, _ = ref.tower(self.pixels, rounded, self.cfg, "f64")
            self.assertTrue(np.array_equal(a, b), str(dtype))

    def test_missing_and_misshapen_tensors(self):
        tensors = ref.random_weights(self.cfg)
        del tensors["vision_model.encoder.layers.1.mlp.fc2.bias"]
        with self.assertRaisesRegex(ref.RefError, "W: missing tensor 'vision_model.encoder.layers.1.mlp.fc2.bias' "
                                                  "\\(expected shape \\[64\\]\\)"):
            ref.vision_weights(tensors, self.cfg, "W")
        tensors = ref.random_weights(self.cfg)
        tensors["vision_model.head.probe"] = torch.zeros(1, 64)
        with self.assertRaisesRegex(ref.RefError, "'vision_model.head.probe' has shape \\[1, 64\\], the config needs"):
            ref.vision_weights(tensors, self.cfg, "W")
        with self.assertRaisesRegex(ref.RefError, "no tensor named"):
            ref.vision_weights({"text_model.x": torch.zeros(1)}, self.cfg, "W")


class Fp8Test(TempDirCase):
    """F143 as docs/emulator-float.md defines it, from its 256 codes."""

    @staticmethod
    def f143_values():
        """(value, code) of every non-NaN F143 code: s.eeee.mmm, bias 8, e = 0
        subnormal (m/8 * 2^-7), no infinities, 0x80 NaN, no -0."""
        out = []
        for code in range(256):
            if code == 0x80:
                continue
            e, m = (code >> 3) & 15, code & 7
            v = m / 8 * 2.0 ** -7 if e == 0 else (1 + m / 8) * 2.0 ** (e - 8)
            out.append((-v if code & 0x80 else v, code))
        return sorted(out)

    def nearest(self, table, x):
        """Round to nearest by search; a tie goes to the even code."""
        best = min(table, key=lambda vc: (abs(vc[0] - x), vc[1] & 1))
        return best[0]

    def test_quantize_against_the_codes(self):
        table = self.f143_values()
        self.assertEqual(table[-1][0], 240.0)
        rng = np.random.default_rng(3)
        xs = np.concatenate([rng.normal(0, 1, 300) * 2.0 ** rng.integers(-12, 9, 300),
                             [v for v, _ in table], [(a[0] + b[0]) / 2 for a, b in zip(table, table[1:])],
                             [250.0, -1e6, 2.0 ** -12, 0.0]])
        for scale in (0, -5, 3):
            got = ref.quantize_f143(torch.tensor(xs * 2.0 ** scale, dtype=torch.float64), scale).numpy()
            for x, g in zip(xs, got):
                want = max(-240.0, min(240.0, self.nearest(table, max(-240.0, min(240.0, x)))))
                self.assertEqual(g, want * 2.0 ** scale, f"x {x} scale {scale}")

    def test_scale_covers_max(self):
        for m, s in ((240.0, 0), (240.1, 1), (120.0, -1), (120.5, 0), (1.0, -7), (0.0, 0)):
            self.assertEqual(ref.f8_scale(m), s, m)

    def test_f8_tower_and_calibrate(self):
        cfg = ref.parse_config(SMALL)
        w = ref.vision_weights(ref.random_weights(cfg, seed=5), cfg, "W")
        px = ref.load_image(CHELSEA, 32)[None]
        ranges = ref.ActivationRanges()
        truth, _ = ref.tower(px, w, cfg, "f64", ranges)
        self.assertEqual(sorted(ranges.max), sorted(ref.GEMM_POSITIONS))
        scales = {p: ref.f8_scale(m) for p, m in ranges.max.items()}
        f8, _ = ref.tower(px, w, cfg, "f8", ref.F8Activations(scales))
        f16, _ = ref.tower(px, w, cfg, "f16")
        # F143 keeps 4 significant bits: clearly worse than f16, still close
        self.assertGreater(cosine(f8[0], truth[0]), 0.99)
        self.assertLess(cosine(f8[0], truth[0]), cosine(f16[0], truth[0]) - 1e-4)
        with self.assertRaisesRegex(ref.RefError, "no scale for out"):
            ref.parse_f8_scales("qkv=1")


# --------------------------------------------------------------------------

class PreprocessTest(TempDirCase):
    def test_chelsea_against_direct_pil(self):
        px = ref.load_image(CHELSEA, 224)
        self.assertEqual(px.shape, (3, 224, 224))
        self.assertEqual(px.dtype, np.float32)
        self.assertGreaterEqual(px.min(), -1.0)
        self.assertLessEqual(px.max(), 1.0)
        self.assertGreater(px.max() - px.min(), 1.0)    # a real photo spans the range
        img = Image.open(CHELSEA)
        self.assertEqual(img.size, (451, 300))          # not square: resize without crop changes the aspect
        resized = img.convert("RGB").resize((224, 224), Image.BICUBIC)
        for c, band in enumerate(resized.split()):      # channel order R, G, B
            direct = np.asarray(band, dtype=np.float64) / 127.5 - 1.0
            self.assertLess(np.abs(px[c] - direct).max(), 1e-6)

    def test_solid_colour_hand_case(self):
        path = self.path("solid.png")
        Image.new("RGB", (40, 30), (255, 0, 128)).save(path)
        px = ref.load_image(path, 16)
        self.assertTrue(np.all(px[0] == 1.0))
        self.assertTrue(np.all(px[1] == -1.0))
        self.assertTrue(np.allclose(px[2], 128 / 127.5 - 1, rtol=0, atol=1e-7))

    def test_greyscale_becomes_three_equal_channels(self):
        px = ref.load_image(CAMERA, 32)
        self.assertEqual(px.shape, (3, 32, 32))
        self.assertTrue(np.array_equal(px[0], px[1]) and np.array_equal(px[1], px[2]))

    def test_bad_images(self):
        with self.assertRaisesRegex(ref.RefError, "nope.png: no such image"):
            ref.load_image(self.path("nope.png"), 32)
        with open(self.path("text.png"), "w") as f:
            f.write("not an image")
        with self.assertRaisesRegex(ref.RefError, "text.png: cannot read image"):
            ref.load_image(self.path("text.png"), 32)


# --------------------------------------------------------------------------

class CliTest(TempDirCase):
    """The command line, run in this process (importing torch anew for each
    command would cost seconds) except where the process itself is tested."""

    def cli(self, *args):
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.tmp)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = ref.main(list(args))
                except SystemExit as e:      # argparse's usage errors
                    code = e.code
        finally:
            os.chdir(cwd)
        return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())

    def test_script_exit_status_and_one_line_errors(self):
        r = subprocess.run([sys.executable, SCRIPT, "run", "--weights", "none.safetensors", "--config", "none.json",
                            "--pixels", "none.npy", "--out", "e.npy"], capture_output=True, text=True, cwd=self.tmp)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "siglip_ref.py: error: none.json: cannot read config: No such file or directory\n")
        np.save(self.path("a.npy"), np.array([[1.0, 0.0], [1.0, 1.0]], np.float32))
        np.save(self.path("b.npy"), np.array([[1.0, 0.0], [0.0, 1.0]], np.float32))
        r = subprocess.run([sys.executable, SCRIPT, "compare", "a.npy", "b.npy", "--min-cos", "0.5"],
                           capture_output=True, text=True, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)   # item cosines 1 and 1/sqrt(2)
        self.assertIn("item_cosines 1.000000000000 0.707106781187", r.stdout)
        self.assertIn("max_abs_error 1", r.stdout)
        r = subprocess.run([sys.executable, SCRIPT, "compare", "a.npy", "b.npy", "--min-cos", "0.75"],
                           capture_output=True, text=True, cwd=self.tmp)
        self.assertEqual(r.returncode, 1)

    def test_preprocess_run_compare(self):
        with open(self.path("config.json"), "w") as f:
            json.dump({"model_type": "siglip", "vision_config": SMALL}, f)
        r = self.cli("random-weights", "--config", "config.json", "--out", "w.safetensors", "--seed", "7")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.cli("preprocess", "--image", CHELSEA, "--image", CAMERA, "--size", "32", "--out", "px.npy")
        self.assertEqual(r.returncode, 0, r.stderr)
        px = np.load(self.path("px.npy"))
        self.assertEqual(px.shape, (2, 3, 32, 32))
        r = self.cli("run", "--weights", "w.safetensors", "--config", "config.json", "--image", CHELSEA,
                     "--image", CAMERA, "--out", "e64.npy", "--hidden", "h64.npy")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.cli("run", "--weights", "w.safetensors", "--config", "config.json", "--pixels", "px.npy",
                     "--out", "e16.npy", "--dtype", "f16")
        self.assertEqual(r.returncode, 0, r.stderr)

        cfg = ref.parse_config(SMALL)
        w = {k[len("vision_model."):]: v.double() for k, v in ref.random_weights(cfg, seed=7).items()}
        theirs, t_hidden = torch_tower(torch.from_numpy(px).double(), w, cfg)
        self.assertGreater(cosine(np.load(self.path("e64.npy")), theirs), 1 - 1e-12)
        self.assertEqual(np.load(self.path("h64.npy")).shape, (2, 16, 64))

        r = self.cli("compare", "e16.npy", "e64.npy", "--min-cos", "0.9999")
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertRegex(r.stdout, r"item_cosines 0\.9999\d+ 0\.9999\d+")
        r = self.cli("compare", "e16.npy", "e64.npy", "--min-cos", "1.0000001")
        self.assertEqual(r.returncode, 1)
        self.assertIn("FAIL", r.stdout)
        r = self.cli("compare", "e16.npy", "h64.npy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("shape", r.stderr)

        # outputs are never overwritten silently, and user errors are one line
        r = self.cli("run", "--weights", "w.safetensors", "--config", "config.json", "--pixels", "px.npy",
                     "--out", "e64.npy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("e64.npy: already exists", r.stderr)
        with open(self.path("big.json"), "w") as f:
            json.dump(dict(SMALL, num_hidden_layers=3), f)
        r = self.cli("run", "--weights", "w.safetensors", "--config", "big.json", "--pixels", "px.npy",
                     "--out", "e3.npy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing tensor 'vision_model.encoder.layers.2.layer_norm1.weight'", r.stderr)
        self.assertFalse(os.path.exists(self.path("e3.npy")))
        r = self.cli("run", "--weights", "w.safetensors", "--config", "config.json", "--pixels", "h64.npy",
                     "--out", "e4.npy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("h64.npy: pixels have shape [2, 16, 64], the config needs [B, 3, 32, 32]", r.stderr)

    def test_operators(self):
        rng = np.random.default_rng(8)
        arrays = {"x": rng.standard_normal((4, 6, 32)), "w": rng.standard_normal(32), "b": rng.standard_normal(32),
                  "lw": rng.standard_normal((16, 32)), "lb": rng.standard_normal(16),
                  "k": rng.standard_normal((4, 9, 32)), "v": rng.standard_normal((4, 9, 32)),
                  "px": rng.uniform(-1, 1, (2, 3, 30, 30)), "pw": rng.standard_normal((8, 3, 7, 7)),
                  "pb": rng.standard_normal(8)}
        for name, a in arrays.items():
            np.save(self.path(name + ".npy"), a.astype(np.float32))
        t = {n: torch.from_numpy(a.astype(np.float32)).double() for n, a in arrays.items()}
        mha = torch_mha(32, 4, torch.eye(32, dtype=torch.float64).repeat(3, 1),   # q, k, v projections = identity
                        torch.zeros(96, dtype=torch.float64), torch.eye(32, dtype=torch.float64),
                        torch.zeros(32, dtype=torch.float64))
        with torch.no_grad():
            attn = mha(t["x"], t["k"], t["v"], need_weights=False)[0]
        cases = [
            (["layernorm", "--in", "x.npy", "--in", "w.npy", "--in", "b.npy", "--eps", "1e-5"],
             F.layer_norm(t["x"], (32,), t["w"], t["b"], 1e-5)),
            (["gelu", "--in", "x.npy"], F.gelu(t["x"], approximate="tanh")),
            (["softmax", "--in", "x.npy"], torch.softmax(t["x"], -1)),
            (["linear", "--in", "x.npy", "--in", "lw.npy", "--in", "lb.npy"], F.linear(t["x"], t["lw"], t["lb"])),
            (["attention", "--in", "x.npy", "--in", "k.npy", "--in", "v.npy", "--heads", "4"], attn),
            (["patch_embed", "--in", "px.npy", "--in", "pw.npy", "--in", "pb.npy"],
             F.conv2d(t["px"], t["pw"], t["pb"], stride=7).flatten(2).transpose(1, 2)),
        ]
        for i, (args, want) in enumerate(cases):
            out = f"y{i}.npy"
            r = self.cli("op", *args, "--out", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            got = np.load(self.path(out))
            self.assertEqual(got.dtype, np.float32)
            self.assertLess(np.abs(got - want.numpy()).max(), 1e-5, args[0])
        # f16 emulation: the output is stored in f16 and lies within f16 rounding of the truth
        r = self.cli("op", "gelu", "--in", "x.npy", "--out", "g16.npy", "--dtype", "f16")
        self.assertEqual(r.returncode, 0, r.stderr)
        g16 = np.load(self.path("g16.npy"))
        self.assertTrue(np.array_equal(g16, g16.astype(np.float16).astype(np.float32)))
        want = F.gelu(t["x"], approximate="tanh").numpy()
        self.assertLess(np.abs(g16 - want).max(), 2 ** -10 * np.abs(want).max())
        self.assertGreater(np.abs(g16 - want).max(), 1e-5)
        r = self.cli("op", "linear", "--in", "x.npy", "--in", "w.npy", "--out", "bad.npy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("op linear: input shapes [[4, 6, 32], [32]]", r.stderr)


if __name__ == "__main__":
    unittest.main()
