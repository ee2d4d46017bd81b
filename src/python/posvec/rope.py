"""Rotary scaling (RoPE frequencies of a model's config.json) and ALiBi, in float64.

The rules are those of Hugging Face transformers' ``modeling_rope_utils``
(default, linear, ntk, dynamic, yarn, llama3, longrope); see docs/rope.md.
"""

from __future__ import annotations

import json
import math
import os
from numbers import Integral, Real
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from . import _posvec


class RopeFrequencies(NamedTuple):
    """What a rotary configuration rotates by."""

    rope_type: str
    dim: int  # rotated size, 2 * len(inv_freq)
    inv_freq: np.ndarray  # float64, radians per position for each pair
    attention_factor: float  # multiplies cos and sin


class RopeProfile(NamedTuple):
    """Similarity of two positions against their distance."""

    distance: np.ndarray
    mean_cos: np.ndarray  # (2/d) sum_i cos(k theta_i)
    bound: np.ndarray  # RoFormer's long-term decay bound


def _non_finite(value: Any, where: str) -> Optional[Tuple[str, float]]:
    """The first NaN or infinity in a parsed config (dicts and lists) and where it
    is, e.g. ``config['rope_scaling']['factor']``; None when there is none."""
    if isinstance(value, Real) and not isinstance(value, Integral):
        return None if math.isfinite(value) else (where, float(value))
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _non_finite(item, f"{where}[{key!r}]")
        if found is not None:
            return found
    return None


def rope_frequencies(config: Union[str, "os.PathLike[str]", Mapping[str, Any]],
                     seq_len: Optional[int] = None, hf_version: str = "5") -> RopeFrequencies:
    """The inverse frequencies and attention factor of a config.json (a path or
    the parsed dict). ``seq_len`` is the sequence length for dynamic and longrope;
    ``hf_version`` ("5", "4.50" or "4.47") the transformers release whose rule applies
    where they differ (yarn with an original context; docs/rope.md)."""
    if isinstance(config, Mapping):
        # JSON has no NaN or infinity: json.dumps would write them anyway, as text the
        # reader refuses with a column in JSON the caller never wrote.
        found = _non_finite(config, "config")
        if found is not None:
            raise ValueError(f"{found[0]} is {found[1]}: a rotary configuration holds finite "
                             "numbers only (as a config.json can); give a finite value")
        text = json.dumps(dict(config), allow_nan=False)
        t, d, f, a = _posvec.rope_frequencies_json(text, "config", seq_len, hf_version)
    else:
        t, d, f, a = _posvec.rope_frequencies_file(os.fspath(config), seq_len, hf_version)
    return RopeFrequencies(t, int(d), f, float(a))


def rope_profile(frequencies: Union[RopeFrequencies, Sequence[float], np.ndarray],
                 distances: Sequence[float]) -> RopeProfile:
    """mean_cos and RoFormer's decay bound at each distance, for a
    RopeFrequencies or a list of inverse frequencies."""
    inv = frequencies.inv_freq if isinstance(frequencies, RopeFrequencies) else frequencies
    k = np.asarray(distances, dtype=np.float64).reshape(-1)
    c, b = _posvec.rope_profile(np.asarray(inv, dtype=np.float64).tolist(), k.tolist())
    return RopeProfile(k, c, b)


def alibi_slopes(heads: int) -> np.ndarray:
    """ALiBi's per-head slopes m_h (the paper's rule for powers of two, BLOOM's otherwise)."""
    return _posvec.alibi_slopes(int(heads))


def alibi_bias(slope: float, length: int, causal: bool = False) -> np.ndarray:
    """One head's (length, length) bias -slope*|i - j| (causal: -inf after the query)."""
    return _posvec.alibi_bias(float(slope), int(length), bool(causal))
