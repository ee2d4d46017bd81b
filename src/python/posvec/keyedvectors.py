"""KeyedVectors: word vectors with gensim 4's names, over posvec's C++ matrix."""

from __future__ import annotations

import logging
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _posvec
from ._stats import PearsonRResult, SpearmanrResult, correlation_pvalue

logger = logging.getLogger(__name__)

Key = str
Item = Union[str, np.ndarray, Tuple[Union[str, np.ndarray], float]]

_FORMATS = {".bin": "bin", ".txt": "text", ".vec": "text", ".npy": "npy"}


def _as_list(value: Any) -> list:
    if value is None:
        return []
    if isinstance(value, (str, np.ndarray)):
        return [value]
    return list(value)


def _unitvec(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v)
    return v / norm if norm > 0 else v


class KeyedVectors:
    """Words and their vectors, shaped like gensim.models.KeyedVectors.

    ``vectors`` is a read-only float32 view of the C++ matrix (no copy). Build one
    with :meth:`load_word2vec_format` or :meth:`load`, from arrays with
    ``KeyedVectors(vector_size)`` + :meth:`add_vectors`, or take ``Word2Vec(...).wv``.
    """

    def __init__(self, vector_size: int = 0, count: int = 0, dtype: Any = np.float32) -> None:
        if count:
            raise ValueError("posvec.KeyedVectors starts empty; add words with add_vectors")
        if np.dtype(dtype) != np.float32:
            raise ValueError("posvec.KeyedVectors holds float32 vectors only")
        self._set(None, int(vector_size))

    # ---- construction -------------------------------------------------------

    @classmethod
    def _wrap(cls, embeddings: "_posvec.Embeddings") -> "KeyedVectors":
        kv = cls.__new__(cls)
        kv._set(embeddings, embeddings.dim)
        return kv

    def _set(self, embeddings: Optional["_posvec.Embeddings"], vector_size: int) -> None:
        self._e = embeddings
        self._vector_size = vector_size
        self._index_to_key: Optional[List[str]] = None
        self._key_to_index: Optional[Dict[str, int]] = None
        self._norms: Optional[np.ndarray] = None
        self._folded: Optional[Dict[str, str]] = None
        if embeddings is None:
            self._vectors = np.zeros((0, vector_size), dtype=np.float32)
            self._vectors.setflags(write=False)
        else:
            self._vectors = embeddings.vectors

    @classmethod
    def load_word2vec_format(
        cls,
        fname: Union[str, os.PathLike],
        fvocab: None = None,
        binary: Optional[bool] = None,
        encoding: str = "utf8",
        unicode_errors: str = "strict",
        limit: Optional[int] = None,
        datatype: Any = np.float32,
        no_header: bool = False,
    ) -> "KeyedVectors":
        """Reads a word2vec binary or text file (the format is detected from the
        content; ``binary``, when given, must agree with it).

        ``unicode_errors`` ("strict", "replace" or "ignore") says what happens to
        words that are not valid UTF-8, as in gensim (Python's ``bytes.decode``);
        ``limit`` reads only the first N vectors; ``no_header=True`` reads text
        without the "V D" line (GloVe)."""
        if fvocab is not None:
            raise ValueError("posvec reads word2vec files without a separate vocabulary (fvocab)")
        if encoding.lower().replace("-", "") != "utf8":
            raise ValueError("posvec reads UTF-8 words only (encoding='utf8')")
        if unicode_errors not in ("strict", "replace", "ignore"):
            raise ValueError(f"unicode_errors must be 'strict', 'replace' or 'ignore', not {unicode_errors!r}")
        if np.dtype(datatype) != np.float32:
            raise ValueError("posvec holds float32 vectors only (datatype=numpy.float32)")
        if no_header and binary:
            raise ValueError("no_header=True reads word2vec text files only (binary=True was given)")
        if limit is not None and (isinstance(limit, bool) or int(limit) != limit or limit < 0):
            raise ValueError(f"limit must be a non-negative integer, not {limit!r}")
        path = os.fspath(fname)
        e, found = _posvec.Embeddings.load_detected(path, unicode_errors, int(limit or 0), bool(no_header))
        if binary is not None:
            if found not in ("bin", "text"):
                raise ValueError(f"'{path}' is a {found} file, not word2vec; use KeyedVectors.load")
            if (found == "bin") != bool(binary):
                raise ValueError(
                    f"'{path}' is a word2vec {'binary' if found == 'bin' else 'text'} file "
                    f"but binary={binary} was given (leave binary=None to detect it)"
                )
        return cls._wrap(e)

    @classmethod
    def load(cls, fname: Union[str, os.PathLike]) -> "KeyedVectors":
        """Any format posvec reads: .npy (+ .vocab), a posvec model (its input
        vectors), word2vec binary or text. Not gensim's pickles."""
        return cls._wrap(_posvec.Embeddings.load(os.fspath(fname)))

    def save_word2vec_format(
        self, fname: Union[str, os.PathLike], fvocab: None = None, binary: bool = True
    ) -> None:
        """Writes word2vec binary (default) or text, atomically."""
        if fvocab is not None:
            raise ValueError("posvec does not write a separate vocabulary file (fvocab)")
        self._require_words().save(os.fspath(fname), "bin" if binary else "text")

    def save(self, fname: Union[str, os.PathLike]) -> None:
        """Format from the extension: .bin, .txt/.vec (word2vec) or .npy (+ .vocab)."""
        path = os.fspath(fname)
        fmt = _FORMATS.get(os.path.splitext(path)[1].lower())
        if fmt is None:
            raise ValueError(f"cannot tell the format of '{path}': use .bin, .txt, .vec or .npy")
        self._require_words().save(path, fmt)

    def add_vectors(
        self, keys: Sequence[str], weights: Any, extras: None = None, replace: bool = False
    ) -> None:
        """Appends words with their vectors (the matrix is rebuilt: a new array)."""
        if extras is not None or replace:
            raise ValueError("posvec's add_vectors takes new keys and weights only")
        keys = list(keys)
        weights = np.asarray(weights, dtype=np.float32).reshape(len(keys), -1)
        finite = np.isfinite(weights).all(axis=1)
        if not finite.all():
            # Refused here, not when the vectors are saved much later.
            row = int(np.argmin(finite))
            raise ValueError(f"the vector of {keys[row]!r} (row {row}) holds NaN or infinity; "
                             "every vector must be finite")
        if self._e is not None:
            keys = list(self._e.words) + keys
            weights = np.vstack([self.vectors, weights])
            counts = list(self._e.counts)
        else:
            counts = []
        if counts:
            counts += [1] * (len(keys) - len(counts))
        self._set(_posvec.Embeddings(keys, weights, counts), weights.shape[1])

    # ---- the vocabulary ---------------------------------------------------------

    @property
    def vectors(self) -> np.ndarray:
        """(len(self), vector_size) float32, read-only, sharing the C++ memory."""
        return self._vectors

    @property
    def vector_size(self) -> int:
        return self._vector_size

    @property
    def index_to_key(self) -> List[str]:
        if self._index_to_key is None:
            self._index_to_key = list(self._e.words) if self._e is not None else []
        return self._index_to_key

    @property
    def key_to_index(self) -> Dict[str, int]:
        if self._key_to_index is None:
            self._key_to_index = {w: i for i, w in enumerate(self.index_to_key)}
        return self._key_to_index

    @property
    def norms(self) -> np.ndarray:
        if self._norms is None:
            self._norms = np.linalg.norm(self.vectors, axis=1)
        return self._norms

    def fill_norms(self, force: bool = False) -> None:
        if force or self._norms is None:
            self._norms = None
            _ = self.norms

    def __len__(self) -> int:
        return len(self._e) if self._e is not None else 0

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._e is not None and self._e.find(key) is not None

    def has_index_for(self, key: object) -> bool:
        return key in self

    def get_index(self, key: str, default: Optional[int] = None) -> int:
        found = self._e.find(key) if self._e is not None and isinstance(key, str) else None
        if found is not None:
            return found
        if default is not None:
            return default
        raise self._missing(key)

    def get_vecattr(self, key: str, attr: str) -> Any:
        if attr != "count":
            raise KeyError(f"posvec stores one attribute per word: 'count', not '{attr}'")
        counts = self._require_words().counts
        return counts[self.get_index(key)] if counts else None

    def _missing(self, key: object) -> KeyError:
        msg = f"Key '{key}' not present in vocabulary ({len(self)} words)"
        if isinstance(key, str):
            if self._folded is None:
                folded: Dict[str, str] = {}
                for w in self.index_to_key:
                    folded.setdefault(_posvec.upper_case(w), w)
                self._folded = folded
            hint = self._folded.get(_posvec.upper_case(key))
            if hint is not None:
                msg += f"; did you mean '{hint}'?"
        return KeyError(msg)

    def _require_words(self) -> "_posvec.Embeddings":
        if self._e is None:
            raise ValueError("these KeyedVectors hold no words yet")
        return self._e

    def get_vector(self, key: str, norm: bool = False) -> np.ndarray:
        """The vector of ``key`` (a read-only view; a unit-length copy with norm=True)."""
        v = self.vectors[self.get_index(key)]
        return _unitvec(v.astype(np.float32)) if norm else v

    word_vec = get_vector

    def __getitem__(self, key: Union[str, Iterable[str]]) -> np.ndarray:
        if isinstance(key, str):
            return self.get_vector(key)
        return np.vstack([self.get_vector(k) for k in key])

    def get_normed_vectors(self) -> np.ndarray:
        norms = self.norms[:, np.newaxis]
        return self.vectors / np.where(norms > 0, norms, 1)

    # ---- queries ------------------------------------------------------------------

    def _weighted_mean(self, positive: Any, negative: Any) -> Tuple[np.ndarray, set]:
        items = [(i, 1.0) if isinstance(i, (str, np.ndarray)) else tuple(i) for i in _as_list(positive)]
        items += [(i, -1.0) if isinstance(i, (str, np.ndarray)) else tuple(i) for i in _as_list(negative)]
        keys, mean = set(), []
        for key, weight in items:
            if isinstance(key, np.ndarray):
                mean.append(weight * key)
            else:
                mean.append(weight * self.get_vector(key, norm=True))
                keys.add(self.get_index(key))
        if not mean:
            raise ValueError("cannot compute similarity with no input")
        return _unitvec(np.array(mean).mean(axis=0)).astype(np.float32), keys

    def most_similar(
        self,
        positive: Any = None,
        negative: Any = None,
        topn: Optional[int] = 10,
        clip_start: int = 0,
        clip_end: Optional[int] = None,
        restrict_vocab: Optional[int] = None,
        indexer: None = None,
    ) -> Union[List[Tuple[str, float]], np.ndarray]:
        """Words closest to the weighted mean of unit vectors (gensim's semantics);
        with topn=None, the cosine to every word (in the clipped range)."""
        if indexer is not None:
            raise ValueError("posvec does not support approximate indexers")
        if isinstance(topn, int) and topn < 1:
            return []
        mean, keys = self._weighted_mean(positive, negative)
        clip_end = clip_end or len(self)
        if restrict_vocab:
            clip_start, clip_end = 0, restrict_vocab
        if topn is None or clip_start != 0:
            rows = self.vectors[clip_start:clip_end]
            norms = self.norms[clip_start:clip_end]
            dists = rows @ mean / norms
            if topn is None:
                return dists
            best = np.argsort(-dists, kind="stable")[: topn + len(keys)]
            found = [(self.index_to_key[i + clip_start], float(dists[i])) for i in best
                     if i + clip_start not in keys]
            return found[:topn]
        return self._require_words().nearest_to(mean, topn, sorted(keys), min(clip_end, len(self)))

    def similar_by_word(self, word: str, topn: int = 10, restrict_vocab: Optional[int] = None):
        return self.most_similar(positive=[word], topn=topn, restrict_vocab=restrict_vocab)

    def similar_by_vector(self, vector: np.ndarray, topn: int = 10, restrict_vocab: Optional[int] = None):
        return self.most_similar(positive=[vector], topn=topn, restrict_vocab=restrict_vocab)

    similar_by_key = similar_by_word

    def most_similar_cosmul(
        self,
        positive: Any = None,
        negative: Any = None,
        topn: Optional[int] = 10,
        restrict_vocab: Optional[int] = None,
    ) -> Union[List[Tuple[str, float]], np.ndarray]:
        """3CosMul (Levy and Goldberg 2014) with cosines shifted to [0, 1], as gensim."""
        if isinstance(topn, int) and topn < 1:
            return []
        positive, negative = _as_list(positive), _as_list(negative)
        keys = {self.get_index(w) for w in positive + negative if isinstance(w, str)}
        pos = [self.get_vector(w, norm=True) if isinstance(w, str) else w for w in positive]
        neg = [self.get_vector(w, norm=True) if isinstance(w, str) else w for w in negative]
        if not pos:
            raise ValueError("cannot compute similarity with no input")
        end = restrict_vocab or len(self)
        rows, norms = self.vectors[:end], self.norms[:end]
        pos_d = [(1 + rows @ t / norms) / 2 for t in pos]
        neg_d = [(1 + rows @ t / norms) / 2 for t in neg]
        dists = np.prod(pos_d, axis=0) / (np.prod(neg_d, axis=0) + 0.000001)
        if topn is None:
            return dists
        best = np.argsort(-dists, kind="stable")[: topn + len(keys)]
        return [(self.index_to_key[i], float(dists[i])) for i in best if i not in keys][:topn]

    def similarity(self, w1: str, w2: str) -> float:
        """Cosine similarity (computed in double)."""
        self.get_index(w1), self.get_index(w2)  # KeyError with a hint
        return self._e.similarity(w1, w2)

    def distance(self, w1: str, w2: str) -> float:
        return 1.0 - self.similarity(w1, w2)

    def n_similarity(self, ws1: Sequence[str], ws2: Sequence[str]) -> float:
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError("At least one of the passed list is empty.")
        v1 = np.array([self[k] for k in ws1]).mean(axis=0)
        v2 = np.array([self[k] for k in ws2]).mean(axis=0)
        return float(np.dot(_unitvec(v1), _unitvec(v2)))

    def doesnt_match(self, words: Sequence[str]) -> str:
        used = [w for w in words if w in self]
        if len(used) != len(words):
            logger.warning("vectors for words %s are not present in the model, ignoring these words",
                           set(words) - set(used))
        if not used:
            raise ValueError("cannot select a word from an empty list")
        vectors = np.vstack([self.get_vector(w, norm=True) for w in used]).astype(np.float32)
        mean = _unitvec(vectors.mean(axis=0)).astype(np.float32)
        dists = vectors @ mean
        return sorted(zip(dists, used))[0][1]

    # ---- evaluation ------------------------------------------------------------------

    def evaluate_word_analogies(
        self,
        analogies: Union[str, os.PathLike],
        restrict_vocab: int = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
        similarity_function: str = "most_similar",
    ) -> Tuple[float, List[Dict[str, Any]]]:
        """(accuracy, sections) exactly as gensim: each section a dict with
        'section', 'correct' and 'incorrect' lists of (a, b, c, expected), then
        'Total accuracy'."""
        if similarity_function != "most_similar":
            raise ValueError("posvec evaluates analogies with 3CosAdd (similarity_function='most_similar')")
        path = os.fspath(analogies)
        r = self._require_words().evaluate_analogies(path, restrict_vocab, case_insensitive)
        answered = dict(r["answered"])
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8").split("\n")
        sections: List[Dict[str, Any]] = []
        names = iter(r["sections"])
        for no, line in enumerate(lines, start=1):
            if line.startswith(": "):
                sections.append({"section": next(names), "correct": [], "incorrect": []})
                continue
            words = line.split()
            if len(words) != 4 or not sections:
                continue
            quad = tuple(w.upper() for w in words) if case_insensitive else tuple(words)
            ok = answered.get(no)
            if ok is None:
                if dummy4unknown:
                    sections[-1]["incorrect"].append(quad)
                continue
            sections[-1]["correct" if ok else "incorrect"].append(quad)
        total = {
            "section": "Total accuracy",
            "correct": [q for s in sections for q in s["correct"]],
            "incorrect": [q for s in sections for q in s["incorrect"]],
        }
        sections.append(total)
        n = len(total["correct"]) + len(total["incorrect"])
        score = len(total["correct"]) / n if n else 0.0
        logger.info("%s: %.1f%% (%i/%i), %.1f%% of questions out of vocabulary",
                    total["section"], 100 * score, len(total["correct"]), n, r["oov_percent"])
        return score, sections

    def evaluate_word_pairs(
        self,
        pairs: Union[str, os.PathLike],
        delimiter: str = "\t",
        encoding: str = "utf8",
        restrict_vocab: int = 300000,
        case_insensitive: bool = True,
        dummy4unknown: bool = False,
    ) -> Tuple[PearsonRResult, SpearmanrResult, float]:
        """(pearson, spearman, oov_ratio) as gensim: the correlations of cosine
        similarity with the file's scores, each with its two-sided p-value."""
        if delimiter != "\t" or encoding.lower().replace("-", "") != "utf8" or dummy4unknown:
            raise ValueError("posvec reads UTF-8 'w1<TAB>w2<TAB>score' files and drops unknown words "
                             "(delimiter='\\t', encoding='utf8', dummy4unknown=False)")
        r = self._require_words().evaluate_word_pairs(os.fspath(pairs), restrict_vocab, case_insensitive)
        n = r["pairs"]
        pearson = PearsonRResult(r["pearson"], correlation_pvalue(r["pearson"], n))
        spearman = SpearmanrResult(r["spearman"], correlation_pvalue(r["spearman"], n))
        oov_ratio = float(r["oov"]) / (n + r["oov"]) * 100  # gensim's expression, to the last bit
        return pearson, spearman, oov_ratio

    def __repr__(self) -> str:
        return f"<posvec.KeyedVectors: {len(self)} words x {self.vector_size} dimensions>"
