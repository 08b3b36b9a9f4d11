#!/usr/bin/env bash
# Pages fetched until 100% of a blog's posts are archived ("to 100%") and in all ("fetched"),
# kNN frontier (which stops on its own: capture-recapture stopping rule) vs breadth-first (until
# the frontier is empty), starting from the site root of a large mixed site. Targets: kNN to
# 100% <= 1/3 of breadth-first's; kNN fetched <= 2x its fetches to 100%, no post missed.
# Sites: fixtures/mixed (committed blog + Debian postgresql-doc-15) and the held-out
# fixtures/holdout/mixed (Jekyll blog + Debian sqlite3-doc). Also checks the server's access log
# for requests under robots.txt Disallow rules. Target: kNN <= 1/3 of breadth-first.
#
# Usage: benches/frontier_vs_bfs.sh [ARCHIVE_BINARY]   (default: builds target/dist/archive)
set -euo pipefail
cd "$(dirname "$0")/.."
ARCHIVE=${1:-}
if [ -z "$ARCHIVE" ]; then cargo build --profile dist --quiet; ARCHIVE=target/dist/archive; fi
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
printf '%-22s %-5s %8s %10s %8s %8s %10s %s\n' site order posts "to 100%" fetched "fetched/to-100%" blocked "disallowed requests"
for site in mixed holdout/mixed; do
  out="$work/$(echo "$site" | tr / -)"
  bash "fixtures/$site/build.sh" "$out" > /dev/null
  feed=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['feed_path'])" "$out/truth.json")
  posts=$(python3 -c "import json,sys;print(len(json.load(open(sys.argv[1]))['posts']))" "$out/truth.json")
  python3 -m http.server --bind 127.0.0.1 8000 -d "$out/site" > "$out/access.log" 2>&1 &
  server=$!
  sleep 0.7
  declare -A to_all=()
  for order in knn bfs; do
    db="$work/$order.db"; rm -f "$db"*
    "$ARCHIVE" --db "$db" add "http://127.0.0.1:8000$feed" --start http://127.0.0.1:8000/ > /dev/null
    # kNN stops on its own (the stopping rule); breadth-first crawls until the frontier is empty.
    stop=(); [ "$order" = bfs ] && stop=(--patience 0)
    summary=$("$ARCHIVE" --db "$db" crawl --frontier "$order" "${stop[@]}")
    n=$(echo "$summary" | sed -n 's/.*last new post at page \([0-9]*\).*/\1/p')
    fetched=$(echo "$summary" | sed -n 's/.* \([0-9]*\) pages fetched.*/\1/p')
    blocked=$(echo "$summary" | sed -n 's/.* \([0-9]*\) blocked by robots.txt.*/\1/p')
    archived=$("$ARCHIVE" --db "$db" export | wc -l)
    bad=$(python3 - "$out/truth.json" "$out/access.log" <<'PY'
import json, re, sys
prefixes = json.load(open(sys.argv[1]))["disallowed_prefixes"]
hits = [m.group(1) for m in re.finditer(r'"GET (\S+)', open(sys.argv[2]).read())]
print(sum(1 for h in hits if any(h.startswith(p) for p in prefixes)))
PY
)
    to_all[$order]=$n
    ratio=$(awk -v f="$fetched" -v n="$n" 'BEGIN { printf "%.2f", (n > 0 ? f / n : 0) }')
    printf '%-22s %-5s %3s/%-4s %10s %8s %8s %10s %s\n' "$site" "$order" "$archived" "$posts" "$n" "$fetched" "$ratio" "$blocked" "$bad"
    if [ "$order" = knn ]; then
      verdict=$([ "$archived" = "$posts" ] && awk -v f="$fetched" -v n="$n" 'BEGIN { exit !(f <= 2 * n) }' && echo PASS || echo FAIL)
      echo "$site kNN stopping rule: every post archived and fetched <= 2x fetches to the last post: $verdict"
    fi
  done
  python3 -c "import sys; k,b=int(sys.argv[1]),int(sys.argv[2]); print(f'{sys.argv[3]:<22} kNN/BFS = {k}/{b} = {k/b:.3f} (target <= 0.333): ' + ('PASS' if 3*k <= b else 'FAIL'))" "${to_all[knn]}" "${to_all[bfs]}" "$site"
  kill "$server"; wait "$server" 2>/dev/null || true; server=""
done
