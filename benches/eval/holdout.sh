#!/usr/bin/env bash
# End-to-end held-out evaluation of the `archive` CLI.
#
#   benches/eval/holdout.sh [ARCHIVE_BINARY]
#
# 1. Generates the held-out blogs with fixtures/holdout/generate.sh into a temp
#    dir, or reuses $HOLDOUT_DIR when it is set (and already generated).
# 2. For each blog: serves site/ with python3 -m http.server on 127.0.0.1
#    (port taken from truth.json's base_url, else a free port), then with a
#    fresh database runs
#        ARCHIVE --db DB add http://127.0.0.1:PORT<feed_path>
#        ARCHIVE --db DB crawl --all
#        ARCHIVE --db DB export --format jsonl > out.jsonl
#    and scores out.jsonl with benches/eval/score.py.
# 3. Prints a per-blog table and an overall verdict; exit 0 only if every blog
#    passes (coverage, article and title >= 95%).
#
# ARCHIVE_BINARY defaults to $ARCHIVE, else target/dist/archive, else
# target/debug/archive, else `archive` on PATH.
# Env: HOLDOUT_DIR (reuse/keep generated blogs), HOLDOUT_ONLY="blog ..." (subset),
#      HOLDOUT_TIMEOUT (seconds per archive command, default 900),
#      HOLDOUT_WORK (where DBs, exports and logs go; default a temp dir, kept).
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
score="$root/benches/eval/score.py"
gen="$root/fixtures/holdout/generate.sh"

archive="${1:-${ARCHIVE:-}}"
if [[ -z "$archive" ]]; then
  for c in "$root/target/dist/archive" "$root/target/debug/archive"; do
    [[ -x "$c" ]] && { archive="$c"; break; }
  done
  [[ -z "$archive" ]] && archive="$(command -v archive || true)"
fi
if [[ -n "$archive" && "$archive" != */* ]]; then archive="$(command -v "$archive" || true)"; fi
if [[ -z "$archive" || ! -x "$archive" ]]; then
  echo "holdout.sh: no archive binary (pass one, set ARCHIVE, or build target/dist/archive)" >&2
  exit 2
fi
archive="$(cd "$(dirname "$archive")" && pwd)/$(basename "$archive")"
timeout_s="${HOLDOUT_TIMEOUT:-900}"

work="${HOLDOUT_WORK:-$(mktemp -d /tmp/everblog-holdout.XXXXXX)}"
mkdir -p "$work"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
    server_pid=""
  fi
}
trap cleanup EXIT
trap 'cleanup; exit 130' INT TERM

port_free() {
  python3 - "$1" <<'PY'
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as http.server does
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
PY
}
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
truth_get() {  # truth_get FILE KEY  -> value ('' for null)
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print("" if v is None else v)' "$1" "$2"
}

exec 3>&2
step() {  # step LABEL CMD...  (time-limited, reports exit status and duration)
  local label="$1"; shift
  local t0=$SECONDS
  timeout "$timeout_s" "$@"
  local r=$?
  echo "   $label: exit $r in $((SECONDS - t0))s" >&3
  return $r
}

# ---------------------------------------------------------------- generate
if [[ -n "${HOLDOUT_DIR:-}" && -n "$(ls "$HOLDOUT_DIR"/*/truth.json 2>/dev/null)" ]]; then
  blogs_dir="$HOLDOUT_DIR"
  echo "== reusing held-out blogs in $blogs_dir"
else
  blogs_dir="${HOLDOUT_DIR:-$work/blogs}"
  base_port=8000
  port_free 8000 || base_port="$(free_port)"
  echo "== generating held-out blogs into $blogs_dir (base http://127.0.0.1:$base_port)"
  HOLDOUT_BASE_URL="http://127.0.0.1:$base_port" bash "$gen" "$blogs_dir" || { echo "holdout.sh: generation failed" >&2; exit 2; }
fi

echo "== archive: $archive"
echo "== work dir: $work"
summaries=()
names=()
overall=0
for truth in "$blogs_dir"/*/truth.json; do
  dir="$(dirname "$truth")"
  name="$(basename "$dir")"
  if [[ -n "${HOLDOUT_ONLY:-}" && " $HOLDOUT_ONLY " != *" $name "* ]]; then continue; fi
  out="$work/$name"
  rm -rf "$out"; mkdir -p "$out"
  base_url="$(truth_get "$truth" base_url)"
  feed_path="$(truth_get "$truth" feed_path)"
  if [[ -n "$base_url" ]]; then
    port="$(python3 -c 'import sys,urllib.parse as u; print(u.urlsplit(sys.argv[1]).port or 80)' "$base_url")"
    if ! port_free "$port"; then
      echo "!! $name: port $port (from base_url $base_url) is busy; skipping" >&2
      summaries+=('{"pass": false, "error": "port busy"}'); names+=("$name"); overall=1
      continue
    fi
  else
    port="$(free_port)"
  fi
  origin="http://127.0.0.1:$port"
  echo
  echo "== $name: serving $dir/site on $origin"
  python3 -m http.server --bind 127.0.0.1 "$port" --directory "$dir/site" >"$out/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 100); do
    python3 -c 'import sys,urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$origin$feed_path" 2>/dev/null && break
    sleep 0.1
  done

  db="$out/archive.db"
  rc=0
  step "add"    "$archive" --db "$db" add "$origin$feed_path" >"$out/add.log" 2>&1 || rc=1
  [[ $rc == 0 ]] && { step "crawl" "$archive" --db "$db" crawl --all >"$out/crawl.log" 2>&1 || rc=1; }
  [[ $rc == 0 ]] && { step "export" "$archive" --db "$db" export --format jsonl >"$out/out.jsonl" 2>"$out/export.log" || rc=1; }
  cleanup
  if [[ $rc != 0 ]]; then
    echo "!! $name: archive command failed; see $out/*.log" >&2
    tail -n 5 "$out"/*.log >&2 2>/dev/null
  fi
  touch "$out/out.jsonl"
  python3 "$score" "$truth" "$out/out.jsonl" --base "$origin" | tee "$out/score.txt"
  [[ ${PIPESTATUS[0]} == 0 && $rc == 0 ]] || overall=1
  summaries+=("$(tail -n 1 "$out/score.txt")")
  names+=("$name")
done

if ((${#names[@]} == 0)); then
  echo "holdout.sh: no blogs evaluated" >&2
  exit 2
fi

echo
python3 - "${#names[@]}" "${names[@]}" "${summaries[@]}" <<'PY'
import json, sys
n = int(sys.argv[1]); names = sys.argv[2:2 + n]; sums = sys.argv[2 + n:]
fmt = "%-18s %6s %6s %8s %8s %8s %8s %5s %5s"
print(fmt % ("blog", "posts", "rows", "coverage", "article", "title", "mean_f1", "fp", "ok"))
tot = dict(posts=0, cov=0, art=0, tit=0)
for name, s in zip(names, sums):
    try:
        d = json.loads(s)
    except ValueError:
        d = {"pass": False}
    if "truth_posts" not in d:
        print(fmt % (name, "-", "-", "-", "-", "-", "-", "-", "FAIL"))
        continue
    p = d["truth_posts"]
    tot["posts"] += p; tot["cov"] += round(d["coverage"] * p); tot["art"] += round(d["article"] * p); tot["tit"] += round(d["title"] * p)
    print(fmt % (name, p, d["export_rows"], "%.1f%%" % (100 * d["coverage"]), "%.1f%%" % (100 * d["article"]),
                 "%.1f%%" % (100 * d["title"]), "%.3f" % d["mean_f1"], d["false_positives"], "PASS" if d["pass"] else "FAIL"))
if tot["posts"]:
    P = tot["posts"]
    print(fmt % ("(all)", P, "", "%.1f%%" % (100 * tot["cov"] / P), "%.1f%%" % (100 * tot["art"] / P),
                 "%.1f%%" % (100 * tot["tit"] / P), "", "", ""))
PY
echo
if [[ $overall == 0 ]]; then
  echo "HOLDOUT VERDICT: PASS (every blog >= 95% coverage, article and title)"
else
  echo "HOLDOUT VERDICT: FAIL"
fi
echo "(logs, exports and scores in $work)"
exit $overall
