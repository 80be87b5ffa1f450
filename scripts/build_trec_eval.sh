#!/usr/bin/env bash
# Put a trec_eval binary at .cache/trec_eval/trec_eval (git-ignored; or into $TREC_EVAL_OUT)
# for the differential suite (tests/differential finds it there) and the benchmarks.
#
#   scripts/build_trec_eval.sh            # the pinned binary (what CI runs)
#   scripts/build_trec_eval.sh SOURCE     # a binary built or taken from SOURCE
#
# Without SOURCE: trec_eval 9.0.4 for linux-amd64 as prebuilt in anserini's jar inside the
# pyserini sdist (pinned below with its sha256), fetched with `pip download` from the
# package index, the binary checked against its own pinned sha256. The binary is kept in
# ${XDG_CACHE_HOME:-~/.cache}/ragassay/ between runs, so the 165 MB sdist is fetched once
# per machine. This is the only trec_eval the package index serves: the trec_eval 9.0.8
# and 10.0 sources are in no package there (the pytrec_eval sdists fetch trec_eval's source
# from elsewhere when built).
#
# SOURCE (or $TREC_EVAL_SRC) is one of
#   - trec_eval's source: a folder or a .tar.gz/.zip of it (usnistgov/trec_eval, e.g. the
#     v9.0.8 or v10.0 release); built with make and the C compiler on PATH;
#   - a jar or archive that ships trec_eval binaries (jtreceval's jar, or the pyserini
#     sdist); the binary for this platform is taken from it (no compiler needed).
# Exit codes: 0 built, 2 no source or no binary for this platform in it.
set -euo pipefail
cd "$(dirname "$0")/.."
PYSERINI_VERSION=1.6.0
PYSERINI_SHA256=e34761d700b33613c26bc61113effc6d65598dee6ada28a33214f79350f833f4
TREC_EVAL_VERSION=9.0.4
TREC_EVAL_SHA256=a282ee9c22966f306c4bcbbfda9142ff22f371012a2994782194e6afdadbe6e4  # linux-amd64

out="${TREC_EVAL_OUT:-.cache/trec_eval}"  # the folder the binary goes to
mkdir -p "$out"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

install_binary() {  # whole or not at all
    cp "$1" "$out/trec_eval.tmp"
    chmod +x "$out/trec_eval.tmp"
    mv "$out/trec_eval.tmp" "$out/trec_eval"
    "$out/trec_eval" -v 2>&1 | head -n 1
    echo "built $out/trec_eval"
}

src="${1:-${TREC_EVAL_SRC:-}}"
if [[ -z "$src" ]]; then
    if [[ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]]; then
        echo "the pinned trec_eval binary is for linux-amd64; give a SOURCE to build" >&2
        exit 2
    fi
    cache="${XDG_CACHE_HOME:-$HOME/.cache}/ragassay"
    cached="$cache/trec_eval-$TREC_EVAL_VERSION-$TREC_EVAL_SHA256"
    if [[ -f "$cached" ]] && echo "$TREC_EVAL_SHA256  $cached" | sha256sum -c --quiet; then
        install_binary "$cached"
        exit 0
    fi
    python3 -m pip download --quiet --no-deps --no-binary :all: \
        "pyserini==$PYSERINI_VERSION" -d "$work/sdist" >&2
    sdist="$work/sdist/pyserini-$PYSERINI_VERSION.tar.gz"
    echo "$PYSERINI_SHA256  $sdist" | sha256sum -c --quiet
    tar -xzf "$sdist" -C "$work" --wildcards '*.jar'
    jar="$(find "$work" -name 'anserini-*-fatjar.jar' | head -n 1)"
    unzip -q -o "$jar" 'trec_eval/trec_eval-linux-amd64' -d "$work/jar"
    binary="$work/jar/trec_eval/trec_eval-linux-amd64"
    echo "$TREC_EVAL_SHA256  $binary" | sha256sum -c --quiet
    mkdir -p "$cache"
    cp "$binary" "$cached.tmp" && mv "$cached.tmp" "$cached"
    install_binary "$binary"
    exit 0
fi
if [[ ! -e "$src" ]]; then
    echo "usage: scripts/build_trec_eval.sh [SOURCE] (trec_eval source folder, .tar.gz," >&2
    echo "       .zip, or a jar/sdist that ships trec_eval binaries); got '${src}'" >&2
    exit 2
fi
src="$(cd "$(dirname "$src")" && pwd)/$(basename "$src")"

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
    install_binary "$dir/trec_eval"
    exit 0
fi
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
install_binary "$binary"
