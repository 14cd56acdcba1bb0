#!/usr/bin/env bash
# Apache Kafka's broker and performance tools for bench/peer (the versions pom.xml names), from Maven Central:
# Maven resolves them into ~/.m2 and writes the classpath to $FLOE_PEERS/kafka-server/classpath. No jar
# enters the repository. Needs a JDK 17+ and Maven (Debian: apt-get install openjdk-17-jdk-headless maven).
set -euo pipefail
source "$(dirname "$0")/../../scripts/peers/lib.sh"
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
dir="$(cd "$(dirname "$0")" && pwd)"
out="$FLOE_PEERS/kafka-server"
if ! command -v mvn >/dev/null || ! command -v java >/dev/null; then
  if command -v apt-get >/dev/null; then
    say "installing a JDK and Maven from Debian"
    apt-get install -y -q openjdk-17-jdk-headless maven >/dev/null
  else
    echo "[peers] java and mvn are needed: install a JDK 17+ and Maven" >&2
    exit 1
  fi
fi
mkdir -p "$FLOE_PEERS"
key="$(java -version 2>&1 | head -1) $(sha256sum "$dir/pom.xml" | cut -d' ' -f1)"
if stamp_ok kafka-server "$key" && [[ -s "$out/classpath" ]]; then
  say "kafka-server up to date"
  exit 0
fi
say "resolving Apache Kafka's broker and tools with Maven (cache: ~/.m2)"
rm -rf "$out"
mkdir -p "$out"
maven_classpath "$dir/pom.xml" "$out/classpath"
stamp_set kafka-server "$key"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$dir/pom.xml")"
say "kafka-server ready: Apache Kafka $version, classpath in $out/classpath"
