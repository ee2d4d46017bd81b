"""posvec.study: the black/brown study as one call, with results that display in
Jupyter (the table as HTML, each figure as SVG)."""

from __future__ import annotations

import html
import json
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from . import _posvec


class Figure:
    """One figure of the study: ``svg`` is a standalone SVG document."""

    def __init__(self, file: str, title: str, caption: str, svg: str) -> None:
        self.file, self.title, self.caption, self.svg = file, title, caption, svg

    def _repr_svg_(self) -> str:
        return self.svg

    def __repr__(self) -> str:
        return f"<posvec.study Figure {self.file!r}: {self.title}>"


class StudyResult:
    """The numbers of one study run.

    ``word_similarity``, ``positional_similarity`` and ``combined_similarity`` are
    those of the first pair under the first encoding; ``pairs`` holds every pair
    under every encoding (dicts as in the CLI's --json), ``settings`` what they
    were computed with, ``figures`` the report's figures, ``data`` every number.
    """

    def __init__(self, results: "_posvec.StudyResults") -> None:
        self._r = results
        summary = json.loads(results.summary_json())
        self.word_similarity: float = summary["word_similarity"]
        self.positional_similarity: float = summary["positional_similarity"]
        self.combined_similarity: float = summary["combined_similarity"]
        self.pairs: List[Dict[str, Any]] = summary["pairs"]
        self.settings: Dict[str, Any] = summary["settings"]
        self._figures: Optional[List[Figure]] = None
        self._data: Optional[Dict[str, Any]] = None

    @property
    def figures(self) -> List[Figure]:
        if self._figures is None:
            self._figures = [Figure(*f) for f in self._r.figures()]
        return self._figures

    @property
    def data(self) -> Dict[str, Any]:
        """Everything the report's results.json holds."""
        if self._data is None:
            self._data = json.loads(self._r.results_json())
        return self._data

    def table(self) -> str:
        """The study table as ``posvec study`` prints it."""
        return self._r.table()

    def report(self, directory: Union[str, os.PathLike]) -> str:
        """Writes index.html, one SVG per figure and results.json into
        ``directory`` (created if needed), each file atomically; returns the path."""
        path = os.fspath(directory)
        self._r.write_report(path)
        return path

    def report_html(self) -> str:
        """The self-contained HTML report page as a string."""
        return self._r.report_html()

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(self.table())}</pre>"

    def __repr__(self) -> str:
        return (f"<posvec.StudyResult: word {self.word_similarity:.8f}, positional "
                f"{self.positional_similarity:.7f}, combined {self.combined_similarity:.7f}>")


def study(
    corpus: Optional[Union[str, os.PathLike]] = None,
    vectors: Optional[Union[str, os.PathLike]] = None,
    pairs: Sequence[Tuple[str, int]] = (("black", 2), ("brown", 10)),
    encodings: Sequence[str] = ("book", "interleaved"),
    dim: int = 0,
    scale: Union[str, float] = "sqrt",
    base: float = 10000.0,
    seed: int = 1,
    epochs: int = 5,
    workers: int = 1,
    sweep: bool = False,
    report: Optional[Union[str, os.PathLike]] = None,
    progress: Optional[Callable[[Dict[str, Any]], None]] = None,
    phrases: Optional[Union[str, os.PathLike]] = None,
) -> StudyResult:
    """Runs the black/brown study (as ``posvec study``): trains on ``corpus`` (the
    corpus shipped with posvec when neither it nor ``vectors`` is given) or uses
    ``vectors``, places each word at its position, and measures word, positional
    and combined similarity of every pair under each encoding, plus the
    positional experiments. ``dim=0``: 512 when training, the vectors' own
    otherwise. ``workers=1`` keeps the numbers reproducible. ``sweep`` also trains
    the report's extra models; ``report`` writes the HTML report there.
    ``phrases``: a phrase table (``posvec phrases --save-table``) whose phrases are
    joined in ``corpus`` as it is read, so a pair may name one (``("new_york", 5)``).
    """
    if corpus is None and vectors is None:
        shipped = os.path.join(os.path.dirname(os.path.abspath(__file__)), "posvec-corpus.txt")
        if os.path.exists(shipped):  # installed packages carry the shipped corpus
            corpus = shipped
    options = dict(
        corpus=os.fspath(corpus) if corpus is not None else "",
        vectors=os.fspath(vectors) if vectors is not None else "",
        pairs=[(str(w), int(p)) for w, p in pairs],
        encodings=[str(e) for e in ([encodings] if isinstance(encodings, str) else encodings)],
        dim=int(dim),
        scale=scale if isinstance(scale, str) else repr(float(scale)),
        base=float(base), seed=int(seed), epochs=int(epochs), workers=int(workers),
        sweep=bool(sweep), report=os.fspath(report) if report is not None else "",
        phrases=os.fspath(phrases) if phrases is not None else "",
    )
    return StudyResult(_posvec.run_study(options, progress))
