#!/usr/bin/env bash
# Copies the upstream sources of a Go module from the module cache into
# third_party/DIR, pruned to what Gatehouse compiles: the non-test .go files
# (every GOOS/GOARCH) of the module's packages that `go list -deps -test ./...`
# reaches, their embedded files, go.mod and the license files. Patch the copy
# afterwards (third_party/README.md lists each patch); re-run this script and
# re-apply the patch when upgrading the module.
# Usage (from the repository root): third_party/copy-module.sh MODULE DIR
set -euo pipefail
mod=$1 dir=$2
cd "$(dirname "$0")/.."
src=$(GOFLAGS=-mod=mod go mod download -json "$mod@$(go list -m -f '{{.Version}}' "$mod")" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "copy-module: $mod not in the module cache" >&2; exit 1; }
rm -rf "$dir"; mkdir -p "$dir"
cp "$src/go.mod" "$dir/"
for f in "$src"/LICENSE* "$src"/COPYING* "$src"/NOTICE*; do [ -f "$f" ] && cp "$f" "$dir/"; done
go list -deps -test -f '{{.ImportPath}}' ./... | grep -E "^${mod}(/|$)" | grep -v '\.test$' | sed 's/ \[.*//' | sort -u |
while read -r pkg; do
  rel=${pkg#"$mod"}; rel=${rel#/}
  mkdir -p "$dir/$rel"
  find "$src/$rel" -maxdepth 1 -name '*.go' ! -name '*_test.go' -exec cp {} "$dir/$rel/" \;
  go list -f '{{range .EmbedFiles}}{{.}}{{"\n"}}{{end}}' "$pkg" | while read -r e; do
    [ -n "$e" ] && { mkdir -p "$dir/$rel/$(dirname "$e")"; cp "$src/$rel/$e" "$dir/$rel/$e"; }
  done
done
chmod -R u+w "$dir"
echo "copied $mod from $src to $dir"
