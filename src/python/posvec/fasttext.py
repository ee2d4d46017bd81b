"""Subword vectors with gensim 4's names: fastText models read from their ``.bin``
file, in which any word has a vector (the mean of its own row and the rows of its
character n-grams, exactly as fastText forms them)."""

from __future__ import annotations

import logging
import operator
import os
from typing import Any, Dict, Iterable, Optional, Sequence, Union

import numpy as np

from . import _posvec
from .keyedvectors import KeyedVectors, _unitvec
from .word2vec import Word2Vec

logger = logging.getLogger(__name__)


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
        return cls._from_source(model.word_vectors(), model)

    @classmethod
    def _from_source(cls, embeddings: "_posvec.Embeddings", source: Any) -> "FastTextKeyedVectors":
        kv = cls._wrap(embeddings)
        kv._model = source  # a SubwordModel, or a trained model's n-grams
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

    def save(self, fname: Union[str, os.PathLike], *args: Any, **kwargs: Any) -> None:
        """Writes fastText's ``.bin`` of the model these vectors come from (its words,
        n-gram rows and output weights), whatever the name: :meth:`load` and
        ``KeyedVectors.load`` read it back with its n-grams, so unknown words keep
        their vectors (gensim pickles instead). Vectors changed after they were built
        (``add_vectors``) are not the model's: save those with save_word2vec_format."""
        if args or kwargs:
            raise ValueError("posvec saves fastText's .bin, not pickles: gensim's pickle options "
                             "(sep_limit, ignore, pickle_protocol) do not apply")
        self._model.save(os.fspath(fname))

    @classmethod
    def load(cls, fname: Union[str, os.PathLike], mmap: Optional[str] = None) -> "FastTextKeyedVectors":
        """Reads fastText's ``.bin`` (as :meth:`save` writes it): load_facebook_vectors."""
        path = os.fspath(fname)
        if not _posvec.SubwordModel.is_fasttext_file(path):
            raise ValueError(f"'{path}' is not a fastText .bin: FastTextKeyedVectors.load reads "
                             "what FastTextKeyedVectors.save writes (KeyedVectors.load reads the "
                             "other vector files)")
        return load_facebook_vectors(path)

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


class _TrainedNgrams:
    """A trained model's n-grams under SubwordModel's names, for FastTextKeyedVectors."""

    def __init__(self, model: "_posvec.Model") -> None:
        self._m = model
        config = model.config
        self.minn, self.maxn, self.bucket = config["min_n"], config["max_n"], config["bucket"]

    def vectors(self, words: Sequence[str]) -> np.ndarray:
        return self._m.subword_vectors(list(words))

    def save(self, path: str) -> None:
        """fastText's .bin of the trained model (as SubwordModel.save writes a loaded one)."""
        self._m.save_facebook_model(path)

    @property
    def vectors_vocab(self) -> np.ndarray:
        return self._m.input[: len(self._m.words)]  # a copy: training may reallocate

    @property
    def vectors_ngrams(self) -> np.ndarray:
        return self._m.input[len(self._m.words):]


def _int_in(name: str, value: Any, low: int, high: int) -> int:
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer (got {type(value).__name__})") from None
    if not low <= v <= high:
        raise ValueError(f"{name} must be from {low} to {high} (got {v})")
    return v


class FastText(Word2Vec):
    """Subword (fastText) vectors trained by posvec's C++ engine, shaped like
    gensim.models.FastText: a word's input vector is the mean of its own row and
    the rows of its character n-grams (``min_n`` to ``max_n`` characters, hashed
    into ``bucket`` rows as fastText hashes them), so ``wv`` gives any word a vector.

    Everything else is :class:`Word2Vec`'s (``sg=1``, skip-gram, is the default
    here; gensim's FastText defaults to CBOW). ``wv`` is a
    :class:`FastTextKeyedVectors`; :meth:`save_facebook_model` writes fastText's
    ``.bin``, which ``fasttext``'s CLI and gensim's ``load_facebook_model`` read.
    """

    def __init__(
        self,
        sentences: Optional[Iterable[Sequence[str]]] = None,
        corpus_file: Optional[Union[str, os.PathLike]] = None,
        vector_size: int = 100,
        window: int = 5,
        min_count: int = 5,
        min_n: int = 3,
        max_n: int = 6,
        bucket: int = 2000000,
        word_ngrams: int = 1,
        sg: int = 1,
        negative: int = 5,
        epochs: int = 5,
        workers: int = 0,
        seed: int = 1,
        **kwargs: Any,
    ) -> None:
        for name in ("max_final_vocab", "trim_rule", "max_vocab_size"):
            if kwargs.get(name) is not None:
                raise ValueError(f"{name}: posvec.FastText keeps every word reaching min_count "
                                 "(no other vocabulary rule)")
        if word_ngrams != 1:  # gensim's rule and exception
            raise NotImplementedError("posvec's FastText, as gensim's, trains word_ngrams=1 only "
                                      "(fastText's word n-grams are for its text classifier)")
        object.__setattr__(self, "word_ngrams", word_ngrams)
        object.__setattr__(self, "_ngrams", dict(
            min_n=_int_in("min_n", min_n, 1, 64), max_n=_int_in("max_n", max_n, 0, 64),
            bucket=_int_in("bucket", bucket, 0, 2**31 - 1)))
        object.__setattr__(self, "_loaded", None)
        super().__init__(sentences=sentences, corpus_file=corpus_file, vector_size=vector_size,
                         window=window, min_count=min_count, sg=sg, negative=negative,
                         epochs=epochs, workers=workers, seed=seed, **kwargs)

    @property
    def min_n(self) -> int:
        return self._ngrams["min_n"]

    @property
    def max_n(self) -> int:
        return self._ngrams["max_n"]

    @property
    def bucket(self) -> int:
        return self._ngrams["bucket"]

    def _engine_options(self, **changes: Any) -> Dict[str, Any]:
        return dict(super()._engine_options(**changes), **self._ngrams)

    def _wrap_vectors(self, model: "_posvec.Model") -> KeyedVectors:
        return FastTextKeyedVectors._from_source(model.embeddings(), _TrainedNgrams(model))

    def train(self, *args: Any, **kwargs: Any) -> "FastText":
        if self._loaded is not None:
            raise NotImplementedError("posvec cannot continue training a model read from a fastText "
                                      ".bin; train a new posvec.FastText on the corpus")
        return super().train(*args, **kwargs)

    def save(self, fname: Union[str, os.PathLike], *args: Any, **kwargs: Any) -> None:
        """posvec's model format, as :meth:`Word2Vec.save`. A model read by
        load_facebook_model has no posvec training state to write: use
        :meth:`save_facebook_model` for it."""
        if self._loaded is not None:
            raise NotImplementedError(
                f"this model was read from the fastText file '{self._loaded_path}', and posvec's "
                "model format holds models posvec trains (it cannot yet continue training a "
                "fastText one); write it with save_facebook_model(path), which "
                "load_facebook_model reads back")
        super().save(fname, *args, **kwargs)

    def save_facebook_model(self, path: Union[str, os.PathLike]) -> None:
        """Writes fastText's ``.bin`` (version 12, as fastText 0.9.2 writes it)."""
        save_facebook_model(self, path)

    @classmethod
    def _from_model(cls, model: "_posvec.SubwordModel", path: str) -> "FastText":
        ft = cls(vector_size=model.dim, **model.args)
        # The file's n-gram settings as its reader took them (up to 1024 characters, as
        # the CLI and load_facebook_vectors read them); 1 to 64 bounds training only.
        object.__setattr__(ft, "_ngrams", dict(min_n=model.minn, max_n=model.maxn,
                                               bucket=model.bucket))
        ft._loaded = model
        ft._loaded_path = path
        ft._wv = FastTextKeyedVectors._from_model(model)
        return ft

    def __repr__(self) -> str:
        return (f"<posvec.FastText: {len(self.wv)} words x {self.vector_size} dimensions, "
                f"n-grams {self.min_n}-{self.max_n}, {self.bucket} buckets>")


def save_facebook_model(model: FastText, path: Union[str, os.PathLike], encoding: str = "utf-8") -> None:
    """Writes ``model`` as fastText's ``.bin`` (gensim.models.fasttext.save_facebook_model):
    ``fasttext print-word-vectors``/``nn`` and gensim's ``load_facebook_model`` read it
    and give the same vectors. Atomic (a temporary file renamed)."""
    if encoding.lower().replace("-", "") != "utf8":
        raise ValueError("posvec writes UTF-8 words only (encoding='utf-8')")
    if not isinstance(model, FastText):
        raise TypeError(f"save_facebook_model writes a posvec.FastText (got {type(model).__name__})")
    path = os.fspath(path)
    if model._loaded is not None:
        model._loaded.save(path)
    elif model._model is not None:
        model._model.save_facebook_model(path)
    else:
        raise ValueError("nothing to save: the model is not trained yet")


def _load(path: str) -> "_posvec.SubwordModel":
    if not os.path.exists(path):
        raise FileNotFoundError(f"'{path}' does not exist")
    try:
        model = _posvec.SubwordModel.load(path)
    except ValueError as e:
        # gensim raises NotImplementedError for a supervised model (a text classifier).
        if "a supervised model" in str(e):
            raise NotImplementedError(str(e)) from None
        raise
    # Words that are not UTF-8 (a corpus in another encoding) are keyed as gensim keys
    # them, their bytes decoded with errors="backslashreplace"; gensim logs each.
    try:
        undecodable = model.undecodable
    except ValueError as e:
        raise ValueError(f"'{path}': {e}") from None
    for index, raw, key in undecodable[:3]:
        logger.warning("'%s': word %d is not valid UTF-8 (%r); its key is %r (as gensim reads it, "
                       "errors='backslashreplace')", path, index, raw, key)
    if len(undecodable) > 3:
        logger.warning("'%s': %d more words are not valid UTF-8, keyed the same way", path,
                       len(undecodable) - 3)
    return model


def load_facebook_vectors(path: Union[str, os.PathLike], encoding: str = "utf-8") -> FastTextKeyedVectors:
    """The vectors of a fastText ``.bin`` model (skip-gram or CBOW, as fastText 0.9
    writes it), as gensim.models.fasttext.load_facebook_vectors reads them:
    unknown words are built from their character n-grams. A supervised model is
    refused with NotImplementedError (as gensim), a quantized one with ValueError. A word that is not UTF-8 is keyed
    as gensim keys it (its bytes decoded with errors="backslashreplace", logged
    as a warning); its vector is fastText's, from its bytes."""
    if encoding.lower().replace("-", "") != "utf8":
        raise ValueError("posvec reads UTF-8 words only (encoding='utf-8')")
    return FastTextKeyedVectors._from_model(_load(os.fspath(path)))


def load_facebook_model(path: Union[str, os.PathLike], encoding: str = "utf-8") -> FastText:
    """A fastText ``.bin`` model as a :class:`FastText` whose ``wv`` are its vectors
    (gensim.models.fasttext.load_facebook_model's shape), read as
    :func:`load_facebook_vectors` reads them. posvec cannot yet continue training
    it: ``train()`` and ``save()`` refuse; :meth:`FastText.save_facebook_model`
    writes it back."""
    if encoding.lower().replace("-", "") != "utf8":
        raise ValueError("posvec reads UTF-8 words only (encoding='utf-8')")
    path = os.fspath(path)
    return FastText._from_model(_load(path), path)
