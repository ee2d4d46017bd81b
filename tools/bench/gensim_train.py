#!/usr/bin/python3
"""Trains gensim Word2Vec (skip-gram, negative sampling) on a pre-tokenized corpus
and writes word2vec text vectors (binary when OUT ends in .bin); prints one JSON line with words/s and seconds.
Usage: gensim_train.py CORPUS OUT DIM EPOCHS THREADS SEED"""
import json
import sys
import time

from gensim.models import Word2Vec

corpus, out, dim, epochs, threads, seed = sys.argv[1:7]
t0 = time.monotonic()
model = Word2Vec(corpus_file=corpus, vector_size=int(dim), window=5, negative=5, hs=0, sg=1,
                 sample=1e-4, min_count=5, workers=int(threads), epochs=int(epochs),
                 seed=int(seed), alpha=0.025, min_alpha=0.0001)
seconds = time.monotonic() - t0
words = model.corpus_total_words * int(epochs)
model.wv.save_word2vec_format(out, binary=out.endswith(".bin"))
print(json.dumps({"trainer": "gensim", "seconds": seconds, "words_per_second": words / seconds}))
