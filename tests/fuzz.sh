#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo fuzz, libFuzzer, nightly): builds the targets of fuzz/ and runs
# each for FUZZ_SECONDS (default 7: about a minute in all), one at a time, from the seed corpora
# of fuzz/seeds/ (written from the tests by fuzz/seeds.py) plus what earlier runs found
# (fuzz/corpus/, not committed). A crash, a hang (-timeout), a leak or running out of memory
# (-rss_limit_mb) fails the target, with the path of the input that did it.
#
#   bash tests/fuzz.sh                      # briefly (the README's test command runs this)
#   FUZZ_SECONDS=300 bash tests/fuzz.sh     # long: 5 minutes per target
#   FUZZ_TARGETS="handle sse" bash tests/fuzz.sh
#
# Where no nightly toolchain exists it says so and skips (exit 0). Prints one line per target
# and "fuzz: N passed, M failed"; exit 0 only when every target passed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR=never

SECONDS_EACH="${FUZZ_SECONDS:-7}"
TARGETS="${FUZZ_TARGETS:-handle jsonrpc sse framing connection websocket http_route exchange auth_flow}"

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: no nightly toolchain (rustup toolchain install nightly); skipped"
  echo "fuzz: 0 passed, 0 failed"
  exit 0
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version '^0.13' || { echo "fuzz: cannot install cargo-fuzz"; echo "fuzz: 0 passed, 1 failed"; exit 1; }
fi

cd fuzz
if ! cargo +nightly fuzz build -O 2>&1 | tail -3; then
  echo "fuzz: the targets do not build"
  echo "fuzz: 0 passed, 1 failed"
  exit 1
fi
# The same build `cargo fuzz build` made (cargo fuzz adds the sanitizer flags and the host triple).
TRIPLE=$(rustup run nightly rustc -vV | sed -n 's/^host: //p')
BIN_DIR="target/$TRIPLE/release"

PASSED=0
FAILED=0
for t in $TARGETS; do
  mkdir -p "corpus/$t" "artifacts/$t"
  log=$(mktemp)
  before=$(ls "artifacts/$t" | wc -l)
  "$BIN_DIR/$t" "corpus/$t" "seeds/$t" \
    -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  after=$(ls "artifacts/$t" | wc -l)
  artifact=$(grep -Eo 'Test unit written to [^ ]+' "$log" | tail -1 | sed 's/Test unit written to //')
  leaks=$(grep -c 'LeakSanitizer: detected memory leaks' "$log")
  if [ "$rc" -eq 0 ] && [ "$after" -eq "$before" ]; then
    PASSED=$((PASSED + 1))
    echo "fuzz: $t passed: ${runs:-?} executions in ${SECONDS_EACH}s, coverage ${cov:-?}, peak RSS ${rss:-?} MB, 0 crashes, 0 leaks"
  else
    FAILED=$((FAILED + 1))
    echo "fuzz: $t FAILED (exit $rc, leaks reported: $leaks): ${artifact:-see the log below} (reproduce: fuzz/target/$TRIPLE/release/$t fuzz/${artifact:-artifacts/$t/...})"
    grep -E -A12 "panicked at|ERROR: |SUMMARY: " "$log" | head -40
  fi
  rm -f "$log"
done
echo "fuzz: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
