#!/usr/bin/env bash
# Apache Kafka Streams (kafka-streams from Maven Central, at the version test/interop/streams/pom.xml names)
# for the exactly-once test: Maven resolves it into ~/.m2 and writes the classpath to
# $FLOE_PEERS/kafka-streams/classpath; javac compiles the application (test/interop/streams/src) into
# $FLOE_PEERS/kafka-streams/app.jar. No jar or class file enters the repository.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
dir="$(cd "$(dirname "$0")/../../test/interop/streams" && pwd)"
out="$FLOE_PEERS/kafka-streams"
need_tools mvn javac jar
inputs="$(cd "$dir" && find pom.xml src -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
key="$(javac -version 2>&1) $inputs"
if stamp_ok kafka-streams "$key" && [[ -s "$out/classpath" && -f "$out/app.jar" ]]; then
  say "kafka-streams up to date"
  exit 0
fi
say "resolving Apache Kafka Streams with Maven (cache: ~/.m2) and compiling the exactly-once application"
rm -rf "$out"
mkdir -p "$out/classes"
maven_classpath "$dir/pom.xml" "$out/classpath"
javac -Xlint:all -Werror -d "$out/classes" -cp "$(cat "$out/classpath")" $(find "$dir/src" -name '*.java')
jar cf "$out/app.jar" -C "$out/classes" .
rm -rf "$out/classes"
stamp_set kafka-streams "$key"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$dir/pom.xml")"
say "kafka-streams ready: kafka-streams $version, application in $out/app.jar"
