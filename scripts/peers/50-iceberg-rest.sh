#!/usr/bin/env bash
# Apache Iceberg's own REST catalog server (org.apache.iceberg.rest.RESTCatalogServer from the test-fixtures
# jar of iceberg-open-api on Maven Central, the code of the apache/iceberg-rest-fixture image) for the external
# catalog tests (test/interop/catalogs/). Maven resolves the jars listed in
# test/interop/catalogs/iceberg-rest.pom.xml into ~/.m2 and writes their classpath to
# $FLOE_PEERS/iceberg-rest/classpath; test/interop/catalogs/iceberg-rest-server.ts starts the server from it.
# No jar enters the repository.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
pom="$(cd "$(dirname "$0")/../../test/interop/catalogs" && pwd)/iceberg-rest.pom.xml"
out="$FLOE_PEERS/iceberg-rest"
for tool in mvn java; do
  command -v "$tool" >/dev/null || { echo "[peers] $tool is not installed: install a JDK 17+ and Maven (Debian: apt-get install openjdk-17-jdk-headless maven)" >&2; exit 1; }
done
key="$(sha256sum "$pom" | cut -d' ' -f1)"
if stamp_ok iceberg-rest "$key" && [[ -s "$out/classpath" ]]; then
  say "iceberg-rest up to date"
  exit 0
fi
say "resolving Apache Iceberg's REST catalog server with Maven (cache: ~/.m2)"
rm -rf "$out"
mkdir -p "$out"
mvn -q -B -Dstyle.color=never -f "$pom" dependency:build-classpath -Dmdep.outputFile="$out/classpath" 2>&1 | sed "s/\x1b\[[0-9;]*m//g"
tr ':' '\n' <"$out/classpath" | while read -r jar; do [[ -f "$jar" ]] || { echo "missing $jar" >&2; exit 1; }; done
stamp_set iceberg-rest "$key"
version="$(sed -n 's:.*<iceberg.version>\(.*\)</iceberg.version>.*:\1:p' "$pom")"
say "iceberg-rest ready: RESTCatalogServer of Iceberg $version, classpath in $out/classpath"
