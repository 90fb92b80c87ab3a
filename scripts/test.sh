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
# and pytest keeps the test modules it rewrites (its asserts): the second phase's collection reads what the first
# wrote, 3.2 s against 6.8 s on this machine
unset PYTHONDONTWRITEBYTECODE
.venv/bin/ruff format --check .
# two phases: the tests that share the machine, in three processes (pytest-xdist; a test file's tests in one of them,
# its fixtures made once: on 2 cores a third keeps them busy while one waits on a child, 351 s against 419 with two);
# then those marked `alone` (their figures are the machine's pace), one after another with
# nothing beside them. In one run they would hold the lock in tests/machine_share.py while the other process stood
# idle. A `-m` or `-n` of your own runs once, as asked (`-n 0`: one process).
for arg in "$@"; do
  case "$arg" in -m* | -n* | --numprocesses*) exec .venv/bin/pytest -n 2 --dist loadfile "$@" ;; esac
done
shared=0; alone=0
.venv/bin/pytest -n 3 --dist loadfile -m "not alone" "$@" || shared=$?
.venv/bin/pytest -p no:xdist -m alone "$@" || alone=$?
# 5: no test of that kind among those asked for
if [ "$shared" -eq 5 ] && [ "$alone" -eq 5 ]; then exit 5; fi
for code in "$shared" "$alone"; do
  if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then exit "$code"; fi
done
