"""Converts WordLlama's static token embeddings into tool search's table format.

Not shipped: the table it writes is for comparing word vectors on the
evaluation (`SEARCH_EVAL_VECTORS=FILE cargo xtask search-eval`); on it,
WordLlama did not beat the shipped all-MiniLM-L6-v2 table (BENCHMARKS.md,
"Tool search quality"). Run it in a venv with `numpy==2.4.6`,
`safetensors==0.8.0` and `wordllama==0.4.0.post1` installed `--no-deps`
(only the wheel's weights and tokenizer file are read, offline).

WordLlama (l2_supercat, 256 dimensions) is a table of static token vectors
for LLaMA 2's 32,000 SentencePiece tokens, trained so that the mean of a
sentence's token vectors embeds it (paraphrase and entailment pairs,
contrastive loss), Matryoshka-style: the first 64 or 128 dimensions stand
alone. No model runs; this only reshapes the table.

- Tokens: a word-start token `▁word` becomes the piece `word`, a
  continuation `ing` becomes `##ing` (the crate splits a word greedily,
  longest piece first, as it does BERT's wordpieces: an approximation of
  SentencePiece's merges). Kept: ASCII letters and digits only.
- Case: queries and terms are lowercase; a piece whose lowercase form the
  vocabulary has as a token of its own keeps that token's vector, and one
  known only capitalized (`▁Kubernetes`) gets the vector of its first
  (most frequent) spelling.
- Dimensions: the first DIMS (Matryoshka truncation), each row quantized to
  four bits (-7 to 7) with a scale of its own, so a token's length (which the
  training made its weight in a mean) is kept.

Output: the table format `wpe.py` writes, as `distill.py`'s.

Usage: from_wordllama.py OUT DIMS
"""

import json
import os
import sys

import importlib.util

import numpy as np
from safetensors.numpy import load_file

import wpe

# The package's folder, found without importing it (its `__init__` needs
# dependencies that only its own inference uses).
ROOT = os.path.dirname(importlib.util.find_spec("wordllama").origin)
WEIGHTS = os.path.join(ROOT, "weights", "l2_supercat_256.safetensors")
TOKENIZER = os.path.join(ROOT, "tokenizers", "l2_supercat_tokenizer_config.json")


def table():
    """(piece, vector) for every kept piece, in token order."""
    emb = load_file(WEIGHTS)["embedding.weight"].astype(np.float32)
    vocab = json.load(open(TOKENIZER, encoding="utf-8"))["model"]["vocab"]
    by_piece = {}
    for token, i in sorted(vocab.items(), key=lambda kv: kv[1]):
        start = token.startswith("\u2581")
        body = token[1:] if start else token
        if not (body.isascii() and body.isalnum()):
            continue
        piece = body.lower() if start else "##" + body.lower()
        exact = body == body.lower()
        have = by_piece.get(piece)
        # The lowercase token itself wins; else the first spelling met.
        if have is None or (exact and not have[1]):
            by_piece[piece] = (i, exact)
    rows = sorted((i, piece) for piece, (i, _) in by_piece.items())
    return [p for _, p in rows], emb[[i for i, _ in rows]]


def main():
    out, dims = sys.argv[1], int(sys.argv[2])
    if dims % 2 or not 0 < dims <= 256:
        sys.exit("DIMS must be even, at most 256")
    pieces, vecs = table()
    vecs = vecs[:, :dims]
    wpe.write(out, pieces, vecs)


if __name__ == "__main__":
    main()
