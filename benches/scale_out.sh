#!/usr/bin/env bash
# Scale-out (issue 16): N daemons on one archive, SQLite against PostgreSQL, and one daemon
# holding many blogs. What is measured and how: benches/scale_out.rs.
#
# Usage: benches/scale_out.sh [BLOGS_THROUGHPUT] [BLOGS_HOLD] [WINDOW_SECONDS]
#   defaults 200, 1000, 300. Needs PostgreSQL (bash .ci/setup --tests installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --profile dist --quiet
cargo bench --quiet --bench scale_out --no-run
run() { cargo bench --quiet --bench scale_out -- "$@" --archive target/dist/archive; }
echo "## N daemons, ${1:-200} blogs"
run throughput --blogs "${1:-200}"
echo
echo "## one daemon holding ${2:-1000} blogs"
run hold --blogs "${2:-1000}" --window "${3:-300}"
