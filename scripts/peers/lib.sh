# Shared by the steps in scripts/peers/: sourced, not run (install-peers.sh runs only the numbered steps).
# stamp_ok NAME KEY: true when step NAME was last installed with exactly KEY (its versions and inputs).
# stamp_set NAME KEY: records that. A step that fails half-way leaves no stamp and runs again next time.
stamp_ok() { [[ -f "$FLOE_PEERS/.stamp-$1" && "$(cat "$FLOE_PEERS/.stamp-$1")" == "$2" ]]; }
stamp_set() { printf '%s' "$2" >"$FLOE_PEERS/.stamp-$1"; }
say() { printf '[peers] %s\n' "$*"; }
# need_tools TOOL...: fails, saying what to install, unless every tool is on the PATH (a JDK and Maven).
need_tools() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "[peers] $tool is not installed: install a JDK 17+ and Maven (Debian: apt-get install openjdk-17-jdk-headless maven)" >&2; exit 1; }
  done
}
# maven_classpath POM OUT: Maven resolves POM's dependencies into ~/.m2 and writes their classpath to OUT;
# fails here, not in a test, if the resolution left a jar out.
maven_classpath() {
  # (-q still leaves colour resets on stderr; strip them)
  mvn -q -B -Dstyle.color=never -f "$1" dependency:build-classpath -Dmdep.outputFile="$2" 2>&1 | sed "s/\x1b\[[0-9;]*m//g"
  tr ':' '\n' <"$2" | while read -r jar; do [[ -f "$jar" ]] || { echo "missing $jar" >&2; exit 1; }; done
}
