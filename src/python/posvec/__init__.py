"""posvec: text to transformer input, from Python.

The same C++ engine as the ``posvec`` command line, with gensim 4's names where
they overlap: :class:`KeyedVectors`, :class:`Word2Vec`, fastText models
(:func:`load_facebook_vectors`, :func:`load_facebook_model`), plus the tokenizer
(:func:`tokenize`, :func:`tokenize_file`) and sinusoidal positional encodings
(:func:`positional_encoding`, :func:`encode`, :func:`relative_shift`), and the
black/brown study (:func:`study`).
Matrices are NumPy arrays; long calls release the GIL; errors are Python
exceptions (OSError/FileNotFoundError for files, ValueError for bad input or
options, KeyError for unknown words).
"""

from __future__ import annotations

import os
import queue
import threading
from typing import Any, Iterator, List, Sequence, Tuple, Union

import numpy as np

from . import _posvec
from .attention import AttentionMaps, apply_rotary, attention
from .fasttext import (FastText, FastTextKeyedVectors, load_facebook_model, load_facebook_vectors,
                       save_facebook_model)
from .keyedvectors import KeyedVectors
from .phrases import ENGLISH_CONNECTOR_WORDS, FrozenPhrases, Phraser, Phrases
from .rope import RopeFrequencies, RopeProfile, alibi_bias, alibi_slopes, rope_frequencies, rope_profile
from .study import Figure, StudyResult, study
from .word2vec import Word2Vec

__version__ = "0.1.0"

__all__ = [
    "KeyedVectors",
    "Word2Vec",
    "FastText",
    "FastTextKeyedVectors",
    "load_facebook_model",
    "load_facebook_vectors",
    "save_facebook_model",
    "tokenize",
    "tokenize_file",
    "positional_encoding",
    "encode",
    "relative_shift",
    "study",
    "StudyResult",
    "rope_frequencies",
    "rope_profile",
    "alibi_slopes",
    "alibi_bias",
    "attention",
    "apply_rotary",
    "AttentionMaps",
    "Phrases",
    "FrozenPhrases",
    "Phraser",
    "ENGLISH_CONNECTOR_WORDS",
    "RopeFrequencies",
    "RopeProfile",
    "Figure",
    "__version__",
]

Sentence = List[str]


def __dir__() -> List[str]:
    """The package's names: what ``__all__`` lists, not the modules it imports."""
    return sorted(__all__)


def tokenize(text: str, lowercase: bool = True, punctuation: bool = True, locale: str = "en") -> List[Sentence]:
    """Sentences of tokens, as ``posvec tokenize`` makes them (ICU segmentation,
    NLTK-like tokens, full Unicode lowercasing)."""
    return _posvec.tokenize(text, lowercase, punctuation, locale)


def tokenize_file(
    path: Union[str, os.PathLike],
    lowercase: bool = True,
    punctuation: bool = True,
    locale: str = "en",
    pretokenized: bool = False,
) -> Iterator[Sentence]:
    """A lazy iterator over the sentences of a file: a background thread tokenizes
    ahead by a few thousand sentences, so memory stays bounded on any file size.
    Errors (a missing file, invalid UTF-8) are raised from the iteration."""
    path = os.fspath(path)
    batches: "queue.Queue[Any]" = queue.Queue(maxsize=4)
    stop = threading.Event()
    done = object()

    class _Stopped(Exception):
        pass

    def sink(batch: List[Sentence]) -> None:
        while True:
            if stop.is_set():
                raise _Stopped()
            try:
                batches.put(batch, timeout=0.1)
                return
            except queue.Full:
                continue

    def work() -> None:
        try:
            _posvec.tokenize_file(path, lowercase, punctuation, locale, pretokenized, 1024, sink)
            item: Any = done
        except _Stopped:
            return
        except BaseException as e:  # handed to the consumer
            item = e
        while not stop.is_set():
            try:
                batches.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def sentences() -> Iterator[Sentence]:
        thread = threading.Thread(target=work, name="posvec-tokenize", daemon=True)
        thread.start()
        try:
            while True:
                item = batches.get()
                if item is done:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield from item
        finally:
            stop.set()
            thread.join()

    return sentences()


def _dtype_is_64(dtype: Any) -> bool:
    d = np.dtype(dtype)
    if d == np.float64:
        return True
    if d == np.float32:
        return False
    raise ValueError(f"dtype must be numpy.float32 or numpy.float64 (got {d})")


def positional_encoding(
    length: int,
    dim: int,
    encoding: str = "interleaved",
    base: float = 10000.0,
    start: int = 0,
    dtype: Any = np.float32,
) -> np.ndarray:
    """PE rows start .. start+length-1 as a (length, dim) array: bitwise the matrix
    ``posvec pe`` writes. Encodings: interleaved, concatenated, book, tutorial."""
    return _posvec.positional_encoding(int(length), int(dim), encoding, float(base), int(start),
                                       _dtype_is_64(dtype))


def relative_shift(k: int, dim: int, encoding: str = "interleaved", base: float = 10000.0) -> np.ndarray:
    """The (dim, dim) float64 rotation M_k with PE[p + k] = M_k · PE[p] for every p."""
    return _posvec.relative_shift(int(k), int(dim), encoding, float(base))


def _batch_vectors(kv: FastTextKeyedVectors, seqs: List[List[str]]) -> KeyedVectors:
    """The words of a batch with their vectors (unknown ones built from n-grams)."""
    words = list(dict.fromkeys(w for seq in seqs for w in seq))
    for b, seq in enumerate(seqs):
        if not seq:
            raise ValueError(f"sentence {b + 1} has no tokens to encode")
    return KeyedVectors._wrap(_posvec.Embeddings(
        words, np.vstack([kv.get_vector(w) for w in words]).astype(np.float32)))


def encode(
    kv: KeyedVectors,
    sentences: Union[str, Sequence[Union[str, Sequence[str]]]],
    scale: Union[str, float] = "sqrt",
    start: int = 0,
    unk: str = "error",
    encoding: str = "interleaved",
    base: float = 10000.0,
    dtype: Any = np.float32,
    lowercase: bool = True,
    punctuation: bool = True,
) -> Tuple[np.ndarray, np.ndarray]:
    """Transformer input for a batch: row t of sentence b is
    kv[token]·scale + PE[start + t] (as ``posvec encode``).

    ``sentences`` are strings (tokenized like the corpus; a string's sentences
    become one sequence) or token lists. Returns ``(inputs, padding)``:
    inputs (batch, length, dim), padded to the longest sentence with zero rows,
    and a bool (batch, length) mask that is True at padding (PyTorch's
    ``key_padding_mask`` convention). Unknown words raise KeyError with
    ``unk="error"``; ``unk="zero"`` encodes them as a zero vector and
    ``unk="token"`` as one shared out-of-vocabulary row, the mean of all vectors
    (as ``posvec encode --unk``). With :class:`FastTextKeyedVectors` (a fastText
    model with n-grams) every word has a vector and ``unk`` is not used: unknown
    words are built from their character n-grams, as ``posvec encode`` does with
    a fastText ``.bin``. ``scale``: "sqrt" (√dim), "none" or a number.
    """
    if unk not in ("error", "zero", "token"):
        raise ValueError(f"unknown unk {unk!r} (choose 'error', 'zero' or 'token')")
    if isinstance(sentences, str):
        sentences = [sentences]
    seqs: List[List[str]] = []
    for s in sentences:
        if isinstance(s, str):
            seqs.append([t for sent in tokenize(s, lowercase, punctuation) for t in sent])
        else:
            seqs.append(list(s))
    if not seqs:
        raise ValueError("nothing to encode: give at least one sentence")
    if isinstance(kv, FastTextKeyedVectors) and kv.bucket > 0 and kv.max_n > 0:
        # Every word has a vector: the batch's own words, unknown ones from their n-grams.
        kv = _batch_vectors(kv, seqs)
    ids = []
    for b, seq in enumerate(seqs):
        if not seq:
            raise ValueError(f"sentence {b + 1} has no tokens to encode")
        row = []
        for t, w in enumerate(seq):
            i = kv.get_index(w, -1)
            if i < 0 and unk == "error":
                err = kv._missing(w)
                raise KeyError(f"{err.args[0]} (sentence {b + 1}, token {t + 1}); "
                               "use unk='zero' or unk='token' to encode it as a zero vector "
                               "or the mean vector")
            row.append(i)
        ids.append(row)
    scale_text = scale if isinstance(scale, str) else repr(float(scale))
    out = _posvec.encode_ids(kv._require_words(), ids, encoding, float(base), scale_text,
                             int(start), _dtype_is_64(dtype), unk == "token")
    lengths = np.array([len(s) for s in seqs])
    padding = np.arange(out.shape[1])[np.newaxis, :] >= lengths[:, np.newaxis]
    return out, padding
