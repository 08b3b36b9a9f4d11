#!/usr/bin/env bash
# `archive extract` against trafilatura on held-out public extraction corpora, for measuring
# without tuning: none of these pages is in the repository, in a test, or in benches/aeb.sh.
# What each corpus is, how its pages were chosen and how to get it: benches/README-heldout.md.
#
#   wcxb         WCXB test split (Murrough-Foley/web-content-extraction-benchmark), the pages
#                labelled `article` (257; 2025 blog posts, news, guides); truth: reviewed text;
#                its own scorer: word F1 (evaluate.py's word_f1, mean over pages)
#   readability  mozilla/readability test/test-pages, the saved real pages (source.html of at
#                least 10,000 bytes: 94); truth: the text of expected.html (Readability's own
#                reviewed output)
#   trafilatura  adbar/trafilatura's evaluation set (tests/evaldata.json, tests/cache, tests/eval:
#                990 pages, many German blogs); truth: 'with'/'without' snippets only, scored as
#                its tests/eval_common.py does (summed over the corpus). trafilatura is tuned on
#                this set: its own figure there is optimistic.
#   wcxb-listings (NONARTICLE=1, default) the WCXB test pages labelled listing or collection
#                (74): the refusals there are right; only the refusal count is reported.
#
# For every page, as benches/aeb.sh does for ours: the page's bytes in a temp file, `archive
# extract FILE --url URL`, one process per page (a non-zero exit is a page refused, scored as an
# empty text), ms/page the median wall clock of REPS whole processes after a first run that
# gives the output. trafilatura: trafilatura.extract(bytes) in-process (it detects the charset
# itself, as ours does), its defaults, the median of REPS after a warm-up; with TRAF_CLI=1 also
# its command line, one process per page.
#
# Every corpus is scored with the scrapinghub benchmark's shingle metric (P = mean over pages
# with a prediction, R = mean over pages with a truth, F1 their harmonic mean; a refused page
# lowers R only) and, plainly, the mean of per-page F1 with a refused page counting 0, plus the
# corpus' own scorer where it has one (wcxb word F1; trafilatura snippets).
#
# Left in $HELDOUT_OUT/<corpus>/ (kept): per-page.tsv, worst.md (the worst pages by our F1, with
# refused / low precision / low recall / wrong block, and the likely listing trigger of a refused
# page), everblog_records.jsonl, output/*.json, summary.json; $HELDOUT_OUT/summary.txt the table.
#
# Usage: benches/heldout.sh
# Env: CORPORA_DIR (default /tmp/everblog-corpora; holds wcxb/, readability/, trafilatura-eval/),
#      or WCXB_DIR, READABILITY_DIR, TRAFILATURA_DIR one by one; HELDOUT_ONLY="wcxb readability"
#      (a subset), NONARTICLE (default 1), ARCHIVE (default target/dist/archive, built when
#      missing), REPS (default 3), TRAF_CLI (default 0), CLI_REPS (default 1),
#      HELDOUT_OUT (default /tmp/everblog-heldout/last-run), VENV (default
#      /tmp/everblog-bench-venv; created with trafilatura when it lacks it), PYTHON (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."

CORPORA_DIR=${CORPORA_DIR:-/tmp/everblog-corpora}
WCXB_DIR=${WCXB_DIR:-$CORPORA_DIR/wcxb}
READABILITY_DIR=${READABILITY_DIR:-$CORPORA_DIR/readability}
TRAFILATURA_DIR=${TRAFILATURA_DIR:-$CORPORA_DIR/trafilatura-eval}
HELDOUT_OUT=${HELDOUT_OUT:-/tmp/everblog-heldout/last-run}
REPS=${REPS:-3}
CLI_REPS=${CLI_REPS:-1}
VENV=${VENV:-/tmp/everblog-bench-venv}
ARCHIVE=${ARCHIVE:-$PWD/target/dist/archive}

if ! "$VENV/bin/python" -c 'import trafilatura' 2>/dev/null; then
  echo "installing trafilatura into $VENV ..." >&2
  [ -x "$VENV/bin/python" ] || "${PYTHON:-python3}" -m venv "$VENV"
  "$VENV/bin/pip" install -q trafilatura lxml_html_clean >&2
fi
if [ ! -x "$ARCHIVE" ]; then
  echo "building the release archive ..." >&2
  cargo build -q --profile dist
fi
ARCHIVE=$(cd "$(dirname "$ARCHIVE")" && pwd)/$(basename "$ARCHIVE")

# name  loader  directory  what must be there  how to get it
corpora=(
  "wcxb|wcxb|$WCXB_DIR|test/ground-truth|git clone --depth 1 https://github.com/Murrough-Foley/web-content-extraction-benchmark $WCXB_DIR"
  "readability|readability|$READABILITY_DIR|test/test-pages|git clone --depth 1 https://github.com/mozilla/readability $READABILITY_DIR"
  "trafilatura|trafilatura|$TRAFILATURA_DIR|tests/evaldata.json|git clone --depth 1 https://github.com/adbar/trafilatura $TRAFILATURA_DIR"
)
[ "${NONARTICLE:-1}" != 0 ] && corpora+=("wcxb-listings|wcxb|$WCXB_DIR|test/ground-truth|(as wcxb)")

rm -rf "$HELDOUT_OUT"
mkdir -p "$HELDOUT_OUT"
cli=()
[ "${TRAF_CLI:-0}" != 0 ] && cli=(--traf-cli --cli-reps "$CLI_REPS")
ran=()
for c in "${corpora[@]}"; do
  IFS='|' read -r name loader dir need get <<<"$c"
  if [[ -n "${HELDOUT_ONLY:-}" && " $HELDOUT_ONLY " != *" $name "* ]]; then continue; fi
  if [ ! -e "$dir/$need" ]; then
    echo "skipping $name: $dir has no $need; get it with: $get" >&2
    continue
  fi
  echo "== $name ($dir)" >&2
  mkdir -p "$HELDOUT_OUT/$name"
  extra=()
  [ "$name" = wcxb-listings ] && extra=(--select nonarticle)
  "$VENV/bin/python" benches/extract_corpus.py --corpus "$loader" --dir "$dir" --label "$name" \
    --archive "$ARCHIVE" --out "$HELDOUT_OUT/$name" --reps "$REPS" --traf --traf-input bytes \
    ${extra[@]+"${extra[@]}"} ${cli[@]+"${cli[@]}"} >"$HELDOUT_OUT/$name/summary.log" 2>"$HELDOUT_OUT/$name.progress" || {
      echo "$name failed: see $HELDOUT_OUT/$name.progress" >&2; continue; }
  ran+=("$name")
done
[ ${#ran[@]} -gt 0 ] || { echo "no corpus found under $CORPORA_DIR (see benches/README-heldout.md)" >&2; exit 1; }

"$VENV/bin/python" - "$HELDOUT_OUT" "${ran[@]}" <<'PY' | tee "$HELDOUT_OUT/summary.txt"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
print(f"{'corpus':<14} {'pages':>5} {'refused':>9}  {'system':<16} {'F1':>6} {'P':>6} {'R':>6} "
      f"{'F1/page':>7}  {'own metric':<22} {'ms/page':>8} {'median':>7} {'CPU ms':>7}")
for name in sys.argv[2:]:
    s = json.loads((out / name / "summary.json").read_text())
    ref = f"{s['refused']} ({100 * s['refused'] / s['pages']:.0f}%)"
    if name == "wcxb-listings":
        print(f"{name:<14} {s['pages']:>5} {ref:>9}  (listing and collection pages: a refusal is right here)")
        continue
    first = True
    for key, label in (("ours", "archive extract"), ("trafilatura", "trafilatura"),
                       ("trafilatura_cli", "trafilatura CLI")):
        t = s["systems"].get(key)
        if not t:
            continue
        own = ""
        if "word_f1" in t:
            own = f"word F1 {t['word_f1']:.3f}"
        elif "snippet_f1" in t and "shingle_f1" not in t:
            own = f"snippets P {t['snippet_p']:.3f} R {t['snippet_r']:.3f}"
        if "shingle_f1" in t:
            f1, p, r = t["shingle_f1"], t["shingle_p"], t["shingle_r"]
        else:
            f1, p, r = t["snippet_f1"], t["snippet_p"], t["snippet_r"]
        head = (f"{name:<14} {s['pages']:>5} {ref:>9}" if first else " " * 30)
        print(f"{head}  {label:<16} {f1:6.3f} {p:6.3f} {r:6.3f} {t['f1_pages']:7.3f}  {own:<22} "
              f"{t['ms_mean']:8.1f} {t['ms_median']:7.1f} {t.get('cpu_ms_mean', float('nan')):7.1f}")
        first = False
    if "on_pages_extracted" in s:
        e = s["on_pages_extracted"]
        print(" " * 30 + f"  on the {e['pages']} pages extracted: ours {e['ours_f1_pages']:.3f}, "
              f"trafilatura {e['trafilatura_f1_pages']:.3f} (F1/page)")
print("\nF1, P, R: the scrapinghub shingle metric (snippet counts for trafilatura's set); "
      "F1/page: mean per-page F1, a refused page 0; ms/page: ours one whole process, "
      "trafilatura in-process (CLI: one process), wall clock mean and median; CPU ms: mean "
      "CPU time (user + system).")
print(f"per page and the worst pages: {out}/<corpus>/per-page.tsv, worst.md")
PY
