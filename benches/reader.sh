#!/usr/bin/env bash
# How fast `archive serve` answers on a large blog: one blog of N posts (default 10,000; with
# comments, tags, versions; benches/reader_store.rs writes them as a crawl does), served by the
# release binary on 127.0.0.1, each page asked REPS times (default 20) with curl after one
# warm-up: the median and the slowest, in ms, from request to last byte.
#
# Usage: benches/reader.sh [N]      Env: REPS (default 20), KEEP=DIR (keep the database there)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
REPS=${REPS:-20}
dir=${KEEP:-$(mktemp -d /tmp/everblog-reader.XXXXXX)}
mkdir -p "$dir"
db="$dir/reader.db"
cargo build --profile dist --quiet
if [ ! -s "$db" ]; then
  cargo bench --quiet --bench reader_store -- "$db" "$N"
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
target/dist/archive --db "$db" serve --bind "127.0.0.1:$port" 2>"$dir/serve.log" &
pid=$!
trap 'kill $pid 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$dir"' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
post=$(curl -s "http://127.0.0.1:$port/api/blog/1/posts?page=37" | python3 -c 'import json,sys; print(json.load(sys.stdin)["posts"][0]["url"])')
enc=$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=""))' "$post")
edited="http://127.0.0.1:8010/2011/post-0.html"
printf '%-52s %8s %8s %8s\n' page bytes median_ms max_ms
for path in "/" "/blog/1" "/blog/1?page=150" "/blog/1?month=2019-05" "/blog/1?author=Fen%20Li&page=20" \
    "/blog/1?tag=topic%207" "/post?url=$enc" "/diff?url=$(python3 -c 'import urllib.parse,sys; print(urllib.parse.quote(sys.argv[1], safe=""))' "$edited")&from=1&to=2" \
    "/search?q=the" "/search?q=quantum%20detector" "/api/search?q=detector&author=Ada%20Quill" \
    "/api/post?url=$enc" "/timemap/link/$post" "/api/blog/1/posts?page=100"; do
  curl -s -o /dev/null "http://127.0.0.1:$port$path"
  times=$(for _ in $(seq "$REPS"); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port$path"; done | sort -n)
  size=$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$port$path")
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$path")
  [ "$code" = 200 ] || { echo "$path answered $code" >&2; exit 1; }
  median=$(echo "$times" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]*1000}')
  max=$(echo "$times" | tail -1 | awk '{print $1*1000}')
  label=${path:0:52}
  printf '%-52s %8s %8.1f %8.1f\n' "$label" "$size" "$median" "$max"
done
echo "database: $(du -h "$db" | cut -f1), $(ps -o rss= -p $pid | awk '{printf "%.0f MB", $1/1024}') RSS of archive serve"
