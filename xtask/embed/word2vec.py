"""Trains domain word vectors on the technical corpus and writes them as a table.

Not shipped: the table it writes is for trying domain vectors beside the
shipped general ones on the evaluation (`SEARCH_EVAL_DOMAIN=FILE`, with the
blend committed and reverted after this script: `git log --grep "domain
word vectors"`; BENCHMARKS.md, "Tool search quality", has the numbers).

word2vec (gensim, skip-gram with negative sampling) over `corpus.py`'s
OUT/text.txt (one passage a line, words split and lowercased as the crate
does), then the most frequent words, whole (no `##` continuations: a word
not in the table has no vector), each scaled to length 1, in the table
format `wpe.py` writes (four bits, a scale per row). With one worker and
`PYTHONHASHSEED` fixed a run gives the same table again; the measured
tables used two workers (4 to 5 minutes on the loaded machine, 12 M words,
5 epochs).

Run in a venv with `gensim==4.4.0` (numpy 2.4.6, scipy).

Usage: word2vec.py TEXT OUT [DIMS [WORDS [EPOCHS [WORKERS]]]]
"""

import sys

import numpy as np
from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence

import wpe

MAX_PIECE = 255
# Words either side that count as context: wide, so that words of one topic
# (a tool and what it acts on) meet, not only words of one grammatical role.
WINDOW = 10
# The fewest times a word is seen to have a vector.
MIN_COUNT = 3


def main():
    text, out = sys.argv[1], sys.argv[2]
    dims = int(sys.argv[3]) if len(sys.argv) > 3 else 128
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 60000
    epochs = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    workers = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    model = Word2Vec(
        LineSentence(text),
        vector_size=dims,
        window=WINDOW,
        min_count=MIN_COUNT,
        sg=1,
        negative=5,
        sample=1e-4,
        epochs=epochs,
        seed=1,
        workers=workers,
    )
    model.save(out + ".model")
    kv = model.wv
    words = [w for w in kv.index_to_key if w.isascii() and len(w) <= MAX_PIECE][:top]
    vecs = np.stack([kv[w] for w in words]).astype(np.float32)
    # Unit length: a word's weight in a sum is the caller's (idf, field).
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    wpe.write(out, words, vecs)


if __name__ == "__main__":
    main()
