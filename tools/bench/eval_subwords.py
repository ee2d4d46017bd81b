#!/usr/bin/python3
"""Scores subword vectors: analogy (semantic and syntactic sections apart), WordSim-353
and SimLex-999 with gensim's own metrics on the vocabulary's vectors (as eval_vectors.py),
and, given the vectors a model builds for words outside its vocabulary, the Spearman
correlation on the pairs that have such a word and on all pairs. Prints one JSON line.
Usage: eval_subwords.py VOCAB.vec DATA_DIR [OOV.vec]
VOCAB.vec: word2vec text of the vocabulary (most frequent first); OOV.vec: vectors of the
evaluation words that are not in it (from `posvec vector` / `fasttext print-word-vectors`)."""
import json
import logging
import os
import sys

import numpy as np
from gensim.models import KeyedVectors
from scipy.stats import spearmanr
from bench_common import read_pairs

logging.disable(logging.CRITICAL)


def main():
    vec, data = sys.argv[1], sys.argv[2]
    oov_path = sys.argv[3] if len(sys.argv) > 3 else None
    kv = KeyedVectors.load_word2vec_format(vec, binary=vec.endswith(".bin"))
    total, sections = kv.evaluate_word_analogies(os.path.join(data, "questions-words.txt"),
                                                 restrict_vocab=300000)
    halves = {"semantic": [0, 0], "syntactic": [0, 0]}
    for s in sections:
        if s["section"] == "Total accuracy":
            continue
        h = halves["syntactic" if s["section"].startswith("gram") else "semantic"]
        h[0] += len(s["correct"])
        h[1] += len(s["correct"]) + len(s["incorrect"])
    out = {"analogy": total,
           "analogy_semantic": halves["semantic"][0] / max(1, halves["semantic"][1]),
           "analogy_syntactic": halves["syntactic"][0] / max(1, halves["syntactic"][1]),
           "analogy_questions": halves["semantic"][1] + halves["syntactic"][1]}
    known = set(kv.index_to_key)
    extra = KeyedVectors.load_word2vec_format(oov_path) if oov_path else None
    for name, file in (("wordsim353", "wordsim353.tsv"), ("simlex999", "simlex999.txt")):
        path = os.path.join(data, file)
        out[name] = kv.evaluate_word_pairs(path)[1][0]
        pairs = read_pairs(path)
        oov = [p for p in pairs if p[0] not in known or p[1] not in known]
        out[name + "_pairs"] = len(pairs)
        out[name + "_oov_pairs"] = len(oov)
        if extra is None:
            continue

        def vector(w):
            return kv[w] if w in known else extra[w]

        def rho(ps):
            cos = []
            for a, b, _ in ps:
                u, v = vector(a), vector(b)
                n = np.linalg.norm(u) * np.linalg.norm(v)
                cos.append(float(u @ v / n) if n > 0 else 0.0)
            return float(spearmanr([p[2] for p in ps], cos).correlation)

        out[name + "_oov"] = rho(oov)
        out[name + "_all"] = rho(pairs)
    print(json.dumps(out))


main()
