"""Attention over your own rows and rotary positions applied to your own arrays, in float64.

:func:`attention` is the engine of ``posvec attend`` (scaled dot-product attention, heads,
causal mask, rotary positions from a model's config.json or the plain rule, ALiBi) on a
NumPy matrix of rows; :func:`apply_rotary` rotates queries or keys as a model's rotary
embedding does, with the frequencies of :func:`posvec.rope_frequencies`. See docs/rope.md.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, NamedTuple, Optional, Sequence, Union

import numpy as np

from . import _posvec
from .rope import _non_finite, rope_frequencies

Config = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class AttentionMaps(NamedTuple):
    """What :func:`attention` returns."""

    weights: np.ndarray  # (heads, T, T): row = query, column = key; each row sums to 1
    output: np.ndarray  # (T, heads * head_dim): each head's weights times its values


def _rope_config(config: Config, hf_version: str) -> Any:
    if isinstance(config, Mapping):
        found = _non_finite(config, "rope_config")
        if found is not None:
            raise ValueError(f"{found[0]} is {found[1]}: a rotary configuration holds finite "
                             "numbers only (as a config.json can); give a finite value")
        return _posvec.rope_config(None, json.dumps(dict(config), allow_nan=False), hf_version)
    return _posvec.rope_config(os.fspath(config), None, hf_version)


def attention(x: Any, heads: int = 1, head_dim: int = 0, mask: Optional[str] = None,
              positional: str = "none", rope_config: Optional[Config] = None,
              layout: str = "interleaved", base: float = 10000.0, start: int = 0,
              hf_version: str = "5") -> AttentionMaps:
    """softmax(Q Kᵀ / √head_dim) V for each head over the rows of ``x`` (T × d_model, the
    identity projections of ``posvec attend``: head h reads columns h·head_dim onwards).

    ``mask``: None or ``"causal"`` (query t sees keys 0..t). ``positional``: ``"none"``,
    ``"rotary"`` (each head's first columns rotate by position; with ``rope_config``, a
    model's config.json path or dict, its scaling rule at these heads' size, else the
    plain rule at ``base``) or ``"alibi"``; additive encodings are added to the rows
    before the call (:func:`posvec.encode`). ``layout``: the rotated pairs,
    ``"interleaved"`` (RoFormer, GPT-J) or ``"concatenated"`` (transformers' rotate_half:
    Llama, GPT-NeoX). ``start``: the position of row 0."""
    if mask not in (None, "causal"):
        raise ValueError(f"mask must be None or 'causal', got {mask!r}")
    rope = _rope_config(rope_config, hf_version) if rope_config is not None else None
    w, out = _posvec.attention(np.asarray(x, dtype=np.float64), int(heads), int(head_dim),
                               mask == "causal", positional, rope, layout, float(base), int(start))
    return AttentionMaps(w, out)


def apply_rotary(x: Any, positions: Sequence[int], config: Optional[Config] = None,
                 layout: str = "interleaved", base: float = 10000.0,
                 seq_len: Optional[int] = None, hf_version: str = "5") -> np.ndarray:
    """``x`` (…, T, head) with each row t's first rotated columns turned by positions[t]·θᵢ
    and multiplied by the attention factor, the rest unchanged: what a rotary embedding
    does to queries and keys. ``config``: a model's config.json path or dict (its rule at
    its own head size, which must fit in ``x``'s last axis), or None for the plain rule
    over the whole last axis at ``base``. ``layout`` as in :func:`attention`."""
    a = np.array(x, dtype=np.float64)
    if a.ndim < 2:
        raise ValueError("x must have at least two axes (positions, head columns)")
    p = np.asarray(positions, dtype=np.float64).reshape(-1)
    if p.size != a.shape[-2]:
        raise ValueError(f"positions holds {p.size} values for {a.shape[-2]} rows")
    if not np.all(np.isfinite(p)) or np.any(np.abs(p) >= 2.0 ** 53):
        raise ValueError("positions must be finite and below 2^53 in magnitude")
    if config is None:
        f = rope_frequencies({"head_dim": a.shape[-1], "rope_theta": float(base)})
    else:
        f = rope_frequencies(config, seq_len, hf_version)
    r = f.dim
    if r > a.shape[-1]:
        raise ValueError(f"the configuration rotates {r} columns; x's rows have {a.shape[-1]}")
    if layout not in ("interleaved", "concatenated"):
        raise ValueError(f"layout must be 'interleaved' or 'concatenated', got {layout!r}")
    angle = p[:, None] * f.inv_freq[None, :]
    cos, sin = np.cos(angle) * f.attention_factor, np.sin(angle) * f.attention_factor
    if layout == "interleaved":
        first, second = a[..., 0:r:2].copy(), a[..., 1:r:2].copy()
        a[..., 0:r:2] = first * cos - second * sin
        a[..., 1:r:2] = second * cos + first * sin
    else:
        first, second = a[..., : r // 2].copy(), a[..., r // 2 : r].copy()
        a[..., : r // 2] = first * cos - second * sin
        a[..., r // 2 : r] = second * cos + first * sin
    return a
