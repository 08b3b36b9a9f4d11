#!/usr/bin/env bash
# Render stage benchmark (issue "render"): pages per second with the default tab pool of one
# reused browser, every browser request answered through everblog's fetcher (as crawls do),
# against the same renderer with Chromium fetching by itself (`archive render --direct`, issue
# 11: interception must cost under 20%) and against the naive approach of launching
# `chromium --headless --dump-dom` once per page; and the memory (PSS, summed over every Chromium process of ours) over a long
# render run, which must stay flat (the browser is recycled every render.recycle_after pages).
#
#   benches/render_throughput.sh [PAGES] [NAIVE_PAGES]     (defaults 1000 and 40)
#
# Serves fixtures/js/spa (client-rendered: every page needs JavaScript) on 127.0.0.1 with
# python3's http.server, renders PAGES URLs (its 15 posts and 3 index pages, repeated) with
# `archive render`, and NAIVE_PAGES with one `chromium --dump-dom` each (with
# --virtual-time-budget=3000 so the page's scripts run). Needs a release build and chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
PAGES="${1:-1000}"
NAIVE="${2:-40}"
BIN=target/dist/archive
[ -x "$BIN" ] || cargo build --profile dist
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$PORT" --bind 127.0.0.1 -d fixtures/js/spa/site >/dev/null 2>&1 &
SERVER=$!
WORK=$(mktemp -d)
trap 'kill $SERVER 2>/dev/null; [ -n "${SAMPLER:-}" ] && kill $SAMPLER 2>/dev/null; rm -rf "$WORK"' EXIT
sleep 0.5
python3 - "$PORT" "$PAGES" > "$WORK/urls" <<'PY'
import json, sys
port, n = sys.argv[1], int(sys.argv[2])
t = json.load(open("fixtures/js/spa/truth.json"))
paths = [p["path"] for p in t["posts"]] + ["/", "/page/2/", "/page/3/"]
for i in range(n):
    print(f"http://127.0.0.1:{port}{paths[i % len(paths)]}")
PY

pss() {  # summed PSS (KiB) of our Chromium processes
  local total=0
  for pid in $(pgrep -f everblog-chromium- || true); do
    v=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
    total=$((total + ${v:-0}))
  done
  echo "$total"
}

echo "== everblog: $PAGES pages, default tab pool ($(grep -m1 '^tabs' <("$BIN" config) | cut -d= -f2 | tr -d ' ') tabs), one browser reused"
( while true; do echo "$(date +%s.%N) $(pss)"; sleep 1; done ) > "$WORK/pss" &
SAMPLER=$!
start=$(date +%s.%N)
"$BIN" render $(cat "$WORK/urls") > "$WORK/ours.tsv" 2> "$WORK/ours.err" || true
end=$(date +%s.%N)
kill $SAMPLER; SAMPLER=""
grep -E '^(rendered|browser requests)' "$WORK/ours.err"
ours=$(python3 -c "print(f'{$PAGES/($end-$start):.2f}')")
python3 - "$WORK/ours.tsv" "$PAGES" <<'PY'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
ok = sum(1 for r in rows if len(r) == 3)
print(f"pages rendered: {ok} of {sys.argv[2]}")
PY
echo "wall $(python3 -c "print(f'{$end-$start:.1f}')") s → $ours pages/s"
python3 - "$WORK/pss" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
vals = [int(v) for _, v in rows]
n = len(vals)
if n:
    tenth = max(1, n // 10)
    chunks = [max(vals[i:i + tenth]) for i in range(0, n, tenth)]
    print("browser PSS peak per tenth of the run (MiB):", " ".join(f"{c/1024:.0f}" for c in chunks))
    print(f"browser PSS peak over the run: {max(vals)/1024:.0f} MiB; first tenth {chunks[0]/1024:.0f} MiB, last tenth {chunks[-1]/1024:.0f} MiB")
PY

echo "== everblog --direct (Chromium fetches by itself): $PAGES pages"
start=$(date +%s.%N)
"$BIN" render --direct $(cat "$WORK/urls") > /dev/null 2> "$WORK/direct.err" || true
end=$(date +%s.%N)
grep -E '^rendered' "$WORK/direct.err"
direct=$(python3 -c "print(f'{$PAGES/($end-$start):.2f}')")
echo "wall $(python3 -c "print(f'{$end-$start:.1f}')") s → $direct pages/s; through the fetcher / direct: $(python3 -c "print(f'{$ours/$direct:.2f}')")"

echo "== naive: chromium --headless --dump-dom, one launch per page, $NAIVE pages"
python3 - "$WORK/urls" "$NAIVE" "$ours" <<'PY'
import json, subprocess, sys, tempfile, time, shutil
urls = [l.strip() for l in open(sys.argv[1])][: int(sys.argv[2])]
t = json.load(open("fixtures/js/spa/truth.json"))
titles = {p["path"]: p["title"] for p in t["posts"]}
flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=3000", "--dump-dom"]
ok, t0 = 0, time.time()
for u in urls:
    d = tempfile.mkdtemp()
    out = subprocess.run(["chromium", *flags, f"--user-data-dir={d}", u], capture_output=True, text=True).stdout
    shutil.rmtree(d, ignore_errors=True)
    path = "/" + u.split("/", 3)[3]
    ok += (titles.get(path) or "Older posts") in out
rate = len(urls) / (time.time() - t0)
print(f"pages with their content: {ok} of {len(urls)}; {rate:.2f} pages/s")
print(f"everblog / naive throughput: {float(sys.argv[3]) / rate:.1f}x")
PY
