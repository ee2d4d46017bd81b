#!/usr/bin/python3
"""Evaluates word2vec-format vectors with gensim's own metrics, so every trainer is
scored identically. Prints one JSON line.
Usage: eval_vectors.py VECTORS DATA_DIR"""
import json
import logging
import os
import sys

from gensim.models import KeyedVectors

logging.disable(logging.CRITICAL)
path, data = sys.argv[1], sys.argv[2]
binary = path.endswith(".bin")
kv = KeyedVectors.load_word2vec_format(path, binary=binary)
analogy, _ = kv.evaluate_word_analogies(os.path.join(data, "questions-words.txt"),
                                         restrict_vocab=300000)
ws = kv.evaluate_word_pairs(os.path.join(data, "wordsim353.tsv"))
sl = kv.evaluate_word_pairs(os.path.join(data, "simlex999.txt"))
print(json.dumps({"analogy": analogy, "wordsim353": ws[1][0], "simlex999": sl[1][0],
                  "wordsim_oov": ws[2], "simlex_oov": sl[2]}))
