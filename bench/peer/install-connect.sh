#!/usr/bin/env bash
# Apache Kafka Connect with Apache Iceberg's sink connector for bench/peer/connect.bench.ts (the versions
# connect-pom.xml names: Connect 4.3.2, whose AppInfoParser Iceberg 1.12.0's sink still needs), from Maven
# Central: Maven resolves them into ~/.m2 and writes the classpath to $FLOE_PEERS/kafka-connect/classpath.
# No jar enters the repository. Kafka's broker comes from install.sh, which bench/peer/run.sh runs first (it
# also installs a JDK and Maven when they are missing).
set -euo pipefail
source "$(dirname "$0")/../../scripts/peers/lib.sh"
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
dir="$(cd "$(dirname "$0")" && pwd)"
out="$FLOE_PEERS/kafka-connect"
need_tools java mvn
mkdir -p "$FLOE_PEERS"
key="$(java -version 2>&1 | head -1) $(sha256sum "$dir/connect-pom.xml" | cut -d' ' -f1)"
if stamp_ok kafka-connect "$key" && [[ -s "$out/classpath" ]]; then
  say "kafka-connect up to date"
  exit 0
fi
say "resolving Apache Kafka Connect and Apache Iceberg's sink connector with Maven (cache: ~/.m2)"
rm -rf "$out"
mkdir -p "$out"
maven_classpath "$dir/connect-pom.xml" "$out/classpath"
stamp_set kafka-connect "$key"
version() { sed -n "s:.*<$1.version>\(.*\)</$1.version>.*:\1:p" "$dir/connect-pom.xml"; }
say "kafka-connect ready: Kafka Connect $(version kafka), Iceberg sink $(version iceberg), classpath in $out/classpath"
