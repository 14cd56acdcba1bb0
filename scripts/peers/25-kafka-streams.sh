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
for tool in mvn javac jar; do
  command -v "$tool" >/dev/null || { echo "[peers] $tool is not installed: install a JDK 17+ and Maven (Debian: apt-get install openjdk-17-jdk-headless maven)" >&2; exit 1; }
done
inputs="$(cd "$dir" && find pom.xml src -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
key="$(javac -version 2>&1) $inputs"
if stamp_ok kafka-streams "$key" && [[ -s "$out/classpath" && -f "$out/app.jar" ]]; then
  say "kafka-streams up to date"
  exit 0
fi
say "resolving Apache Kafka Streams with Maven (cache: ~/.m2) and compiling the exactly-once application"
rm -rf "$out"
mkdir -p "$out/classes"
mvn -q -B -Dstyle.color=never -f "$dir/pom.xml" dependency:build-classpath -Dmdep.outputFile="$out/classpath" 2>&1 | sed "s/\x1b\[[0-9;]*m//g"
tr ':' '\n' <"$out/classpath" | while read -r jar; do [[ -f "$jar" ]] || { echo "missing $jar" >&2; exit 1; }; done
javac -Xlint:all -Werror -d "$out/classes" -cp "$(cat "$out/classpath")" $(find "$dir/src" -name '*.java')
jar cf "$out/app.jar" -C "$out/classes" .
rm -rf "$out/classes"
stamp_set kafka-streams "$key"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$dir/pom.xml")"
say "kafka-streams ready: kafka-streams $version, application in $out/app.jar"
