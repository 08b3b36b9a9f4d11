#!/usr/bin/env bash
# WARC export: speed and memory of `archive export --format warc` on an archive of N captures
# (default 10,000; benches/warc_store.rs makes it: real blog pages, images, revisits), against
# warcio writing the same records (benches/warcio_write.py: warcio's documented writing path,
# digests computed, one gzip member per record; timed after every record is in memory).
#
# MB/s counts the uncompressed WARC (the same records for every writer) over wall time. Ours
# includes reading the captures from SQLite; warcio's does not. Rows:
#   everblog                 all cores (one deflating thread per core, this machine's default)
#   everblog, one core       taskset to one CPU: deflating on the exporting thread
#   warcio, zlib level 9     warcio as it is (GzippingWrapper uses level 9)
#   warcio, zlib level 6     warcio at everblog's level, for a like-for-like codec
# Peak RSS is GNU time's maximum resident set size (not shown for warcio, which holds every
# record in memory before the timed part, by design of the comparison).
#
# Usage: benches/warc_export.sh [CAPTURES]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
cargo build --profile dist --quiet
VENV=$(bash fixtures/webarchive/tools.sh | tail -1)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo bench --quiet --bench warc_store -- "$work/archive.db" "$N"
run() { # NAME OUT COMMAND...: time COMMAND, print a row
  local name=$1 out=$2
  shift 2
  /usr/bin/time -f '%M %e' -o "$work/time" "$@" > "$work/stdout" 2> "$work/stderr" || {
    cat "$work/stderr" >&2
    exit 1
  }
  local kb wall secs
  read -r kb wall < "$work/time"
  # warcio_write.py prints its own (write-only) seconds; everblog's are the whole command's.
  secs=$(awk 'NF == 2 { print $1 }' "$work/stdout")
  secs=${secs:-$wall}
  local raw
  raw=$(gzip -dc "$out" | wc -c)
  awk -v n="$name" -v s="$secs" -v r="$raw" -v z="$(stat -c %s "$out")" -v kb="$kb" \
    'BEGIN { rss = n ~ /^warcio/ ? "-" : sprintf("%.0f", kb / 1024)
             printf "%-26s %8.2f %10.1f %10.1f %12s\n", n, s, r / 1e6 / s, z / 1e6, rss }'
  echo "$secs" > "$work/secs.$name"
}
printf '%-26s %8s %10s %10s %12s\n' writer seconds "MB/s" "gz MB" "peak RSS MB"
run everblog "$work/ours.warc.gz" \
  target/dist/archive --db "$work/archive.db" export --format warc -o "$work/ours.warc.gz"
mkdir "$work/one" # same file name: the name is in the warcinfo record
run "everblog, one core" "$work/one/ours.warc.gz" taskset -c 0 \
  target/dist/archive --db "$work/archive.db" export --format warc -o "$work/one/ours.warc.gz"
cmp -s "$work/ours.warc.gz" "$work/one/ours.warc.gz" || {
  echo "one core wrote another file" >&2
  exit 1
}
run "warcio, zlib level 9" "$work/warcio9.warc.gz" \
  "$VENV/bin/python" benches/warcio_write.py "$work/ours.warc.gz" "$work/warcio9.warc.gz" 9
run "warcio, zlib level 6" "$work/warcio6.warc.gz" \
  "$VENV/bin/python" benches/warcio_write.py "$work/ours.warc.gz" "$work/warcio6.warc.gz" 6
awk -v a="$(cat "$work/secs.everblog")" -v b="$(cat "$work/secs.warcio, zlib level 9")" \
  -v c="$(cat "$work/secs.warcio, zlib level 6")" -v d="$(cat "$work/secs.everblog, one core")" \
  'BEGIN { printf "everblog vs warcio: %.1fx (level 9), %.1fx (level 6); one core: %.1fx, %.1fx\n", b / a, c / a, b / d, c / d }'
