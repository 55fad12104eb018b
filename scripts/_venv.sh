# Sourced by scripts/run and scripts/test: one place that creates and refreshes .venv.
# Reinstalls only when the packaging files changed since the last install.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)

find_python() {
    for candidate in ${PYTHON:-} python3 python3.13 python3.12 python3.11 python; do
        if command -v "$candidate" >/dev/null 2>&1 &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$candidate"
            return 0
        fi
    done
    echo "error: Python 3.11 or newer is required (set PYTHON=/path/to/python3.11)" >&2
    return 1
}

if [ ! -x .venv/bin/python ]; then
    PY=$(find_python)
    echo "creating .venv with $PY" >&2
    "$PY" -m venv .venv
fi

STAMP=.venv/.platform-api-installed
if [ ! -f "$STAMP" ] || [ setup.cfg -nt "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
    echo "installing platform-api and its pinned dependencies into .venv" >&2
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
    # compat editable mode puts the checkout itself on sys.path, so twistd finds
    # twisted/plugins/platform_api_plugins.py straight from the source tree.
    .venv/bin/python -m pip install --quiet --disable-pip-version-check \
        --config-settings editable_mode=compat -e ".[test]"
    touch "$STAMP"
fi

# Every test server is a fresh twistd; with PYTHONDONTWRITEBYTECODE set (as CI images
# often do) each would recompile ~230 modules, ~0.6 s per start.  compileall only rewrites
# what changed.
.venv/bin/python -m compileall -q platform_api webhooks twisted/plugins >/dev/null
