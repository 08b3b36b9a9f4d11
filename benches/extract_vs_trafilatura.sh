#!/usr/bin/env bash
# Per-page extraction time: everblog (release build) vs trafilatura, on the same pages.
#
# Pages: every post page of the fixture blogs (fixtures/sites/{pelican,hexo,nikola}, the `path`s of
# their truth.json). Our rules are learned by our code from each blog's feed and entry pages
# (benches/extract_timing.rs, as a crawl learns them); trafilatura needs no rules.
#
# Timed, for both, from the page's HTML already in memory to the extracted post, in-process
# (interpreter start, imports and disk I/O excluded): ours = Page::parse + extract; trafilatura =
# trafilatura.extract(html) (its default: main text, no metadata) and, for information,
# extract(html, with_metadata=True) (title, author, date too, as our extract does).
# Each page: one warm-up run, then REPS runs (ours) / PY_REPS runs (trafilatura); the median.
#
# Also, for information, the corpus blog www.quantumdiaries.org (15 real 64-82 KB pages, rules
# learned from its feed) when ../shared/corpora/ is present (CORPUS="" to skip, or other hosts).
#
# Usage: benches/extract_vs_trafilatura.sh [FIXTURE_DIR...]
# Env: VENV (default /tmp/everblog-bench-venv; created, with trafilatura installed by pip, if it
#      lacks trafilatura), REPS (default 20), PY_REPS (default 5), PYTHON (default python3),
#      CORPUS (default www.quantumdiaries.org; space-separated hosts, "" for none).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${VENV:-/tmp/everblog-bench-venv}
REPS=${REPS:-20}
PY_REPS=${PY_REPS:-5}
if [ $# -eq 0 ]; then
  set -- fixtures/sites/pelican fixtures/sites/hexo fixtures/sites/nikola
fi

if ! "$VENV/bin/python" -c 'import trafilatura' 2>/dev/null; then
  echo "installing trafilatura into $VENV ..." >&2
  [ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
  # lxml >= 5.2 moved lxml.html.clean (needed by trafilatura's justext) to lxml_html_clean.
  "$VENV/bin/pip" install -q trafilatura lxml_html_clean >&2
fi

ours=$(mktemp /tmp/everblog-ours.XXXXXX.json)
trap 'rm -f "$ours"' EXIT
site_args=()
for s in "$@"; do site_args+=(--site "$s"); done
for h in ${CORPUS-www.quantumdiaries.org}; do site_args+=(--corpus "$h"); done
echo "timing ours (cargo bench --bench extract_timing, release) ..." >&2
cargo bench -q --bench extract_timing -- --reps "$REPS" "${site_args[@]}" >"$ours"

echo "timing trafilatura on the same pages ..." >&2
"$VENV/bin/python" - "$ours" "$PY_REPS" <<'PY'
import json, statistics, sys, time
import trafilatura

ours = json.load(open(sys.argv[1]))
reps = int(sys.argv[2])

def timed(f, html):
    f(html)  # warm-up
    t = []
    for _ in range(reps):
        s = time.perf_counter()
        out = f(html)
        t.append((time.perf_counter() - s) * 1e3)
    return statistics.median(t), out

plain = lambda h: trafilatura.extract(h)
meta = lambda h: trafilatura.extract(h, with_metadata=True)

print(f"trafilatura {trafilatura.__version__}; ours: median of {ours['reps']} runs/page, "
      f"trafilatura: median of {reps} runs/page\n")
hdr = f"{'blog':<24}{'pages':>6}{'KB/page':>9}{'ours ms':>10}{'traf ms':>10}{'ratio':>8}{'traf+meta ms':>14}{'ratio':>8}"
print(hdr)
print("-" * len(hdr))
def row(name, o, t, m, kb):
    mo, mt, mm = statistics.mean(o), statistics.mean(t), statistics.mean(m)
    print(f"{name:<24}{len(o):>6}{statistics.mean(kb):>9.1f}{mo:>10.3f}{mt:>10.2f}"
          f"{mt / mo:>7.0f}x{mm:>14.2f}{mm / mo:>7.0f}x")
    return mo, mt

rows = {"fixture": [], "corpus": [], "pages": []}
for run in ours["runs"]:
    o, t, m, kb, empty = [], [], [], [], 0
    for p in run["pages"]:
        html = open(p["file"], encoding="utf-8", errors="replace").read()
        tp, out = timed(plain, html)
        tm, _ = timed(meta, html)
        o.append(p["ms"]); t.append(tp); m.append(tm); kb.append(p["bytes"] / 1000)
        empty += not out
    rows[run["kind"]].append((run["name"], o, t, m, kb, empty))

result = None
for kind in ["fixture", "corpus", "pages"]:
    if not rows[kind]:
        continue
    for name, o, t, m, kb, empty in rows[kind]:
        row(name, o, t, m, kb)
        if empty:
            print(f"  (trafilatura returned nothing on {empty} pages)")
    if kind == "fixture":
        cat = lambda i: [x for r in rows[kind] for x in r[i]]
        result = row("fixtures (all)", cat(1), cat(2), cat(3), cat(4))
    print("-" * len(hdr))
if result:
    mo, mt = result
    print(f"\nfixture post pages: ours {mo:.3f} ms/page, trafilatura {mt:.2f} ms/page: ours is "
          f"{mt / mo:.0f}x faster ({'meets' if mt / mo >= 10 else 'MISSES'} the >= 10x target)")
print("ours' rules (learned from each feed):")
for run in ours["runs"]:
    r = run["rules"]
    checked = [p["body_found"] for p in run["pages"] if p["body_found"] is not None]
    found = f"; truth.json body found on {sum(checked)}/{len(checked)} pages" if checked else ""
    print(f"  {run['name']}: article {r['article']}, title {r['title']}, exclude {r['exclude']}{found}")
PY
