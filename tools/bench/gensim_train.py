#!/usr/bin/python3
"""Trains gensim Word2Vec (skip-gram, negative sampling) on a pre-tokenized corpus
and writes word2vec text vectors (binary when OUT ends in .bin); prints one JSON line with words/s and seconds.
Usage: gensim_train.py CORPUS OUT DIM EPOCHS THREADS SEED [file|stream]
  file    corpus_file= (the default; gensim's fastest mode): each worker reads its own
          part of the file and decays the learning rate by its own words against the
          whole corpus's, so with W workers an epoch ends at 1/W of its decay (with 2
          workers, 5 epochs end at 0.0026 instead of 0.0001)
  stream  sentences=LineSentence(CORPUS): one reader hands batches to the workers in file
          order and the rate decays over all words, as configured"""
import json
import sys
import time

from gensim.models import Word2Vec
from gensim.models.word2vec import LineSentence

corpus, out, dim, epochs, threads, seed = sys.argv[1:7]
mode = sys.argv[7] if len(sys.argv) > 7 else "file"
if mode not in ("file", "stream"):
    sys.exit("gensim_train.py: mode must be file or stream (got %r)" % mode)
source = {"corpus_file": corpus} if mode == "file" else {"sentences": LineSentence(corpus)}
t0 = time.monotonic()
model = Word2Vec(**source, vector_size=int(dim), window=5, negative=5, hs=0, sg=1,
                 sample=1e-4, min_count=5, workers=int(threads), epochs=int(epochs),
                 seed=int(seed), alpha=0.025, min_alpha=0.0001)
seconds = time.monotonic() - t0
words = model.corpus_total_words * int(epochs)
model.wv.save_word2vec_format(out, binary=out.endswith(".bin"))
print(json.dumps({"trainer": "gensim", "seconds": seconds, "words_per_second": words / seconds}))
