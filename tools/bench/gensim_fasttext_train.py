#!/usr/bin/python3
"""Trains gensim's FastText (skip-gram, negative sampling, character n-grams) on a
pre-tokenized corpus and saves it as fastText's .bin (save_facebook_model), so the
whole process is the same job as `fasttext skipgram`: read the corpus, build the
vocabulary, train, write a model that gives any word a vector.
Usage: gensim_fasttext_train.py CORPUS OUT.bin DIM EPOCHS THREADS SEED ALPHA [file|stream]
  file    corpus_file= (gensim's fastest mode; each worker decays the learning rate
          against its own part of the file, see gensim_train.py)
  stream  sentences=LineSentence(CORPUS)
Settings not given here are the benchmark's fixed ones: window 5, negative 5,
sample 1e-4, min-count 5, minn 3, maxn 6, bucket 2,000,000. Prints one JSON line
with the seconds of the training call and of the save."""
import json
import sys
import time

from gensim.models import FastText
from gensim.models.fasttext import save_facebook_model
from gensim.models.word2vec import LineSentence

corpus, out, dim, epochs, threads, seed, alpha = sys.argv[1:8]
mode = sys.argv[8] if len(sys.argv) > 8 else "file"
if mode not in ("file", "stream"):
    sys.exit("gensim_fasttext_train.py: mode must be file or stream (got %r)" % mode)
source = {"corpus_file": corpus} if mode == "file" else {"sentences": LineSentence(corpus)}
t0 = time.monotonic()
model = FastText(**source, vector_size=int(dim), window=5, negative=5, hs=0, sg=1,
                 sample=1e-4, min_count=5, min_n=3, max_n=6, bucket=2000000,
                 workers=int(threads), epochs=int(epochs), seed=int(seed),
                 alpha=float(alpha), min_alpha=0.0001)
trained = time.monotonic()
if out != "-":
    save_facebook_model(model, out)
saved = time.monotonic()
print(json.dumps({"trainer": "gensim-fasttext", "train_seconds": trained - t0,
                  "save_seconds": saved - trained, "vocabulary": len(model.wv)}))
