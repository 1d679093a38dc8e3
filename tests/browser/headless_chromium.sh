# Shared by the browser tests (sourced, not run): headless Debian chromium with a throw-away
# profile. After `start_chromium OUT_DIR`, OUT_DIR is absolute in $out and these are defined:
#   dump_dom URL          the DOM after the page's scripts ran -> $out/dom.html; console messages
#                         (uncaught errors included) -> $out/chromium.log; exits 1 if chromium fails
#   console_errors        true (and prints them) when the log has console errors
#   page_errors           true (and prints them) when the page recorded script errors
#                         (data-errors in $out/dom.html) or the log has console errors
#   screenshot URL PNG W,H  a screenshot; exits 1 if chromium fails, returns 1 if nothing was written
# Fails (exit 1) when chromium is missing: install it with BUBBLESIM_WITH_BROWSER=1 tools/setup.

start_chromium() {
  browser=$(command -v chromium || true)
  if [[ -z "$browser" ]]; then
    echo "FAIL: chromium is not installed; the browser test needs it (run BUBBLESIM_WITH_BROWSER=1 tools/setup," \
         "or apt-get install chromium)" >&2
    exit 1
  fi
  mkdir -p "$1"
  out=$(cd "$1" && pwd)
  profile=$(mktemp -d)
  trap 'rm -rf "$profile"' EXIT
  flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
         --disable-component-update --disable-sync --user-data-dir="$profile")
}

dump_dom() {
  timeout 90 "$browser" "${flags[@]}" --enable-logging=stderr --v=0 --dump-dom "$1" >"$out/dom.html" \
    2>"$out/chromium.log" || { echo "FAIL: chromium --dump-dom failed (see $out/chromium.log)" >&2; exit 1; }
}

console_errors() {
  if grep -E 'CONSOLE.*(Uncaught|[Ee]rror)' "$out/chromium.log" >&2; then
    echo "FAIL: console errors while rendering (above)" >&2
    return 0
  fi
  return 1
}

page_errors() {
  local found=1
  if grep -q 'data-errors="' "$out/dom.html"; then
    echo "FAIL: the page recorded script errors: $(grep -o 'data-errors="[0-9]*"' "$out/dom.html")" >&2
    found=0
  fi
  if console_errors; then
    found=0
  fi
  return $found
}

screenshot() {
  timeout 90 "$browser" "${flags[@]}" --hide-scrollbars --window-size="$3" --screenshot="$2" \
    "$1" >/dev/null 2>>"$out/chromium.log" || { echo "FAIL: chromium --screenshot failed" >&2; exit 1; }
  if [[ ! -s "$2" ]]; then
    echo "FAIL: no screenshot written" >&2
    return 1
  fi
}
