#!/usr/bin/env bash
# Apache Kafka's Java client and command-line tools (kafka-clients and kafka-tools from Maven Central, at the
# version test/interop/java/pom.xml names) for the interop tests: Maven resolves them into ~/.m2 and writes
# the classpath to $FLOE_PEERS/kafka-java/classpath; javac compiles the test driver (test/interop/java/src)
# into $FLOE_PEERS/kafka-java/driver.jar; a class-data-sharing archive of Kafka's classes
# ($FLOE_PEERS/kafka-java/kafka.jsa) makes every later JVM start faster. No jar or class file enters the
# repository.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
dir="$(cd "$(dirname "$0")/../../test/interop/java" && pwd)"
out="$FLOE_PEERS/kafka-java"
need_tools mvn javac jar java
inputs="$(cd "$dir" && find pom.xml src -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
key="$(javac -version 2>&1) $inputs"
if stamp_ok kafka-java "$key" && [[ -s "$out/classpath" && -f "$out/driver.jar" && -f "$out/kafka.jsa" ]]; then
  say "kafka-java up to date"
  exit 0
fi
say "resolving Apache Kafka's client and tools with Maven (cache: ~/.m2) and compiling the Java driver"
rm -rf "$out"
mkdir -p "$out/classes"
maven_classpath "$dir/pom.xml" "$out/classpath"
javac -Xlint:all -Werror -d "$out/classes" -cp "$(cat "$out/classpath")" $(find "$dir/src" -name '*.java')
jar cf "$out/driver.jar" -C "$out/classes" .
rm -rf "$out/classes"
# The archive is valid only for this exact classpath (test/interop/clients/java.ts builds the same one).
kafka_jars="$(tr ':' '\n' <"$out/classpath" | grep '/org/apache/kafka/' | tr '\n' ' ')"
java -XX:ArchiveClassesAtExit="$out/kafka.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off -cp "$out/driver.jar:$(cat "$out/classpath")" floe.interop.ClassWarmup $kafka_jars >/dev/null
stamp_set kafka-java "$key"
version="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$dir/pom.xml")"
say "kafka-java ready: kafka-clients and kafka-tools $version, driver in $out/driver.jar"
