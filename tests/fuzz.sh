#!/usr/bin/env bash
# Coverage-guided fuzzing (cargo fuzz, libFuzzer, nightly): builds the targets of fuzz/ and runs
# each one at a time from the seed corpora of fuzz/seeds/ (written from the tests by
# fuzz/seeds.py; they include the inputs of fuzz/found/ that once crashed a target). A crash, a
# hang (-timeout), a leak or running out of memory (-rss_limit_mb) fails the target, with the path
# of the input that did it.
#
# Two modes:
# - the default (the README's test command runs this) is bounded and as repeatable as libFuzzer
#   allows: its random seed is fixed (FUZZ_SEED, default 1), each target runs a fixed number of
#   inputs (FUZZ_RUNS, default per target below: about a minute in all on a 2-core machine; at
#   most 60 s a target), and what it finds is kept in a temporary corpus, not fuzz/corpus/. A
#   commit's run here explores much the same inputs as its run in CI (not exactly: hash seeds and
#   timing inside the targets change which branches an input covers, and so the mutations after
#   it), instead of a new random walk each time.
# - exploring: FUZZ_SECONDS=N runs each target N seconds with a random seed (FUZZ_SEED to fix
#   one), growing fuzz/corpus/ (not committed) across runs. Keep an input it finds in
#   fuzz/found/<target>/ (and run fuzz/seeds.py) once the crash is fixed.
#
#   bash tests/fuzz.sh                      # repeatable, about a minute
#   FUZZ_SECONDS=300 bash tests/fuzz.sh     # explore: 5 minutes per target
#   FUZZ_TARGETS="handle sse" bash tests/fuzz.sh
#
# Where no nightly toolchain exists it says so and skips (exit 0). Prints one line per target
# and "fuzz: N passed, M failed"; exit 0 only when every target passed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export CARGO_TERM_COLOR=never

if [ -n "${FUZZ_SECONDS:-}" ]; then
  # Exploring: time-bound, random unless FUZZ_SEED is set, corpus kept in fuzz/corpus/.
  LIMITS="-max_total_time=$FUZZ_SECONDS -seed=${FUZZ_SEED:-0}"
  BUDGET="${FUZZ_SECONDS}s"
  KEEP_CORPUS=1
else
  KEEP_CORPUS=0
fi
# Inputs per target in the repeatable mode: about 7 s each on a 2-core machine (the targets that
# drive a whole connection or route run a few hundred inputs a second, the parsers thousands).
runs_for() {
  if [ -n "${FUZZ_RUNS:-}" ]; then echo "$FUZZ_RUNS"; return; fi
  case "$1" in
    connection) echo 2000 ;;
    http_route) echo 3000 ;;
    websocket) echo 4000 ;;
    *) echo 40000 ;;
  esac
}
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
  mkdir -p "artifacts/$t"
  if [ "$KEEP_CORPUS" = 1 ]; then
    mkdir -p "corpus/$t"
    corpus="corpus/$t"
  else
    corpus=$(mktemp -d)
  fi
  if [ "$KEEP_CORPUS" = 0 ]; then
    runs=$(runs_for "$t")
    LIMITS="-runs=$runs -max_total_time=60 -seed=${FUZZ_SEED:-1}"
    BUDGET="$runs runs, seed ${FUZZ_SEED:-1}"
  fi
  log=$(mktemp)
  before=$(ls "artifacts/$t" | wc -l)
  # shellcheck disable=SC2086 # LIMITS holds several flags
  "$BIN_DIR/$t" "$corpus" "seeds/$t" $LIMITS -timeout=10 -rss_limit_mb=2048 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="artifacts/$t/" >"$log" 2>&1
  rc=$?
  [ "$KEEP_CORPUS" = 1 ] || rm -rf "$corpus"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  after=$(ls "artifacts/$t" | wc -l)
  artifact=$(grep -Eo 'Test unit written to [^ ]+' "$log" | tail -1 | sed 's/Test unit written to //')
  leaks=$(grep -c 'LeakSanitizer: detected memory leaks' "$log")
  if [ "$rc" -eq 0 ] && [ "$after" -eq "$before" ]; then
    PASSED=$((PASSED + 1))
    echo "fuzz: $t passed: ${runs:-?} executions ($BUDGET), coverage ${cov:-?}, peak RSS ${rss:-?} MB, 0 crashes, 0 leaks"
  else
    FAILED=$((FAILED + 1))
    echo "fuzz: $t FAILED (exit $rc, leaks reported: $leaks): ${artifact:-see the log below} (reproduce: fuzz/target/$TRIPLE/release/$t fuzz/${artifact:-artifacts/$t/...})"
    grep -E -A12 "panicked at|ERROR: |SUMMARY: " "$log" | head -40
  fi
  rm -f "$log"
done
echo "fuzz: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
