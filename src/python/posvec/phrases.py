"""Phrases shaped like gensim 4's (``gensim.models.phrases``): collocations joined into
single tokens, with gensim's counts, scorers, connector words and pruning, in posvec's C++.
See docs/phrases.md.

    phrases = posvec.Phrases(sentences, min_count=5, threshold=10.0)
    phrases[["new", "york", "is", "big"]]        # ['new_york', 'is', 'big']
    frozen = phrases.freeze(); frozen.save("phrases.tsv")
    model = posvec.Word2Vec(frozen[sentences], vector_size=100)
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _posvec

#: gensim 4's ENGLISH_CONNECTOR_WORDS (articles, some prepositions, "and", "or").
ENGLISH_CONNECTOR_WORDS = frozenset(_posvec.english_connector_words())

Sentence = List[str]


def _is_single(obj: Any) -> bool:
    """A sentence (a list of str) rather than a corpus (an iterable of sentences)."""
    if isinstance(obj, str):
        raise TypeError("give a sentence as a list of tokens, not a string")
    if isinstance(obj, (list, tuple)):
        return len(obj) == 0 or isinstance(obj[0], str)
    return False


class _Transformation:
    """What Phrases and FrozenPhrases share: rewriting sentences and corpora."""

    _model: Any

    def __getitem__(self, sentence: Union[Sequence[str], Iterable[Sequence[str]]]
                    ) -> Union[Sentence, Iterator[Sentence]]:
        if _is_single(sentence):
            return self._model.apply(list(sentence))
        return (self._model.apply(list(s)) for s in sentence)

    def analyze_sentence(self, sentence: Sequence[str]) -> Iterator[Tuple[str, Optional[float]]]:
        """(token, score) for each token of the rewritten sentence; score None for a word."""
        for token in self._model.apply(list(sentence)):
            found = self._score_joined(token)
            yield token, found

    def _score_joined(self, token: str) -> Optional[float]:
        parts = token.split(self.delimiter)
        if len(parts) < 2:
            return None
        found = self._model.score(parts[0], parts[-1], parts[1:-1])
        return None if found is None else found[1]

    def find_phrases(self, sentences: Iterable[Sequence[str]]) -> Dict[str, float]:
        """The phrases that occur in ``sentences`` and their scores."""
        result: Dict[str, float] = {}
        for sentence in sentences:
            for token, score in self.analyze_sentence(sentence):
                if score is not None:
                    result[token] = score
        return result

    @property
    def min_count(self) -> int:
        return self._model.min_count

    @property
    def threshold(self) -> float:
        return self._model.threshold

    @property
    def delimiter(self) -> str:
        return self._model.delimiter

    @property
    def scoring(self) -> str:
        return self._model.scoring

    @property
    def connector_words(self) -> frozenset:
        return frozenset(self._model.connector_words)


class Phrases(_Transformation):
    """gensim's ``Phrases(sentences, min_count, threshold, max_vocab_size, delimiter, scoring,
    connector_words)``: counts the sentences (``add_vocab`` adds more) and rewrites sentences
    with the phrases that score above ``threshold``. ``scoring`` is ``"default"`` or
    ``"npmi"``; custom scoring functions are not supported."""

    def __init__(self, sentences: Optional[Iterable[Sequence[str]]] = None, min_count: int = 5,
                 threshold: float = 10.0, max_vocab_size: int = 40000000, delimiter: str = "_",
                 progress_per: int = 10000, scoring: str = "default",
                 connector_words: Iterable[str] = frozenset()):
        if callable(scoring):
            raise NotImplementedError("posvec's Phrases scores with 'default' or 'npmi'; a "
                                      "scoring function is not supported")
        self._model = _posvec.PhrasesModel(int(min_count), float(threshold), int(max_vocab_size),
                                           str(delimiter), str(scoring), sorted(connector_words))
        self.progress_per = progress_per
        if sentences is not None:
            self.add_vocab(sentences)

    def add_vocab(self, sentences: Iterable[Sequence[str]]) -> None:
        """Counts more sentences (gensim's learning pass, pruning included)."""
        if _is_single(sentences) and len(sentences) > 0:  # type: ignore[arg-type]
            raise TypeError("add_vocab takes an iterable of sentences (lists of tokens)")
        for sentence in sentences:
            self._model.add_sentence(list(sentence))

    def score_candidate(self, word_a: str, word_b: str, in_between: Sequence[str]
                        ) -> Tuple[Optional[str], Optional[float]]:
        """(joined phrase, score) when it scores above the threshold, else (None, None)."""
        found = self._model.score(word_a, word_b, list(in_between))
        return (None, None) if found is None else found

    def export_phrases(self) -> Dict[str, float]:
        """Every counted phrase that scores above the threshold, with its score."""
        return dict(self._model.export_phrases())

    def freeze(self) -> "FrozenPhrases":
        """The phrases and their scores only, for applying (gensim's FrozenPhrases)."""
        return FrozenPhrases(self)

    @property
    def corpus_word_count(self) -> int:
        return self._model.corpus_word_count

    @property
    def max_vocab_size(self) -> int:
        return self._model.max_vocab_size

    def __len__(self) -> int:
        return self._model.vocabulary_size

    def __str__(self) -> str:
        return (f"Phrases<{len(self)} vocab, min_count={self.min_count}, "
                f"threshold={self.threshold}, max_vocab_size={self.max_vocab_size}>")

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        raise NotImplementedError("posvec saves frozen phrases only: phrases.freeze().save(path) "
                                  "writes the phrase table FrozenPhrases.load reads")


class FrozenPhrases(_Transformation):
    """gensim's ``FrozenPhrases(phrases_model)``: the phrases and scores of a Phrases model,
    applied as it applies them; ``save``/``load`` write and read posvec's phrase table (the
    file ``posvec phrases --save-table`` writes and ``posvec train --phrases`` reads)."""

    def __init__(self, phrases_model: Optional[Phrases] = None, *, _model: Any = None):
        if _model is not None:
            self._model = _model
        elif isinstance(phrases_model, Phrases):
            self._model = phrases_model._model.freeze()
        else:
            raise TypeError("FrozenPhrases takes a posvec.Phrases model")

    @property
    def phrasegrams(self) -> Dict[str, float]:
        return dict(self._model.export_phrases())

    def score_candidate(self, word_a: str, word_b: str, in_between: Sequence[str]
                        ) -> Tuple[Optional[str], Optional[float]]:
        found = self._model.score(word_a, word_b, list(in_between))
        return (None, None) if found is None else found

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self._model.save_table(os.fspath(path))

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "FrozenPhrases":
        return cls(_model=_posvec.PhrasesModel.read_table(os.fspath(path)))

    def __str__(self) -> str:
        return (f"FrozenPhrases<{len(self.phrasegrams)} phrases, min_count={self.min_count}, "
                f"threshold={self.threshold}>")


Phraser = FrozenPhrases  # gensim's old name
