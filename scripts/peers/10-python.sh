#!/usr/bin/env bash
# Python peers from PyPI in one venv, $FLOE_PEERS/venv: confluent-kafka 2.x (the current librdkafka, beside
# Debian's 2.0 under /usr/bin/python3), pyiceberg with pyarrow, and pyspark.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
req="$(dirname "$0")/requirements.txt"
key="$(python3 --version 2>&1) $(sha256sum "$req" | cut -d' ' -f1)"
if stamp_ok python "$key" && [[ -x "$FLOE_PEERS/venv/bin/python" ]]; then say "python venv up to date"; exit 0; fi
say "installing Python peers into $FLOE_PEERS/venv (pip cache: ~/.cache/pip)"
rm -rf "$FLOE_PEERS/venv"
python3 -m venv "$FLOE_PEERS/venv"
"$FLOE_PEERS/venv/bin/pip" install -q --disable-pip-version-check --progress-bar off -r "$req"
stamp_set python "$key"
say "python venv ready: $("$FLOE_PEERS/venv/bin/python" -c 'import confluent_kafka; print("confluent-kafka", confluent_kafka.version(), "librdkafka", confluent_kafka.libversion()[0])')"
