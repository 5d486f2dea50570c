#!/usr/bin/env bash
# Side-by-side, in one run: Gatehouse's HTML→markdown conversion (internal/content,
# one goroutine, BenchmarkConvertBench over the 181 shared bench pages) against the
# peer readability.js 0.6.0 + jsdom 26.1.0 + turndown (one Node process, same pages).
# Prints both throughputs and the ratio. Needs ../shared/bench and Node/npm.
#   bench/compare.sh [SHARED_DIR]     SET=wcxb-dev (783 pages of seven types; default extraction)
#   PASSES=2 (peer passes) ROUNDS=2 COUNT=3 (BenchmarkConvertBench -benchtime ROUNDSx -count COUNT)
#   SLICE=N: the peer converts N pages per Node process (default: all of extraction in one;
#   wcxb-dev 130, as jsdom's heap outgrows 3 GB over its 783 pages in one process); the
#   slices' conversion seconds and bytes are summed (loading and start-up are not timed)
set -euo pipefail
cd "$(dirname "$0")/.."
shared="$(cd "${1:-../shared}" 2>/dev/null && pwd || echo "${1:-../shared}")"
set="${SET:-extraction}"
passes="${PASSES:-2}" rounds="${ROUNDS:-2}" count="${COUNT:-3}"
if [ ! -f "$shared/bench/$set/ground-truth.json" ]; then
  echo "bench/compare.sh: $shared/bench/$set not found; skipping"; exit 0
fi
mkdir -p bench/out
( cd bench/peer && { [ -d node_modules ] || npm install --no-audit --no-fund --silent; } )
echo "== peer: readability.js + jsdom + turndown ($passes passes, $set)"
slice="${SLICE:-}"
[ -n "$slice" ] || { [ "$set" = wcxb-dev ] && slice=130 || slice=0; }
npages=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$shared/bench/$set/ground-truth.json")
[ "$slice" -gt 0 ] || slice=$npages
peer='' from=0
while [ "$from" -lt "$npages" ]; do
  part=$(FROM=$from TO=$((from + slice)) node --max-old-space-size=3072 bench/peer/readability.mjs "$shared" "bench/out/peer-$set" "$passes" "$set")
  [ "$slice" -lt "$npages" ] && echo "  pages $from..$((from + slice - 1)): $part"
  peer="$peer$part"$'\n'
  from=$((from + slice))
done
peer=$(python3 -c '
import json, sys
parts = [json.loads(l) for l in sys.stdin if l.strip()]
n, b, s = (sum(p[k] for p in parts) for k in ("pages", "html_bytes", "seconds"))
print(json.dumps({"pages": n, "html_bytes": b, "seconds": s, "mb_per_s": b / 1e6 / s, "processes": len(parts)}))' <<<"$peer")
echo "$peer"
echo "== gatehouse: internal/content BenchmarkConvertBench (${rounds}x, count $count, $set)"
GATEHOUSE_BENCH="$shared/bench/$set" go test -run '^$' -bench 'BenchmarkConvertBench$' -benchtime "${rounds}x" -count "$count" ./internal/content | tee bench/out/convert.txt
python3 - "$peer" <<'PY'
import json, re, sys
peer = json.loads(sys.argv[1])["mb_per_s"]
vals = [float(m.group(1)) for m in re.finditer(r"([\d.]+) MB/s", open("bench/out/convert.txt").read())]
vals.sort(); ours = vals[len(vals)//2]
print(f"peer {peer:.2f} MB/s, gatehouse {ours:.2f} MB/s (median of {len(vals)}): gatehouse/peer = {ours/peer:.1f}x")
PY
