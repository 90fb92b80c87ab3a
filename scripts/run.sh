#!/usr/bin/env bash
# The default job: set up, then ask one design question at a stated peak. Will one PartitionKey ('hot') take
# 400 operations/s of the default mix (reads, upserts, inserts, deletes, 100-entity batches, 100-row scans: about
# 3,500 entities/s)? An open loop, so the design is judged on that demand whatever this machine serves; through the
# throttling emulator with Azure's budgets (2,000 entities/s per partition, 20,000 per account) in front of an
# embedded Azurite, so the service answers 503 ServerBusy where Azure would; 60 s.
# With arguments: `loadtest run` with those alone (e.g. --arrival-rate 2000 --key-strategy hash-prefix:16).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "$#" -eq 0 ]; then
  set -- --arrival-rate 400 --emulate-throttling
fi
exec .venv/bin/loadtest run "$@"
