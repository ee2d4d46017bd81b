"""A newcomer's first hour: tools/dev.sh and the setup, fetch and install steps, and
docs/quickstart.md walked from a clean copy of the repository (the fetch steps
stubbed to local files, the build reused from this build directory)."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR, shared_data

DATA = os.path.join(SOURCE_DIR, "tools", "bench", "data")


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
