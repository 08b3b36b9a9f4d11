#!/usr/bin/env bash
# The fallback extractor (core::fallback) against trafilatura on the public
# article-extraction-benchmark (scrapinghub, 181 news and blog pages, its own evaluate.py):
# F1, precision, recall of the article text, and ms per page, both in one run.
#
# The benchmark is not in this repository: it is cloned into $AEB_DIR (default
# /tmp/everblog-aeb/repo) from $AEB_URL, or used as is when $AEB_DIR already holds it (a copy
# from elsewhere: `git clone`, or an archive with html/, ground-truth.json and evaluate.py).
#
# Timed, for both, from the page's HTML string already in memory to its article text,
# in-process, each page once to warm up then REPS times, the median: ours = Page::parse +
# fallback::article_text (cargo bench --bench aeb, release); trafilatura = trafilatura.extract(html)
# (its defaults). Scored by the benchmark's own evaluate.py on the two outputs.
#
# First, unless FIXTURES=0, the per-field accuracy of a whole crawl (rules first, the fallback
# where they do not fit) on the fixture blogs: benches/eval/holdout.sh over fixtures/sites with
# the release `archive`.
#
# Usage: benches/aeb.sh
# Env: FIXTURES (default 1), AEB_DIR, AEB_URL (default https://github.com/scrapinghub/article-extraction-benchmark),
#      REPS (default 5), VENV (default /tmp/everblog-bench-venv; created with trafilatura when it
#      lacks it), PYTHON (default python3), N_BOOTSTRAP (default 200).
set -euo pipefail
cd "$(dirname "$0")/.."

AEB_DIR=${AEB_DIR:-/tmp/everblog-aeb/repo}
AEB_URL=${AEB_URL:-https://github.com/scrapinghub/article-extraction-benchmark}
REPS=${REPS:-5}
VENV=${VENV:-/tmp/everblog-bench-venv}

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

if [ "${FIXTURES:-1}" != 0 ]; then
  echo "per-field accuracy on the fixture blogs (benches/eval/holdout.sh, release) ..." >&2
  cargo build -q --release
  HOLDOUT_DIR="$PWD/fixtures/sites" benches/eval/holdout.sh target/release/archive || true
fi

work=$(mktemp -d /tmp/everblog-aeb-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/output"
cp "$AEB_DIR/ground-truth.json" "$AEB_DIR/evaluate.py" "$work/"

echo "ours: cargo bench --bench aeb (release) ..." >&2
cargo bench -q --bench aeb -- "$AEB_DIR/html" "$work/output/everblog_fallback.json" --reps "$REPS" 2>"$work/ours.log"
grep 'everblog fallback' "$work/ours.log" >&2

echo "trafilatura, on the same pages ..." >&2
"$VENV/bin/python" - "$AEB_DIR/html" "$work/output/trafilatura.json" "$REPS" <<'PY'
import gzip, json, statistics, sys, time
from pathlib import Path
import trafilatura

html_dir, out, reps = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
predictions, times = {}, []
for path in sorted(html_dir.glob("*.html.gz")):
    html = gzip.decompress(path.read_bytes()).decode("utf8", "replace")
    text = trafilatura.extract(html) or ""  # warm-up, and the prediction
    runs = []
    for _ in range(reps):
        start = time.perf_counter()
        trafilatura.extract(html)
        runs.append((time.perf_counter() - start) * 1e3)
    times.append(statistics.median(runs))
    predictions[path.name[: -len(".html.gz")]] = {"articleBody": text}
json.dump({"version": trafilatura.__version__, "output": predictions}, open(out, "w"))
print(f"trafilatura {trafilatura.__version__}: {len(times)} pages, "
      f"mean {statistics.mean(times):.2f} ms/page, median {statistics.median(times):.2f} ms/page",
      file=sys.stderr)
PY

echo "scoring with the benchmark's evaluate.py ..." >&2
(cd "$work" && "$VENV/bin/python" evaluate.py --n-bootstrap "${N_BOOTSTRAP:-200}")
