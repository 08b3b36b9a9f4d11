#!/usr/bin/env bash
# Memory of a NewCrawl on a blog with a huge feed: N entries (default 1,500) whose pages are
# ~100 KB each. Rule learning reads a spread sample of [crawl] learn_entries pages, parsed one at
# a time, so resident memory stays a constant plus one page whatever N (target: < 300 MB). Prints
# peak RSS (GNU time) and the page requests the server saw, for a few --max-pages budgets.
#
# Usage: benches/learn_memory.sh [ENTRIES] [ARCHIVE_BINARY]   (default: 1500, target/dist/archive)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1500}
ARCHIVE=${2:-}
if [ -z "$ARCHIVE" ]; then cargo build --profile dist --quiet; ARCHIVE=target/dist/archive; fi
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
python3 - "$work/site" "$N" <<'PY'
import os, sys, random
root, n = sys.argv[1], int(sys.argv[2])
random.seed(7)
words = "garden soil compost tomato basil fig shed rain frost seedling trowel hedge bloom".split()
os.makedirs(f"{root}/posts", exist_ok=True)
items = []
for i in range(n):
    body = " ".join(random.choice(words) for _ in range(8000))
    paras = "".join(f"<p>{body[j:j+1200]}</p>" for j in range(0, len(body), 1200))
    side = "".join(f"<li><a href='/posts/p{(i+k)%n}.html'>Post {(i+k)%n}</a></li>" for k in range(1, 900))
    html = (f"<!doctype html><html><head><title>Post {i}</title></head><body>"
            f"<nav><ul>{side}</ul></nav><article class='entry'><h1>Post number {i}</h1>"
            f"<div class='content'>{paras}</div></article><footer>Garden log</footer></body></html>")
    os.makedirs(f"{root}/posts", exist_ok=True)
    with open(f"{root}/posts/p{i}.html", "w") as f:
        f.write(html)
    summary = body[:300]
    items.append(f"<item><title>Post number {i}</title><link>http://127.0.0.1:8010/posts/p{i}.html</link>"
                 f"<description>{summary}</description></item>")
with open(f"{root}/feed.xml", "w") as f:
    f.write("<?xml version='1.0'?><rss version='2.0'><channel><title>Huge garden</title>"
            "<link>http://127.0.0.1:8010/</link>" + "".join(items) + "</channel></rss>")
with open(f"{root}/index.html", "w") as f:
    f.write("<html><body>" + "".join(f"<a href='/posts/p{i}.html'>{i}</a> " for i in range(n)) + "</body></html>")
PY
page_kb=$(( $(stat -c %s "$work/site/posts/p0.html") / 1024 ))
python3 -m http.server --bind 127.0.0.1 8010 -d "$work/site" > "$work/access.log" 2>&1 &
server=$!
sleep 0.7
echo "entries $N, pages ~${page_kb} KB, feed $(( $(stat -c %s "$work/site/feed.xml") / 1024 )) KB"
printf '%-12s %14s %14s %s\n' max-pages "peak RSS MB" "page requests" "wall s"
for budget in 10 100 2000; do
  db="$work/a-$budget.db"
  "$ARCHIVE" --db "$db" add http://127.0.0.1:8010/feed.xml > /dev/null
  before=$(grep -c 'GET /posts/' "$work/access.log" || true)
  /usr/bin/time -f '%M %e' -o "$work/rss" "$ARCHIVE" --db "$db" crawl --max-pages "$budget" > /dev/null 2>&1
  after=$(grep -c 'GET /posts/' "$work/access.log" || true)
  read -r kb secs < "$work/rss"
  awk -v b="$budget" -v kb="$kb" -v n=$((after - before)) -v s="$secs" \
    'BEGIN { printf "%-12s %14.0f %14d %s\n", b, kb / 1024, n, s }'
done
