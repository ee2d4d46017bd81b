"""Rotary scaling and ALiBi from Python: the frequencies of five model families'
config.json against a NumPy float64 reference written from the published rules,
a float32 re-implementation in PyTorch (transformers computes in float32) with
its error reported beside posvec's float64, and ALiBi attention maps against
softmax(QK^T/sqrt(d_h) - m*distance) with the causal mask."""

import json
import math

import numpy as np
import pytest

import posvec


def theta(base, d, xp=np, dtype=np.float64):
    return 1.0 / (base ** (xp.arange(0, d, 2, dtype=dtype) / d))


def ref_yarn(base, d, s, L, fast=32.0, slow=1.0):
    def idx(rot):
        return d * math.log(L / (rot * 2 * math.pi)) / (2 * math.log(base))
    lo, hi = max(math.floor(idx(fast)), 0), min(math.ceil(idx(slow)), d - 1)
    if lo == hi:
        hi += 0.001
    gamma = np.clip((np.arange(d // 2) - lo) / (hi - lo), 0, 1)
    t = theta(base, d)
    return gamma * t / s + (1 - gamma) * t, 0.1 * math.log(s) + 1


def ref_llama3(base, d, s, L, low, high):
    t = theta(base, d)
    lam = 2 * math.pi / t
    a = (L / lam - low) / (high - low)
    mid = a * t + (1 - a) * t / s
    return np.where(lam < L / high, t, np.where(lam > L / low, t / s, mid))


PHI_SHORT = [1.0 + 0.01 * i for i in range(48)]
PHI_LONG = [1.0 + 0.9 * i for i in range(48)]

CONFIGS = {
    "llama-3.1-8b": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}},
    "qwen2-7b-yarn": {
        "hidden_size": 3584, "num_attention_heads": 28, "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}},
    "phi-3-mini-128k": {
        "hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
        "rope_scaling": {"long_factor": PHI_LONG, "short_factor": PHI_SHORT, "type": "longrope"}},
    "gpt-neox-20b": {
        "hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
        "rotary_emb_base": 10000, "max_position_embeddings": 2048},
    "internlm2-7b-dynamic": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 32768,
        "rope_theta": 1000000, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
}


def reference(name, seq_len=None):
    """float64 (inv_freq, attention_factor) from the published rules."""
    if name == "llama-3.1-8b":
        return ref_llama3(500000.0, 128, 8.0, 8192, 1.0, 4.0), 1.0
    if name == "qwen2-7b-yarn":
        return ref_yarn(1000000.0, 128, 4.0, 32768)
    if name == "phi-3-mini-128k":
        f = PHI_LONG if seq_len and seq_len > 4096 else PHI_SHORT
        return theta(10000.0, 96) / np.array(f), math.sqrt(1 + math.log(32) / math.log(4096))
    if name == "gpt-neox-20b":
        return theta(10000.0, 24), 1.0
    L = max(seq_len or 0, 32768)
    return theta(1000000.0 * (2.0 * L / 32768 - 1) ** (128 / 126), 128), 1.0


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("seq_len", [None, 65536])
def test_five_families_match_the_float64_reference(tmp_path, name, seq_len):
    want, af = reference(name, seq_len)
    got = posvec.rope_frequencies(CONFIGS[name], seq_len=seq_len)
    assert got.inv_freq.dtype == np.float64 and got.dim == 2 * len(want)
    np.testing.assert_allclose(got.inv_freq, want, rtol=1e-13, atol=0)
    assert got.attention_factor == pytest.approx(af, rel=1e-14)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS[name]))
    again = posvec.rope_frequencies(str(path), seq_len=seq_len)
    assert again.inv_freq.tobytes() == got.inv_freq.tobytes()


def test_cli_json_equals_python(tmp_path, cli):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(CONFIGS["llama-3.1-8b"]))
    out = json.loads(cli("rope", path, "--json", "--profile", "1,100,8192,65536").stdout)
    f = posvec.rope_frequencies(str(path))
    assert out["rope_type"] == "llama3" and out["dim"] == 128
    assert np.array_equal(np.array(out["inv_freq"]), f.inv_freq)
    p = posvec.rope_profile(f, [1, 100, 8192, 65536])
    assert [q["mean_cos"] for q in out["profile"]] == p.mean_cos.tolist()
    assert [q["bound"] for q in out["profile"]] == p.bound.tolist()


def test_profile_and_errors():
    t = theta(10000.0, 64)
    p = posvec.rope_profile(t, [0, 3, 1000])
    np.testing.assert_allclose(p.mean_cos, [np.cos(k * t).mean() for k in (0, 3, 1000)], atol=1e-14)
    partial = np.cumsum(np.exp(1j * np.outer([0, 3, 1000], t)), axis=1)
    np.testing.assert_allclose(p.bound, np.abs(partial).mean(axis=1), rtol=1e-12)
    with pytest.raises(ValueError, match="factor"):
        posvec.rope_frequencies({"head_dim": 64, "rope_scaling": {"type": "linear", "factor": 0.5}})
    with pytest.raises(ValueError, match="unknown rope_type"):
        posvec.rope_frequencies({"head_dim": 64, "rope_scaling": {"type": "xpos", "factor": 2}})
    with pytest.raises(FileNotFoundError):
        posvec.rope_frequencies("/nonexistent/config.json")


@pytest.mark.parametrize("config, where, value", [
    ({"head_dim": 64, "rope_scaling": {"rope_type": "linear", "factor": float("nan")}},
     "config['rope_scaling']['factor']", "nan"),
    ({"head_dim": 64, "rope_theta": float("inf")}, "config['rope_theta']", "inf"),
    ({"head_dim": 8, "max_position_embeddings": 4096,
      "rope_scaling": {"rope_type": "longrope", "original_max_position_embeddings": 1024,
                       "short_factor": [1.0, 1.0, 1.0, 1.0],
                       "long_factor": [1.0, 2.0, -np.inf, 4.0]}},
     "config['rope_scaling']['long_factor'][2]", "-inf"),
])
def test_a_dict_with_a_non_finite_value_names_its_key(config, where, value):
    # Issue #45 item 9b: the dict's own key, not a column of JSON the caller never wrote.
    with pytest.raises(ValueError) as e:
        posvec.rope_frequencies(config)
    message = str(e.value)
    assert message.startswith(f"{where} is {value}: "), message
    assert "JSON" not in message and "column" not in message and "\n" not in message


def test_float32_reimplementation_error_beside_float64():
    """transformers computes inv_freq in float32: the same rules in float32 (torch)
    differ from posvec's float64 by float rounding; the angle k*theta at 64k
    positions loses far more. Reported, and bounded."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian's python3-torch)")
    f32 = torch.float32

    def t32(base, d):
        return 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.int64).to(f32) / d))

    def yarn32(base, d, s, L):
        def idx(rot):
            return d * math.log(L / (rot * 2 * math.pi)) / (2 * math.log(base))
        lo, hi = max(math.floor(idx(32)), 0), min(math.ceil(idx(1)), d - 1)
        ramp = torch.clamp((torch.arange(d // 2, dtype=f32) - lo) / (hi - lo), 0, 1)
        t = t32(base, d)
        return t / s * ramp + t * (1 - ramp)

    def llama32(base, d, s, L, low, high):
        t = t32(base, d)
        lam = 2 * math.pi / t
        scaled = torch.where(lam > L / low, t / s, t)
        a = (L / lam - low) / (high - low)
        mid = (1 - a) * scaled / s + a * scaled
        medium = ~(lam < L / high) & ~(lam > L / low)
        return torch.where(medium, mid, scaled)

    impl32 = {
        "llama-3.1-8b": lambda: llama32(500000.0, 128, 8.0, 8192, 1.0, 4.0),
        "qwen2-7b-yarn": lambda: yarn32(1000000.0, 128, 4.0, 32768),
        "phi-3-mini-128k": lambda: t32(10000.0, 96) / torch.tensor(PHI_SHORT, dtype=f32),
        "gpt-neox-20b": lambda: t32(10000.0, 24),
        "internlm2-7b-dynamic": lambda: t32(1000000.0, 128),
    }
    lines = []
    for name, fn in impl32.items():
        ours = posvec.rope_frequencies(CONFIGS[name]).inv_freq
        theirs = fn().double().numpy()
        rel = np.max(np.abs(theirs - ours) / ours)
        k = 65536.0
        angle32 = (torch.tensor(k, dtype=f32) * fn()).double().numpy()
        cos_err = np.max(np.abs(np.cos(angle32) - np.cos(k * ours)))
        lines.append(f"{name:22s} inv_freq float32 rel. error {rel:.2e}; cos(65536*theta) error {cos_err:.2e}")
        assert rel < 5e-6, name
    print("\n" + "\n".join(lines))


def write_vectors(path, words, dim, seed):
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((len(words), dim)) * 0.5
    with open(path, "w") as out:
        out.write(f"{len(words)} {dim}\n")
        for w, row in zip(words, m):
            out.write(w + " " + " ".join(f"{v:.6f}" for v in row) + "\n")
    return {w: row.astype(np.float32).astype(np.float64) for w, row in zip(words, m.round(6))}


@pytest.mark.parametrize("heads", [8, 12])
@pytest.mark.parametrize("causal", [False, True])
def test_alibi_maps_match_numpy(tmp_path, cli, heads, causal):
    words = "the black cat sat on a brown mat by door".split()
    dim = 48
    vec = write_vectors(tmp_path / "v.txt", words, dim, seed=heads)
    sentence = "the black cat sat on the brown mat by the door"
    args = ["attend", tmp_path / "v.txt", "-s", sentence, "--heads", heads, "--positional", "alibi",
            "--scale", "none", "--format", "npy", "-o", tmp_path / "w.npy"]
    if causal:
        args.append("--causal")
    cli(*args)
    got = np.load(tmp_path / "w.npy")
    x = np.stack([vec[w] for w in sentence.split()])
    T, dh = len(x), dim // heads
    m = posvec.alibi_slopes(heads)
    dist = np.abs(np.arange(T)[:, None] - np.arange(T)[None, :])
    for h in range(heads):
        q = x[:, h * dh:(h + 1) * dh]
        s = q @ q.T / np.sqrt(dh) - m[h] * dist
        if causal:
            s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(got[h], w, atol=1e-12)
    n = 2 ** math.floor(math.log2(heads))
    want = [2 ** (-8 * (i + 1) / n) for i in range(n)]
    want += [2 ** (-4 * (2 * i + 1) / n) for i in range(heads - n)]
    np.testing.assert_allclose(m, want, rtol=1e-15)


def test_scaled_rotary_attention_matches_rotate_half(tmp_path, cli):
    """attend --positional rotary with a YaRN config and partial rotary, against
    transformers' recipe in NumPy: cos and sin of cat(freqs, freqs) times the
    attention factor, q*cos + rotate_half(q)*sin on the rotary share, the rest passed."""
    words = "the black cat sat on a brown mat".split()
    dim, heads = 16, 2
    dh = dim // heads
    vec = write_vectors(tmp_path / "v.txt", words, dim, seed=7)
    config = {"head_dim": 64, "partial_rotary_factor": 0.5, "max_position_embeddings": 8,
              "rope_theta": 100.0, "rope_scaling": {"type": "yarn", "factor": 4.0}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    sentence = "the black cat sat on a brown mat"
    start = 5
    cli("attend", tmp_path / "v.txt", "-s", sentence, "--heads", heads, "--positional", "rotary",
        "--rope-config", tmp_path / "config.json", "--encoding", "concatenated", "--causal",
        "--scale", "none", "--start", start, "--format", "npy", "-o", tmp_path / "w.npy")
    got = np.load(tmp_path / "w.npy")
    # The config's rule at the attention's own head size (8): rotary size 4.
    f = posvec.rope_frequencies(dict(config, head_dim=dh))
    assert f.dim == 4 and f.attention_factor == pytest.approx(1 + 0.1 * math.log(4))
    x = np.stack([vec[w] for w in sentence.split()])
    T = len(x)
    pos = np.arange(start, start + T, dtype=np.float64)[:, None]
    emb = np.concatenate([pos * f.inv_freq, pos * f.inv_freq], axis=1)
    cos, sin = np.cos(emb) * f.attention_factor, np.sin(emb) * f.attention_factor

    def rotate_half(v):
        h = v.shape[-1] // 2
        return np.concatenate([-v[:, h:], v[:, :h]], axis=1)

    for h in range(heads):
        q = x[:, h * dh:(h + 1) * dh]
        rot, rest = q[:, :f.dim], q[:, f.dim:]
        q = np.concatenate([rot * cos + rotate_half(rot) * sin, rest], axis=1)
        s = q @ q.T / np.sqrt(dh)
        s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        np.testing.assert_allclose(got[h], w, atol=1e-12)


def test_python_attention_and_apply_rotary_equal_the_cli_and_rotate_half(tmp_path, cli):
    """posvec.attention gives attend's maps (rotary with a config, ALiBi) and
    posvec.apply_rotary transformers' q*cos + rotate_half(q)*sin, written out here."""
    words = "the black cat sat on a brown mat".split()
    dim, heads, start = 16, 2, 5
    dh = dim // heads
    vec = write_vectors(tmp_path / "v.txt", words, dim, seed=11)
    config = {"head_dim": 64, "partial_rotary_factor": 0.5, "max_position_embeddings": 8,
              "rope_theta": 100.0, "rope_scaling": {"type": "yarn", "factor": 4.0}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    sentence = "the black cat sat on a brown mat"
    x = np.stack([vec[w] for w in sentence.split()])
    T = len(x)
    cli("attend", tmp_path / "v.txt", "-s", sentence, "--heads", heads, "--positional", "rotary",
        "--rope-config", tmp_path / "config.json", "--encoding", "concatenated", "--causal",
        "--scale", "none", "--start", start, "--format", "npy", "-o", tmp_path / "w.npy")
    got = posvec.attention(x, heads=heads, mask="causal", positional="rotary",
                           rope_config=tmp_path / "config.json", layout="concatenated", start=start)
    assert got.weights.shape == (heads, T, T) and got.output.shape == (T, dim)
    np.testing.assert_allclose(got.weights, np.load(tmp_path / "w.npy"), rtol=0, atol=1e-14)
    # A dict config gives the same maps; each head's output is its weights times its columns.
    same = posvec.attention(x, heads=heads, mask="causal", positional="rotary", rope_config=config,
                            layout="concatenated", start=start)
    np.testing.assert_array_equal(same.weights, got.weights)
    for h in range(heads):
        np.testing.assert_allclose(got.output[:, h * dh:(h + 1) * dh],
                                   got.weights[h] @ x[:, h * dh:(h + 1) * dh], atol=1e-13)

    # apply_rotary against rotate_half written here, both layouts.
    f = posvec.rope_frequencies(dict(config, head_dim=dh))
    pos = np.arange(start, start + T, dtype=np.float64)
    ang = pos[:, None] * f.inv_freq
    cos, sin = np.cos(ang) * f.attention_factor, np.sin(ang) * f.attention_factor
    q = x[:, :dh]
    r = f.dim
    half = np.concatenate([q[:, :r // 2] * cos - q[:, r // 2:r] * sin,
                           q[:, r // 2:r] * cos + q[:, :r // 2] * sin, q[:, r:]], axis=1)
    np.testing.assert_allclose(posvec.apply_rotary(q, pos, dict(config, head_dim=dh),
                                                   layout="concatenated"), half, atol=1e-15)
    inter = q.copy()
    inter[:, 0:r:2] = q[:, 0:r:2] * cos - q[:, 1:r:2] * sin
    inter[:, 1:r:2] = q[:, 1:r:2] * cos + q[:, 0:r:2] * sin
    np.testing.assert_allclose(posvec.apply_rotary(q, pos, dict(config, head_dim=dh)), inter,
                               atol=1e-15)
    # The plain rule: scores of rotated rows depend on the distance only.
    a = posvec.apply_rotary(np.tile(q[:1], (T, 1)), pos)
    s = a @ a.T
    np.testing.assert_allclose(np.diag(s, 1), np.full(T - 1, s[0, 1]), rtol=1e-12)

    # ALiBi through Python and through attend.
    cli("attend", tmp_path / "v.txt", "-s", sentence, "--heads", heads, "--positional", "alibi",
        "--scale", "none", "--format", "npy", "-o", tmp_path / "a.npy")
    np.testing.assert_allclose(posvec.attention(x, heads=heads, positional="alibi").weights,
                               np.load(tmp_path / "a.npy"), rtol=0, atol=1e-14)
    with pytest.raises(ValueError, match="mask must be None or 'causal'"):
        posvec.attention(x, mask="future")
    with pytest.raises(ValueError, match="rope_config needs positional='rotary'"):
        posvec.attention(x, rope_config=config)
    with pytest.raises(ValueError, match="positions holds 2 values for 8 rows"):
        posvec.apply_rotary(x, [0, 1])


def test_the_package_lists_its_own_names_only():
    names = dir(posvec)
    for leaked in ("np", "os", "queue", "threading", "Any", "List", "annotations"):
        assert leaked not in names
    assert {"attention", "apply_rotary", "rope_frequencies", "Word2Vec"} <= set(names)
    assert all(hasattr(posvec, n) for n in names)
