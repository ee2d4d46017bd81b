"""Word2Vec: posvec's trainer with gensim 4's constructor, methods and attributes."""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import threading
from collections import Counter
from numbers import Integral
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _posvec
from .keyedvectors import KeyedVectors

logger = logging.getLogger(__name__)

Progress = Union[bool, str, Callable[[Dict[str, Any]], None], None]


class _Progress:
    """Forwards the trainer's reports to a callable, a tqdm bar, and gensim-style callbacks."""

    def __init__(self, model: "Word2Vec", progress: Progress, epochs_done: int = 0,
                 epochs: int = 0) -> None:
        self.model = model
        self.epochs_left = epochs
        self.callable = progress if callable(progress) else None
        self.bar = None
        self.tqdm = None
        # The bar counts this run's epochs: a loaded model trained 5 more after 27 starts at 0 %.
        self.epochs_done = epochs_done
        self.epochs_total = 0  # the schedule's, once the trainer reports it
        if progress in (True, "auto"):
            try:
                from tqdm.auto import tqdm
            except ImportError:  # no tqdm: train quietly (gensim logs instead)
                tqdm = None
            self.tqdm = tqdm

    def progress(self, fields: Dict[str, Any]) -> None:
        if self.callable is not None:
            self.callable(fields)
        self.epochs_total = fields["epochs"]
        if self.open_bar():
            loss = fields["loss"]
            self.bar.set_description(f"epoch {fields['epoch']}/{fields['epochs']}")
            self.bar.set_postfix(words_s=f"{fields['words_per_second']:.3g}",
                                 alpha=f"{fields['alpha']:.5f}",
                                 loss="n/a" if loss != loss else f"{loss:.4f}", refresh=False)
            self.bar.update(self.percent(fields) - self.bar.n)

    def open_bar(self) -> bool:
        """The bar, drawn once training runs (not before an error in the inputs)."""
        if self.bar is None and self.tqdm is not None:
            self.bar = self.tqdm(total=100, bar_format="{l_bar}{bar}| [{elapsed}<{remaining}{postfix}]")
        return self.bar is not None

    def percent(self, fields: Dict[str, Any]) -> float:
        """This run's share done, in percent, from the schedule's fraction."""
        total, done = fields["epochs"], self.epochs_done
        if total <= done:
            return 100.0 * fields["fraction"]
        run = (fields["fraction"] * total - done) / (total - done)
        return 100.0 * min(1.0, max(0.0, run))

    def epoch_end(self, report: Dict[str, Any]) -> None:
        self.model._running_losses.append(report["loss"])
        if report.get("predictions", 0) > 0:  # an epoch without predictions has no loss (NaN)
            self.model._latest_loss += report["loss"] * report["predictions"]
        if self.epochs_total and self.open_bar():
            done = self.percent({"epochs": self.epochs_total, "fraction": report["epoch"] / self.epochs_total})
            self.bar.update(done - self.bar.n)
        if self.callable is not None:
            self.callable(dict(report, event="epoch_end"))
        for cb in self.model.callbacks:
            if hasattr(cb, "on_epoch_end"):
                cb.on_epoch_end(self.model)
        self.epochs_left -= 1
        if self.epochs_left > 0:
            self.model._epoch_begin()

    def close(self, finished: bool) -> None:
        if self.bar is not None:
            if finished:
                self.bar.update(self.bar.total - self.bar.n)
            self.bar.close()


def _token_error(sentences: Any) -> Exception:
    """The Python error for sentences the engine could not read: the first bad
    token when the sentences are a list or tuple (a generator is spent by then)."""
    if isinstance(sentences, (list, tuple)):
        for i, sentence in enumerate(sentences, 1):
            if isinstance(sentence, (str, bytes)):
                return TypeError(f"sentence {i} is a {type(sentence).__name__}; a sentence is a "
                                 "list of str tokens")
            for j, token in enumerate(sentence, 1):
                if not isinstance(token, str):
                    return TypeError(f"token {j} of sentence {i} is {type(token).__name__} "
                                     f"{token!r}, not str")
                try:
                    token.encode("utf-8")
                except UnicodeEncodeError:
                    return ValueError(f"token {j} of sentence {i} ({token!r}) is not valid "
                                      "Unicode (a lone surrogate) and has no UTF-8 form")
    return TypeError("every token must be a str of valid Unicode (no lone surrogates); "
                     "a sentence held something else")


# gensim's trim_rule answers (gensim.utils.RULE_*).
RULE_DEFAULT, RULE_DISCARD, RULE_KEEP = 0, 1, 2


def _keep(word: str, count: int, min_count: int, trim_rule: Any) -> bool:
    default = count >= min_count
    if trim_rule is None:
        return default
    rule = trim_rule(word, count, min_count)
    if rule == RULE_KEEP:
        return True
    if rule == RULE_DISCARD:
        return False
    return default


class NotAModelError(ValueError, AttributeError):
    """Word2Vec.load was given a vector file (gensim raises AttributeError there)."""


class _ClassOnly:
    """A classmethod that refuses to be called on an instance, as gensim's load does
    (model.load(path) returns a new model and leaves `model` as it was: a trap)."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, cls: Any) -> Any:
        if obj is not None:
            raise AttributeError(f"{self.fn.__name__} is a class method: call "
                                 f"{cls.__name__}.{self.fn.__name__}(...), which returns a new model")
        return self.fn.__get__(cls, cls)


# gensim 4.2 arguments posvec takes with another value only, and what to do instead.
_REFUSED = {
    "sorted_vocab": (1, "posvec keeps the vocabulary sorted by count, most frequent first "
                        "(sorted_vocab=1)"),
    "null_word": (0, "null_word pads gensim's concatenating CBOW, a mode posvec does not have; "
                     "leave null_word=0"),
}


class Word2Vec:
    """Skip-gram or CBOW word2vec, trained by posvec's C++ engine, with gensim 4.2's
    constructor, methods and attributes.

    ``sentences`` is any iterable of token lists (a generator is fine: it is read
    once, while the vocabulary is counted, and never held in memory);
    ``corpus_file`` is a raw text file tokenized like ``posvec tokenize``, or with
    ``pretokenized=True`` one sentence a line split on whitespace. Training
    releases the GIL; Ctrl-C raises KeyboardInterrupt within a second.

    Defaults that differ from gensim's: ``sg=1`` (skip-gram; gensim's is CBOW) and
    ``workers=0`` (all cores). gensim arguments that posvec takes with one value only
    (``sorted_vocab``, ``null_word``, ``hashfxn``) raise ValueError naming it for
    any other value;
    docs/gensim-compatibility.md lists every argument.
    """

    def __init__(
        self,
        sentences: Optional[Iterable[Sequence[str]]] = None,
        corpus_file: Optional[Union[str, os.PathLike]] = None,
        vector_size: int = 100,
        window: int = 5,
        min_count: int = 5,
        sg: int = 1,
        hs: int = 0,
        negative: int = 5,
        sample: float = 1e-3,
        alpha: float = 0.025,
        min_alpha: float = 0.0001,
        epochs: int = 5,
        workers: int = 0,
        seed: int = 1,
        max_final_vocab: Optional[int] = None,
        kernel: str = "batched",
        combine: Optional[int] = None,
        block_negatives: Optional[int] = None,
        callbacks: Sequence[Any] = (),
        pretokenized: bool = False,
        lowercase: bool = True,
        punctuation: bool = True,
        locale: str = "en",
        progress: Progress = "auto",
        max_vocab_size: Optional[int] = None,
        ns_exponent: float = 0.75,
        cbow_mean: int = 1,
        hashfxn: Any = hash,
        null_word: int = 0,
        trim_rule: Any = None,
        sorted_vocab: int = 1,
        batch_words: int = 10000,
        compute_loss: bool = False,
        comment: Optional[str] = None,
        shrink_windows: bool = True,
        weights: str = "fp32",
    ) -> None:
        # One training at a time: the C++ model is updated in place with the GIL
        # released, so a second train() (or a save()) from another thread would
        # read or write it half-way. Callbacks run on the training thread and may
        # still save.
        self._training = threading.Lock()
        self._trainer: Optional[int] = None
        try:
            seed = operator.index(seed)  # ints and NumPy integers; not floats or strings
        except TypeError:
            raise TypeError(f"seed must be an integer (got {type(seed).__name__})") from None
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed must be from 0 to 2**64 - 1 (got {seed})")
        given = dict(sorted_vocab=sorted_vocab, null_word=null_word)
        for name, value in given.items():
            accepted, why = _REFUSED[name]
            if value != accepted:
                raise ValueError(f"{name}={value!r}: {why}")
        if hashfxn is not hash:
            raise ValueError("hashfxn: posvec seeds each vector from (seed, row), not from a hash of "
                             "the word; leave hashfxn out and set seed")
        if not hs and not negative:
            logger.warning("hs=0 and negative=0: the model has a vocabulary and starting vectors "
                           "but trains nothing (as gensim); set hs=1 or negative > 0 to train")
        if hs and negative:
            logger.warning("hs=1 with negative=%d: posvec trains hierarchical softmax only "
                           "(gensim trains both); pass negative=0 to say so", negative)
        if max_vocab_size is not None and (isinstance(max_vocab_size, bool) or int(max_vocab_size) < 1):
            raise ValueError(f"max_vocab_size must be a positive integer or None, not {max_vocab_size!r}")
        self.options: Dict[str, Any] = dict(
            vector_size=vector_size, window=window, min_count=min_count, sg=sg, hs=1 if hs else 0,
            negative=negative, sample=sample, alpha=alpha,
            min_alpha=min_alpha, epochs=epochs, workers=workers, seed=seed, max_final_vocab=0,
            kernel=kernel, combine=combine, block_negatives=block_negatives, ns_exponent=ns_exponent,
            shrink_windows=bool(shrink_windows), cbow_mean=1 if cbow_mean else 0, weights=weights,
            lowercase=lowercase, punctuation=punctuation, locale=locale)
        self.max_final_vocab = max_final_vocab
        self.max_vocab_size = max_vocab_size
        self.trim_rule = trim_rule
        self.sorted_vocab = sorted_vocab
        self.null_word = null_word
        self.hashfxn = hashfxn
        self.batch_words = batch_words
        self.compute_loss = compute_loss
        self.comment = comment
        self.callbacks = tuple(callbacks)
        self.progress = progress
        self.pretokenized = pretokenized
        self._model: Optional[_posvec.Model] = None
        self._running_losses: List[float] = []
        self._latest_loss = 0.0
        self._wv = KeyedVectors(vector_size)
        self._wv_assigned = False
        self.raw_vocab: Dict[str, int] = {}
        self.corpus_count = 0
        self.corpus_total_words: Optional[int] = None
        self.effective_min_count = max(int(min_count), 0)
        if sentences is not None and corpus_file is not None:
            raise ValueError("give sentences or corpus_file, not both")
        if isinstance(sentences, (str, bytes)):
            raise TypeError("sentences must be an iterable of token lists; for a file use corpus_file=")
        self._sentences = sentences
        self._corpus_file = os.fspath(corpus_file) if corpus_file is not None else None
        if sentences is not None or corpus_file is not None:
            if (trim_rule is not None or max_vocab_size is not None or max_final_vocab is not None
                    or self._trains_nothing):
                # gensim's vocabulary rules are applied in Python, then the model trains.
                self.build_vocab(sentences, corpus_file=corpus_file, trim_rule=trim_rule)
            self.train(epochs=epochs)

    def _wrap_vectors(self, model: "_posvec.Model") -> KeyedVectors:
        """The trained model's vectors as .wv (posvec.FastText: with n-grams)."""
        return KeyedVectors._wrap(model.embeddings())

    @property
    def _trains_nothing(self) -> bool:
        return not self.options["hs"] and not self.options["negative"]

    def _engine_options(self, **changes: Any) -> Dict[str, Any]:
        """The options as the C++ side takes them (min_count >= 1, some loss)."""
        o = dict(self.options, **changes)
        o["min_count"] = max(1, int(o["min_count"]))
        if not o["hs"] and not o["negative"]:
            o["negative"] = 5  # stored only: a model that trains nothing never uses it
        return o

    # gensim's names for the options
    def __getattr__(self, name: str) -> Any:
        options = self.__dict__.get("options")
        if options is not None and name in options:
            return options[name]
        if isinstance(type(self).__dict__.get(name), _ClassOnly):
            raise AttributeError(f"{name} is a class method: call {type(self).__name__}.{name}(...), "
                                 "which returns a new model")
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        options = self.__dict__.get("options")
        if options is not None and name in options and name not in ("max_final_vocab",):
            options[name] = value
        else:
            object.__setattr__(self, name, value)

    @property
    def wv(self) -> KeyedVectors:
        return self._wv

    @wv.setter
    def wv(self, kv: KeyedVectors) -> None:
        # Vectors alone (e.g. from a word2vec file): no output weights to train or predict with.
        self._wv = kv
        self._wv_assigned = True
        self._model = None

    def _epoch_begin(self) -> None:
        for cb in self.callbacks:
            if hasattr(cb, "on_epoch_begin"):
                cb.on_epoch_begin(self)

    def _run(self, fn: Callable[..., Any], run_epochs: int = 0, **kwargs: Any) -> Any:
        reporter = _Progress(self, self.progress, self.epochs_done, run_epochs)
        reporter.epochs_total = self.epochs_done + run_epochs  # this run's after those done
        for cb in self.callbacks:
            if hasattr(cb, "on_train_begin"):
                cb.on_train_begin(self)
        self._epoch_begin()
        finished = False
        try:
            result = fn(progress=reporter.progress, epoch_end=reporter.epoch_end,
                        log=lambda line: logger.info("%s", line), **kwargs)
            finished = True
            return result
        except RuntimeError as e:
            # pybind11's "Unable to cast": a str that is not valid Unicode (a lone
            # surrogate), met while sentences were read.
            if "Unable to cast" not in str(e):
                raise
            raise _token_error(kwargs.get("sentences")) from None
        except TypeError as e:
            # A token that is not a str: for a list or tuple corpus, name it.
            if "tokens must be strings" not in str(e) or \
                    not isinstance(kwargs.get("sentences"), (list, tuple)):
                raise
            raise _token_error(kwargs.get("sentences")) from None
        finally:
            reporter.close(finished)

    # ---- the vocabulary -----------------------------------------------------------

    def _sentences_of(self, corpus_iterable: Any, corpus_file: Any) -> Iterable[Sequence[str]]:
        if corpus_iterable is not None and corpus_file is not None:
            raise ValueError("give corpus_iterable or corpus_file, not both")
        if corpus_file is not None:
            from . import tokenize_file
            o = self.options
            return tokenize_file(corpus_file, o["lowercase"], o["punctuation"], o["locale"],
                                 self.pretokenized)
        if corpus_iterable is None:
            raise ValueError("no corpus: give corpus_iterable (token lists) or corpus_file")
        if isinstance(corpus_iterable, (str, bytes)):
            raise TypeError("sentences must be an iterable of token lists; for a file use corpus_file=")
        return corpus_iterable

    def scan_vocab(
        self,
        corpus_iterable: Optional[Iterable[Sequence[str]]] = None,
        corpus_file: Optional[Union[str, os.PathLike]] = None,
        progress_per: int = 10000,
        workers: Optional[int] = None,
        trim_rule: Any = None,
    ) -> Tuple[int, int]:
        """Counts the corpus into ``raw_vocab`` (word -> count, first-seen order);
        returns (total words, sentences). With ``max_vocab_size``, words seen at
        most n times are forgotten whenever the table outgrows it (n = 1, 2, ...),
        as gensim and word2vec.c do."""
        sentences = self._sentences_of(corpus_iterable, corpus_file)
        vocab: Counter = Counter()
        total = count = 0
        min_reduce = 1
        for count, sentence in enumerate(sentences, start=1):
            if isinstance(sentence, (str, bytes)):
                raise TypeError("sentences must be lists of tokens, not strings "
                                "(use posvec.tokenize for raw text)")
            for token in sentence:
                if not isinstance(token, str):
                    raise TypeError(f"a sentence's tokens must be strings, not {type(token).__name__}")
            vocab.update(sentence)
            total += len(sentence)
            if progress_per and count % progress_per == 0:
                logger.info("PROGRESS: at sentence #%i, processed %i words, keeping %i word types",
                            count, total, len(vocab))
            if self.max_vocab_size and len(vocab) > self.max_vocab_size:
                for word in [w for w, c in vocab.items() if not _keep(w, c, min_reduce, trim_rule)]:
                    del vocab[word]
                min_reduce += 1
        self.raw_vocab = dict(vocab)
        self.corpus_count = count
        self.corpus_total_words = total
        logger.info("collected %i word types from a corpus of %i raw words and %i sentences",
                    len(vocab), total, count)
        return total, count

    def prepare_vocab(
        self,
        update: bool = False,
        keep_raw_vocab: bool = False,
        trim_rule: Any = None,
        min_count: Optional[int] = None,
        sample: Optional[float] = None,
        dry_run: bool = False,
    ) -> Dict[str, Any]:
        """Applies min_count (raised to meet max_final_vocab, as gensim does), trim_rule
        and, unless dry_run, makes the model's vocabulary (update=True: grows it).
        Returns gensim's report: drop_unique, drop_total, retain_total,
        num_retained_words, downsample_unique, downsample_total."""
        min_count = self.options["min_count"] if min_count is None else min_count
        sample = self.options["sample"] if sample is None else sample
        raw = self.raw_vocab
        effective = min_count
        if self.max_final_vocab is not None:
            ranked = sorted(raw.values(), reverse=True)
            calc = ranked[self.max_final_vocab] + 1 if self.max_final_vocab < len(ranked) else 1
            effective = max(calc, min_count)
        self.effective_min_count = effective
        known = set(self.wv.index_to_key) if update else set()
        if update and self._model is None:
            raise RuntimeError("cannot update the vocabulary of a model that has none: build it "
                               "first with build_vocab(corpus) (update=False)")
        retain, drop_unique, drop_total = [], 0, 0
        for word, c in raw.items():
            if _keep(word, c, effective, trim_rule):
                retain.append(word)
            else:
                drop_unique += 1
                drop_total += c
        retain_total = sum(raw[w] for w in retain)
        threshold = sample * retain_total if sample and sample < 1.0 else None
        downsample_unique, downsample_total = 0, 0.0
        for w in retain:
            v = raw[w]
            p = (np.sqrt(v / threshold) + 1) * (threshold / v) if threshold else 1.0
            if p < 1.0:
                downsample_unique += 1
                downsample_total += p * v
            else:
                downsample_total += v
        report = dict(drop_unique=drop_unique, drop_total=drop_total, retain_total=retain_total,
                      num_retained_words=len(retain), downsample_unique=downsample_unique,
                      downsample_total=int(downsample_total))
        if not dry_run:
            if update:
                # Known words gain their new counts whether or not they pass the rules (gensim).
                words = [w for w in raw if w in known] + [w for w in retain if w not in known]
                added = self._model.extend_vocabulary(words, [int(raw[w]) for w in words])
                logger.info("added %d new words to the vocabulary of %d", added, len(known))
            else:
                if not retain:
                    raise _posvec.EmptyVocabularyError(
                        f"no word occurs at least {effective} times in the corpus "
                        f"({len(raw)} distinct words); lower min_count")
                # Most frequent first, ties in first-seen order (as posvec's counting pass).
                ordered = sorted(retain, key=lambda w: -raw[w])
                self._model = _posvec.Model.from_vocabulary(ordered, [int(raw[w]) for w in ordered],
                                                             self._engine_options())
                self.options["min_count"] = min_count
            self._wv = self._wrap_vectors(self._model)
            self._wv_assigned = False
            if not keep_raw_vocab:
                self.raw_vocab = {}
        return report

    def build_vocab(
        self,
        corpus_iterable: Optional[Iterable[Sequence[str]]] = None,
        corpus_file: Optional[Union[str, os.PathLike]] = None,
        update: bool = False,
        progress_per: int = 10000,
        keep_raw_vocab: bool = False,
        trim_rule: Any = None,
        **kwargs: Any,
    ) -> None:
        """Counts the corpus and makes the vocabulary, without training (gensim's
        build_vocab). With update=True a trained model keeps its vectors and gains
        the new words (rows initialised as the trainer initialises them); the next
        train() trains old and new words, with the noise table and Huffman tree
        rebuilt over the grown vocabulary; save() writes the grown model."""
        if corpus_file is not None:
            corpus_file = os.fspath(corpus_file)
        with self._unchanged_on_error():
            self.scan_vocab(corpus_iterable, corpus_file, progress_per=progress_per,
                            trim_rule=trim_rule if trim_rule is not None else self.trim_rule)
            self.prepare_vocab(update=update, keep_raw_vocab=keep_raw_vocab,
                               trim_rule=trim_rule if trim_rule is not None else self.trim_rule,
                               **kwargs)
        if corpus_iterable is not None or corpus_file is not None:
            self._sentences = corpus_iterable
            self._corpus_file = corpus_file

    def build_vocab_from_freq(
        self,
        word_freq: Dict[str, int],
        keep_raw_vocab: bool = False,
        corpus_count: Optional[int] = None,
        trim_rule: Any = None,
        update: bool = False,
    ) -> None:
        """The vocabulary from a word -> count mapping instead of a corpus."""
        for word, c in word_freq.items():
            if not isinstance(word, str) or not isinstance(c, Integral) or c < 1:
                raise ValueError(f"word_freq must map words (str) to counts >= 1, not {word!r}: {c!r}")
        with self._unchanged_on_error():
            self.raw_vocab = {w: int(c) for w, c in word_freq.items()}
            self.corpus_count = corpus_count or 0
            self.corpus_total_words = sum(self.raw_vocab.values())
            self.prepare_vocab(update=update, keep_raw_vocab=keep_raw_vocab,
                               trim_rule=trim_rule if trim_rule is not None else self.trim_rule)

    @contextlib.contextmanager
    def _unchanged_on_error(self) -> Iterator[None]:
        """A vocabulary refused (e.g. a word the model cannot hold) leaves the model as
        it was: the C++ model refuses before it changes; the counts are put back here."""
        kept = (self.raw_vocab, self.corpus_count, self.corpus_total_words, self.effective_min_count)
        try:
            yield
        except BaseException:
            (self.raw_vocab, self.corpus_count, self.corpus_total_words,
             self.effective_min_count) = kept
            raise

    def reset_from(self, other_model: "Word2Vec") -> None:
        """Takes the vocabulary of another model (its words and counts), with fresh vectors."""
        kv = other_model.wv
        counts = kv._require_words().counts
        if not counts:
            raise ValueError("the other model's vectors carry no counts")
        self.corpus_count = other_model.corpus_count
        self.corpus_total_words = other_model.corpus_total_words
        self._model = _posvec.Model.from_vocabulary(list(kv.index_to_key), list(counts),
                                                     self._engine_options())
        self._wv = self._wrap_vectors(self._model)

    # ---- training ---------------------------------------------------------------------

    def train(
        self,
        corpus_iterable: Optional[Iterable[Sequence[str]]] = None,
        corpus_file: Optional[Union[str, os.PathLike]] = None,
        total_examples: Optional[int] = None,
        total_words: Optional[int] = None,
        epochs: Optional[int] = None,
        start_alpha: Optional[float] = None,
        end_alpha: Optional[float] = None,
        word_count: int = 0,
        queue_factor: int = 2,
        report_delay: float = 1.0,
        compute_loss: Optional[bool] = None,
        callbacks: Optional[Sequence[Any]] = None,
        pretokenized: Optional[bool] = None,
        **ignored: Any,
    ) -> "Word2Vec":
        """Trains ``epochs`` epochs: from scratch on a new model, otherwise further
        on the stored learning-rate schedule (as if the model had been trained for
        the sum from the start). The corpus defaults to the one given before; a
        generator given before is spent, so pass the sentences again. gensim's
        total_examples/total_words are accepted and ignored (posvec counts);
        start_alpha/end_alpha other than the model's are refused. Raises
        RuntimeError when the model is already training (in another thread)."""
        if not self._training.acquire(blocking=False):
            raise RuntimeError("this Word2Vec model is already training (in another thread); "
                               "wait for that train() to return, or train a separate model")
        self._trainer = threading.get_ident()
        try:
            return self._train(corpus_iterable, corpus_file, total_examples, total_words, epochs,
                               start_alpha, end_alpha, compute_loss, callbacks, pretokenized)
        finally:
            self._trainer = None
            self._training.release()

    def _train(self, corpus_iterable: Optional[Iterable[Sequence[str]]],
               corpus_file: Optional[Union[str, os.PathLike]], total_examples: Optional[int],
               total_words: Optional[int], epochs: Optional[int], start_alpha: Optional[float],
               end_alpha: Optional[float], compute_loss: Optional[bool],
               callbacks: Optional[Sequence[Any]], pretokenized: Optional[bool]) -> "Word2Vec":
        lockf = getattr(self._wv, "vectors_lockf", None)
        if lockf is not None and not np.all(np.asarray(lockf, dtype=np.float64) == 1.0):
            # gensim's experimental per-word factors on the vectors' updates (0 locks a word).
            raise ValueError("wv.vectors_lockf holds factors other than 1: posvec's trainer updates "
                             "every word's vector and cannot lock or slow some; keep a copy of the "
                             "vectors to put back, or set wv.vectors_lockf to ones")
        if self._wv_assigned and self._model is None:
            raise ValueError("this model holds vectors only (wv was assigned): no output weights "
                             "to train; build_vocab() on a corpus first, or train a new model")
        for name, given, own in (("start_alpha", start_alpha, self.options["alpha"]),
                                 ("end_alpha", end_alpha, self.options["min_alpha"])):
            if given is not None and given != own:
                raise ValueError(f"{name}={given}: posvec trains on the model's own schedule "
                                 f"({own}); set alpha and min_alpha on the model instead")
        if compute_loss is not None:
            self.compute_loss = compute_loss
        if callbacks is not None:
            self.callbacks = tuple(callbacks)
        if pretokenized is not None:
            self.pretokenized = pretokenized
        if corpus_iterable is not None and corpus_file is not None:
            raise ValueError("give corpus_iterable or corpus_file, not both")
        if (corpus_iterable is not None or corpus_file is not None) and (
                epochs is None or (total_examples is None and total_words is None)):
            # gensim's rule for a corpus handed to train(): say how long to train and on how much
            # (posvec counts the corpus itself; the totals are checked for presence only).
            raise ValueError("train() with a corpus needs epochs= and total_examples= (sentences, "
                             "e.g. model.corpus_count) or total_words= (e.g. model.corpus_total_words), "
                             "as in gensim; train(epochs=n) alone continues on the corpus given before")
        if isinstance(corpus_iterable, (str, bytes)):
            raise TypeError("sentences must be an iterable of token lists; for a file use corpus_file=")
        if corpus_iterable is not None or corpus_file is not None:
            self._sentences = corpus_iterable
            self._corpus_file = os.fspath(corpus_file) if corpus_file is not None else None
        if self._sentences is None and self._corpus_file is None:
            raise ValueError("no corpus: give sentences (an iterable of token lists) or corpus_file")
        if self._corpus_file is not None and not os.path.exists(self._corpus_file):
            raise FileNotFoundError(2, "corpus_file does not exist", self._corpus_file)
        n = self.options["epochs"] if epochs is None else int(epochs)
        o = self.options
        self._running_losses = []
        self._latest_loss = 0.0

        def counted(c: Dict[str, Any]) -> None:
            self.corpus_count = c["sentences"]
            self.corpus_total_words = c["tokens"]

        if self._trains_nothing:
            if self._model is None:
                self.build_vocab(self._sentences, corpus_file=self._corpus_file)
            logger.warning("hs=0 and negative=0: nothing to train")
            return self
        if self._model is None:
            options = self._engine_options(epochs=n)
            self._model = self._run(
                _posvec.Model.train, run_epochs=n, sentences=self._sentences,
                corpus_file=self._corpus_file, pretokenized=self.pretokenized, options=options,
                counted=counted)
            self.options["epochs"] = self._model.config["epochs"]
        else:  # model.epochs stays the constructor's, as in gensim (the file stores the total)
            # gensim restarts alpha -> min_alpha on each train() call; posvec continues the
            # schedule it stored, so a changed model.alpha would silently do nothing.
            stored = self._model.config
            for name in ("alpha", "min_alpha"):
                if o[name] != stored[name]:
                    raise ValueError(
                        f"model.{name} was changed to {o[name]} after training began; posvec "
                        f"continues the stored schedule (alpha {stored['alpha']} -> min_alpha "
                        f"{stored['min_alpha']} over all epochs) and cannot follow it: set it "
                        f"back, or build a new model with {name}={o[name]}")
            self._run(self._model.resume, run_epochs=n, sentences=self._sentences,
                      corpus_file=self._corpus_file,
                      pretokenized=self.pretokenized, epochs=n, lowercase=o["lowercase"],
                      punctuation=o["punctuation"], locale=o["locale"])
        for key in ("combine", "block_negatives"):  # None chose the library's default
            if self.options.get(key) is None:
                self.options[key] = self._model.config[key]
        self._wv = self._wrap_vectors(self._model)
        self._wv_assigned = False
        for cb in self.callbacks:
            if hasattr(cb, "on_train_end"):
                cb.on_train_end(self)
        return self

    def get_latest_training_loss(self) -> float:
        """The summed loss of the last train() call (every prediction's loss, in double),
        as gensim's running_training_loss; 0.0 unless compute_loss was set, as gensim.
        Per-epoch means: :attr:`losses`."""
        return float(self._latest_loss) if self.compute_loss else 0.0

    @property
    def running_training_loss(self) -> float:
        return self.get_latest_training_loss()

    @property
    def losses(self) -> List[float]:
        """Mean loss of each epoch trained so far (per prediction, in double)."""
        return list(self._model.losses) if self._model is not None else []

    @property
    def epochs_done(self) -> int:
        return self._model.epochs_done if self._model is not None else 0

    # ---- output weights and what uses them ---------------------------------------------

    @property
    def syn1neg(self) -> np.ndarray:
        """Negative sampling's output weights (a copy), one row per word."""
        if self._model is None or self.options["hs"] or not self.options["negative"]:
            raise AttributeError("syn1neg: the model has no negative-sampling output weights")
        return self._model.output

    @property
    def syn1(self) -> np.ndarray:
        """Hierarchical softmax's output weights (a copy), one row per inner node of
        the Huffman tree: V - 1 rows, and a last zero row that no word uses, so the
        shape is gensim's (V, vector_size)."""
        if self._model is None or not self.options["hs"]:
            raise AttributeError("syn1: the model has no hierarchical-softmax output weights")
        inner = self._model.output
        return np.vstack([inner, np.zeros((1, inner.shape[1]), dtype=inner.dtype)])

    def predict_output_word(self, context_words_list: Sequence[Union[str, int]], topn: int = 10):
        """The centre words most probable given the context words (softmax over the
        negative-sampling output weights of the mean context vector, as gensim);
        None when no context word is known."""
        if self._model is None or self.options["hs"] or not self.options["negative"]:
            raise RuntimeError("predict_output_word needs a model trained with negative sampling "
                               "(hs=0, negative > 0) and its output weights (not vectors loaded alone)")
        kv = self.wv
        ids = []
        for w in context_words_list:
            if isinstance(w, Integral) and not isinstance(w, bool):
                if 0 <= int(w) < len(kv):
                    ids.append(int(w))
            elif w in kv:
                ids.append(kv.get_index(w))
        if not ids:
            logger.warning("all the input context words are out-of-vocabulary for the current model")
            return None
        l1 = kv.vectors[ids].astype(np.float64).sum(axis=0)
        if self.cbow_mean:
            l1 /= len(ids)
        scores = self._model.output.astype(np.float64) @ l1
        prob = np.exp(scores - scores.max())
        prob /= prob.sum()
        top = np.argsort(-prob, kind="stable")[:topn]
        return [(kv.index_to_key[i], float(prob[i])) for i in top]

    def _huffman(self) -> Tuple[List[List[int]], List[List[int]]]:
        """Each word's path in the trainer's Huffman tree: inner-node rows of the output
        weights (root first) and the branch taken at each. The same construction as the
        C++ trainer (word2vec.c's two queues over counts sorted most frequent first)."""
        counts = list(self._model.counts)
        v = len(counts)
        weight = counts + [0] * (v - 1)
        parent = [-1] * (2 * v - 1)
        branch = [0] * (2 * v - 1)
        leaf, inner = v - 1, v
        for made in range(v, 2 * v - 1):
            pair = []
            for _ in range(2):
                if leaf >= 0 and (inner >= made or weight[leaf] < weight[inner]):
                    pair.append(leaf)
                    leaf -= 1
                else:
                    pair.append(inner)
                    inner += 1
            a, b = pair
            weight[made] = weight[a] + weight[b]
            parent[a] = parent[b] = made
            branch[b] = 1
        points, codes = [], []
        for w in range(v):
            path, code, n = [], [], w
            while parent[n] >= 0:
                code.append(branch[n])
                path.append(parent[n] - v)
                n = parent[n]
            points.append(path[::-1])
            codes.append(code[::-1])
        return points, codes

    def score(self, sentences: Iterable[Sequence[str]], total_sentences: int = int(1e6),
              chunksize: int = 100, queue_factor: int = 2, report_delay: float = 1) -> np.ndarray:
        """Log-probability of each sentence under a hierarchical-softmax model (gensim's
        score, Taddy 2015): skip-gram sums log p(word | each context word within the
        full window), CBOW log p(word | mean of its context); words outside the
        vocabulary are dropped. float32 array, one value per sentence (at most
        total_sentences). Computed in double with exact log-sigmoids (gensim skips
        terms beyond its table's range of ±6)."""
        if self._model is None:
            raise RuntimeError("you must first build vocabulary before scoring new data")
        if not self.options["hs"]:
            raise RuntimeError("score needs a model trained with hierarchical softmax (hs=1, negative=0)")
        points, codes = self._huffman()
        inner = self._model.output.astype(np.float64)
        vectors = self.wv.vectors.astype(np.float64)
        window, sg = int(self.options["window"]), bool(self.options["sg"])

        def log_p(l1: np.ndarray, word: int) -> float:
            if not points[word]:
                return 0.0
            f = inner[points[word]] @ l1
            signs = 1.0 - 2.0 * np.asarray(codes[word], dtype=np.float64)
            return float(-np.logaddexp(0.0, -signs * f).sum())

        scores = []
        for count, sentence in enumerate(sentences):
            if count >= total_sentences:
                break
            ids = [i for i in (self.wv.get_index(w, -1) if isinstance(w, str) else -1 for w in sentence)
                   if i >= 0]
            total = 0.0
            for pos, word in enumerate(ids):
                context = [ids[p] for p in range(max(0, pos - window), min(len(ids), pos + window + 1))
                           if p != pos]
                if not context:
                    continue
                if sg:
                    total += sum(log_p(vectors[c], word) for c in context)
                else:
                    total += log_p(vectors[context].mean(axis=0), word)
            scores.append(total)
        return np.asarray(scores, dtype=np.float32)

    # ---- files -------------------------------------------------------------------------------

    def save(self, fname: Union[str, os.PathLike], *args: Any, **kwargs: Any) -> None:
        """The posvec model format (vectors, output weights, options, epochs done),
        written atomically; ``posvec train --resume`` reads it too. gensim's pickle
        options (sep_limit, ignore, pickle_protocol) do not apply and are refused."""
        if self._trainer is not None and self._trainer != threading.get_ident():
            raise RuntimeError("cannot save a Word2Vec model while another thread trains it; "
                               "save after train() returns (or from a callback)")
        if args or kwargs:
            raise ValueError("posvec saves its own model format; gensim's pickle options "
                             f"({', '.join(map(str, kwargs)) or 'positional'}) do not apply")
        if self._model is None:
            raise ValueError("nothing to save: the model is not trained yet (nor has it a vocabulary: "
                             "build_vocab or train first)")
        self._model.save(os.fspath(fname))

    @_ClassOnly
    def load(cls, fname: Union[str, os.PathLike], *args: Any, **kwargs: Any) -> "Word2Vec":
        """A model saved by save() or ``posvec train``: training continues from it.
        gensim's mmap is accepted (posvec reads the file into memory)."""
        kwargs.pop("mmap", None)
        if args:
            raise ValueError("Word2Vec.load takes the path only")
        path = os.fspath(fname)
        found = _posvec.detect_format(path)
        if found != "model":
            raise NotAModelError(f"'{path}' is a {found} vector file, not a posvec model: it holds no "
                                 "training state; read it with KeyedVectors.load")
        model = _posvec.Model.load(path)
        config = dict(model.config)
        config["max_final_vocab"] = config["max_final_vocab"] or None  # 0: no limit
        if "min_n" in config and cls is Word2Vec:
            raise ValueError(f"'{path}' was trained with subwords (character n-grams): load it "
                             "with posvec.FastText.load")
        self = cls(**{**config, **kwargs})
        self._model = model
        self._wv = self._wrap_vectors(model)
        self.corpus_total_words = int(sum(model.counts))
        return self

    def __repr__(self) -> str:
        return (f"<posvec.Word2Vec: {len(self.wv)} words, vector_size={self.vector_size}, "
                f"{self.epochs_done} epochs>")
