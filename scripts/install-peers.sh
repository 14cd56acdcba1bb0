#!/usr/bin/env bash
# Installs the interoperability peers that do not come from Debian or npm: Python packages from PyPI (in a
# venv) and Java programs from Maven Central (Apache Kafka's client and tools, Spark's Iceberg runtime,
# Trino). Everything lands in $FLOE_PEERS (default ~/.cache/floe-peers) and Maven's ~/.m2, outside the
# repository; each step is skipped when its stamp says it is already installed at the wanted versions, so a
# second run takes seconds. Run by `npm test` (pretest) and by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
mkdir -p "$FLOE_PEERS"
for step in scripts/peers/*.sh; do
  bash "$step"
done
