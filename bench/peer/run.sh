#!/usr/bin/env bash
# Floe against Apache Kafka on this machine, from nothing: installs Node dependencies and Kafka's jars when
# they are missing, then runs bench/peer/peer.bench.ts with the given options (--quick for a run under 5
# minutes; --help lists the rest), or with a first argument `transactions` bench/peer/transactions.bench.ts
# (transactional against plain produce), `tls` bench/peer/tls.bench.ts (TLS against plaintext), or `connect`
# bench/peer/connect.bench.ts (Iceberg's Kafka Connect sink against Floe's tiering; installs Kafka Connect and
# the sink too, install-connect.sh). The ratio tables go to stdout, progress to stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ -d node_modules ]] || npm ci --no-audit --no-fund
bash bench/peer/install.sh >&2
bench=bench/peer/peer.bench.ts
case "${1:-}" in
  transactions | tls)
    bench="bench/peer/$1.bench.ts"
    shift
    ;;
  connect)
    bash bench/peer/install-connect.sh >&2
    bench=bench/peer/connect.bench.ts
    shift
    ;;
esac
exec npx tsx "$bench" "$@"
