#!/usr/bin/env bash
# Extraction quality, side by side in one run, on both shared benches:
# Gatehouse (content.Convert), go-trafilatura with its fallback on +
# html-to-markdown v2 (bench/quality -engine trafilatura) and readability.js
# 0.6.0 + jsdom 26.1.0 + turndown (bench/peer). Every output is scored by
# the shared scorer with -drop-title; wcxb-dev is also scored per page type
# and on two halves split by page id (even/odd), so that a change tuned on
# one half can be checked on the other.
#   bench/quality.sh [SHARED_DIR]      TOOLS="gatehouse trafilatura readability" SETS="extraction wcxb-dev"
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${1:-../shared}"
if [ ! -f "$shared/bench/extraction/ground-truth.json" ]; then
  echo "bench/quality.sh: $shared/bench not found; skipping"; exit 0
fi
tools="${TOOLS:-gatehouse trafilatura readability}"
sets="${SETS:-extraction wcxb-dev}"
out=bench/out/q
mkdir -p "$out"
go build -o "$out/score" "$shared/bench/score/main.go"
go build -o "$out/quality" ./bench/quality
for set in $sets; do
  for tool in $tools; do
    case "$tool" in
      gatehouse|trafilatura)
        "$out/quality" -shared "$shared" -set "$set" -engine "$tool" -out "$out/$set/$tool" | grep -E 'MB/s|failed' ;;
      readability)
        ( cd bench/peer && { [ -d node_modules ] || npm install --no-audit --no-fund --silent; } )
        rm -rf "$out/$set/readability"
        # (Resumed after a crash: jsdom may run out of heap on a big page.)
        for try in 1 2 3 4 5; do
          RESUME=1 node --max-old-space-size=3072 bench/peer/readability.mjs "$shared" "$out/$set/readability" 1 "$set" 2>/dev/null && break
        done ;;
    esac
  done
done
for set in extraction wcxb-dev; do
  [ -d "$out/$set" ] || continue
  specs=()
  for d in "$out/$set"/*/; do specs+=("$(basename "$d")=$d"); done
  "$out/score" -gt "$shared/bench/$set/ground-truth.json" -drop-title -bootstrap 0 -per-page "$out/$set.tsv" "${specs[@]}" > "$out/$set.txt"
  python3 bench/quality_table.py "$shared/bench/$set/ground-truth.json" "$out/$set.tsv" "$set"
done
