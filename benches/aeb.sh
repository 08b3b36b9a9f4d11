#!/usr/bin/env bash
# `archive extract` against trafilatura on the public article-extraction-benchmark (scrapinghub,
# 181 news and blog pages, its own evaluate.py): F1, precision, recall of the article text, the
# pages refused, and ms per page, all in one run.
#
# Our figure is the command users run: each page is written from the benchmark's .html.gz to a
# temp file and read by `archive extract FILE --url URL` (the page's URL from
# ground-truth.json), one process per page, as a user runs it. A non-zero exit is a page
# *refused* ("no article on this page (a listing page, or no text block)"): it is scored as an
# empty prediction and counted. ms/page is the wall clock of one whole process (start, read,
# parse, extract, print, exit), each page once for the output and then REPS times, the median;
# and the CPU time (user + system) of those processes, steadier on a loaded machine.
#
# trafilatura (in $VENV) is timed in the same run two ways, so that both ratios can be quoted:
#   - in-process: trafilatura.extract(html) with its defaults, from the page's HTML string
#     (UTF-8 decoded, as before) already in memory, once to warm up then REPS times, the median;
#   - its command line (TRAF_CLI=1): `trafilatura < FILE`, one process per page, interpreter
#     start and imports included, CLI_REPS runs, the median (`trafilatura -i FILE` would read
#     FILE as a list of URLs to download, so the page goes on stdin).
# All outputs are scored by the benchmark's own evaluate.py (precision there is the mean over
# pages with a prediction, so refused pages lower recall only; the per-page file below shows
# them plainly).
#
# Left in $AEB_OUT (kept): output/*.json (what evaluate.py scored), everblog_records.jsonl (our
# whole record per page, or the error), per-page.tsv (every page: status, the likely listing
# trigger of a refused page, P/R/F1 of ours and trafilatura's, ms), worst.md (the 25 worst pages
# by our F1 with refused / low precision / low recall), summary.json.
#
# The benchmark is not in this repository: it is cloned into $AEB_DIR (default
# /tmp/everblog-aeb/repo) from $AEB_URL, or used as is when $AEB_DIR already holds it (a copy
# from elsewhere: `git clone`, or an archive with html/, ground-truth.json and evaluate.py).
#
# First, unless FIXTURES=0, the per-field accuracy of a whole crawl (rules first, the fallback
# where they do not fit) on the fixture blogs: benches/eval/holdout.sh over fixtures/sites with
# the release `archive`.
#
# With INNER=1 also the old inner figure, for comparison with earlier runs: Page::parse +
# fallback::article_text in-process on the UTF-8 decoded page (cargo bench --bench aeb), which
# neither decodes charsets as the command does nor asks core::listing::is_listing.
#
# No separate figure for "the crawl's fallback": the crawl reads a page its blog's rules do not
# fit with the same function as `archive extract` without --blog (crawl::page::post_of ->
# core::fallback::extract, which asks core::listing::is_listing first, on
# Page::parse(fetch::decode(response))), so a feed entry's page is refused there exactly as
# here. The one difference is the charset: the crawl has the server's Content-Type header, the
# command has none (the page's BOM or its first `charset=` decides, else UTF-8). A crawl of
# these pages would also need a feed per site with text matching each page, or no article rule
# is learned and the crawl stops before reading any page.
#
# Usage: benches/aeb.sh
# Env: FIXTURES (default 1), AEB_DIR, AEB_URL (default https://github.com/scrapinghub/article-extraction-benchmark),
#      ARCHIVE (default target/dist/archive, built when missing), REPS (default 5),
#      TRAF_CLI (default 1), CLI_REPS (default 1), INNER (default 0),
#      AEB_OUT (default /tmp/everblog-aeb/last-run), VENV (default /tmp/everblog-bench-venv;
#      created with trafilatura when it lacks it), PYTHON (default python3), N_BOOTSTRAP (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."

AEB_DIR=${AEB_DIR:-/tmp/everblog-aeb/repo}
AEB_URL=${AEB_URL:-https://github.com/scrapinghub/article-extraction-benchmark}
AEB_OUT=${AEB_OUT:-/tmp/everblog-aeb/last-run}
REPS=${REPS:-5}
CLI_REPS=${CLI_REPS:-1}
VENV=${VENV:-/tmp/everblog-bench-venv}
ARCHIVE=${ARCHIVE:-$PWD/target/dist/archive}

if [ ! -f "$AEB_DIR/ground-truth.json" ]; then
  echo "cloning the benchmark into $AEB_DIR ..." >&2
  mkdir -p "$(dirname "$AEB_DIR")"
  git clone -q --depth 1 "$AEB_URL" "$AEB_DIR"
fi
for f in ground-truth.json evaluate.py html; do
  [ -e "$AEB_DIR/$f" ] || { echo "error: $AEB_DIR has no $f: point AEB_DIR at a copy of $AEB_URL" >&2; exit 1; }
done

if ! "$VENV/bin/python" -c 'import trafilatura' 2>/dev/null; then
  echo "installing trafilatura into $VENV ..." >&2
  [ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
  # lxml >= 5.2 moved lxml.html.clean (needed by trafilatura's justext) to lxml_html_clean.
  "$VENV/bin/pip" install -q trafilatura lxml_html_clean >&2
fi

if [ ! -x "$ARCHIVE" ]; then
  echo "building the release archive ..." >&2
  cargo build -q --profile dist
fi
ARCHIVE=$(cd "$(dirname "$ARCHIVE")" && pwd)/$(basename "$ARCHIVE")

if [ "${FIXTURES:-1}" != 0 ]; then
  echo "per-field accuracy on the fixture blogs (benches/eval/holdout.sh, release) ..." >&2
  HOLDOUT_DIR="$PWD/fixtures/sites" benches/eval/holdout.sh "$ARCHIVE" || true
fi

rm -rf "$AEB_OUT"
mkdir -p "$AEB_OUT/output"
cp "$AEB_DIR/ground-truth.json" "$AEB_DIR/evaluate.py" "$AEB_OUT/"

echo "ours: $ARCHIVE extract, one process per page; trafilatura in-process$([ "${TRAF_CLI:-1}" != 0 ] && echo ' and its command line') ..." >&2
cli=()
[ "${TRAF_CLI:-1}" != 0 ] && cli=(--traf-cli --cli-reps "$CLI_REPS")
"$VENV/bin/python" benches/extract_corpus.py --corpus aeb --dir "$AEB_DIR" --archive "$ARCHIVE" \
  --out "$AEB_OUT" --reps "$REPS" --traf --traf-input str ${cli[@]+"${cli[@]}"} >"$AEB_OUT/summary.log"

if [ "${INNER:-0}" != 0 ]; then
  echo "inner function: cargo bench --bench aeb (release) ..." >&2
  cargo bench -q --bench aeb -- "$AEB_DIR/html" "$AEB_OUT/output/everblog_inner.json" --reps "$REPS" 2>"$AEB_OUT/inner.log"
  grep 'everblog fallback' "$AEB_OUT/inner.log" >&2
fi

echo "scoring with the benchmark's evaluate.py ..." >&2
(cd "$AEB_OUT" && "$VENV/bin/python" evaluate.py --n-bootstrap "${N_BOOTSTRAP:-200}" --output scores.json) | tee "$AEB_OUT/evaluate.txt"

"$VENV/bin/python" - "$AEB_OUT" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
s = json.loads((out / "summary.json").read_text())
scores = json.loads((out / "scores.json").read_text())
sy = s["systems"]
print()
print(f"{s['pages']} pages; `archive extract` refused {s['refused']} "
      f"({100 * s['refused'] / s['pages']:.0f} %), failed otherwise on {s['errors']}")
print(f"{'':<26} {'F1 (evaluate.py)':<15} {'P':<6} {'R':<6} {'F1/page':<8} {'wall ms/page':>12} {'median':>7} {'CPU ms/page':>12} {'median':>7}")
rows = [("everblog_extract", "ours", "archive extract (process)"),
        ("trafilatura", "trafilatura", "trafilatura in-process"),
        ("trafilatura_cli", "trafilatura_cli", "trafilatura CLI")]
for name, key, label in rows:
    if name not in scores or key not in sy:
        continue
    m, t = scores[name], sy[key]
    print(f"{label:<26} {m['f1']:.3f} ± {m['f1_std']:.3f}  {m['precision']:.3f}  {m['recall']:.3f}  "
          f"{t['f1_pages']:.3f}    {t['ms_mean']:12.2f} {t['ms_median']:7.2f} "
          f"{t.get('cpu_ms_mean', float('nan')):12.2f} {t.get('cpu_ms_median', float('nan')):7.2f}")
for name in ("everblog_inner",):
    if name in scores:
        m = scores[name]
        print(f"{name:<26} {m['f1']:.3f} ± {m['f1_std']:.3f}  {m['precision']:.3f}  {m['recall']:.3f}")
o = sy["ours"]
for key, label in (("trafilatura", "in-process"), ("trafilatura_cli", "command line")):
    if key in sy:
        t = sy[key]
        print(f"trafilatura {label} / archive extract: wall {t['ms_mean'] / o['ms_mean']:.2f}x on means, "
              f"{t['ms_median'] / o['ms_median']:.2f}x on medians; CPU "
              f"{t.get('cpu_ms_mean', 0) / o.get('cpu_ms_mean', 1):.2f}x on means, "
              f"{t.get('cpu_ms_median', 0) / o.get('cpu_ms_median', 1):.2f}x on medians")
if "on_pages_extracted" in s:
    e = s["on_pages_extracted"]
    print(f"on the {e['pages']} pages it extracts: ours {e['ours_f1_pages']:.3f}, "
          f"trafilatura {e['trafilatura_f1_pages']:.3f} (mean per-page F1)")
print(f"per page: {out}/per-page.tsv; refused and worst pages: {out}/worst.md")
PY
