"""Subword vectors with gensim 4's names: fastText models read from their ``.bin``
file, in which any word has a vector (the mean of its own row and the rows of its
character n-grams, exactly as fastText forms them)."""

from __future__ import annotations

import os
from typing import Any, Union

import numpy as np

from . import _posvec
from .keyedvectors import KeyedVectors, _unitvec


class FastTextKeyedVectors(KeyedVectors):
    """Word vectors of a fastText model, shaped like gensim's FastTextKeyedVectors.

    The vocabulary (``key_to_index``, ``index_to_key``, ``vectors``) holds the
    words of the model with their vectors composed as fastText composes them
    (``vectors`` is a read-only float32 view of the C++ matrix, no copy). Any other
    word is built from its character n-grams: ``kv["unseen"]``,
    ``kv.most_similar("unseen")`` and ``kv.similarity("unseen", "word")`` work, and
    ``"unseen" in kv`` is True whenever the model has n-grams (a word too short
    for any n-gram gets the zero vector, as in fastText and gensim).
    ``vectors_vocab`` and ``vectors_ngrams`` are the model's raw word rows and
    bucket rows (read-only views).
    """

    @classmethod
    def _from_model(cls, model: "_posvec.SubwordModel") -> "FastTextKeyedVectors":
        kv = cls._wrap(model.word_vectors())
        kv._model = model
        return kv

    @property
    def min_n(self) -> int:
        return self._model.minn

    @property
    def max_n(self) -> int:
        return self._model.maxn

    @property
    def bucket(self) -> int:
        return self._model.bucket

    @property
    def vectors_vocab(self) -> np.ndarray:
        return self._model.vectors_vocab

    @property
    def vectors_ngrams(self) -> np.ndarray:
        return self._model.vectors_ngrams

    def __contains__(self, key: object) -> bool:
        # gensim's rule: with n-grams, every word has a vector.
        if not isinstance(key, str):
            return False
        return (self.bucket > 0 and self.max_n > 0) or KeyedVectors.__contains__(self, key)

    def has_index_for(self, key: object) -> bool:
        """True only for the words of the vocabulary (gensim's has_index_for)."""
        return KeyedVectors.__contains__(self, key)

    def _has_vector(self, key: object) -> bool:
        return key in self or super()._has_vector(key)

    def get_vector(self, key: str, norm: bool = False) -> np.ndarray:
        """The vector of ``key``: its row when it is in the vocabulary, else the mean
        of its n-gram rows (KeyError only for a model without n-grams)."""
        if isinstance(key, str) and self.get_index(key, -1) < 0 and key in self:
            v = self._model.vectors([key])[0]
            return _unitvec(v) if norm else v
        return super().get_vector(key, norm)

    word_vec = get_vector

    def similarity(self, w1: str, w2: str) -> float:
        """Cosine similarity (computed in double); any words."""
        if self.has_index_for(w1) and self.has_index_for(w2):
            return super().similarity(w1, w2)
        a = self.get_vector(w1).astype(np.float64)
        b = self.get_vector(w2).astype(np.float64)
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        return float(a @ b / (na * nb)) if na > 0 and nb > 0 else 0.0

    def __repr__(self) -> str:
        return (f"<posvec.FastTextKeyedVectors: {len(self)} words x {self.vector_size} dimensions, "
                f"n-grams {self.min_n}-{self.max_n}, {self.bucket} buckets>")


class FastText:
    """A fastText model, shaped like gensim.models.FastText: ``wv`` holds its
    vectors (FastTextKeyedVectors). Obtained from :func:`load_facebook_model`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "posvec.FastText cannot train yet; load a fastText .bin with posvec.load_facebook_model")

    @classmethod
    def _from_model(cls, model: "_posvec.SubwordModel") -> "FastText":
        ft = cls.__new__(cls)
        ft.wv = FastTextKeyedVectors._from_model(model)
        return ft

    @property
    def vector_size(self) -> int:
        return self.wv.vector_size

    @property
    def min_n(self) -> int:
        return self.wv.min_n

    @property
    def max_n(self) -> int:
        return self.wv.max_n

    @property
    def bucket(self) -> int:
        return self.wv.bucket

    def __repr__(self) -> str:
        return (f"<posvec.FastText: {len(self.wv)} words x {self.vector_size} dimensions, "
                f"n-grams {self.min_n}-{self.max_n}, {self.bucket} buckets>")


def _load(path: Union[str, os.PathLike]) -> "_posvec.SubwordModel":
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"'{path}' does not exist")
    return _posvec.SubwordModel.load(path)


def load_facebook_vectors(path: Union[str, os.PathLike], encoding: str = "utf-8") -> FastTextKeyedVectors:
    """The vectors of a fastText ``.bin`` model (skip-gram or CBOW, as fastText 0.9
    writes it), as gensim.models.fasttext.load_facebook_vectors reads them:
    unknown words are built from their character n-grams. A supervised or
    quantized model is refused (ValueError)."""
    if encoding.lower().replace("-", "") != "utf8":
        raise ValueError("posvec reads UTF-8 words only (encoding='utf-8')")
    return FastTextKeyedVectors._from_model(_load(path))


def load_facebook_model(path: Union[str, os.PathLike], encoding: str = "utf-8") -> FastText:
    """A fastText ``.bin`` model as a :class:`FastText` whose ``wv`` are its vectors
    (gensim.models.fasttext.load_facebook_model's shape)."""
    if encoding.lower().replace("-", "") != "utf8":
        raise ValueError("posvec reads UTF-8 words only (encoding='utf-8')")
    return FastText._from_model(_load(path))
