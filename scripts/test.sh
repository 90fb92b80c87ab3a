#!/usr/bin/env bash
# Set up, make sure headless Chromium is there (Debian's package), lint, check the formatting, and run the tests.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test

if [ ! -x /usr/bin/chromium ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
fi

.venv/bin/ruff check .
# every child `python -m loadtest` the tests start reads its modules compiled, not compiled afresh (a machine that sets
# PYTHONDONTWRITEBYTECODE never caches them): 60 ms a child
.venv/bin/python -m compileall -q loadtest >/dev/null
.venv/bin/ruff format --check .
# two test processes, a test file's tests in one of them (its fixtures made once); those marked `alone` run with
# nothing beside them (tests/machine_share.py); `-n 0` runs one
exec .venv/bin/pytest -n 2 --dist loadfile "$@"
