# Shared by the CLI tests (tests/cli/*.sh source it; its name does not end in .sh, so CTest
# does not run it): a scratch directory, pass/fail counters and the checks they all make.
# The sourcing script sets cli (the hopgen binary) first.
# shellcheck disable=SC2154
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }

# ok FRAGMENT ARGS...: exits 0 and stdout contains FRAGMENT.
ok() {
  local frag=$1
  shift
  if "$cli" "$@" > "$tmp/out" 2> "$tmp/err"; then
    if grep -qF -- "$frag" "$tmp/out"; then pass; else
      fail "$* printed '$(head -c 600 "$tmp/out")', which lacks '$frag'"
    fi
  else
    fail "$* exited $?: $(head -c 600 "$tmp/err")"
  fi
}
# bad CODE FRAGMENT ARGS...: exits CODE with "hopgen: ...FRAGMENT..." on stderr.
bad() {
  local code=$1 frag=$2
  shift 2
  "$cli" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -ne "$code" ]; then fail "$* exited $rc, expected $code ($(head -c 600 "$tmp/err"))"; return; fi
  if grep -q "^hopgen: " "$tmp/err" && grep -qF -- "$frag" "$tmp/err"; then pass; else
    fail "$* said '$(head -c 600 "$tmp/err")', expected 'hopgen: ...$frag...'"
  fi
}
# json_is PYEXPR FILE: FILE holds one JSON object and PYEXPR (over j) holds (without
# python3: that it starts like one).
json_is() {
  local expr=$1 file=$2
  if ! command -v python3 > /dev/null; then
    if grep -q '^{' "$file"; then pass; else fail "no JSON object in $(head -c 300 "$file")"; fi
    return
  fi
  if python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); sys.exit(0 if ($expr) else 1)" \
    "$file" 2> "$tmp/perr"; then pass; else
    fail "'$expr' does not hold for $(head -c 400 "$file") $(head -c 300 "$tmp/perr")"
  fi
}
