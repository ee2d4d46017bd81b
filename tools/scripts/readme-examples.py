#!/usr/bin/env python3
"""Runs the console examples of a documentation page and compares what they print with the page.

The pages are README.md and every docs/**/*.md (one CTest case each, examples_README,
examples_docs_cli, ...). Every ```console block is a transcript: lines starting with "$ "
are commands, the lines after one (up to the next "$ ") are what it printed, standard
error and standard output together. The blocks of a page run in order, in one scratch
directory of the page's own that links the checkout's corpus/, tools/, tests/, include/,
src/ and build/, with build/ first on PATH, so a block can use the files an earlier one
of the same page wrote.

What a transcript may leave out or vary:
- Durations, rates and ETAs differ from run to run and are compared as placeholders;
  progress lines ("epoch 1/5  19% ...") come and go with the machine's speed and are
  not compared.
- A line "..." stands for any number of lines (output the page leaves out).
- A line starting with "  # " is a note for the reader, not output.
- The checkout's path is compared as the relative path the page shows, and the
  shared data directory (../shared/data, or $POSVEC_SHARED_DATA) as "/path/to/";
  its files are linked into the scratch directory, and corpus.txt is a copy of the
  shipped corpus (as the pages say where they use them).
- A number with four or more decimals may differ from the page's by one unit in its last
  digit or by 1e-5 of its value: the same command trains slightly different vectors on
  another CPU (its SIMD kernels and libm paths), so printed similarities and coordinates
  move in their last digits.
Everything else must match. A block the machine cannot run as written (a
launcher, a keystroke) is marked in the page with a comment line right above it:

    <!-- examples: skip REASON -->

A block that needs what a clone may not have (Brown, fetched by tools/scripts/fetch-brown.sh;
the shared evaluation data; Open MPI's mpirun; fastText's CLI) is skipped, with the reason, when it
is missing. Python and C++ snippets are not run here (the Python and consumer tests
cover them).

  python3 tools/scripts/readme-examples.py [--page README.md] [--build build] [--only N,M]
                                   [--update] [--keep DIR]
  python3 tools/scripts/readme-examples.py --links [--stage STAGE=HEADER,HEADER ...]

Prints one line per block (ok, differs, skipped) and a diff for each that differs;
exits 1 when any differs. --update writes the outputs of the runs into the page
(for a change that alters trained vectors), after which the diff is the review.

--links runs nothing: it checks that every relative link and image target in README.md,
CHANGELOG.md and docs/**/*.md exists (and, for a link with #anchor, that the target page
has such a heading), that README.md stays within 300 lines, and that the header tables
of docs/design/architecture.md and docs/library.md (the tables whose first column is
"stage") list every public header (include/posvec/*.hpp but the umbrella posvec.hpp)
under the stage CMake assigns it, and no header that does not exist; exits 1 otherwise,
with one line per problem. The stages come from CMake (ctest docs_links passes each
POSVEC_OWNS_<stage> list as --stage STAGE=HEADER,HEADER); without --stage they are read
from the set(POSVEC_OWNS_<stage> ...) lines of CMakeLists.txt.
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINKED = ["corpus", "tools", "tests", "include", "src", "build", "CMakeLists.txt"]
SKIP = re.compile(r"<!--\s*examples:\s*skip\b\s*(.*?)\s*-->")

SHARED = os.environ.get("POSVEC_SHARED_DATA", os.path.join(os.path.dirname(ROOT), "shared", "data"))
MARK = "@@readme-examples step@@"
# What changes between runs of the same command.
VOLATILE = [
    (re.compile(r"\d+(\.\d+)?[kM]? words/s"), "<rate> words/s"),
    (re.compile(r"\d+(\.\d+)? ?s\b"), "<time>s"),
    (re.compile(r"ETA \d+:\d+(:\d+)?"), "ETA <eta>"),
    (re.compile(r"\d+(\.\d+)? % of wall time waiting"), "<share> % of wall time waiting"),
]
PROGRESS = re.compile(r"^((training \d+-d: )?epoch \d+/\d+ +[\d.]+%|eval: \d+/\d+ analogy questions)")


def unlocated(text):
    """The checkout's and the shared data's paths as the pages write them."""
    return text.replace(ROOT + "/", "").replace(os.path.realpath(SHARED) + "/", "/path/to/")


def is_note(line):
    return line.startswith("  # ")


def normalise(text):
    text = unlocated(text)
    for pattern, placeholder in VOLATILE:
        text = pattern.sub(placeholder, text)
    return text


DECIMAL = re.compile(r"(?<![\w.])-?\d+\.\d{4,}(?:[eE][-+]?\d+)?(?![\w.])")
NUMBER = r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"


def line_pattern(line, numbers):
    """The page's line as a pattern: literal text, but a number with four or more decimals
    is captured, its value appended to `numbers` for close_enough()."""
    text = normalise(line)
    out, last = [], 0
    for m in DECIMAL.finditer(text):
        out.append(re.escape(text[last:m.start()]))
        out.append(NUMBER)
        numbers.append(m.group(0))
        last = m.end()
    out.append(re.escape(text[last:]))
    return "".join(out)


def close_enough(expected, got):
    """One unit of the page's last digit, or 1e-5 relative: what another CPU's SIMD and
    libm paths change in vectors trained by the same command."""
    e, g = float(expected), float(got)
    mantissa = expected.lower().split("e")[0]
    unit = 10.0 ** -len(mantissa.split(".")[1]) * (10.0 ** int(expected.lower().split("e")[1])
                                                    if "e" in expected.lower() else 1.0)
    return abs(e - g) <= max(unit * 1.000001, 1e-5 * abs(e))


def matches(expected, got):
    """Whether the run's lines fit the page's ("..." for any lines, notes dropped)."""
    parts, numbers = [], []
    for line in expected:
        if is_note(line):
            continue
        parts.append(r"(?:[^\n]*\n)*?" if line.strip() == "..." else line_pattern(line, numbers) +
                     r"\n")
    text = "".join(normalise(line) + "\n" for line in got if not PROGRESS.match(line))
    m = re.fullmatch("".join(parts), text)
    return m is not None and all(close_enough(e, g) for e, g in zip(numbers, m.groups()))


def blocks(lines):
    """(start, end, skip reason or None) of each console block's body lines."""
    found = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```console":
            reason = None
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            if j >= 0:
                m = SKIP.search(lines[j])
                if m:
                    reason = m.group(1) or "marked in the page"
            k = i + 1
            while k < len(lines) and lines[k].strip() != "```":
                k += 1
            if k == len(lines):
                sys.exit(f"readme-examples: the console block at line {i + 1} is not closed")
            found.append((i + 1, k, reason))
            i = k
        i += 1
    return found


def transcript(body):
    """[(command, expected output lines)] of one block."""
    steps = []
    for line in body:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
        else:
            raise ValueError("output before the first command")
    return steps


def run(commands, cwd, env):
    """Each command's output lines; the block runs as one script (an export or a cd
    carries over to the next command, as in a terminal)."""
    script = "".join(f"echo '{MARK}'\n{c}\n" for c in commands)
    done = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=900)
    text = done.stdout.decode("utf-8", errors="backslashreplace")
    outputs = []
    for line in text.split("\n"):
        if line == MARK:
            outputs.append([])
        elif outputs:
            outputs[-1].append(line)
    if outputs and outputs[-1] and outputs[-1][-1] == "":
        outputs[-1].pop()
    return outputs + [[]] * (len(commands) - len(outputs))


def missing(text):
    """Why a block cannot run on this machine, or None."""
    if ("brown.txt" in text or "brown.bin" in text) and not os.path.exists(os.path.join(ROOT, "tools", "bench", "data", "brown.txt")):
        return "needs tools/bench/data/brown.txt (tools/scripts/fetch-brown.sh fetches it)"
    if any(k in text for k in ("/path/to/", "questions-words.txt", "wordsim353.tsv", "simlex999.txt")) \
            and not os.path.isdir(SHARED):
        return f"needs the shared evaluation data ({SHARED} or $POSVEC_SHARED_DATA)"
    if "mpirun" in text and not shutil.which("mpirun"):
        return "needs Open MPI's mpirun (tools/scripts/setup.sh installs it)"
    if re.search(r"^\$ fasttext ", text, re.M) and not shutil.which("fasttext"):
        return "needs fastText's CLI (Debian package fasttext)"
    return None


def rewritten(steps, outputs):
    """A block's new text for --update: the run's output in the page's conventions
    (relative paths, no progress lines), keeping a command's notes and its "..."
    where the page cut the output (all of it, its head or its tail)."""
    lines = []
    for (command, expected), printed in zip(steps, outputs):
        lines.append("$ " + command)
        notes = [x for x in expected if is_note(x)]
        shown = [x for x in expected if not is_note(x)]
        out = [unlocated(x) for x in printed if not PROGRESS.match(x)]
        if shown and all(x.strip() == "..." for x in shown):
            out = ["..."] if out else []
        elif len(shown) > 1 and shown[-1].strip() == "..." and "..." not in [x.strip() for x in shown[:-1]]:
            out = out[:len(shown) - 1] + ["..."]
        elif len(shown) > 1 and shown[0].strip() == "..." and "..." not in [x.strip() for x in shown[1:]]:
            out = ["..."] + out[len(out) - (len(shown) - 1):]
        lines.extend(out + notes)
    return lines


README_MAX_LINES = 300
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
ANCHOR_TAG = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def pages():
    """README.md, CHANGELOG.md and every docs/**/*.md, as paths relative to the checkout."""
    found = [name for name in ("README.md", "CHANGELOG.md") if os.path.exists(os.path.join(ROOT, name))]
    for base, dirs, files in os.walk(os.path.join(ROOT, "docs")):
        dirs.sort()
        found += sorted(os.path.relpath(os.path.join(base, f), ROOT) for f in files if f.endswith(".md"))
    return found


def prose(text, code_spans=False):
    """(line number, line) of the lines outside code fences, inline code removed unless
    code_spans is true."""
    fenced = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line if code_spans else re.sub(r"`+[^`]*`+", "", line)


def slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link's text only
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    """Every anchor a markdown file defines (headings, with GitHub's -1, -2 for repeats)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    seen = {}
    found = set()
    for _, line in prose(text, code_spans=True):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        found.update(ANCHOR_TAG.findall(line))
    return found


def check_links():
    """Problems with the pages' relative links and README.md's length, one line each."""
    problems = []
    for page in pages():
        path = os.path.join(ROOT, page)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if page == "README.md" and len(text.splitlines()) > README_MAX_LINES:
            problems.append(f"README.md: {len(text.splitlines())} lines, more than {README_MAX_LINES}: "
                            "move the detail into a docs/ page and link to it")
        lines = list(prose(text))
        for i, (number, line) in enumerate(lines):
            # A link's text may wrap onto the next line: read each line with the next one,
            # counting the links that start on this one.
            following = lines[i + 1][1] if i + 1 < len(lines) and lines[i + 1][0] == number + 1 else ""
            joined = line + " " + following
            for match in LINK.finditer(joined):
                if match.start() >= len(line):
                    continue
                target = match.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                    continue
                file_part, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                where = f"{page}:{number}: link to '{target}'"
                if not os.path.exists(resolved):
                    problems.append(f"{where}: {os.path.relpath(resolved, ROOT)} does not exist")
                elif anchor and resolved.endswith(".md") and os.path.isfile(resolved) \
                        and anchor not in anchors(resolved):
                    problems.append(f"{where}: {os.path.relpath(resolved, ROOT)} has no heading with anchor '#{anchor}'")
    return problems


# The pages whose table (first column "stage", a column of headers) lists the public
# headers by stage.
HEADER_TABLE_PAGES = ["docs/design/architecture.md", "docs/library.md"]
OWNS = re.compile(r"^\s*set\(\s*POSVEC_OWNS_(\w+)((?:\s+[\w]+)*)\s*\)", re.M)


def cmake_stages():
    """{header name: stage} from the POSVEC_OWNS_<stage> lists of CMakeLists.txt."""
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        text = re.sub(r"#.*", "", f.read())
    return {name: stage for stage, names in OWNS.findall(text) for name in names.split()}


def header_tables(text):
    """(line number, stage, header names) of each row of the page's header table(s): a
    table whose first column is "stage" and that has a column of headers; a row with an
    empty stage cell continues the stage above it."""
    rows = []
    column = None
    stage = ""
    for number, line in prose(text, code_spans=True):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            column = None
        elif column is None:
            if cells[0].lower() == "stage":
                column = next((i for i, c in enumerate(cells) if "header" in c.lower()), None)
                stage = ""
        elif not re.fullmatch(r"[-:| ]+", line.strip()):
            stage = cells[0].strip("`") or stage
            names = re.findall(r"`([\w.]+)`", cells[column]) if column < len(cells) else []
            rows.append((number, stage, [n[:-len(".hpp")] if n.endswith(".hpp") else n for n in names]))
    return rows


def check_header_tables(stages):
    """Problems with the pages' header tables against `stages` ({header name: stage}),
    one line each."""
    include = os.path.join(ROOT, "include", "posvec")
    public = sorted(f[:-len(".hpp")] for f in os.listdir(include) if f.endswith(".hpp") and f != "posvec.hpp")
    problems = [f"include/posvec/{name}.hpp belongs to no stage: add it to a POSVEC_OWNS_<stage> list "
                "in CMakeLists.txt" for name in public if name not in stages]
    for page in HEADER_TABLE_PAGES:
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            text = f.read()
        rows = header_tables(text)
        if not rows:
            problems.append(f"{page}: no header table (a table whose first column is 'stage' "
                            "and that has a column of headers)")
            continue
        listed = {}
        for number, stage, names in rows:
            for name in names:
                where = f"{page}:{number}: header table"
                if name not in public:
                    problems.append(f"{where} lists {name}.hpp, which is not in include/posvec: "
                                    "remove it")
                elif name in listed:
                    problems.append(f"{where} lists {name}.hpp again (first on line {listed[name]})")
                elif stages.get(name) and stage != stages[name]:
                    problems.append(f"{where} lists {name}.hpp under {stage}, but CMakeLists.txt "
                                    f"puts it in {stages[name]}")
                listed.setdefault(name, number)
        first = rows[0][0]
        for name in public:
            if name not in listed:
                problems.append(f"{page}:{first}: header table lacks {name}.hpp: add it under "
                                f"{stages.get(name, '(no stage in CMakeLists.txt)')}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--page", "--readme", dest="page", default=os.path.join(ROOT, "README.md"),
                    help="the markdown page whose examples run (default README.md)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", default="", help="block numbers (1-based), comma-separated")
    ap.add_argument("--update", action="store_true", help="write the runs' outputs into the page")
    ap.add_argument("--keep", help="scratch directory to use and keep (default: a temporary one)")
    ap.add_argument("--links", action="store_true",
                    help="check the pages' relative links, README.md's length and the header "
                         "tables instead")
    ap.add_argument("--stage", action="append", default=[], metavar="STAGE=HEADER,HEADER",
                    help="with --links: the public headers a stage owns, as CMake has them "
                         "(repeated; default: read from CMakeLists.txt)")
    args = ap.parse_args()

    if args.links:
        stages = {}
        for spec in args.stage:
            stage, _, names = spec.partition("=")
            stages.update((name, stage) for name in names.split(",") if name)
        problems = check_links() + check_header_tables(stages or cmake_stages())
        for problem in problems:
            print(problem)
        print(f"readme-examples: {len(pages())} pages, {len(problems)} problem(s) with links, "
              "length or header tables")
        return 1 if problems else 0
    if not os.access(os.path.join(args.build, "posvec"), os.X_OK):
        sys.exit(f"readme-examples: no posvec in {args.build} (build it first: cmake --build build)")
    page = os.path.relpath(os.path.abspath(args.page), ROOT)
    with open(args.page, encoding="utf-8") as f:
        lines = f.read().split("\n")
    only = {int(x) for x in args.only.split(",") if x}

    scratch = args.keep or tempfile.mkdtemp(prefix="posvec-examples-")
    os.makedirs(scratch, exist_ok=True)
    for name in LINKED:
        target = os.path.join(ROOT, name) if name != "build" else os.path.abspath(args.build)
        link = os.path.join(scratch, name)
        if os.path.exists(target) and not os.path.lexists(link):
            os.symlink(target, link)
    if os.path.isdir(SHARED):
        for name in os.listdir(SHARED):
            link = os.path.join(scratch, name)
            if not os.path.lexists(link):
                os.symlink(os.path.join(SHARED, name), link)
    shutil.copyfile(os.path.join(ROOT, "corpus", "posvec-corpus.txt"),
                    os.path.join(scratch, "corpus.txt"))
    env = dict(os.environ, PATH=os.path.abspath(args.build) + os.pathsep + os.environ["PATH"],
               LC_ALL="C.UTF-8")
    if os.geteuid() == 0:  # Open MPI refuses root unless told (CI machines run as root)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    differs = 0
    replacements = []
    try:
        for n, (start, end, reason) in enumerate(blocks(lines), 1):
            if only and n not in only:
                continue
            where = f"{page}: block {n} (line {start})"
            reason = reason or missing("\n".join(lines[start:end]))
            if reason:
                print(f"{where}: skipped: {reason}")
                continue
            try:
                steps = transcript(lines[start:end])
            except ValueError as e:
                sys.exit(f"readme-examples: {where}: {e}")
            commands = [c.replace("/path/to/", os.path.realpath(SHARED) + "/") for c, _ in steps]
            got, expected = [], []
            outputs = run(commands, scratch, env)
            for (command, output), printed in zip(steps, outputs):
                got.append("$ " + command)
                got.extend(printed)
                expected.append("$ " + command)
                expected.extend(output)
            if matches(expected, got):
                print(f"{where}: ok")
                continue
            differs += 1
            print(f"{where}: differs")
            sys.stdout.writelines(
                line + "\n"
                for line in difflib.unified_diff(expected, got, page, "run", lineterm=""))
            replacements.append((start, end, rewritten(steps, outputs)))
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)

    if args.update and replacements:
        for start, end, got in reversed(replacements):
            lines[start:end] = got
        tmp = args.page + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        os.replace(tmp, args.page)
        print(f"readme-examples: rewrote {len(replacements)} block(s) in {page}")
    return 1 if differs and not args.update else 0


if __name__ == "__main__":
    sys.exit(main())
