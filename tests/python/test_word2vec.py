"""Word2Vec: streamed sentences, same bits as files and as the CLI, continued
training, callbacks, the GIL released during training, Ctrl-C."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import posvec
from conftest import CORPUS

OPTS = dict(vector_size=32, min_count=2, epochs=2, workers=1, seed=7, progress=False)


@pytest.fixture(scope="module")
def sentences():
    return list(posvec.tokenize_file(CORPUS))


@pytest.fixture
def pretokenized(tmp_path, sentences):
    path = tmp_path / "corpus.tok"
    path.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    return str(path)


def test_generator_equals_file_bitwise_at_one_thread(sentences, pretokenized):
    def generate():
        yield from sentences

    from_generator = posvec.Word2Vec(generate(), **OPTS)
    from_file = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **OPTS)
    from_raw = posvec.Word2Vec(corpus_file=CORPUS, **OPTS)
    assert from_generator.wv.index_to_key == from_file.wv.index_to_key
    assert np.array_equal(from_generator.wv.vectors, from_file.wv.vectors)
    assert np.array_equal(from_generator.wv.vectors, from_raw.wv.vectors)
    assert from_generator.losses == from_file.losses
    assert len(from_generator.losses) == 2 and all(np.isfinite(from_generator.losses))
    assert from_generator.vector_size == 32 and from_generator.wv.vector_size == 32


def test_same_bits_as_the_command_line(tmp_path, pretokenized, cli):
    out = tmp_path / "cli.bin"
    cli("train", pretokenized, "--pretokenized", "-o", out, "--dim", 32, "--min-count", 2,
        "--epochs", 2, "--threads", 1, "--seed", 7, "--save-model", tmp_path / "cli.posvec")
    ours = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **OPTS)
    theirs = posvec.KeyedVectors.load_word2vec_format(out)
    assert ours.wv.index_to_key == theirs.index_to_key
    assert np.array_equal(ours.wv.vectors, theirs.vectors)
    # continuing: train(epochs=1) follows the stored schedule as `posvec train --resume` does
    cli("train", pretokenized, "--pretokenized", "-o", tmp_path / "resumed.bin", "--resume",
        tmp_path / "cli.posvec", "--epochs", 1, "--threads", 1)
    ours.train(epochs=1)
    assert ours.epochs_done == 3 and len(ours.losses) == 3
    resumed = posvec.KeyedVectors.load(tmp_path / "resumed.bin")
    assert np.array_equal(ours.wv.vectors, resumed.vectors)


def test_save_load_then_train_equals_training_on(tmp_path, pretokenized):
    a = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **OPTS)
    a.save(tmp_path / "m.posvec")
    b = posvec.Word2Vec.load(tmp_path / "m.posvec", progress=False)
    assert np.array_equal(a.wv.vectors, b.wv.vectors) and b.losses == a.losses
    assert b.vector_size == 32 and b.epochs_done == 2
    a.train(epochs=2)
    b.train(corpus_file=pretokenized, pretokenized=True, epochs=2, total_words=b.corpus_total_words)
    assert np.array_equal(a.wv.vectors, b.wv.vectors)
    assert a.losses == b.losses and len(a.losses) == 4
    # four epochs from the start follow the same schedule only for the epochs after the second
    c = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **dict(OPTS, epochs=4))
    assert not np.array_equal(a.wv.vectors, c.wv.vectors)


def test_a_changed_alpha_between_train_calls_is_refused_not_ignored(pretokenized):
    # gensim trains a later call from model.alpha to model.min_alpha (both 0: the vectors
    # stay); posvec continues its stored schedule, so a changed alpha must not pass silently.
    m = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **OPTS)
    before = m.wv.vectors.copy()
    m.alpha, m.min_alpha = 0.0, 0.0
    with pytest.raises(ValueError, match="model.alpha was changed to 0.0"):
        m.train(epochs=1)
    assert np.array_equal(m.wv.vectors, before) and m.epochs_done == 2
    m.alpha, m.min_alpha = OPTS.get("alpha", 0.025), OPTS.get("min_alpha", 0.0001)
    m.train(epochs=1)
    assert m.epochs_done == 3


def test_callbacks_and_progress_fields(pretokenized):
    seen, epochs = [], []

    class Callback:
        def on_epoch_end(self, model):
            epochs.append(list(model._running_losses))

    model = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, callbacks=[Callback()],
                            **dict(OPTS, epochs=3, progress=seen.append))
    assert len(epochs) == 3 and epochs[-1] == model.losses
    reports = [f for f in seen if f.get("event") == "epoch_end"]
    assert [r["epoch"] for r in reports] == [1, 2, 3]
    assert all(r["words"] > 0 and r["seconds"] >= 0 for r in reports)
    for f in (f for f in seen if "fraction" in f):
        assert {"epoch", "epochs", "fraction", "words_per_second", "alpha", "loss",
                "eta_seconds", "words_processed"} <= set(f)
        assert 0 <= f["fraction"] <= 1 and f["epochs"] == 3


def test_tqdm_bar(pretokenized, capfd):
    pytest.importorskip("tqdm", reason="tqdm is not installed (python3-tqdm)")
    posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **dict(OPTS, progress=True))
    err = capfd.readouterr().err
    assert "100%" in err and "epoch 2/2" in err


def test_bad_input_raises():
    with pytest.raises(ValueError, match="dim"):
        posvec.Word2Vec([["a", "b"]], vector_size=0, min_count=1, progress=False)
    with pytest.raises(ValueError, match="kernel"):
        posvec.Word2Vec([["a", "b"]], kernel="fast", min_count=1, progress=False)
    with pytest.raises(ValueError, match="no word"):
        posvec.Word2Vec([["a", "b"]], min_count=5, progress=False)
    with pytest.raises(FileNotFoundError):
        posvec.Word2Vec(corpus_file="/no/such/corpus.txt", progress=False)
    with pytest.raises(TypeError):
        posvec.Word2Vec("a sentence as a string", progress=False)
    with pytest.raises(TypeError, match="lists of tokens"):
        posvec.Word2Vec(["a b", "c d"], progress=False)

    def failing():
        yield ["a", "b"]
        raise RuntimeError("broken generator")

    with pytest.raises(RuntimeError, match="broken generator"):
        posvec.Word2Vec(failing(), min_count=1, progress=False)
    with pytest.raises(ValueError, match="not trained"):
        posvec.Word2Vec(progress=False).save("/tmp/never-written.posvec")


def test_training_releases_the_gil(pretokenized):
    ticks, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        before, start = ticks[0], time.perf_counter()
        posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **dict(OPTS, epochs=500))
        elapsed, during = time.perf_counter() - start, ticks[0] - before
    finally:
        stop.set()
        t.join()
    assert elapsed > 0.2, "training was too short to tell"
    # With the GIL held the counter could not move at all while C++ trains; free,
    # it ticks about once a millisecond (5 % of that is plenty on a busy machine).
    assert during > 0.05 * elapsed / 0.001, (during, elapsed)


SIGINT_SCRIPT = r"""
import sys, time, posvec
out = sys.argv[2]
def progress(fields):
    if "fraction" in fields and not getattr(progress, "told", False):
        progress.told = True
        print("training", flush=True)
try:
    model = posvec.Word2Vec(corpus_file=sys.argv[1], pretokenized=True, vector_size=64, min_count=1,
                            epochs=100000, workers=1, progress=progress)
    model.save(out)
except KeyboardInterrupt:
    print("interrupted", time.process_time(), flush=True)
    sys.exit(3)
"""


def cpu_seconds(pid):
    """CPU seconds (user + system) process `pid` used so far, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_ctrl_c_raises_keyboard_interrupt_within_a_cpu_second(tmp_path, pretokenized):
    out = tmp_path / "out" / "model.posvec"
    out.parent.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    proc = subprocess.Popen([sys.executable, "-c", SIGINT_SCRIPT, pretokenized, str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        # Training has started once the first progress report is printed.
        assert proc.stdout.readline().strip() == "training"
        cpu_at_signal = cpu_seconds(proc.pid)
        proc.send_signal(signal.SIGINT)
        line = proc.stdout.readline().split()
        proc.wait()
    finally:
        proc.kill()
    assert line and line[0] == "interrupted", proc.stderr.read()
    # Within a second of the process's own CPU time (a loaded machine stretches
    # the wall-clock time, not this): the 100,000 epochs would take minutes.
    assert float(line[1]) - cpu_at_signal < 1.0
    assert proc.returncode == 3
    assert os.listdir(out.parent) == []


def test_combine_blocks_train_other_bits_and_are_kept_by_save(tmp_path, pretokenized):
    plain = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, combine=1, **OPTS)
    default = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **OPTS)
    blocks = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, combine=8, **OPTS)
    again = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, combine=8, **OPTS)
    # One thread: blocks are reproducible, and they are not the one-window kernel.
    assert np.array_equal(blocks.wv.vectors, again.wv.vectors)
    assert not np.array_equal(blocks.wv.vectors, plain.wv.vectors)
    # None trains with the library's default, blocks of 4, and reports it.
    assert (default.combine, default.block_negatives) == (4, 0)
    assert not np.array_equal(default.wv.vectors, plain.wv.vectors)
    assert not np.array_equal(default.wv.vectors, blocks.wv.vectors)
    blocks.save(tmp_path / "m.posvec")
    loaded = posvec.Word2Vec.load(tmp_path / "m.posvec", progress=False)
    assert loaded.combine == 8
    assert loaded.block_negatives == 0  # automatic: max(negative, 1.25 x combine)
    with pytest.raises(ValueError, match="combine"):
        posvec.Word2Vec([["a", "b"]], combine=0, min_count=1, progress=False)


# ---- growing the vocabulary (gensim's build_vocab(update=True)) -------------------------

TOPICS = {
    "animals": "cat dog pet fur paw tail purr bark whisker leash".split(),
    "weather": "rain cloud wind storm sun sky thunder drizzle fog frost".split(),
    "food": "bread cheese soup apple eat cook spoon plate butter honey".split(),
}


def topical(n, seed, extra=()):
    """n sentences of 8 words, each from one topic; `extra` words join the animals."""
    rng = np.random.default_rng(seed)
    names = sorted(TOPICS)
    out = []
    for _ in range(n):
        name = names[rng.integers(len(names))]
        words = TOPICS[name] + (list(extra) if name == "animals" else [])
        out.append([words[i] for i in rng.integers(len(words), size=8)])
    return out


def test_new_words_get_sensible_neighbours_and_old_vectors_stay():
    model = posvec.Word2Vec(topical(3000, 1), vector_size=24, window=3, min_count=1, epochs=3,
                            workers=1, seed=5, progress=False)
    before = {w: model.wv[w].astype(np.float64) for w in model.wv.index_to_key}
    more = topical(1500, 2, extra=["kitten", "puppy"])
    model.build_vocab(more, update=True)
    assert len(model.wv) == len(before) + 2
    # the rows of known words move with their words; the new ones start as the trainer starts rows
    for w, v in before.items():
        assert np.array_equal(model.wv[w], v.astype(np.float32))
    assert 0 < np.abs(model.wv["kitten"]).max() < 1.0 / model.vector_size
    model.train(more, total_examples=len(more), epochs=2)
    animals = set(TOPICS["animals"]) | {"kitten", "puppy"}
    for new in ("kitten", "puppy"):
        near = [w for w, _ in model.wv.most_similar(new, topn=5)]
        assert sum(w in animals for w in near) >= 4, (new, near)
    # known words keep their place: each stays nearest to its own earlier vector
    cos = [float(model.wv[w] @ v / np.linalg.norm(model.wv[w]) / np.linalg.norm(v)) for w, v in before.items()]
    assert min(cos) > 0.8, min(cos)


def test_update_needs_a_vocabulary_and_the_cli_grows_a_resumed_model(tmp_path, cli):
    with pytest.raises(RuntimeError, match="build_vocab"):
        posvec.Word2Vec(progress=False).build_vocab([["a", "b"]], update=True)
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("\n".join(" ".join(s) for s in topical(400, 3)) + "\n")
    second.write_text("\n".join(" ".join(s) for s in topical(400, 4, extra=["kitten"])) + "\n")
    model = tmp_path / "m.posvec"
    cli("train", first, "-o", model, "--pretokenized", "--dim", 16, "--min-count", 1, "--epochs", 1,
        "--threads", 1)
    cli("train", second, "-o", tmp_path / "m2.posvec", "--pretokenized", "--resume", model,
        "--update-vocab", "--epochs", 1, "--threads", 1)
    grown = posvec.Word2Vec.load(tmp_path / "m2.posvec")
    assert "kitten" in grown.wv and len(grown.wv) == 31
    assert grown.wv.get_vecattr("cat", "count") > posvec.Word2Vec.load(model).wv.get_vecattr("cat", "count")


@pytest.mark.parametrize("token", ["tab\there", "sp ace"])
def test_update_with_a_whitespace_token_is_refused_and_changes_nothing(tmp_path, token):
    # posvec's files separate words by whitespace, so no model may hold such a word:
    # build_vocab(update=True) refuses it before the model changes (issue #45, item 5).
    model = posvec.Word2Vec(topical(300, 1), vector_size=16, window=3, min_count=1, epochs=1,
                            workers=1, seed=5, progress=False)
    words = list(model.wv.index_to_key)
    counts = [model.wv.get_vecattr(w, "count") for w in words]
    vectors = model.wv.vectors.copy()
    state = (model.corpus_count, model.corpus_total_words, model.raw_vocab)
    model.save(tmp_path / "before.posvec")
    with pytest.raises(ValueError) as refused:
        model.build_vocab([["kitten", token, "cat"]] * 3, update=True)
    message = str(refused.value)
    assert repr(token) in message and "whitespace" in message and "\n" not in message
    assert "split it" in message
    assert list(model.wv.index_to_key) == words and "kitten" not in model.wv
    assert [model.wv.get_vecattr(w, "count") for w in words] == counts
    assert np.array_equal(model.wv.vectors, vectors)
    assert (model.corpus_count, model.corpus_total_words, model.raw_vocab) == state
    model.save(tmp_path / "after.posvec")
    assert (tmp_path / "after.posvec").read_bytes() == (tmp_path / "before.posvec").read_bytes()
    # Still a working model: the corpus without the token grows it, trains and saves.
    more = topical(200, 2, extra=["kitten"])
    model.build_vocab(more, update=True)
    model.train(more, total_examples=len(more), epochs=1)
    model.save(tmp_path / "grown.posvec")
    assert posvec.Word2Vec.load(tmp_path / "grown.posvec").wv.index_to_key == model.wv.index_to_key
    assert len(model.wv) == len(words) + 1


def test_a_whitespace_word_is_refused_before_training():
    epochs = []
    with pytest.raises(ValueError, match="'sp ace' contains whitespace"):
        posvec.Word2Vec([["sp ace", "b", "c"]] * 5, vector_size=8, min_count=1, epochs=1,
                        workers=1, progress=lambda f: epochs.append(f.get("event")))
    assert "epoch_end" not in epochs
    with pytest.raises(ValueError, match="'sp ace' contains whitespace"):
        posvec.Word2Vec(vector_size=8, min_count=1, progress=False).build_vocab([["sp ace", "b"]])
    # A token below min_count never becomes a word: the corpus trains as before.
    rare = [["b", "c", "d"]] * 5 + [["sp ace"]]
    model = posvec.Word2Vec(rare, vector_size=8, min_count=2, epochs=1, workers=1, progress=False)
    assert sorted(model.wv.index_to_key) == ["b", "c", "d"]


def _with_thread_positions(src, dst, shards):
    """Rewrites a saved model (version 1, at an epoch boundary) as a version-2 file
    that records `shards` thread positions inside its next epoch, laid out from the
    format's description: the body's length follows from the header's fields."""
    import struct
    data = open(src, "rb").read()
    words, dim, out_rows, config_bytes, word_bytes, losses = struct.unpack_from("<6Q", data, 16)
    body = 72 + config_bytes + 12 * words + word_bytes + 8 * losses + 4 * dim * (words + out_rows)
    stream = 1000
    header = bytearray(data[:72])
    struct.pack_into("<I", header, 8, 2)        # version 2: an unfinished epoch follows
    struct.pack_into("<I", header, 12, 0)       # no checksum trailer (as files before it)
    struct.pack_into("<I", header, 68, shards)  # thread positions recorded
    tail = struct.pack("<qq", 0, stream) + struct.pack("<qqQdq", 0, stream, 1, 0.0, 0)
    tail += struct.pack("<qqQdq", stream, stream, 1, 0.0, 0) * (shards - 1)
    with open(dst, "wb") as f:
        f.write(bytes(header) + data[72:body] + tail)


def test_load_refuses_more_thread_positions_than_training_runs(tmp_path, pretokenized):
    # Before: the file loaded and train() killed the interpreter inside libgomp.
    m = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **dict(OPTS, epochs=1))
    m.save(tmp_path / "m.posvec")
    _with_thread_positions(tmp_path / "m.posvec", tmp_path / "ok.posvec", 4096)
    assert posvec.Word2Vec.load(tmp_path / "ok.posvec", progress=False).epochs_done == 1
    for shards in (4097, 65536):
        _with_thread_positions(tmp_path / "m.posvec", tmp_path / "bad.posvec", shards)
        with pytest.raises(ValueError, match=f"{shards} threads were inside an epoch; "
                                             "training runs at most 4096"):
            posvec.Word2Vec.load(tmp_path / "bad.posvec")


def test_weights_bf16_same_bits_as_the_command_line_and_half_size_npy(tmp_path, pretokenized, cli):
    # bf16 training: every vector value has 8 significant bits (bfloat16), the CLI's
    # --weights bf16 gives the same bits, and the stored options keep the weight type.
    ours = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, weights="bf16", **OPTS)
    v = ours.wv.vectors
    assert v.dtype == np.float32 and np.all(np.isfinite(v))
    low = v.view(np.uint32) & 0xFFFF  # bfloat16 is float32's upper half
    assert not low.any()
    fp32 = posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, **OPTS)
    assert not np.array_equal(v, fp32.wv.vectors)
    out = tmp_path / "cli.bin"
    cli("train", pretokenized, "--pretokenized", "-o", out, "--dim", 32, "--min-count", 2,
        "--epochs", 2, "--threads", 1, "--seed", 7, "--weights", "bf16")
    theirs = posvec.KeyedVectors.load_word2vec_format(out)
    assert np.array_equal(v, theirs.vectors)
    ours.save(tmp_path / "m.posvec")
    back = posvec.Word2Vec.load(tmp_path / "m.posvec", progress=False)
    assert np.array_equal(back.wv.vectors, v)
    assert np.array_equal(back.syn1neg, ours.syn1neg)
    # float16 npy: half the bytes of float32, read by NumPy as float16.
    cli("train", pretokenized, "--pretokenized", "-o", tmp_path / "v.npy", "--dim", 32,
        "--min-count", 2, "--epochs", 2, "--threads", 1, "--seed", 7, "--npy-dtype", "float16")
    half = np.load(tmp_path / "v.npy")
    assert half.dtype == np.float16
    assert np.array_equal(half, fp32.wv.vectors.astype(np.float16))


def test_weights_refused_where_unsupported(pretokenized):
    with pytest.raises(ValueError, match="fp32, bf16 or fp16"):
        posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, weights="fp8", **OPTS)
    with pytest.raises(ValueError, match="skip-gram with negative sampling"):
        posvec.Word2Vec(corpus_file=pretokenized, pretokenized=True, weights="fp16", sg=0, **OPTS)


def test_keyword_defaults_are_the_training_settings_table():
    """Every keyword of the training settings' table (C++, kTrainSettings) is a keyword of
    Word2Vec or FastText, with the table's default: a default changed on one side only fails."""
    import ast
    import inspect

    w2v = inspect.signature(posvec.Word2Vec.__init__).parameters
    ft = inspect.signature(posvec.FastText.__init__).parameters
    rows = posvec._posvec.train_settings()
    for row in rows:
        keyword = row["keyword"]
        params = w2v if keyword in w2v else ft
        assert keyword in params, f"{keyword} ({row['meaning']}) is no keyword of Word2Vec or FastText"
        assert params[keyword].default == ast.literal_eval(row["default"]), keyword
    # The gensim-shaped names the package documents, as the table spells them.
    keywords = {row["keyword"] for row in rows}
    assert {"vector_size", "min_count", "sg", "hs", "workers", "max_final_vocab",
            "min_n", "max_n", "bucket"} <= keywords
    assert len(rows) >= 20


def test_a_refused_setting_names_its_keyword_in_front():
    with pytest.raises(ValueError, match=r"^vector_size: dimension must be between 1 and 100000 \(got 0\)"):
        posvec.Word2Vec([["a", "b"]], vector_size=0, min_count=1, progress=False)


def test_vectors_lockf_other_than_one_is_refused_not_ignored():
    """gensim's experimental wv.vectors_lockf (0 locks a word): posvec cannot honour it, so
    a factor other than 1 stops train() before anything changes; ones train as usual."""
    sentences = [["a", "b", "c", "d"]] * 30
    model = posvec.Word2Vec(sentences, vector_size=8, min_count=1, workers=1, progress=False)
    model.wv.vectors_lockf = np.ones(len(model.wv), dtype=np.float32)
    model.train(sentences, total_examples=len(sentences), epochs=1)
    model.wv.vectors_lockf = np.ones(len(model.wv), dtype=np.float32)
    model.wv.vectors_lockf[0] = 0.0
    before = model.wv.vectors.copy()
    with pytest.raises(ValueError, match="vectors_lockf"):
        model.train(sentences, total_examples=len(sentences), epochs=1)
    assert np.array_equal(model.wv.vectors, before)
