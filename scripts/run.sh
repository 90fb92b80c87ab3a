#!/usr/bin/env bash
# The default job: set up, then a 60-second single-partition stress test on an embedded Azurite.
# Extra arguments go to `loadtest run` (e.g. --partition-target 500 --users 20).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/loadtest run "$@"
