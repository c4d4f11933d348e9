# Shared by the GPU check scripts (gemm-rs.sh, gemm-splitk.sh, gemm-streamk.sh): sourced, not
# run. The caller sets H (path to hopgen) and counts with runs / fails, which these update.
#   run ARGS...             one `hopgen gemm ARGS --check`, one line: ok with the relative
#                           error (and what RUN_SHOW, a grep -o pattern, finds), or FAIL with
#                           the output's tail; bounded by T seconds when T is set
#   sanitize "ARGS" ...     compute-sanitizer memcheck then racecheck on each case's --check,
#                           without cuBLASLt beside it (--check then compares with the f32
#                           reference alone): racecheck reported a hazard inside cuBLASLt's own
#                           kernels (nvjet_*, H200), not hopgen's
fails=${fails:-0}; runs=${runs:-0}
run() {
  runs=$((runs+1))
  local out
  if out=$(${T:+timeout "$T"} "$H" gemm "$@" --check 2>&1); then
    echo "ok   $* :: $(echo "$out" | grep -o 'rel. error [0-9.e-]*' | head -1)${RUN_SHOW:+ $(echo "$out" | grep -o "$RUN_SHOW" | head -1)}"
  else
    fails=$((fails+1)); echo "FAIL $* :: $(echo "$out" | tail -3 | tr '\n' ' ')"
  fi
}
sanitize() {
  local CS=${CS:-/usr/local/cuda/bin/compute-sanitizer} tool a out
  if [ ! -x "$CS" ]; then echo "no compute-sanitizer at $CS"; return; fi
  for tool in memcheck racecheck; do
    for a in "$@"; do
      runs=$((runs+1))
      if out=$(HOPGEN_LIBCUBLASLT=/nonexistent/libcublasLt.so.13 timeout 300 "$CS" --tool $tool \
               --error-exitcode 9 "$H" gemm $a --check 2>&1); then
        echo "ok   $tool $a :: $(echo "$out" | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | head -1)"
      else fails=$((fails+1)); echo "FAIL $tool $a :: $(echo "$out" | grep -E 'SUMMARY|Error|error' | head -4 | tr '\n' ' ')"; fi
    done
  done
}
