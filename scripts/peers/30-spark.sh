#!/usr/bin/env bash
# Spark's Iceberg jars from Maven Central: Iceberg's Spark runtime and its AWS bundle (S3FileIO), copied into
# $FLOE_PEERS/spark-jars (Maven caches them in ~/.m2). The tests start pyspark (from the venv, 10-python.sh)
# with these files as spark.jars, so Spark never resolves packages at test time. The versions live in
# test/interop/engines/spark-jars.pom.xml.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${FLOE_PEERS:=$HOME/.cache/floe-peers}"
pom="$(cd "$(dirname "$0")/../../test/interop/engines" && pwd)/spark-jars.pom.xml"
out="$FLOE_PEERS/spark-jars"
key="$(sha256sum "$pom" | cut -d' ' -f1)"
if stamp_ok spark-jars "$key" && compgen -G "$out/iceberg-spark-runtime-*.jar" >/dev/null && compgen -G "$out/iceberg-aws-bundle-*.jar" >/dev/null; then say "spark jars up to date"; exit 0; fi
command -v mvn >/dev/null || { say "installing Maven (Debian)"; apt-get update -q && apt-get install -y -q maven; }
say "fetching Spark's Iceberg jars into $out (Maven cache: ~/.m2)"
rm -rf "$out"
log="$(mktemp)"
if ! mvn -B -Dstyle.color=never -f "$pom" dependency:copy-dependencies -DoutputDirectory="$out" -DexcludeTransitive=true -DincludeScope=runtime >"$log" 2>&1; then
  cat "$log"; rm -f "$log"; say "Maven could not fetch the Spark jars"; exit 1
fi
rm -f "$log"
compgen -G "$out/iceberg-spark-runtime-*.jar" >/dev/null || { say "no iceberg-spark-runtime jar in $out"; exit 1; }
stamp_set spark-jars "$key"
say "spark jars ready: $(cd "$out" && ls *.jar | tr '\n' ' ')"
