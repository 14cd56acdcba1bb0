#!/usr/bin/env bash
# Trino from Maven Central: the minimal server (io.trino:trino-server-core, tar.gz) and the Iceberg connector
# plugin (io.trino:trino-iceberg, zip), unpacked into $FLOE_PEERS/trino-<version> with the plugin under
# plugin/iceberg. 476 is the newest release whose server tarball and plugin zip are on Maven Central (later
# releases publish only jars there). It runs on the Java 25 JDK beside the default Java 17
# (test/helpers/trino.ts sets JAVA_HOME and names the same version); the downloads (~540 MB) stay in ~/.m2 for the next install.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
: "${FLOE_PEERS:=$HOME/.cache/floe-peers}"
version=476
dest="$FLOE_PEERS/trino-$version"
key="trino $version"
if stamp_ok trino "$key" && [[ -x "$dest/bin/launcher" && -d "$dest/plugin/iceberg" ]]; then
  say "trino $version up to date"
  exit 0
fi
command -v mvn >/dev/null || { say "installing Maven (Debian)"; apt-get update -q && apt-get install -y -q maven; }
[[ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/java || -n "${FLOE_JAVA25_HOME:-}" ]] || say "note: Trino $version runs on Java 24+; the tests look for /usr/lib/jvm/temurin-25-jdk-amd64 or \$FLOE_JAVA25_HOME"
mkdir -p "$FLOE_PEERS"
m2="$HOME/.m2/repository/io/trino"
fetch() { # fetch ARTIFACT EXTENSION: into ~/.m2 (skipped by Maven when already there)
  say "trino: resolving io.trino:$1:$version:$2 from Maven Central (cached in ~/.m2)"
  # Maven's own lines about this download (and errors), not its plugin chatter.
  mvn -B -Dstyle.color=never dependency:get -Dtransitive=false "-Dartifact=io.trino:$1:$version:$2" 2>&1 | { grep -E 'Download(ing|ed) from .*io/trino|ERROR|BUILD FAILURE' || true; }
  say "trino: got $(du -h "$m2/$1/$version/$1-$version.$2" | cut -f1) $1-$version.$2"
}
fetch trino-server-core tar.gz
fetch trino-iceberg zip
say "trino: unpacking into $dest"
rm -rf "$dest" "$dest.tmp"
mkdir -p "$dest.tmp"
tar -xzf "$m2/trino-server-core/$version/trino-server-core-$version.tar.gz" -C "$dest.tmp" --strip-components=1
# python3's zipfile rather than unzip, which a fresh Debian does not have (plugin jars need no exec bits).
python3 -m zipfile -e "$m2/trino-iceberg/$version/trino-iceberg-$version.zip" "$dest.tmp/plugin"
mv "$dest.tmp/plugin/trino-iceberg-$version" "$dest.tmp/plugin/iceberg"
mv "$dest.tmp" "$dest"
stamp_set trino "$key"
say "trino $version ready in $dest ($(ls "$dest/plugin" | tr '\n' ' '))"
