"""Word2Vec: posvec's trainer with gensim 4's constructor and attributes."""

from __future__ import annotations

import logging
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import _posvec
from .keyedvectors import KeyedVectors

logger = logging.getLogger(__name__)

Progress = Union[bool, str, Callable[[Dict[str, Any]], None], None]


class _Progress:
    """Forwards the trainer's reports to a callable, a tqdm bar, and gensim-style callbacks."""

    def __init__(self, model: "Word2Vec", progress: Progress, epochs_done: int = 0) -> None:
        self.model = model
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
        if self.epochs_total and self.open_bar():
            done = self.percent({"epochs": self.epochs_total, "fraction": report["epoch"] / self.epochs_total})
            self.bar.update(done - self.bar.n)
        if self.callable is not None:
            self.callable(dict(report, event="epoch_end"))
        for cb in self.model.callbacks:
            if hasattr(cb, "on_epoch_end"):
                cb.on_epoch_end(self.model)

    def close(self, finished: bool) -> None:
        if self.bar is not None:
            if finished:
                self.bar.update(self.bar.total - self.bar.n)
            self.bar.close()


class Word2Vec:
    """Skip-gram or CBOW word2vec, trained by posvec's C++ engine.

    ``sentences`` is any iterable of token lists (a generator is fine: it is read
    once, while the vocabulary is counted, and never held in memory);
    ``corpus_file`` is a raw text file tokenized like ``posvec tokenize``, or with
    ``pretokenized=True`` one sentence a line split on whitespace. Training
    releases the GIL; Ctrl-C raises KeyboardInterrupt within a second.
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
    ) -> None:
        self.options: Dict[str, Any] = dict(
            vector_size=vector_size, window=window, min_count=min_count, sg=sg, hs=hs,
            negative=negative, sample=sample, alpha=alpha, min_alpha=min_alpha, epochs=epochs,
            workers=workers, seed=seed, max_final_vocab=max_final_vocab or 0, kernel=kernel,
            combine=combine, block_negatives=block_negatives,
            lowercase=lowercase, punctuation=punctuation, locale=locale)
        self.callbacks = tuple(callbacks)
        self.progress = progress
        self.pretokenized = pretokenized
        self._model: Optional[_posvec.Model] = None
        self._running_losses: List[float] = []
        self.wv = KeyedVectors(vector_size)
        if sentences is not None and corpus_file is not None:
            raise ValueError("give sentences or corpus_file, not both")
        if isinstance(sentences, (str, bytes)):
            raise TypeError("sentences must be an iterable of token lists; for a file use corpus_file=")
        self._sentences = sentences
        self._corpus_file = os.fspath(corpus_file) if corpus_file is not None else None
        if sentences is not None or corpus_file is not None:
            self.train(epochs=epochs)

    # gensim's names for the options
    def __getattr__(self, name: str) -> Any:
        options = self.__dict__.get("options")
        if options is not None and name in options:
            return options[name]
        raise AttributeError(name)

    def _run(self, fn: Callable[..., Any], run_epochs: int = 0, **kwargs: Any) -> Any:
        reporter = _Progress(self, self.progress, self.epochs_done)
        reporter.epochs_total = self.epochs_done + run_epochs  # this run's after those done
        for cb in self.callbacks:
            if hasattr(cb, "on_train_begin"):
                cb.on_train_begin(self)
        finished = False
        try:
            result = fn(progress=reporter.progress, epoch_end=reporter.epoch_end,
                        log=lambda line: logger.info("%s", line), **kwargs)
            finished = True
            return result
        finally:
            reporter.close(finished)

    def train(
        self,
        corpus_iterable: Optional[Iterable[Sequence[str]]] = None,
        corpus_file: Optional[Union[str, os.PathLike]] = None,
        epochs: Optional[int] = None,
        pretokenized: Optional[bool] = None,
        **ignored: Any,
    ) -> "Word2Vec":
        """Trains ``epochs`` epochs: from scratch on a new model, otherwise further
        on the stored learning-rate schedule (as if the model had been trained for
        the sum from the start). The corpus defaults to the one given before; a
        generator given before is spent, so pass the sentences again. gensim's
        total_examples/total_words are accepted and ignored (posvec counts)."""
        if pretokenized is not None:
            self.pretokenized = pretokenized
        if corpus_iterable is not None and corpus_file is not None:
            raise ValueError("give corpus_iterable or corpus_file, not both")
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
        if self._model is None:
            options = dict(o, epochs=n)
            self._model = self._run(
                _posvec.Model.train, run_epochs=n, sentences=self._sentences,
                corpus_file=self._corpus_file,
                pretokenized=self.pretokenized, options=options)
        else:
            self._run(self._model.resume, run_epochs=n, sentences=self._sentences,
                      corpus_file=self._corpus_file,
                      pretokenized=self.pretokenized, epochs=n, lowercase=o["lowercase"],
                      punctuation=o["punctuation"], locale=o["locale"])
        self.options["epochs"] = self._model.config["epochs"]
        for key in ("combine", "block_negatives"):  # None chose the library's default
            if self.options.get(key) is None:
                self.options[key] = self._model.config[key]
        self.wv = KeyedVectors._wrap(self._model.embeddings())
        for cb in self.callbacks:
            if hasattr(cb, "on_train_end"):
                cb.on_train_end(self)
        return self

    @property
    def losses(self) -> List[float]:
        """Mean loss of each epoch trained so far (per prediction, in double)."""
        return list(self._model.losses) if self._model is not None else []

    @property
    def epochs_done(self) -> int:
        return self._model.epochs_done if self._model is not None else 0

    def save(self, fname: Union[str, os.PathLike]) -> None:
        """The posvec model format (vectors, output weights, options, epochs done),
        written atomically; ``posvec train --resume`` reads it too."""
        if self._model is None:
            raise ValueError("nothing to save: the model is not trained yet")
        self._model.save(os.fspath(fname))

    @classmethod
    def load(cls, fname: Union[str, os.PathLike], **kwargs: Any) -> "Word2Vec":
        model = _posvec.Model.load(os.fspath(fname))
        self = cls(**{**model.config, **kwargs})
        self._model = model
        self.wv = KeyedVectors._wrap(model.embeddings())
        return self

    def __repr__(self) -> str:
        return (f"<posvec.Word2Vec: {len(self.wv)} words, vector_size={self.vector_size}, "
                f"{self.epochs_done} epochs>")
