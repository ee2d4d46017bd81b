"""The tqdm bar of Word2Vec: percent of this run (not of the whole schedule), shown as a
percent, and drawn only once training runs."""

import sys
import types

import pytest

import posvec
from posvec.word2vec import _Progress

OPTS = dict(vector_size=16, min_count=1, workers=1, seed=3)
SENTENCES = [["the", "cat", "sat", "on", "the", "mat"], ["a", "dog", "ate", "the", "bone"]] * 200


class FakeBar:
    """Records what a tqdm bar would draw."""

    made = []

    def __init__(self, total=None, **kwargs):
        self.total, self.n, self.seen = total, 0, []
        FakeBar.made.append(self)

    def set_description(self, text):
        pass

    def set_postfix(self, **kwargs):
        self.postfix = kwargs

    def update(self, delta):
        self.n += delta
        self.seen.append(self.n)

    def close(self):
        pass


@pytest.fixture
def fake_tqdm(monkeypatch):
    pytest.importorskip("tqdm", reason="tqdm is not installed (python3-tqdm)")
    module = types.ModuleType("tqdm.auto")
    module.tqdm = FakeBar
    monkeypatch.setitem(sys.modules, "tqdm.auto", module)
    FakeBar.made = []
    return FakeBar


def test_percent_counts_this_run():
    # A model with 5 epochs done, trained 2 more: the schedule is 7 epochs, and the
    # trainer's fraction runs from 5/7 to 1; this run goes from 0 % to 100 %.
    p = _Progress(None, False, epochs_done=5)
    assert p.percent({"epochs": 7, "fraction": 5 / 7}) == pytest.approx(0.0)
    assert p.percent({"epochs": 7, "fraction": 6 / 7}) == pytest.approx(50.0)
    assert p.percent({"epochs": 7, "fraction": 1.0}) == pytest.approx(100.0)
    # A new model: the fraction itself.
    assert _Progress(None, False).percent({"epochs": 4, "fraction": 0.25}) == pytest.approx(25.0)


def test_bar_shows_a_percent_not_n_of_total(capfd):
    pytest.importorskip("tqdm", reason="tqdm is not installed (python3-tqdm)")
    posvec.Word2Vec(SENTENCES, epochs=2, progress=True, **OPTS)
    err = capfd.readouterr().err
    assert "100%" in err and "/100%" not in err and "43/100" not in err


def test_bar_after_load_starts_from_zero(tmp_path, fake_tqdm):
    model = posvec.Word2Vec(SENTENCES, epochs=5, progress=False, **OPTS)
    model.save(tmp_path / "m.posvec")
    loaded = posvec.Word2Vec.load(tmp_path / "m.posvec", progress=True)
    loaded.train(SENTENCES, total_examples=len(SENTENCES), epochs=1)
    assert len(fake_tqdm.made) == 1
    bar = fake_tqdm.made[0]
    assert bar.total == 100
    assert bar.seen and bar.seen[-1] == pytest.approx(100.0)
    # Every drawn value is this run's share: from 0 up, never the 5/6 = 83 % of the
    # schedule the first update used to jump to.
    assert all(0 <= v <= 100 for v in bar.seen)
    assert bar.seen == sorted(bar.seen)


def test_no_bar_before_a_missing_corpus_file(fake_tqdm):
    with pytest.raises(FileNotFoundError):
        posvec.Word2Vec(corpus_file="/no/such/corpus.txt", progress=True, **OPTS)
    assert fake_tqdm.made == []


def test_loss_of_an_epoch_without_predictions_is_nan(fake_tqdm):
    # One word kept, once a sentence: nothing to predict.
    sentences = [["x", f"y{i}"] for i in range(6)]
    model = posvec.Word2Vec(sentences, vector_size=4, min_count=5, sample=0, epochs=2, workers=1,
                            progress=True)
    assert len(model.losses) == 2 and all(loss != loss for loss in model.losses)
    # The bar shows it as not available, not as "nan" or a perfect 0.
    p = _Progress(model, True)
    p.progress(dict(epoch=1, epochs=2, fraction=0.25, words_per_second=1e5, alpha=0.02,
                    loss=float("nan")))
    assert fake_tqdm.made[-1].postfix["loss"] == "n/a"
    assert fake_tqdm.made[-1].n == pytest.approx(25.0)
