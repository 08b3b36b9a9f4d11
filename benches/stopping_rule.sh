#!/usr/bin/env bash
# The NewCrawl stopping rule on every fixture blog: a default crawl (kNN frontier, its own
# stop) from the blog's feed and home page; reports posts archived of the blog's posts, pages
# fetched, the page of this run at which the last new post was found, their ratio and why the
# crawl stopped. Target (issue 12): every post archived and fetched <= 2x the fetch of the last
# post, on every blog.
#
# Blogs: fixtures/sites/{pelican,hexo,nikola}, fixtures/wordpress, fixtures/wordpress-dates,
# fixtures/deep-archives (posts reachable only through year and month archives), the mixed
# docs+blog sites fixtures/mixed and fixtures/holdout/mixed, and, when HOLDOUT_DIR names
# blogs built by fixtures/holdout/generate.sh, those too.
#
# Usage: benches/stopping_rule.sh [ARCHIVE_BINARY]   (default: builds target/dist/archive)
set -euo pipefail
cd "$(dirname "$0")/.."
ARCHIVE=${1:-}
if [ -z "$ARCHIVE" ]; then cargo build --profile dist --quiet; ARCHIVE=target/dist/archive; fi
ARCHIVE=$(cd "$(dirname "$ARCHIVE")" && pwd)/$(basename "$ARCHIVE")
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

# site root and truth.json of each blog: "name root truth"
blogs=()
for b in pelican hexo nikola; do blogs+=("$b fixtures/sites/$b/site fixtures/sites/$b/truth.json"); done
for b in wordpress wordpress-dates deep-archives; do
  [ -d "fixtures/$b/site" ] && blogs+=("$b fixtures/$b/site fixtures/$b/truth.json")
done
for m in mixed holdout/mixed; do
  out="$work/$(echo "$m" | tr / -)"
  bash "fixtures/$m/build.sh" "$out" > /dev/null
  blogs+=("$m $out/site $out/truth.json")
done
if [ -n "${HOLDOUT_DIR:-}" ]; then
  for t in "$HOLDOUT_DIR"/*/truth.json; do
    d=$(dirname "$t"); blogs+=("holdout/$(basename "$d") $d/site $t")
  done
fi

printf '%-24s %9s %8s %10s %6s %s\n' blog posts fetched "last post" ratio "verdict · stop reason"
fails=0
for entry in "${blogs[@]}"; do
  read -r name root truth <<< "$entry"
  read -r feed home posts <<< "$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
print(t["feed_path"], t.get("home_path", "/"), len(t["posts"]))' "$truth")"
  python3 -m http.server --bind 127.0.0.1 8000 -d "$root" > /dev/null 2>&1 &
  server=$!
  sleep 0.7
  db="$work/$(echo "$name" | tr / -).db"
  "$ARCHIVE" --db "$db" add "http://127.0.0.1:8000$feed" --start "http://127.0.0.1:8000$home" > /dev/null
  summary=$("$ARCHIVE" --db "$db" crawl)
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
  last=$(echo "$summary" | sed -n 's/.*last new post at page \([0-9]*\).*/\1/p')
  fetched=$(echo "$summary" | sed -n 's/.* \([0-9]*\) pages fetched.*/\1/p')
  reason=$(echo "$summary" | sed -n 's/.*stopped: \(.*\)/\1/p' | cut -c1-60)
  archived=$("$ARCHIVE" --db "$db" export | wc -l)
  ratio=$(awk -v f="$fetched" -v n="${last:-0}" 'BEGIN { printf "%.2f", (n > 0 ? f / n : 0) }')
  verdict=$([ "$archived" -ge "$posts" ] && awk -v f="$fetched" -v n="${last:-0}" 'BEGIN { exit !(f <= 2 * n) }' && echo PASS || echo FAIL)
  [ "$verdict" = PASS ] || fails=$((fails + 1))
  printf '%-24s %4s/%-4s %8s %10s %6s %s · %s\n' "$name" "$archived" "$posts" "$fetched" "${last:-?}" "$ratio" "$verdict" "$reason"
done
echo "blogs failing the target: $fails"
