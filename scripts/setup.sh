#!/usr/bin/env bash
# Idempotent setup: .venv with the pinned Python dependencies, the package, and Azurite from npm.
# `setup.sh test` adds the pinned test dependencies (requirements-test.lock).
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "setup: Python 3.11 or newer is needed (found: $("$python" --version 2>&1 || echo none))" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv

# one stamp per lock file: installing the test set never invalidates the runtime set, and back
install() {  # lock file, stamp
  local want; want=$(cat "$1" pyproject.toml | sha256sum | cut -d' ' -f1)
  if [ "$(cat "$2" 2>/dev/null)" != "$want" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$1"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
    echo "$want" > "$2"
  fi
}
install requirements.lock .venv/.installed-runtime
if [ "${1:-}" = "test" ]; then
  install requirements-test.lock .venv/.installed-test
fi

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "setup: the embedded Azurite needs Node.js 18+ and npm (https://nodejs.org, or: apt-get install nodejs npm)" >&2
  exit 1
fi
if [ ! -x node_modules/.bin/azurite-table ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --loglevel=error
fi

# Locust's web UI with the Partitions tab (webui/, the locust-ui library pinned in its package-lock.json), built into
# loadtest/live/webui, which the tool serves as Locust's --build-path; rebuilt when its sources or pins change
ui_want=$(cat webui/package.json webui/package-lock.json webui/*.js webui/index.html webui/src/* | sha256sum | cut -d' ' -f1)
if [ "$(cat loadtest/live/webui/.built 2>/dev/null)" != "$ui_want" ]; then
  (cd webui && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build >/dev/null)
  echo "$ui_want" > loadtest/live/webui/.built
fi
