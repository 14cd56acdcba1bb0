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
need_tools mvn java
key="$(sha256sum "$pom" | cut -d' ' -f1)"
if stamp_ok iceberg-rest "$key" && [[ -s "$out/classpath" ]]; then
  say "iceberg-rest up to date"
  exit 0
fi
say "resolving Apache Iceberg's REST catalog server with Maven (cache: ~/.m2)"
rm -rf "$out"
mkdir -p "$out"
maven_classpath "$pom" "$out/classpath"
stamp_set iceberg-rest "$key"
version="$(sed -n 's:.*<iceberg.version>\(.*\)</iceberg.version>.*:\1:p' "$pom")"
say "iceberg-rest ready: RESTCatalogServer of Iceberg $version, classpath in $out/classpath"
