#!/usr/bin/env bash
# moto's S3 server from PyPI in its own venv, $FLOE_PEERS/moto-venv, for the external catalog tests
# (test/interop/catalogs/): the Iceberg REST catalog servers they start write their metadata with the AWS
# SDK's aws-chunked uploads, which moto decodes and s3rver stores framing and all. Its own venv, so that
# pinning it never rebuilds the shared one of 10-python.sh.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
req="$(dirname "$0")/moto-requirements.txt"
key="$(/usr/bin/env python3 --version 2>&1) $(sha256sum "$req" | cut -d' ' -f1)"
if stamp_ok moto "$key" && [[ -x "$FLOE_PEERS/moto-venv/bin/python" ]]; then say "moto venv up to date"; exit 0; fi
say "installing moto into $FLOE_PEERS/moto-venv (pip cache: ~/.cache/pip)"
rm -rf "$FLOE_PEERS/moto-venv"
python3 -m venv "$FLOE_PEERS/moto-venv"
"$FLOE_PEERS/moto-venv/bin/pip" install -q --disable-pip-version-check --progress-bar off -r "$req"
stamp_set moto "$key"
say "moto venv ready: moto $("$FLOE_PEERS/moto-venv/bin/python" -c 'import moto; print(moto.__version__)')"
