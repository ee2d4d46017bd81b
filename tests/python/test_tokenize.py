"""tokenize and tokenize_file: the CLI's sentences, lazily."""

import itertools
import threading

import pytest

import posvec
from conftest import CORPUS


def test_tokens_as_documented():
    assert posvec.tokenize("The black cat sat on the couch. Don't!") == [
        ["the", "black", "cat", "sat", "on", "the", "couch", "."], ["do", "n't", "!"]]
    assert posvec.tokenize("Ünïcode ẞ.", punctuation=False) == [["ünïcode", "ß"]]
    assert posvec.tokenize("Keep Case", lowercase=False) == [["Keep", "Case"]]
    assert posvec.tokenize("") == []


def test_file_matches_cli_and_whole_text(tmp_path, cli):
    lines = cli("tokenize", CORPUS).stdout.decode("utf-8").splitlines()
    from_cli = [line.split(" ") for line in lines]
    streamed = list(posvec.tokenize_file(CORPUS))
    assert streamed == from_cli
    with open(CORPUS, encoding="utf-8") as f:
        assert posvec.tokenize(f.read()) == streamed


def test_file_is_lazy_and_can_stop_early():
    before = threading.active_count()
    it = posvec.tokenize_file(CORPUS)
    first = list(itertools.islice(it, 3))
    assert len(first) == 3 and first[0][0] == "a"
    it.close()  # the reader thread ends
    assert threading.active_count() == before


def test_file_errors_raise_on_iteration(tmp_path):
    with pytest.raises(FileNotFoundError):
        list(posvec.tokenize_file(tmp_path / "missing.txt"))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok text \xff\xfe broken")
    with pytest.raises(ValueError, match="UTF-8"):
        list(posvec.tokenize_file(bad))
    pre = tmp_path / "pre.txt"
    pre.write_text("a  b\tc\n\nd e\n", encoding="utf-8")
    assert list(posvec.tokenize_file(pre, pretokenized=True)) == [["a", "b", "c"], ["d", "e"]]
