"""KeyedVectors: word vectors with gensim 4's names, over posvec's C++ matrix."""

from __future__ import annotations

import logging
import os
from numbers import Integral
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _posvec
from ._stats import PearsonRResult, SpearmanrResult, correlation_pvalue

logger = logging.getLogger(__name__)

Key = str
Item = Union[str, np.ndarray, Tuple[Union[str, np.ndarray], float]]

_FORMATS = {".bin": "bin", ".txt": "text", ".vec": "text", ".npy": "npy"}


def _as_list(value: Any) -> list:
    """gensim's rule: one key or one 1-D vector is a list of one; a 2-D array is its rows."""
    if value is None:
        return []
    if isinstance(value, (str, Integral)) or (isinstance(value, np.ndarray) and value.ndim == 1):
        return [value]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        return list(value)
    return list(value)


def _is_key(value: Any) -> bool:
    return isinstance(value, (str, Integral)) and not isinstance(value, bool)


def _emd_solver():
    """The earth mover's distance solver wmdistance uses: pyemd's (gensim's own), else
    POT's; ImportError naming both Debian packages when neither is installed."""
    try:
        from pyemd import emd

        return emd
    except ImportError:
        pass
    try:
        import ot
    except ImportError:
        raise ImportError("wmdistance needs an earth mover's distance solver: install pyemd "
                          "(Debian's python3-pyemd, which gensim uses) or POT (python3-pot)") from None
    return lambda first, second, cost: float(ot.emd2(first, second, cost))


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
        # Read from a word2vec file without counts: gensim's stand-in counts, V - index.
        self._ranked_counts = False
        if embeddings is None:
            self._vectors = np.zeros((0, vector_size), dtype=np.float32)
            self._vectors.setflags(write=False)
        else:
            self._vectors = embeddings.vectors

    @classmethod
    def load_word2vec_format(
        cls,
        fname: Union[str, os.PathLike],
        fvocab: Optional[Union[str, os.PathLike]] = None,
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
        without the "V D" line (GloVe); ``fvocab`` is a word2vec.c vocabulary file
        ("word count" lines) whose counts the words take; ``datatype`` (float16,
        float32 or float64) is the dtype of ``vectors`` (posvec computes in float32
        from the values rounded to it). Errors: FileNotFoundError, EOFError for a
        truncated file, UnicodeDecodeError for a word that is not UTF-8 under
        "strict" (both also ValueError), ValueError for other format errors."""
        if encoding.lower().replace("-", "") != "utf8":
            raise ValueError("posvec reads UTF-8 words only (encoding='utf8')")
        if unicode_errors not in ("strict", "replace", "ignore"):
            raise ValueError(f"unicode_errors must be 'strict', 'replace' or 'ignore', not {unicode_errors!r}")
        dtype = np.dtype(datatype)
        if dtype not in (np.float16, np.float32, np.float64):
            raise ValueError(f"datatype must be numpy.float16, float32 or float64 (got {dtype})")
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
        counts = None
        if fvocab is not None:
            counts = {}
            with open(os.fspath(fvocab), "rb") as f:
                for no, line in enumerate(f, start=1):
                    parts = line.rstrip(b"\r\n").split(b" ")
                    if len(parts) != 2 or not parts[1].strip().isdigit():
                        raise ValueError(f"'{os.fspath(fvocab)}' line {no}: expected 'word count'")
                    counts[parts[0].decode("utf-8", errors=unicode_errors)] = int(parts[1])
            missing = [w for w in e.words if w not in counts]
            if missing:
                raise ValueError(f"'{os.fspath(fvocab)}' has no count for '{missing[0]}' "
                                 f"({len(missing)} words without one)")
        if counts is not None or dtype != np.float32:
            values = e.vectors.astype(dtype)
            e = _posvec.Embeddings(list(e.words), values.astype(np.float32),
                                   [counts[w] for w in e.words] if counts is not None else list(e.counts))
            kv = cls._wrap(e)
            kv._ranked_counts = not e.counts
            if dtype != np.float32:
                values.setflags(write=False)
                kv._vectors = values
            return kv
        kv = cls._wrap(e)
        kv._ranked_counts = not e.counts
        return kv

    @classmethod
    def load(cls, fname: Union[str, os.PathLike], mmap: Optional[str] = None) -> "KeyedVectors":
        """Any format posvec reads: .npy (+ .vocab), a posvec model (its input
        vectors), word2vec binary or text, and fastText's .bin (a FastTextKeyedVectors,
        as FastTextKeyedVectors.save writes it). Not gensim's pickles (mmap is accepted:
        posvec reads the file into memory)."""
        path = os.fspath(fname)
        if _posvec.SubwordModel.is_fasttext_file(path):
            from .fasttext import load_facebook_vectors  # noqa: PLC0415 (imports this module)

            return load_facebook_vectors(path)
        return cls._wrap(_posvec.Embeddings.load(path))

    def save_word2vec_format(
        self,
        fname: Union[str, os.PathLike],
        fvocab: Optional[Union[str, os.PathLike]] = None,
        binary: bool = False,
        total_vec: Optional[int] = None,
        write_header: bool = True,
        prefix: str = "",
        append: bool = False,
        sort_attr: str = "count",
    ) -> None:
        """Writes word2vec text (default, as gensim) or binary, atomically; ``fvocab``
        also writes the counts as word2vec.c's vocabulary file ("word count" lines).
        ``total_vec`` is the count the header announces (for files appended to
        later), ``write_header=False`` leaves the header out, ``prefix`` goes before
        every word, ``append`` adds to an existing file (no header then)."""
        e = self._require_words()
        path = os.fspath(fname)
        if sort_attr != "count":
            raise ValueError("posvec stores one attribute per word: sort_attr='count'")
        if total_vec is not None and total_vec < len(self):
            raise ValueError(f"total_vec={total_vec} is less than the {len(self)} vectors written")
        if fvocab is not None:
            counts = e.counts or [len(self) - i for i in range(len(self))]
            with open(os.fspath(fvocab), "wb") as f:
                for word, c in zip(self.index_to_key, counts):
                    f.write(f"{prefix}{word} {c}\n".encode("utf-8"))
        if total_vec is None and write_header and not prefix and not append:
            e.save(path, "bin" if binary else "text")
            return
        tmp = path + ".tmp" if not append else path
        with open(tmp, "ab" if append else "wb") as f:
            if write_header and not append:
                f.write(f"{total_vec if total_vec is not None else len(self)} {self.vector_size}\n".encode())
            for word, row in zip(self.index_to_key, self.vectors.astype(np.float32)):
                if binary:
                    f.write(f"{prefix}{word} ".encode("utf-8") + row.tobytes() + b"\n")
                else:
                    f.write((f"{prefix}{word} " + " ".join(f"{float(x):.9g}" for x in row) + "\n").encode("utf-8"))
        if not append:
            os.replace(tmp, path)

    def save(self, fname: Union[str, os.PathLike], *args: Any, **kwargs: Any) -> None:
        """Format from the extension: .bin, .txt/.vec (word2vec) or .npy (+ .vocab);
        any other name is written as word2vec binary. :meth:`load` reads them all
        back (not a pickle: gensim's pickle options are refused)."""
        if args or kwargs:
            raise ValueError("posvec saves vector files, not pickles: gensim's pickle options "
                             "(sep_limit, ignore, pickle_protocol) do not apply")
        path = os.fspath(fname)
        fmt = _FORMATS.get(os.path.splitext(path)[1].lower(), "bin")
        self._require_words().save(path, fmt)

    def add_vectors(
        self, keys: Union[str, Sequence[str]], weights: Any, extras: None = None, replace: bool = False
    ) -> None:
        """Appends new keys with their vectors; a key already present keeps its
        vector unless ``replace=True`` (gensim's rule). One key with one 1-D vector
        works too. The matrix is rebuilt: a new array."""
        if extras is not None:
            raise ValueError("posvec stores one attribute per word (its count): extras are not supported")
        if isinstance(keys, str):
            keys = [keys]
            weights = np.asarray(weights, dtype=np.float32).reshape(1, -1)
        keys = list(keys)
        weights = np.asarray(weights, dtype=np.float32).reshape(len(keys), -1)
        finite = np.isfinite(weights).all(axis=1)
        if not finite.all():
            # Refused here, not when the vectors are saved much later.
            row = int(np.argmin(finite))
            raise ValueError(f"the vector of {keys[row]!r} (row {row}) holds NaN or infinity; "
                             "every vector must be finite")
        if len(self) and weights.shape[1] != self.vector_size:
            raise ValueError(f"the vectors have {weights.shape[1]} dimensions, these KeyedVectors "
                             f"{self.vector_size}")
        old_words = list(self._e.words) if self._e is not None else []
        matrix = self.vectors.astype(np.float32, copy=True) if self._e is not None else \
            np.zeros((0, weights.shape[1]), dtype=np.float32)
        counts = list(self._e.counts) if self._e is not None else []
        index = {w: i for i, w in enumerate(old_words)}
        new_rows, new_keys = [], []
        for key, row in zip(keys, weights):
            at = index.get(key)
            if at is None:
                index[key] = len(old_words) + len(new_keys)
                new_keys.append(key)
                new_rows.append(row)
            elif at >= len(old_words):  # twice among the new keys: the last one wins with replace
                if replace:
                    new_rows[at - len(old_words)] = row
            elif replace:
                matrix[at] = row
        if new_rows:
            matrix = np.vstack([matrix, np.array(new_rows, dtype=np.float32)])
        if counts:
            counts += [1] * len(new_keys)
        self._set(_posvec.Embeddings(old_words + new_keys, matrix, counts), matrix.shape[1])

    def add_vector(self, key: str, vector: Any) -> int:
        """Adds one key (or replaces its vector) and returns its index."""
        self.add_vectors([key], np.asarray(vector).reshape(1, -1), replace=True)
        return self.get_index(key)

    def __setitem__(self, keys: Union[str, Sequence[str]], weights: Any) -> None:
        """kv[key] = vector, kv[[k1, k2]] = vectors: adds new keys, replaces the
        vectors of present ones (gensim's add_vectors(replace=True))."""
        if not isinstance(keys, list):
            keys = [keys]
            weights = np.asarray(weights).reshape(1, -1)
        self.add_vectors(keys, weights, replace=True)

    def vectors_for_all(self, keys: Iterable[str], allow_inference: bool = True,
                        copy_vecattrs: bool = False) -> "KeyedVectors":
        """New KeyedVectors with the vectors of the given keys that have one
        (duplicates once, in the given order): with ``allow_inference``, every key
        ``in`` these vectors (a fastText model's unknown words, built from their
        n-grams), else the vocabulary's only; counts too with copy_vecattrs (0 for a
        built word, as gensim leaves it)."""
        seen: Dict[str, None] = {}
        for key in keys:
            if key in self if allow_inference else self.has_index_for(key):
                seen.setdefault(key, None)
        found = list(seen)
        kv = KeyedVectors(self.vector_size)
        if not found:
            return kv
        ids = [self.get_index(k, -1) for k in found]
        vectors = np.stack([self.vectors[i] if i >= 0 else self.get_vector(k)
                            for k, i in zip(found, ids)]).astype(np.float32)
        counts = []
        if copy_vecattrs:
            counts = list(self._e.counts) or ([len(self) - i for i in range(len(self))]
                                              if self._ranked_counts else [])
        kv._set(_posvec.Embeddings(found, vectors, [counts[i] if i >= 0 else 0 for i in ids]
                                   if counts else []), self.vector_size)
        return kv

    def unit_normalize_all(self) -> None:
        """Replaces every vector by its unit vector (zero vectors stay zero); the
        lengths are gone for good, as in gensim."""
        e = self._require_words()
        self._set(_posvec.Embeddings(list(e.words), self.get_normed_vectors().astype(np.float32),
                                     list(e.counts)), self.vector_size)

    def sort_by_descending_frequency(self) -> None:
        """Reorders the words by count, most frequent first (ties keep their order)."""
        if not len(self) or not self._e.counts:
            return
        counts = np.asarray(self._e.counts)
        order = np.argsort(-counts, kind="stable")
        words = self.index_to_key
        self._set(_posvec.Embeddings([words[i] for i in order], self.vectors[order].astype(np.float32),
                                     [int(c) for c in counts[order]]), self.vector_size)

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

    def get_index(self, key: Union[str, int], default: Optional[int] = None) -> int:
        """The row of ``key``; an integer is taken as a row number when it is one (gensim)."""
        found = self._e.find(key) if self._e is not None and isinstance(key, str) else None
        if found is not None:
            return found
        if isinstance(key, Integral) and not isinstance(key, bool) and 0 <= int(key) < len(self):
            return int(key)
        if default is not None:
            return default
        raise self._missing(key)

    def get_vecattr(self, key: str, attr: str) -> Any:
        if attr != "count":
            raise KeyError(f"posvec stores one attribute per word: 'count', not '{attr}'")
        counts = self._require_words().counts
        if counts:
            return counts[self.get_index(key)]
        return len(self) - self.get_index(key) if self._ranked_counts else None

    def set_vecattr(self, key: str, attr: str, val: int) -> None:
        if attr != "count":
            raise KeyError(f"posvec stores one attribute per word: 'count', not '{attr}'")
        e = self._require_words()
        counts = list(e.counts) or [1] * len(self)
        counts[self.get_index(key)] = int(val)
        self._set(_posvec.Embeddings(list(e.words), self.vectors.astype(np.float32), counts),
                  self.vector_size)

    @property
    def expandos(self) -> Dict[str, np.ndarray]:
        """gensim's per-word attribute arrays: here only 'count' (when counts are known)."""
        counts = self._e.counts if self._e is not None else []
        return {"count": np.asarray(counts, dtype=np.int64)} if counts else {}

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

    def _has_vector(self, key: object) -> bool:
        """True when get_vector(key) gives a vector (FastTextKeyedVectors: any word)."""
        return self.get_index(key, -1) >= 0

    def _require_words(self) -> "_posvec.Embeddings":
        if self._e is None:
            raise ValueError("these KeyedVectors hold no words yet")
        return self._e

    def get_vector(self, key: str, norm: bool = False) -> np.ndarray:
        """The vector of ``key`` (a read-only view; a unit-length copy with norm=True,
        divided by its entry of ``norms`` as gensim divides, to the last bit)."""
        index = self.get_index(key)
        v = self.vectors[index]
        if not norm:
            return v
        length = self.norms[index]
        return v / length if length > 0 else v.astype(np.float32)

    def get_mean_vector(self, keys: Sequence[Any], weights: Any = None, pre_normalize: bool = True,
                        post_normalize: bool = False, ignore_missing: bool = True) -> np.ndarray:
        """Weighted mean of the keys' vectors (unit vectors with pre_normalize) and of
        any 1-D arrays among the keys, divided by the sum of |weights| of the items
        used; missing keys are skipped (KeyError with ignore_missing=False)."""
        if len(keys) == 0:
            raise ValueError("cannot compute mean with no input")
        weights = np.ones(len(keys)) if weights is None else np.asarray(weights, dtype=np.float64)
        if weights.shape[0] != len(keys):
            raise ValueError("keys and weights array must have same number of elements")
        mean = np.zeros(self.vector_size, dtype=np.float32)
        total = 0.0
        for key, weight in zip(keys, weights):
            if isinstance(key, np.ndarray):
                mean += weight * key
                total += abs(weight)
            elif self._has_vector(key):
                mean += weight * self.get_vector(key, norm=pre_normalize)
                total += abs(weight)
            elif not ignore_missing:
                raise self._missing(key)
        if total > 0:
            mean = mean / total
        if post_normalize:
            mean = _unitvec(mean).astype(np.float32)
        return mean

    word_vec = get_vector

    def __getitem__(self, key: Union[str, Iterable[str]]) -> np.ndarray:
        if _is_key(key):
            return self.get_vector(key)
        return np.vstack([self.get_vector(k) for k in key])

    def get_normed_vectors(self) -> np.ndarray:
        norms = self.norms[:, np.newaxis]
        return self.vectors / np.where(norms > 0, norms, 1)

    # ---- queries ------------------------------------------------------------------

    def _weighted_mean(self, positive: Any, negative: Any) -> Tuple[np.ndarray, set]:
        """gensim's query: items are keys, 1-D arrays or (item, weight) pairs, weight
        1 for positive and -1 for negative by default; the weighted mean of the
        keys' unit vectors and the arrays as given, made unit length."""
        keys, weights = [], []
        for items, sign in ((_as_list(positive), 1.0), (_as_list(negative), -1.0)):
            for item in items:
                if _is_key(item) or isinstance(item, np.ndarray):
                    keys.append(item)
                    weights.append(sign)
                else:
                    key, weight = item
                    keys.append(key)
                    weights.append(float(weight))
        if not keys:
            raise ValueError("cannot compute similarity with no input")
        mean = self.get_mean_vector(keys, weights, pre_normalize=True, post_normalize=True,
                                    ignore_missing=False)
        ids = {self.get_index(k, -1) for k in keys if _is_key(k)} - {-1}
        return mean, ids

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
        with topn=None, the cosine to every word (in the clipped range). With
        restrict_vocab=R, the topn best of the first R words that are not inputs."""
        if indexer is not None:
            raise ValueError("posvec does not support approximate indexers")
        if isinstance(topn, Integral) and topn < 1:
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
            topn = int(topn)
            best = np.argsort(-dists, kind="stable")[: topn + len(keys)]
            found = [(self.index_to_key[i + clip_start], float(dists[i])) for i in best
                     if i + clip_start not in keys]
            return found[:topn]
        return self._require_words().nearest_to(mean, int(topn), sorted(keys), min(clip_end, len(self)))

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
        # Inputs left out of the answers; an unknown word raises from get_vector (or,
        # with FastTextKeyedVectors, is built from its n-grams).
        keys = {self.get_index(w, -1) for w in positive + negative if _is_key(w)} - {-1}
        pos = [self.get_vector(w, norm=True) if _is_key(w) else w for w in positive]
        neg = [self.get_vector(w, norm=True) if _is_key(w) else w for w in negative]
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

    @staticmethod
    def cosine_similarities(vector_1: np.ndarray, vectors_all: np.ndarray) -> np.ndarray:
        """Cosine of one vector with each row of a matrix."""
        norm = np.linalg.norm(vector_1)
        all_norms = np.linalg.norm(vectors_all, axis=1)
        return np.dot(vectors_all, vector_1) / (norm * all_norms)

    def distances(self, word_or_vector: Union[str, np.ndarray], other_words: Sequence[str] = ()) -> np.ndarray:
        """1 - cosine from a word or vector to the given words, or to every word."""
        v = self.get_vector(word_or_vector) if _is_key(word_or_vector) else np.asarray(word_or_vector)
        others = self.vectors if not other_words else np.vstack([self.get_vector(w) for w in other_words])
        return 1 - self.cosine_similarities(v, others)

    def closer_than(self, key1: str, key2: str) -> List[str]:
        """Words closer to key1 than key2 is (key1 itself left out), in vocabulary order."""
        d = self.distances(key1)
        i1, i2 = self.get_index(key1), self.get_index(key2)
        return [self.index_to_key[i] for i in np.nonzero(d < d[i2])[0] if i != i1]

    words_closer_than = closer_than

    def rank(self, key1: str, key2: str) -> int:
        """key2's rank among key1's neighbours (1: the nearest)."""
        return len(self.closer_than(key1, key2)) + 1

    def most_similar_to_given(self, key1: str, keys_list: Sequence[str]) -> str:
        """The key of keys_list most similar to key1."""
        return keys_list[int(np.argmax([self.similarity(key1, k) for k in keys_list]))]

    def relative_cosine_similarity(self, wa: str, wb: str, topn: int = 10) -> float:
        """cos(wa, wb) over the sum of wa's topn nearest cosines (Leeuwenberg et al. 2016)."""
        sims = self.similar_by_word(wa, topn)
        if not sims:
            raise ValueError("Cannot calculate relative cosine similarity without any similar words.")
        return float(self.similarity(wa, wb)) / sum(sim for _, sim in sims)

    def similarity(self, w1: str, w2: str) -> float:
        """Cosine similarity (computed in double)."""
        self.get_index(w1), self.get_index(w2)  # KeyError with a hint
        return self._e.similarity(w1, w2)

    def distance(self, w1: str, w2: str) -> float:
        return 1.0 - self.similarity(w1, w2)

    def n_similarity(self, ws1: Sequence[str], ws2: Sequence[str]) -> float:
        if not (len(ws1) and len(ws2)):
            raise ZeroDivisionError("At least one of the passed list is empty.")
        if len(ws1) == len(ws2) == 1:  # the same number as similarity(), to the last bit
            return self.similarity(ws1[0], ws2[0])
        v1 = np.array([self[k] for k in ws1]).mean(axis=0)
        v2 = np.array([self[k] for k in ws2]).mean(axis=0)
        return float(np.dot(_unitvec(v1), _unitvec(v2)))

    def wmdistance(self, document1: Sequence[str], document2: Sequence[str], norm: bool = True) -> float:
        """Word Mover's Distance (Kusner et al., 2015) between two documents (lists of
        words), as gensim 4.2 computes it: words without a vector are dropped (infinity when
        a document has none left, or when every distance is 0; 0.0 when the two hold one and
        the same word), each word weighs its share of its document, and moving a unit of
        weight costs the Euclidean distance between the two words' vectors (unit vectors
        with ``norm``). Solved by pyemd, gensim's solver, or else POT."""
        emd = _emd_solver()
        doc1 = [t for t in document1 if t in self]
        doc2 = [t for t in document2 if t in self]
        if len(doc1) < len(document1) or len(doc2) < len(document2):
            logger.info("Removed %d and %d OOV words from document 1 and 2 (respectively).",
                        len(document1) - len(doc1), len(document2) - len(doc2))
        if not doc1 or not doc2:
            logger.warning("At least one of the documents had no words that were in the vocabulary.")
            return float("inf")
        tokens = list(dict.fromkeys(doc1 + doc2))
        if len(tokens) == 1:
            return 0.0
        at = {t: i for i, t in enumerate(tokens)}
        words1, words2 = list(dict.fromkeys(doc1)), list(dict.fromkeys(doc2))
        v1 = np.array([self.get_vector(t, norm=norm) for t in words1], dtype=np.float64)
        v2 = np.array([self.get_vector(t, norm=norm) for t in words2], dtype=np.float64)
        cost = np.zeros((len(tokens), len(tokens)), dtype=np.float64)
        diff = v1[:, None, :] - v2[None, :, :]
        cost[np.ix_([at[t] for t in words1], [at[t] for t in words2])] = \
            np.sqrt((diff * diff).sum(axis=2))
        if abs(cost.sum()) < 1e-8:
            logger.info("The distance matrix is all zeros. Aborting (returning inf).")
            return float("inf")

        def weights(doc: List[str]) -> np.ndarray:
            w = np.zeros(len(tokens), dtype=np.float64)
            for t in doc:
                w[at[t]] += 1.0
            return w / len(doc)

        return float(emd(weights(doc1), weights(doc2), cost))

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
        if similarity_function not in ("most_similar", "most_similar_cosmul"):
            raise ValueError(f"similarity_function must be 'most_similar' or 'most_similar_cosmul', "
                             f"not {similarity_function!r}")
        # gensim 4.2 answers with 3CosAdd whatever similarity_function says; so does posvec,
        # so that both give the same scores.
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
            return self._evaluate_word_pairs_here(pairs, delimiter, encoding, restrict_vocab,
                                                  case_insensitive, dummy4unknown)
        r = self._require_words().evaluate_word_pairs(os.fspath(pairs), restrict_vocab, case_insensitive)
        n = r["pairs"]
        pearson = PearsonRResult(r["pearson"], correlation_pvalue(r["pearson"], n))
        spearman = SpearmanrResult(r["spearman"], correlation_pvalue(r["spearman"], n))
        oov_ratio = float(r["oov"]) / (n + r["oov"]) * 100  # gensim's expression, to the last bit
        return pearson, spearman, oov_ratio

    def _evaluate_word_pairs_here(self, pairs: Any, delimiter: str, encoding: str, restrict_vocab: int,
                                  case_insensitive: bool, dummy4unknown: bool):
        """evaluate_word_pairs in Python, for the options the C++ reader does not take:
        another delimiter or encoding, and dummy4unknown (an unknown pair counts with
        similarity 0, and the OOV ratio is over the pairs kept, as gensim)."""
        keys = self.index_to_key[:restrict_vocab]
        fold = _posvec.upper_case if case_insensitive else (lambda w: w)
        ok = {fold(k): i for i, k in reversed(list(enumerate(keys)))}
        unit = self.get_normed_vectors()
        gold, model, oov = [], [], 0
        with open(os.fspath(pairs), encoding=encoding) as f:
            for line in f:
                if not line or line.startswith("#"):
                    continue
                try:
                    a, b, sim = [fold(w) if i < 2 else w for i, w in enumerate(line.split(delimiter))]
                    sim = float(sim)
                except ValueError:
                    continue
                if a not in ok or b not in ok:
                    oov += 1
                    if dummy4unknown:
                        gold.append(sim)
                        model.append(0.0)
                    continue
                gold.append(sim)
                model.append(float(np.dot(unit[ok[a]].astype(np.float64), unit[ok[b]].astype(np.float64))))
        if not gold:
            raise ValueError(f"no valid similarity judgements in {os.fspath(pairs)}: invalid format "
                             "or every pair out of vocabulary")
        g, m = np.asarray(gold), np.asarray(model)

        def pearson(x: np.ndarray, y: np.ndarray) -> float:
            x, y = x - x.mean(), y - y.mean()
            d = np.sqrt((x * x).sum() * (y * y).sum())
            return float((x * y).sum() / d) if d > 0 else float("nan")

        def ranks(x: np.ndarray) -> np.ndarray:  # average ranks of ties, as SciPy's rankdata
            order = np.argsort(x, kind="stable")
            r = np.empty(len(x))
            sx = x[order]
            i = 0
            while i < len(x):
                j = i
                while j + 1 < len(x) and sx[j + 1] == sx[i]:
                    j += 1
                r[order[i:j + 1]] = (i + j) / 2 + 1
                i = j + 1
            return r

        n = len(gold)
        rp, rs = pearson(g, m), pearson(ranks(g), ranks(m))
        oov_ratio = float(oov) / (n if dummy4unknown else n + oov) * 100
        return (PearsonRResult(rp, correlation_pvalue(rp, n)),
                SpearmanrResult(rs, correlation_pvalue(rs, n)), oov_ratio)

    def __repr__(self) -> str:
        return f"<posvec.KeyedVectors: {len(self)} words x {self.vector_size} dimensions>"
