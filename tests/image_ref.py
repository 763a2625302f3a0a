"""image_ref.py DIR - test inputs and PIL's answers for tests/test_image.c.

Run by the test with Debian's /usr/bin/python3 (PIL 9.4, numpy). From the
photographs Debian's python3-skimage ships, it writes into DIR:
  - PNG variants (gray 1/2/4/8/16-bit, gray+alpha, RGBA, palettes of
    1/2/4/8 bits, 16-bit colour, Adam7-interlaced, an index past the
    palette, tRNS colour keys) and JPEGs (4:2:0, 4:2:2, 4:4:4, progressive, gray), each with
    PIL's decoding, Image.open(f).convert("RGB"), as a uint8 .npy;
  - PIL's Image.resize of decoded images (bicubic and bilinear, down and
    up, non-square, clipping-heavy noise) as uint8 .npy;
  - the transformers SiglipImageProcessor arithmetic (resize, rescale in
    float64 then float32, (x - mean) / std in float32, channels first)
    for a batch, as float32 .npy;
  - malformed files (truncated, corrupt, wrong signature, too large).
and a manifest, DIR/manifest.txt, one case per line:
  decode FILE REF
  resize SRC W H FILTER REF         (FILTER is PIL's number: 2, 3)
  preprocess SIZE FILTER M0 M1 M2 S0 S1 S2 REF FILE...
  bad FILE
Nothing is written outside DIR.
"""
import os
import struct
import sys
import zlib

import numpy as np
from PIL import Image

SK = "/usr/lib/python3/dist-packages/skimage/data"
out = sys.argv[1]
manifest = []
rng = np.random.default_rng(7)


def path(name):
    return os.path.join(out, name)


def chunk(kind, data):
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def pack_rows(a, depth):
    """Filter-0 scanlines of a (h, w, c) array of samples."""
    h, w, c = a.shape
    if depth == 16:
        rows = a.astype(">u2").reshape(h, w * c).view(np.uint8)
    elif depth == 8:
        rows = a.astype(np.uint8).reshape(h, w * c)
    else:  # one sample per pixel, packed from the high bit
        per = 8 // depth
        v = np.pad(a[:, :, 0].astype(np.int64), ((0, 0), (0, (-w) % per)))
        v = v.reshape(h, -1, per)
        shifts = np.array([8 - depth * (i + 1) for i in range(per)])
        rows = (v << shifts).sum(axis=2).astype(np.uint8)
    return b"".join(b"\x00" + bytes(r) for r in rows)


ADAM7 = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4),
         (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]


def png_file(a, depth, ctype, interlace=False, plte=None, dims=None):
    """A PNG of samples a (h, w[, c]) written here, not by PIL, for the
    layouts PIL cannot write (2/4/16-bit, interlaced, short palettes)."""
    if a.ndim == 2:
        a = a[:, :, None]
    h, w = a.shape[:2]
    if interlace:
        raw = b"".join(pack_rows(a[y0::dy, x0::dx], depth)
                       for x0, y0, dx, dy in ADAM7
                       if a[y0::dy, x0::dx].size)
    else:
        raw = pack_rows(a, depth)
    w, h = dims or (w, h)
    data = b"\x89PNG\r\n\x1a\n" + chunk(
        b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype, 0, 0,
                             int(interlace)))
    if plte is not None:
        data += chunk(b"PLTE", bytes(plte))
    return data + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)


def decoded(name):
    return np.array(Image.open(path(name)).convert("RGB"))


def add_decode(name):
    ref = name + ".rgb.npy"
    np.save(path(ref), decoded(name))
    manifest.append(f"decode {name} {ref}")


cat = Image.open(os.path.join(SK, "chelsea.png")).convert("RGB")
rgb = np.array(cat)                       # 300 x 451 x 3
gray = np.array(cat.convert("L"))

# ---- PNG variants PIL writes itself
cat.save(path("rgb8.png"))
cat.convert("L").save(path("gray8.png"))
cat.convert("1").save(path("gray1.png"))
cat.convert("LA").save(path("la8.png"))
rgba = cat.convert("RGBA")
rgba.putalpha(Image.fromarray(
    np.tile(np.linspace(0, 255, 451).astype(np.uint8), (300, 1))))
rgba.save(path("rgba8.png"))
# a tRNS colour key: ignored by convert("RGB")
cat.save(path("rgb8_trns.png"), transparency=(0, 0, 0))
cat.convert("L").save(path("gray8_trns.png"), transparency=0)
for colors in (256, 16, 4, 2):              # 8-, 4-, 2- and 1-bit palettes
    cat.quantize(colors).save(path(f"p{colors}.png"))

# ---- PNG variants written here
write("gray2.png", png_file(gray >> 6, 2, 0))
write("gray4.png", png_file(gray >> 4, 4, 0))
# 0..510: PIL clips 16-bit gray at 255 rather than taking the high byte
write("gray16.png", png_file(gray.astype(np.uint16) * 2, 16, 0))
write("gray16_full.png", png_file(gray.astype(np.uint16) * 257, 16, 0))
low = rng.integers(0, 256, rgb.shape)       # low bytes PIL must ignore
write("rgb16.png", png_file(rgb.astype(np.uint16) * 256 + low, 16, 2))
alpha16 = rng.integers(0, 65536, gray.shape)
write("la16.png", png_file(
    np.dstack([gray.astype(np.uint16) * 256 + low[:, :, 0], alpha16]),
    16, 4))
write("rgba16.png", png_file(
    np.dstack([rgb.astype(np.uint16) * 257, alpha16]), 16, 6))
write("rgb8_interlaced.png", png_file(rgb, 8, 2, interlace=True))
write("gray16_interlaced.png",
      png_file(gray.astype(np.uint16) * 3, 16, 0, interlace=True))
pal = rng.integers(0, 256, 16 * 3)
write("p4_interlaced.png",
      png_file(gray >> 4, 4, 3, interlace=True, plte=pal))
# smaller than an Adam7 block: some passes are empty
write("tiny_interlaced.png", png_file(rgb[:2, :3], 8, 2, interlace=True))
# indices 0..255 against a 5-entry palette: PIL shows (i, i, i) past it
write("p8_short_palette.png",
      png_file(gray[:40, :60], 8, 3, plte=[9, 80, 200] * 5))

# ---- JPEGs
cat.save(path("q90.jpg"), quality=90)                    # 4:2:0
cat.save(path("q95_444.jpg"), quality=95, subsampling=0)
cat.save(path("q85_422.jpg"), quality=85, subsampling=1)
cat.save(path("progressive.jpg"), quality=80, progressive=True)
cat.convert("L").save(path("gray.jpg"), quality=90)
cat.crop((0, 0, 101, 67)).save(path("odd.jpg"), quality=75)
write("jpeg_named.png", open(path("q90.jpg"), "rb").read())
# flipped bits in the entropy-coded data: libjpeg warns ("Corrupt JPEG
# data") and goes on, and so does PIL
corrupt = bytearray(open(path("q90.jpg"), "rb").read())
for k in range(len(corrupt) // 2, len(corrupt) // 2 + 40, 7):
    if 0xFF not in (corrupt[k - 1], corrupt[k], corrupt[k] ^ 0x55):
        corrupt[k] ^= 0x55
write("corrupt_entropy.jpg", bytes(corrupt))

for name in ["rgb8.png", "rgb8_trns.png", "gray8_trns.png", "gray8.png", "gray1.png", "la8.png", "rgba8.png",
             "p256.png", "p16.png", "p4.png", "p2.png", "gray2.png",
             "gray4.png", "gray16.png", "gray16_full.png", "rgb16.png",
             "la16.png", "rgba16.png", "rgb8_interlaced.png",
             "gray16_interlaced.png", "p4_interlaced.png",
             "tiny_interlaced.png", "p8_short_palette.png", "q90.jpg",
             "q95_444.jpg", "q85_422.jpg", "progressive.jpg", "gray.jpg",
             "odd.jpg", "jpeg_named.png", "corrupt_entropy.jpg"]:
    add_decode(name)
# real files as shipped
for name in ["hubble_deep_field.jpg", "astronaut.png", "camera.png",
             "palette_color.png", "foo3x5x4indexed.png"]:
    ref = name + ".rgb.npy"
    np.save(path(ref),
            np.array(Image.open(os.path.join(SK, name)).convert("RGB")))
    manifest.append(f"decode {os.path.join(SK, name)} {ref}")

# ---- resize
noise = rng.choice(np.array([0, 255, 3, 250], dtype=np.uint8), (23, 37, 3))
Image.fromarray(noise).save(path("noise.png"))
Image.fromarray(rgb[100:130, 200:240]).save(path("crop.png"))   # 40 x 30
Image.fromarray(rgb[150:151, 225:226]).save(path("pixel.png"))  # 1 x 1
resizes = [
    ("rgb8.png", 224, 224, 3), ("rgb8.png", 384, 384, 3),
    ("rgb8.png", 224, 224, 2), ("rgb8.png", 100, 333, 3),
    ("rgb8.png", 451, 150, 3), ("rgb8.png", 200, 300, 3),
    ("rgb8.png", 7, 5, 3), ("q90.jpg", 384, 384, 3),
    (os.path.join(SK, "hubble_deep_field.jpg"), 384, 384, 3),
    ("crop.png", 224, 224, 3), ("crop.png", 224, 224, 2),
    ("crop.png", 41, 97, 3), ("noise.png", 224, 224, 3),
    ("noise.png", 5, 3, 3), ("noise.png", 60, 11, 2),
    ("pixel.png", 7, 7, 3),
]
# random shapes both ways, smooth content plus noise
for i in range(24):
    sw, sh = (int(x) for x in rng.integers(1, 300, 2))
    yy, xx = np.mgrid[0:sh, 0:sw]
    a = (128 + 100 * np.sin(xx / 7.0)[:, :, None] * np.cos(yy / 5.0)[:, :, None]
         + rng.normal(0, 30, (sh, sw, 3)))
    Image.fromarray(np.clip(a, 0, 255).astype(np.uint8)).save(
        path(f"random{i}.png"))
    w, h = (int(x) for x in rng.integers(1, 400, 2))
    resizes.append((f"random{i}.png", w, h, int(rng.choice([2, 3]))))
for i, (src, w, h, f) in enumerate(resizes):
    ref = f"resize{i}.npy"
    im = Image.open(path(src)).convert("RGB")
    np.save(path(ref), np.array(im.resize((w, h), f)))
    manifest.append(f"resize {src} {w} {h} {f} {ref}")


# ---- the processor's arithmetic
def processor(files, size, f, mean, std):
    batch = []
    for name in files:
        a = np.array(Image.open(path(name)).convert("RGB")
                     .resize((size, size), f))
        a = (a.astype(np.float64) * (1 / 255)).astype(np.float32)
        a = (a - np.array(mean, np.float32)) / np.array(std, np.float32)
        batch.append(a.transpose(2, 0, 1))
    return np.stack(batch)


cases = [
    (["rgb8.png", "q90.jpg", "gray8.png"], 224, 3, [.5] * 3, [.5] * 3),
    (["rgba8.png"], 384, 3, [.5] * 3, [.5] * 3),
    # CLIP's statistics and SigLIP 2's bilinear: nothing is hard-wired
    (["crop.png", "p16.png"], 64, 2, [0.48145466, 0.4578275, 0.40821073],
     [0.26862954, 0.26130258, 0.27577711]),
]
for i, (files, size, f, mean, std) in enumerate(cases):
    ref = f"pixels{i}.npy"
    np.save(path(ref), processor(files, size, f, mean, std))
    nums = " ".join(repr(float(np.float32(x))) for x in mean + std)
    manifest.append(f"preprocess {size} {f} {nums} {ref} "
                    + " ".join(files))

# ---- malformed files
png = open(path("rgb8.png"), "rb").read()
jpg = open(path("q90.jpg"), "rb").read()
write("trunc.png", png[:len(png) // 2])
write("trunc_header.png", png[:20])
write("trunc.jpg", jpg[:len(jpg) // 2])
write("garbage.png", bytes(rng.integers(1, 128, 1000).astype(np.uint8)))
write("empty.png", b"")
write("badsig.png", png[:1] + b"Q" + png[2:])
write("crc.png", png[:16] + bytes([png[16] ^ 1]) + png[17:])
write("huge.png", png_file(rgb[:1, :1], 8, 2, dims=(100000, 100000)))
write("zero.png", png_file(rgb[:1, :1], 8, 2, dims=(0, 1)))
write("badzlib.png", b"\x89PNG\r\n\x1a\n"
      + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0))
      + chunk(b"IDAT", bytes(rng.integers(0, 256, 64).astype(np.uint8)))
      + chunk(b"IEND", b""))
sof = jpg.index(b"\xff\xc0")                 # baseline frame header
write("huge.jpg", jpg[:sof + 5] + struct.pack(">HH", 60000, 60000)
      + jpg[sof + 9:])
Image.new("CMYK", (16, 16), (10, 20, 30, 40)).save(path("cmyk.jpg"))
write("tiny.gif", open(os.path.join(SK, "no_time_for_that_tiny.gif"),
                       "rb").read())
for name in ["tiny.gif", "trunc.png", "trunc_header.png", "trunc.jpg", "garbage.png",
             "empty.png", "badsig.png", "crc.png", "huge.png", "zero.png",
             "badzlib.png", "huge.jpg", "cmyk.jpg"]:
    manifest.append(f"bad {name}")

with open(path("manifest.txt"), "w") as f:
    f.write("\n".join(manifest) + "\n")
