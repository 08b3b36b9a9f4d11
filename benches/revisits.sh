#!/usr/bin/env bash
# Requests per UpdateCrawl of a 1,000-post blog over 60 simulated days, against one full
# re-crawl. UpdateCrawl re-fetches every archived post (a conditional GET) at least once within
# `[update] revisit_within` (default "30d"), spread over the updates; this shows what that costs
# per update, over a window, and whether every post really was re-fetched within it.
#
# 1. The blog: 1,000 posts by Pelican (PyPI, pinned by fixtures/engines/pelican/requirements.txt,
#    in the venv fixtures/generate.sh uses), sources from benches/revisits_blog.py (textgen
#    prose, four years of dates, notmyidea theme, tags and categories, a summary RSS feed of 10
#    entries). Built once into /tmp/everblog-revisits/site-HASH, HASH of the generator, textgen,
#    the pinned requirements and the post count.
# 2. Served by `python3 -m http.server` on a free 127.0.0.1 port: Last-Modified on every file,
#    304 to an If-Modified-Since no older than the file. Its access log counts the requests.
# 3. `archive add FEED` + `archive crawl` into a fresh database: the NewCrawl; its requests as
#    the server saw them (add's included) are one full re-crawl.
# 4. `archive update` once per simulated day, day 1..DAYS, under `faketime -f +Nd` with
#    FAKETIME_DONT_FAKE_MONOTONIC=1 (timers keep real time). Checked here, and again on each run:
#    `faketime -f '+40d' archive status` is no proof (status prints absolute times, which look
#    the same either way), but after the day-1 update `archive status` says "last update" one
#    day ahead of the real date (seen on 2026-11-26: "last update 2026-11-27T05:59:10Z"), so
#    archive's clock moves. Each update's summary line ("…; N requests (M not modified), E
#    errors") gives the requests; the access log gives the post pages fetched each day.
#    Run once with revisit_within = "30d" and, when the binary knows the key, with "7d"
#    (the same archive copied after the NewCrawl).
#
# Until UpdateCrawl revisits posts, an update costs only its feed and robots/sitemap requests
# and no post page is re-fetched; the script says so (it checks the key in `archive config
# --defaults`).
#
# Usage: benches/revisits.sh [POSTS] [DAYS]   (default 1000 60)
#   ARCHIVE=PATH   the binary (default target/dist/archive, built with `cargo build --profile
#                  dist` when missing)
#   KEEP=1         keep the work directory (databases, access log, per-day output)
# Needs: python3 with venv, faketime (`apt-get install faketime`), curl.
set -euo pipefail
cd "$(dirname "$0")/.."
die() { echo "revisits.sh: $*" >&2; exit 1; }
trap 'echo "revisits.sh: line $LINENO: $BASH_COMMAND failed" >&2' ERR
POSTS=${1:-1000}
DAYS=${2:-60}
[[ "$POSTS" =~ ^[0-9]+$ && "$DAYS" =~ ^[0-9]+$ && "$DAYS" -ge 30 ]] \
  || die "usage: benches/revisits.sh [POSTS] [DAYS >= 30]"
command -v faketime > /dev/null || die "faketime is missing: apt-get install -y faketime"
command -v curl > /dev/null || die "curl is missing: apt-get install -y curl"
t0=$(date +%s)

ARCHIVE=${ARCHIVE:-target/dist/archive}
if [ ! -x "$ARCHIVE" ]; then
  [ "$ARCHIVE" = target/dist/archive ] || die "ARCHIVE=$ARCHIVE is not an executable"
  echo "building target/dist/archive (cargo build --profile dist)…" >&2
  nice cargo build --profile dist --quiet || die "cargo build --profile dist failed"
fi
ARCHIVE=$(cd "$(dirname "$ARCHIVE")" && pwd)/$(basename "$ARCHIVE")

work=$(mktemp -d /tmp/everblog-revisits-run.XXXXXX)
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2> /dev/null || true; wait "$server" 2> /dev/null || true; fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- the blog (cached)
FIXWORK=${EVERBLOG_FIXTURE_WORK:-/tmp/everblog-fixtures}
REQ=fixtures/engines/pelican/requirements.txt
VENV=$FIXWORK/venv-pelican
key=$(cat benches/revisits_blog.py fixtures/engines/common/textgen.py "$REQ" <(echo "$POSTS") \
  | sha256sum | cut -c1-16)
CACHE=/tmp/everblog-revisits/site-$key
if [ ! -f "$CACHE/.done" ]; then
  if [ ! -f "$VENV/.installed" ] || ! cmp -s "$REQ" "$VENV/.installed"; then
    echo "installing Pelican into $VENV…" >&2
    rm -rf "$VENV"; mkdir -p "$FIXWORK"
    { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --upgrade pip \
        && "$VENV/bin/pip" install -q -r "$REQ"; } > "$work/pip.log" 2>&1 \
      || die "installing Pelican failed: $(tail -n 1 "$work/pip.log")"
    cp "$REQ" "$VENV/.installed"
  fi
  echo "building the $POSTS-post blog with Pelican (once; cached in $CACHE)…" >&2
  src="$work/blog-src"
  python3 benches/revisits_blog.py "$src" "$POSTS" || die "benches/revisits_blog.py failed"
  (cd "$src" && nice "$VENV/bin/pelican" content -s pelicanconf.py -o out -q) > "$work/pelican.log" 2>&1 \
    || die "pelican failed: $(tail -n 1 "$work/pelican.log")"
  rm -rf "$CACHE"; mkdir -p "$(dirname "$CACHE")"
  mv "$src/out" "$CACHE"
  touch "$CACHE/.done"
fi
posts_built=$(find "$CACHE" -regextype egrep -regex '.*/[0-9]{4}/[0-9]{2}/[^/]+\.html' | wc -l)
[ "$posts_built" = "$POSTS" ] || die "$CACHE holds $posts_built post pages, not $POSTS"

# ---------------------------------------------------------------- serve it
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT
cp -r "$CACHE" "$work/site"
grep -rlZ --include='*.html' --include='*.xml' 'http://127.0.0.1:8000' "$work/site" \
  | xargs -0 sed -i "s|http://127.0.0.1:8000|$BASE|g"
# Files older than the NewCrawl, so If-Modified-Since of any later request gets its 304.
find "$work/site" -type f -exec touch -d '-1 hour' {} +
LOG=$work/access.log
python3 -u -m http.server --bind 127.0.0.1 "$PORT" -d "$work/site" > "$LOG" 2>&1 &
server=$!
for _ in $(seq 50); do curl -sf -o /dev/null "$BASE/feeds/all.rss.xml" && break; sleep 0.1; done
curl -sf -o /dev/null "$BASE/feeds/all.rss.xml" || die "the server on $BASE did not answer: $(tail -n 1 "$LOG")"
lines() { wc -l < "$LOG"; }
# requests in the access log after line $1 (to the end)
requests_since() { tail -n +$(($1 + 1)) "$LOG" | grep -cE '"(GET|HEAD) ' || true; }

# run_archive WHAT OUT COMMAND…: output to OUT; on failure one line: WHAT and its last line
run_archive() {
  local what=$1 out=$2; shift 2
  "$@" > "$out" 2>&1 || die "$what failed: $(grep -v '^[[:space:]]*$' "$out" | tail -n 1)"
}

# ---------------------------------------------------------------- the NewCrawl
has_revisit=0
"$ARCHIVE" config --defaults | grep -q '^revisit_within' && has_revisit=1
config() {  # config FILE WINDOW
  if [ "$has_revisit" = 1 ]; then printf '[update]\nrevisit_within = "%s"\n' "$2" > "$1"; else : > "$1"; fi
}
config "$work/config-30d.toml" 30d
db0=$work/newcrawl.db
n0=$(lines)
tc=$(date +%s.%N)
run_archive "archive add" "$work/add.out" "$ARCHIVE" --config "$work/config-30d.toml" --db "$db0" add "$BASE/feeds/all.rss.xml"
run_archive "archive crawl" "$work/crawl.out" "$ARCHIVE" --config "$work/config-30d.toml" --db "$db0" crawl
crawl_s=$(awk -v a="$tc" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
full=$(requests_since "$n0")
archived=$(sed -n 's/.* \([0-9]*\) posts archived.*/\1/p' "$work/crawl.out")
fetched=$(sed -n 's/.* \([0-9]*\) pages fetched.*/\1/p' "$work/crawl.out")
grep -q 'crawl complete' "$work/crawl.out" || die "the NewCrawl did not complete: $(sed -n 2p "$work/crawl.out")"
[ "${archived:-0}" -ge "$POSTS" ] || die "the NewCrawl archived ${archived:-0} of $POSTS posts"
echo "NewCrawl of $BASE: $archived posts archived, $fetched pages fetched (summary), $full requests seen by the server for add + crawl, ${crawl_s}s"

# ---------------------------------------------------------------- the simulated days
export FAKETIME_DONT_FAKE_MONOTONIC=1
# simulate LABEL WINDOW: DAYS updates on a copy of the NewCrawl's archive; per day one line
# "day requests not_modified server_requests" in $work/LABEL.days and the access log lines in
# $work/LABEL/day-N.log
simulate() {
  local label=$1 window=$2 d n out line req nm
  mkdir -p "$work/$label"
  for f in "$db0"*; do cp "$f" "$work/$label/a.db${f#"$db0"}"; done
  config "$work/$label/config.toml" "$window"
  : > "$work/$label.days"
  for d in $(seq 1 "$DAYS"); do
    n=$(lines)
    out=$work/$label/day-$d.out
    run_archive "$label day $d: archive update" "$out" faketime -f "+${d}d" "$ARCHIVE" --config "$work/$label/config.toml" --db "$work/$label/a.db" update
    tail -n +$((n + 1)) "$LOG" > "$work/$label/day-$d.log"
    line=$(grep -E '[0-9]+ requests \([0-9]+ not modified\)' "$out" || true)
    [ -n "$line" ] || die "day $d: no summary line in archive update's output: $(tail -n 1 "$out")"
    req=$(sed -E 's/.* ([0-9]+) requests \(([0-9]+) not modified\).*/\1/' <<< "$line")
    nm=$(sed -E 's/.* ([0-9]+) requests \(([0-9]+) not modified\).*/\2/' <<< "$line")
    echo "$d $req $nm $(grep -cE '"(GET|HEAD) ' "$work/$label/day-$d.log" || true)" >> "$work/$label.days"
    if [ "$d" = 1 ]; then  # does archive see the faked clock?
      local got want1 want2
      got=$("$ARCHIVE" --db "$work/$label/a.db" status | sed -n 's/.*last update \([0-9-]*\)T.*/\1/p' | head -n 1)
      want1=$(date -u -d '+1 day' +%F); want2=$(faketime -f '+1d' date -u +%F)
      [ "$got" = "$want1" ] || [ "$got" = "$want2" ] \
        || die "faketime does not shift archive's clock: after the day-1 update, status says last update '${got:-none}', not $want1"
    fi
  done
}
runs=("30d 30")
simulate 30d 30d
if [ "$has_revisit" = 1 ]; then runs+=("7d 7"); simulate 7d 7d
else echo "note: this binary has no [update] revisit_within (archive config --defaults): UpdateCrawl does not revisit posts yet, so the figures are the feed's requests alone; no 7d run"
fi

# ---------------------------------------------------------------- figures
python3 - "$work" "$DAYS" "$full" "$POSTS" "$has_revisit" "${runs[@]}" <<'PY'
import re, sys
work, days, full, posts, has_revisit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
runs = [r.split() for r in sys.argv[6:]]
post_re = re.compile(r'"(?:GET|HEAD) (/\d{4}/\d{2}/[^ ?#]+\.html)[^"]*" (\d{3})')
data = {}
for label, window in runs:
    rows = {}
    for line in open(f"{work}/{label}.days"):
        d, req, nm, seen = map(int, line.split())
        hits = [m.groups() for m in map(post_re.search, open(f"{work}/{label}/day-{d}.log")) if m]
        rows[d] = dict(req=req, nm=nm, seen=seen, posts=len(hits), paths={p for p, _ in hits})
    data[label] = (int(window), rows)

hdr = "| day |" + "".join(f" {l}: requests | not modified | server saw | post pages |" for l, _ in runs)
print("\nPer simulated day (`archive update` under faketime; requests and not modified from its summary line, "
      "server saw and post pages from the access log):\n")
print(hdr)
print("|---:|" + "---:|" * 4 * len(runs))
for d in range(1, days + 1):
    cells = "".join(f" {r['req']} | {r['nm']} | {r['seen']} | {r['posts']} |" for r in (data[l][1][d] for l, _ in runs))
    print(f"| {d} |{cells}")

print(f"\nOne full re-crawl (a NewCrawl into a fresh database, add + crawl): **{full} requests**.\n")
print("| revisit_within | updates | requests per update: mean | max | not modified, mean | total over 30 days | ÷ full re-crawl | posts re-fetched within the window | longest gap between fetches of a post |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for label, _ in runs:
    window, rows = data[label]
    reqs = [rows[d]["req"] for d in range(1, days + 1)]
    tot30 = sum(reqs[:30])
    # per post, the days it was fetched: 0 is the NewCrawl, the run's end closes the last gap
    fetched_on = {}
    for d in range(1, days + 1):
        for p in rows[d]["paths"]:
            fetched_on.setdefault(p, []).append(d)
    # a post's gaps: from the NewCrawl (day 0) to each re-fetch, and from its last fetch to the
    # first update after the run (day DAYS + 1), the earliest it could be fetched again
    gaps = [max(b - a for a, b in zip(ds, ds[1:])) for ds in ([0] + f + [days + 1] for f in fetched_on.values())]
    gaps += [days + 1] * max(posts - len(fetched_on), 0)  # never re-fetched
    ok = sum(g <= window for g in gaps)
    longest = f"{max(gaps)} d" if fetched_on else "none re-fetched"
    name = f'"{label}"' if has_revisit else f"{label} (not in this binary)"
    print(f"| {name} | {days} | {sum(reqs) / days:.1f} | {max(reqs)} | {sum(rows[d]['nm'] for d in rows) / days:.1f} | "
          f"{tot30} | {tot30 / full:.3f} | {ok}/{posts} | {longest} |")
PY
echo
echo "whole run: $(( $(date +%s) - t0 )) s"
