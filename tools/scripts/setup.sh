#!/usr/bin/env bash
# Installs the Debian 12 packages posvec needs, and nothing when all are there.
#   tools/scripts/setup.sh          build dependencies (with the Python module's and Open MPI for
#                           distributed training)
#   tools/scripts/setup.sh --test   plus what the test suite uses (gensim and fastText for format checks, pytest,
#                           pip/venv for the install test, nbclient/ipykernel for the notebook;
#                           clang, its sanitizer and libFuzzer runtimes and OpenMP for the
#                           sanitizer builds and fuzz harnesses; Ninja, which keeps both
#                           cores busy in the test command's builds; Doxygen for the
#                           C++ API reference the tests build; Chromium for the report's
#                           headless-browser check)
#   tools/scripts/setup.sh --docs   plus Doxygen (tools/dev.sh docs)
#   tools/scripts/setup.sh --bench  plus the peers and tools the benchmarks run
set -euo pipefail

pkgs=(g++ cmake make pkg-config libeigen3-dev libicu-dev libarchive-dev libcli11-dev nlohmann-json3-dev catch2
      pybind11-dev python3-dev python3-numpy python3-pip python3-venv python3-setuptools
      python3-wheel python3-tqdm libopenmpi-dev openmpi-bin)
for arg in "$@"; do
  case "$arg" in
    --test) pkgs+=(python3-gensim fasttext python3-pytest python3-nbclient python3-ipykernel python3-pyemd python3-pot time gzip bzip2 xz-utils zstd
                   clang libclang-rt-14-dev libomp-dev ninja-build doxygen chromium) ;;
    --docs) pkgs+=(doxygen) ;;
    --bench) pkgs+=(python3-gensim fasttext hyperfine nodejs npm time) ;;
    --report) pkgs+=(chromium) ;;
    *) echo "setup: unknown option '$arg' (use --test, --docs, --bench or --report)" >&2; exit 2 ;;
  esac
done

# Packages that only provide a command: one already on PATH (Node.js installed from
# nodejs.org or nvm brings its own npm, which Debian's npm package conflicts with) is enough.
command_of() {
  case "$1" in
    nodejs) echo node ;;
    npm | hyperfine | fasttext | ninja-build | chromium) echo "${1%-build}" ;;
    *) echo "" ;;
  esac
}

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  cmd="$(command_of "$p")"
  [ -n "$cmd" ] && command -v "$cmd" >/dev/null 2>&1 && continue
  missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "setup: missing Debian packages: ${missing[*]}; run as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
