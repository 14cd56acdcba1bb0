# Shared by the steps in scripts/peers/: sourced, not run (install-peers.sh runs only the numbered steps).
# stamp_ok NAME KEY: true when step NAME was last installed with exactly KEY (its versions and inputs).
# stamp_set NAME KEY: records that. A step that fails half-way leaves no stamp and runs again next time.
stamp_ok() { [[ -f "$FLOE_PEERS/.stamp-$1" && "$(cat "$FLOE_PEERS/.stamp-$1")" == "$2" ]]; }
stamp_set() { printf '%s' "$2" >"$FLOE_PEERS/.stamp-$1"; }
say() { printf '[peers] %s\n' "$*"; }
