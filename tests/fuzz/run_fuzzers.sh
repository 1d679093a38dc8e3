#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in their own folder and runs each over its seed corpus.
#
#   tests/fuzz/run_fuzzers.sh BUILD_DIR [RUNS]     # default 2000 runs per target
#   tests/fuzz/run_fuzzers.sh --bin BIN_DIR WORK_DIR [RUNS]   # targets built already (ctest
#                                                  # fuzz_smoke in the asan preset's build)
#   BUBBLESIM_FUZZ_SECONDS=60 tests/fuzz/run_fuzzers.sh build-fuzz   # time-bound runs instead
#   BUBBLESIM_FUZZ_TARGETS="fuzz_units fuzz_scenario" ...            # a subset
#
# Exits 77 (ctest: skipped) when clang++ with libFuzzer is not available, 1 when a target found a
# crash (the input is kept as BUILD_DIR/artifacts/TARGET-crash-*), 0 otherwise. Seeds come from
# scenarios/ and tests/ (plus tests/fuzz/seeds/); new inputs the fuzzer finds go to
# BUILD_DIR/corpus/TARGET, which later runs reuse.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
bin=""
if [[ "${1:-}" == --bin ]]; then
  bin="$(cd "$2" && pwd)"
  shift 2
fi
build="$(mkdir -p "${1:-$src/build-fuzz}" && cd "${1:-$src/build-fuzz}" && pwd)"
runs="${2:-2000}"
cxx="${BUBBLESIM_FUZZ_CXX:-clang++}"

build_targets() {  # the standalone form: configure and build BUILD_DIR/cmake with clang
  if ! command -v "$cxx" >/dev/null; then
    echo "run_fuzzers: $cxx not found; skipping (install clang and libclang-rt-14-dev)"
    exit 77
  fi
  probe="$build/probe"
  if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
      "$cxx" -x c++ -fsanitize=fuzzer - -o "$probe" 2>/dev/null; then
    echo "run_fuzzers: $cxx cannot link libFuzzer; skipping (install libclang-rt-14-dev)"
    exit 77
  fi

  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$src}"
  # -O1 and line tables only: the instrumented build of every library is most of the smoke test's
  # time on two cores; crash reports keep file:line.
  cmake -S "$src" -B "$build/cmake" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
    -DBUBBLESIM_BUILD_FUZZ=ON -DBUBBLESIM_BUILD_TESTS=OFF -DBUBBLESIM_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
  cmake --build "$build/cmake" --target fuzzers -j"$(nproc)" | grep -v '^\[' || true
  test -x "$build/cmake/bin/fuzz_units"  # the build must have succeeded
  bin="$build/cmake/bin"
}
[[ -n "$bin" ]] || build_targets

# Seed corpora, refreshed every run (plain copies, named by their source path).
seed() {  # seed TARGET FILE...
  local dir="$build/seeds/$1"; shift
  mkdir -p "$dir"
  for f in "$@"; do [[ -f "$f" ]] && cp "$f" "$dir/$(echo "${f#"$src"/}" | tr '/' '_')"; done
  return 0
}
rm -rf "$build/seeds"
shopt -s nullglob globstar
seed fuzz_scenario "$src"/scenarios/*.yaml "$src"/scenarios/memory/*.yaml "$src"/scenarios/sweeps/base.yaml \
  "$src"/tests/errors/*.yaml "$src"/tests/report/*.yaml "$src"/tests/data/**/*.yaml
seed fuzz_units "$src"/tests/fuzz/seeds/units/*
seed fuzz_topology "$src"/scenarios/topologies/*.yaml "$src"/tests/topologies/data/*.yaml "$src"/tests/fuzz/seeds/topology/*
seed fuzz_torch_csv "$src"/tests/data/pytorch/*.csv "$src"/tests/data/dualpipev*.csv
seed fuzz_table_csv "$src"/tests/data/*.csv "$src"/tests/fuzz/seeds/table_csv/*
seed fuzz_chakra "$src"/tests/fuzz/seeds/chakra/*
seed fuzz_sweep "$src"/scenarios/sweeps/*.yaml
seed fuzz_sweep_resume "$src"/tests/fuzz/seeds/sweep_resume/*
seed fuzz_optimizer "$src"/tests/fuzz/seeds/optimizer/*

targets="${BUBBLESIM_FUZZ_TARGETS:-fuzz_scenario fuzz_units fuzz_topology fuzz_torch_csv fuzz_table_csv fuzz_chakra fuzz_sweep fuzz_sweep_resume fuzz_optimizer}"
mkdir -p "$build/artifacts"
failed=0
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
for t in $targets; do
  mkdir -p "$build/corpus/$t"
  # fuzz_optimizer runs the optimizer for up to 0.05 s a run: a tenth of the runs.
  budget=(-runs="$runs")
  [[ $t == fuzz_optimizer ]] && budget=(-runs="$(( (runs + 9) / 10 ))")
  [[ -n "${BUBBLESIM_FUZZ_SECONDS:-}" ]] && budget=(-max_total_time="$BUBBLESIM_FUZZ_SECONDS")
  log="$build/$t.log"
  # -seed fixes the mutation sequence, so a CI failure reproduces; -timeout catches hangs.
  if "$bin/$t" "$build/corpus/$t" "$build/seeds/$t" "${budget[@]}" -seed=1 -timeout=10 \
      -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" >"$log" 2>&1; then
    runs_done=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    secs=$(grep -o 'stat::slowest_unit_time_sec: *[0-9]*' "$log" >/dev/null; grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || echo '?')
    rate=$(grep -o 'exec/s: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
    echo "run_fuzzers: $t ok: $runs_done runs in ${secs}s (last exec/s: $rate), corpus $(ls "$build/corpus/$t" | wc -l) new"
  else
    echo "run_fuzzers: $t FAILED (log: $log)"
    grep -E 'ERROR|runtime error|Test unit written|==[0-9]+==' "$log" | head -20
    failed=1
  fi
done
exit $failed
