"""`posvec rope CONFIG --json` against the published configs of public model families.

For each family a small config.json holding the rope-relevant keys of its
published Hugging Face config (values as published; Phi-3's short/long factor
lists are synthetic but of the published length) is written to tmp_path and
handed to the CLI. Its rotated size must equal the reference's exactly, and
every inv_freq entry and the attention factor must agree to 1e-12 relative.

The reference below is float64 NumPy written from the published rules of
transformers' modeling_rope_utils (transformers 5 semantics): the rotated size
(head_dim or hidden_size // num_attention_heads, times partial_rotary_factor;
DeepSeek's qk_rope_head_dim; GPT-NeoX's rotary_pct and rotary_emb_base; GPT-J's
rotary_dim), and the default, linear, dynamic, llama3, yarn and longrope rules.
Two older transformers choices for yarn are checked through `--hf-version`.
It shares no code with posvec.

Run as a script, the file prints the markdown table used in the docs:
family | config keys read | rotated size | rule | max relative error.
"""

import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Phi-3 publishes 48 measured factors per list (head 96 -> 48 pairs); these are
# stand-ins of the right length, distinct enough that a swap of lists shows.
PHI3_SHORT = [1.0 + 0.005 * i for i in range(48)]
PHI3_LONG = [1.0 + 1.1 * i for i in range(48)]

FAMILIES = {
    "llama-2-7b": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
        "rope_theta": 10000.0, "rope_scaling": None},
    "llama-3.1-8b": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
        "rope_theta": 500000.0,
        "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}},
    "mistral-7b-v0.1": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 32768,
        "rope_theta": 10000.0},
    "mistral-7b-v0.3": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 32768,
        "rope_theta": 1000000.0},
    # rope_scaling as the Qwen2-7B-Instruct model card tells users to add it.
    "qwen2-7b-instruct-yarn": {
        "hidden_size": 3584, "num_attention_heads": 28, "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 32768, "type": "yarn"}},
    "qwen3-8b": {
        "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128,
        "max_position_embeddings": 40960, "rope_theta": 1000000},
    "gemma-2-9b": {
        "hidden_size": 3584, "num_attention_heads": 16, "head_dim": 256,
        "max_position_embeddings": 8192, "rope_theta": 10000.0},
    # text_config, flattened. The reference is the global layers' rule;
    # rope_local_base_freq belongs to the sliding-window layers and must not leak in.
    "gemma-3-4b": {
        "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
        "max_position_embeddings": 131072, "rope_theta": 1000000.0,
        "rope_local_base_freq": 10000.0, "rope_scaling": {"factor": 8.0, "rope_type": "linear"}},
    "phi-3-mini-128k": {
        "hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 131072,
        "original_max_position_embeddings": 4096, "rope_theta": 10000.0,
        "rope_scaling": {"long_factor": PHI3_LONG, "short_factor": PHI3_SHORT, "type": "longrope"}},
    "phi-2": {
        "hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4,
        "max_position_embeddings": 2048, "rope_theta": 10000.0, "rope_scaling": None},
    "stablelm-2-1.6b": {
        "hidden_size": 2048, "num_attention_heads": 32, "partial_rotary_factor": 0.25,
        "max_position_embeddings": 4096, "rope_theta": 10000},
    "deepseek-v3": {
        "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "max_position_embeddings": 163840, "rope_theta": 10000,
        "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0,
                         "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096,
                         "type": "yarn"}},
    "deepseek-v2-lite": {
        "hidden_size": 2048, "num_attention_heads": 16, "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128, "max_position_embeddings": 163840, "rope_theta": 10000,
        "rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 0.707,
                         "mscale_all_dim": 0.707, "original_max_position_embeddings": 4096,
                         "type": "yarn"}},
    # truncate false: the one published yarn config with an unrounded correction range.
    "gpt-oss-20b": {
        "hidden_size": 2880, "num_attention_heads": 64, "head_dim": 64,
        "max_position_embeddings": 131072, "rope_theta": 150000,
        "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0,
                         "original_max_position_embeddings": 4096, "rope_type": "yarn",
                         "truncate": False}},
    "gpt-neox-20b": {
        "hidden_size": 6144, "num_attention_heads": 64, "rotary_pct": 0.25,
        "rotary_emb_base": 10000, "max_position_embeddings": 2048},
    "gpt-j-6b": {"n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048},
    "llama-2-7b-dynamic": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
        "rope_theta": 10000.0, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
    # The dynamic rule scales from max_position_embeddings even when rope_scaling
    # names an original length: 3072 lies between the two and must leave θ alone.
    "llama-2-7b-dynamic-original": {
        "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096,
        "rope_theta": 10000.0,
        "rope_scaling": {"type": "dynamic", "factor": 2.0, "original_max_position_embeddings": 2048}},
    # Qwen2-style yarn where factor (4) != max/original (8): the three transformers
    # generations give three different answers here.
    "qwen2-style-yarn-4x-of-4k": {
        "hidden_size": 3584, "num_attention_heads": 28, "max_position_embeddings": 32768,
        "rope_theta": 1000000.0,
        "rope_scaling": {"factor": 4.0, "original_max_position_embeddings": 4096, "rope_type": "yarn"}},
}

# The sequence lengths checked per family (--seq-len; None: not passed). Longrope
# switches lists above the original length; dynamic rescales above the maximum.
SEQ_LENS = {
    "phi-3-mini-128k": [None, 4096, 4097],
    "llama-2-7b-dynamic": [8192, 2048],
    "llama-2-7b-dynamic-original": [8192, 3072],
}
CASES = [(name, n) for name in FAMILIES for n in SEQ_LENS.get(name, [None])]


def case_id(name, seq_len):
    return name if seq_len is None else f"{name}@{seq_len}"


# ---------------------------------------------------------------- reference

def rotated_size(c):
    if "rotary_dim" in c:  # GPT-J names the rotated size itself
        return int(c["rotary_dim"])
    if "qk_rope_head_dim" in c:  # DeepSeek MLA: only the rope part of q/k rotates
        head = c["qk_rope_head_dim"]
    elif c.get("head_dim"):
        head = c["head_dim"]
    elif "hidden_size" in c:
        head = c["hidden_size"] // c["num_attention_heads"]
    else:
        head = c["n_embd"] // c["n_head"]
    return int(head * c.get("partial_rotary_factor", c.get("rotary_pct", 1.0)))


def scaling(c):
    rs = c.get("rope_scaling") or {}
    return rs, rs.get("rope_type", rs.get("type", "default"))


def theta(base, d):
    return 1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d)


def get_mscale(s, m=1.0):
    return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0


def ref_llama3(t, rs):
    s, low, high = rs["factor"], rs["low_freq_factor"], rs["high_freq_factor"]
    old = rs["original_max_position_embeddings"]
    wavelen = 2 * math.pi / t
    smooth = (old / wavelen - low) / (high - low)
    mid = (1 - smooth) * t / s + smooth * t
    return np.where(wavelen < old / high, t, np.where(wavelen > old / low, t / s, mid))


def ref_yarn(t, base, d, rs, max_pos, hf):
    # 4.47 ignores rope_scaling's original length; 4.50 lets max/original replace the factor.
    orig = None if hf == "4.47" else rs.get("original_max_position_embeddings")
    s = max_pos / orig if orig and (hf == "4.50" or not rs.get("factor")) else rs["factor"]
    ctx = orig or max_pos

    def corr(rot):
        return d * math.log(ctx / (rot * 2 * math.pi)) / (2 * math.log(base))

    lo, hi = corr(rs.get("beta_fast") or 32), corr(rs.get("beta_slow") or 1)
    if rs.get("truncate", True):
        lo, hi = math.floor(lo), math.ceil(hi)
    lo, hi = max(lo, 0), min(hi, d - 1)
    if lo == hi:
        hi += 0.001
    ramp = np.clip((np.arange(d // 2, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)
    inv = t / s * ramp + t * (1 - ramp)
    af = rs.get("attention_factor")
    if af is None:
        m, m_all = rs.get("mscale"), rs.get("mscale_all_dim")
        af = get_mscale(s, m) / get_mscale(s, m_all) if m and m_all else get_mscale(s)
    return inv, af


def ref_longrope(t, c, rs, seq_len):
    if c.get("original_max_position_embeddings"):
        orig = c["original_max_position_embeddings"]
        s = c["max_position_embeddings"] / orig
    else:
        orig, s = c["max_position_embeddings"], rs.get("factor", 1.0)
    af = rs.get("attention_factor")
    if af is None:
        af = 1.0 if s <= 1 else math.sqrt(1 + math.log(s) / math.log(orig))
    ext = rs["long_factor"] if seq_len and seq_len > orig else rs["short_factor"]
    return t / np.asarray(ext, dtype=np.float64), af


def reference(c, seq_len=None, hf="5"):
    """(rotated size, float64 inv_freq, attention factor) from the published rules."""
    d = rotated_size(c)
    base = float(c.get("rope_theta", c.get("rotary_emb_base", 10000.0)))
    rs, rule = scaling(c)
    t = theta(base, d)
    if rule == "default":
        return d, t, 1.0
    if rule == "linear":
        return d, t / rs["factor"], 1.0
    if rule == "dynamic":
        max_pos = c["max_position_embeddings"]
        s, L = rs["factor"], max(seq_len or 0, max_pos)
        return d, theta(base * (s * L / max_pos - (s - 1)) ** (d / (d - 2)), d), 1.0
    if rule == "llama3":
        return d, ref_llama3(t, rs), 1.0
    if rule == "yarn":
        return (d, *ref_yarn(t, base, d, rs, c["max_position_embeddings"], hf))
    if rule == "longrope":
        return (d, *ref_longrope(t, c, rs, seq_len))
    raise ValueError(f"no reference for rope_type {rule!r}")


# ---------------------------------------------------------------- the CLI

class CliError(Exception):
    pass


def rope_json(exe, config, directory, seq_len=None, hf=None):
    path = os.path.join(directory, "config.json")
    with open(path, "w") as out:
        json.dump(config, out)
    args = [exe, "rope", path, "--json"]
    if seq_len is not None:
        args += ["--seq-len", str(seq_len)]
    if hf is not None:
        args += ["--hf-version", hf]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise CliError(done.stderr.strip() or f"exit status {done.returncode}")
    return json.loads(done.stdout)


def max_rel_error(got, want_inv, want_af):
    inv = np.asarray(got["inv_freq"], dtype=np.float64)
    rel = np.abs(inv - want_inv) / np.abs(want_inv)
    return max(rel.max(), abs(got["attention_factor"] - want_af) / abs(want_af))


@pytest.fixture
def rope(tmp_path):
    """Runs `posvec rope` on a config dict, or skips when the CLI is not built."""
    exe = os.environ.get("POSVEC_CLI")
    if not exe or not os.path.exists(exe):
        pytest.skip("the posvec command line is not built (POSVEC_CLI unset)")

    def run(config, seq_len=None, hf=None):
        try:
            return rope_json(exe, config, str(tmp_path), seq_len, hf)
        except CliError as e:
            message = str(e)
        pytest.fail(f"posvec rope failed: {message}")

    return run


def check(got, d, inv, af):
    assert got["dim"] == d, f"rotated size {got['dim']} vs {d}"
    assert len(got["inv_freq"]) == d // 2
    np.testing.assert_allclose(np.asarray(got["inv_freq"], dtype=np.float64), inv, rtol=1e-12, atol=0)
    np.testing.assert_allclose(got["attention_factor"], af, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name, seq_len", CASES, ids=[case_id(*c) for c in CASES])
def test_family_matches_float64_reference(rope, name, seq_len):
    check(rope(FAMILIES[name], seq_len), *reference(FAMILIES[name], seq_len))


@pytest.mark.parametrize("hf", ["4.50", "4.47"])
def test_older_transformers_yarn_choices(rope, hf):
    """4.50 replaced the factor by max/original when rope_scaling names an original
    length; 4.47 ignored that length and took the range over max_position_embeddings."""
    config = FAMILIES["qwen2-style-yarn-4x-of-4k"]
    d, inv, af = reference(config, hf=hf)
    _, inv5, af5 = reference(config)
    assert np.abs(inv / inv5 - 1).max() > 1e-3  # the config does tell the versions apart
    if hf == "4.50":
        assert af == pytest.approx(get_mscale(8.0)) and af5 == pytest.approx(get_mscale(4.0))
    check(rope(config, hf=hf), d, inv, af)


def test_reference_rules_by_hand():
    """Spot values of the reference worked out by hand, so a slip in it shows here."""
    d, inv, af = reference(FAMILIES["phi-2"])
    assert d == 32 and inv[1] == pytest.approx(10000 ** (-2 / 32), rel=1e-15) and af == 1.0
    assert reference(FAMILIES["gpt-neox-20b"])[0] == 24
    assert reference(FAMILIES["gpt-j-6b"])[0] == 64
    d, inv, af = reference(FAMILIES["deepseek-v2-lite"])
    assert d == 64 and af == 1.0 and inv[0] == 1.0 and inv[-1] == pytest.approx(theta(1e4, 64)[-1] / 40)
    _, inv, _ = reference(FAMILIES["llama-2-7b-dynamic"], 8192)
    assert inv[1] == pytest.approx((1e4 * 3 ** (128 / 126)) ** (-2 / 128), rel=1e-14)
    _, inv, _ = reference(FAMILIES["llama-2-7b-dynamic-original"], 3072)
    np.testing.assert_array_equal(inv, theta(1e4, 128))
    _, _, af = reference(FAMILIES["phi-3-mini-128k"])
    assert af == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)), rel=1e-15)


# ---------------------------------------------------------------- docs table

class Reads(dict):
    """A config that notes which of its keys the reference looked up."""

    def __init__(self, c, seen, prefix=""):
        super().__init__({k: Reads(v, seen, f"{prefix}{k}.") if isinstance(v, dict) else v
                          for k, v in c.items()})
        self.seen, self.prefix = seen, prefix

    def _note(self, k):
        if dict.__contains__(self, k):
            self.seen.setdefault(self.prefix + k)

    def __getitem__(self, k):
        self._note(k)
        return super().__getitem__(k)

    def get(self, k, default=None):
        self._note(k)
        return super().get(k, default)

    def __contains__(self, k):
        self._note(k)
        return super().__contains__(k)


def keys_read(c, seq_len, hf):
    seen = {}
    reference(Reads(c, seen), seq_len, hf)
    top = [k for k in seen if "." not in k]
    nested = {k: [n.split(".", 1)[1] for n in seen if n.startswith(k + ".")] for k in top}
    return ", ".join(f"`{k}.{{{', '.join(nested[k])}}}`" if nested[k] else f"`{k}`" for k in top)


def rule_text(c, hf=None):
    rs, rule = scaling(c)
    parts = [rule]
    if "rotary_dim" in c:
        parts.append("rotary_dim")
    elif "qk_rope_head_dim" in c:
        parts.append("qk_rope_head_dim")
    partial = c.get("partial_rotary_factor", c.get("rotary_pct"))
    if partial:
        parts.append(f"partial {partial}")
    if rule == "yarn" and rs.get("mscale") and rs.get("mscale_all_dim"):
        parts.append("mscale ratio")
    if rs.get("truncate") is False:
        parts.append("untruncated")
    if hf:
        parts.append(f"transformers {hf}")
    return ", ".join(parts)


def table_rows(exe):
    """The docs table's rows: (family, keys read, rotated size, rule, max relative error)."""
    rows = [(n, s, None) for n, s in CASES]
    rows += [("qwen2-style-yarn-4x-of-4k", None, hf) for hf in ("4.50", "4.47")]
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, seq_len, hf in rows:
            c = FAMILIES[name]
            d, inv, af = reference(c, seq_len, hf or "5")
            label = case_id(name, seq_len) + (f" (--hf-version {hf})" if hf else "")
            try:
                got = rope_json(exe, c, tmp, seq_len, hf)
                if got["dim"] != d:
                    err = f"rotated size {got['dim']} vs {d}"
                else:
                    err = f"{max_rel_error(got, inv, af):.1e}"
            except CliError as e:
                err = "CLI error: " + str(e).splitlines()[-1].replace(tmp + os.sep, "")
            out.append((label, keys_read(c, seq_len, hf or "5"), str(d), rule_text(c, hf), err))
    return out


def table(exe):
    print("| family | config keys read | rotated size | rule | max relative error |")
    print("|---|---|---|---|---|")
    for row in table_rows(exe):
        print("| " + " | ".join(row) + " |")


def test_docs_family_table_is_this_files_output(rope):
    """docs/rope.md's family table is what this file prints (the error column: at most
    1e-12, as the last digits may differ between math libraries)."""
    exe = os.environ["POSVEC_CLI"]
    with open(os.path.join(SOURCE_DIR, "docs", "rope.md"), encoding="utf-8") as f:
        doc = {cells[0]: cells for cells in
               ([c.strip() for c in line.strip().strip("|").split("|")]
                for line in f if line.startswith("| "))}
    for label, keys, d, rule, err in table_rows(exe):
        assert label in doc, f"docs/rope.md's family table has no row {label}"
        assert doc[label][1:4] == [keys, d, rule], label
        assert float(err) <= 1e-12 and float(doc[label][4]) <= 1e-12, (label, err)


if __name__ == "__main__":
    exe = os.environ.get("POSVEC_CLI") or os.path.join(SOURCE_DIR, "build", "posvec")
    if not os.path.exists(exe):
        sys.exit(f"{exe}: the posvec command line is not built (set POSVEC_CLI)")
    table(exe)
