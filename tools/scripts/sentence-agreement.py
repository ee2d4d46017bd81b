#!/usr/bin/python3
"""Sentence boundaries of posvec's tokenizer against Brown's own sentences and NLTK's
Punkt splitter, on Brown rebuilt as prose.

  /usr/bin/python3 tools/scripts/sentence-agreement.py [--posvec build/posvec]
                   [--brown tools/bench/data/brown-raw.txt] [--splitter CMD]

Brown's tagged sentences (tools/scripts/fetch-brown.sh) are detokenized ("Mr. Smith
said ." -> "Mr. Smith said.") and the first 40,000 joined into paragraphs of 20; the
rest trains NLTK's Punkt (its pretrained punkt data needs a download, so Punkt learns
its abbreviations from Brown here). Boundaries are compared as offsets in letters and
digits, so token conventions (quotes, clitics) do not matter. --splitter CMD runs
`CMD FILE` instead of posvec, one sentence a line on stdout (another splitter, or an
older posvec). Needs NLTK (Debian: python3-nltk).
"""
import argparse
import os
import re
import subprocess
import tempfile

from nltk.tokenize.punkt import PunktSentenceTokenizer, PunktTrainer

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def detok(line):
    s = " " + line + " "
    s = s.replace(" `` ", ' "').replace(" '' ", '" ')
    s = re.sub(r" ([.,;:?!)])", r"\1", s)
    s = re.sub(r"\( ", "(", s)
    s = re.sub(r" ('s|n't|'re|'ve|'ll|'d|'m)\b", r"\1", s)
    return s.strip()


def letters(s):
    return len(re.sub(r"[^A-Za-z0-9]", "", s))


def boundaries(lengths):
    out, pos = set(), 0
    for n in lengths[:-1]:
        pos += n
        out.add(pos)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--posvec", default=os.path.join(ROOT, "build", "posvec"))
    ap.add_argument("--brown", default=os.path.join(ROOT, "tools", "bench", "data", "brown-raw.txt"))
    ap.add_argument("--splitter")
    args = ap.parse_args()
    with open(args.brown, encoding="utf-8") as f:
        sents = [detok(line) for line in f.read().split("\n") if line.strip()]
    paras = [sents[i:i + 20] for i in range(0, 40000, 20)]
    trainer = PunktTrainer()
    trainer.INCLUDE_ALL_COLLOCS = True
    trainer.train(" ".join(sents[40000:]), finalize=True)
    punkt = PunktSentenceTokenizer(trainer.get_params())
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n\n".join(" ".join(p) for p in paras) + "\n")
        prose = f.name
    cmd = args.splitter.split() + [prose] if args.splitter else \
        [args.posvec, "-q", "tokenize", prose, "--keep-case"]
    lines = [line for line in subprocess.run(cmd, capture_output=True, text=True, check=True)
             .stdout.split("\n") if line.strip()]
    os.unlink(prose)
    lengths = [letters(line) for line in lines]
    stats = {k: [0, 0, 0] for k in ("posvec vs Brown", "Punkt vs Brown", "posvec vs Punkt")}

    def count(a, b, key):
        s = stats[key]
        s[0] += len(a & b)
        s[1] += len(a - b)
        s[2] += len(b - a)

    k = 0
    for p in paras:
        gold = boundaries([letters(s) for s in p])
        nltk = boundaries([letters(s) for s in punkt.tokenize(" ".join(p))])
        total, acc, mine = sum(letters(s) for s in p), 0, []
        while acc < total and k < len(lengths):
            acc += lengths[k]
            mine.append(lengths[k])
            k += 1
        ours = boundaries(mine)
        count(ours, gold, "posvec vs Brown")
        count(nltk, gold, "Punkt vs Brown")
        count(ours, nltk, "posvec vs Punkt")
    for key, (both, first, second) in stats.items():
        p, r = both / max(1, both + first), both / max(1, both + second)
        print(f"{key}: precision {p:.4f} recall {r:.4f} F1 {2 * p * r / max(1e-9, p + r):.4f} "
              f"({both} common, {first} only the first's, {second} only the second's)")


if __name__ == "__main__":
    main()
