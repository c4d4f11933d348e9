#!/usr/bin/env bash
# hopgen bench repack without a GPU: what it refuses (with the rule) before it touches the
# GPU, and the GPU-less failure said as a sentence and as JSON.
set -u
cli=${1:?usage: repack.sh path/to/hopgen}
# shellcheck source=tests/cli/cli_test.bash
. "$(dirname "$0")/cli_test.bash"
export HOPGEN_LIBCUDA=/nonexistent/libcuda.so.1 # no GPU, whatever the machine has

ok "hopgen bench repack [ROWS COLS]" bench repack --help
bad 2 "give both ROWS and COLS, or neither" bench repack 100
bad 2 "takes 1, 2 or 4-byte types, not f64" bench repack 100 100 --type f64
bad 2 "must hold a row of 100 columns" bench repack 10 100 --ld 99
bad 2 "--offset 16" bench repack --offset 16
bad 2 "unknown option '--bogus'" bench repack --bogus
bad 1 "bench repack cannot run on the GPU" bench repack 64 4097 --type e4m3 --offset 3
bad 2 "--pair 0" bench repack --pair 0
bad 2 "A: repack leading dimensions" bench repack 10 100 --pair 5 --ld 99
bad 1 "bench repack cannot run on the GPU" bench repack 64 4097 --pair 33 --offset 1
"$cli" bench repack 64 4097 --json > "$tmp/j" 2> /dev/null
json_is 'j["command"] == "bench repack" and j["ok"] is False and j["error"]["code"] == "no-driver"' "$tmp/j"

echo "repack.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
