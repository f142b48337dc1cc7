#!/usr/bin/env bash
# The whole check, as `npm test` runs it (locally and in CI):
#   1. typecheck             npm run typecheck
#   2. lint + format         biome check .
#   3. tests on PGlite       vitest run                                   (every project)
#   4. tests on PostgreSQL   PTS_TEST_DB=postgres vitest run --project core-api
#      (when PostgreSQL is reachable; skipped loudly otherwise, and a failure when CI=true)
#
# Every stage runs even when an earlier one failed, so one run shows everything that is wrong.
# Test counts come from vitest's JSON reporter. The last line is the summary, alone on its line:
#   `N passed, N failed` (`, N skipped` added when tests were skipped or todo).
# Counting: passed/failed/skipped are vitest test cases summed over both vitest runs (core-api tests run
# twice, once per database). A test file that fails without a failing test (import error, failing hook),
# a vitest run that breaks without a report, and a failed typecheck/lint stage each count as one failure,
# so `0 failed` always means every stage was green. Exit status: 0 only then.
#
# Environment: CI=true (or 1) makes an unreachable PostgreSQL a failure. PTS_TEST_RUN_LIMIT_MINUTES (default 35)
# stops a vitest run that overstays it and names the test files still running. PTS_TEST_DATABASE_URL or DATABASE_URL
# point the PostgreSQL run at an admin connection (default postgres://postgres@127.0.0.1:5432/postgres).
# Extra arguments are passed to both vitest runs (e.g. `npm test -- -t cooldown`).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ -t 1 && -z "${NO_COLOR:-}" ]]; then
  bold=$'\e[1m' red=$'\e[31m' green=$'\e[32m' yellow=$'\e[33m' reset=$'\e[0m'
else
  bold='' red='' green='' yellow='' reset=''
fi

in_ci=false
# Minutes each vitest run may take before it is stopped (a run takes 10 to 20 on a 2-core machine).
run_limit_minutes=${PTS_TEST_RUN_LIMIT_MINUTES:-35}
[[ ${CI:-} == true || ${CI:-} == 1 ]] && in_ci=true

report_dir="$(mktemp -d "${TMPDIR:-/tmp}/pts-test-all.XXXXXX")"
trap 'rm -rf "$report_dir"' EXIT

total_passed=0
total_failed=0
total_skipped=0
stage_lines=()
failure_lines=()
run_started=$(date +%s)

now_ms() { date +%s%3N; }
format_ms() { awk -v ms="$1" 'BEGIN { printf "%.1fs", ms / 1000 }'; }

heading() {
  echo
  echo "${bold}======================================================================${reset}"
  echo "${bold}== $*${reset}"
  echo "${bold}======================================================================${reset}"
}

# record NAME STATUS DURATION_MS [DETAIL]
record() {
  local colour=$green
  [[ $2 == FAILED ]] && colour=$red
  [[ $2 == SKIPPED ]] && colour=$yellow
  stage_lines+=("$(printf '  %-24s %s%-8s%s %8s  %s' "$1" "$colour" "$2" "$reset" "$(format_ms "$3")" "${4:-}")")
  echo "${colour}-- $1: $2 in $(format_ms "$3")${4:+ ($4)}${reset}"
}

# A stage that is a plain command (no test counts): a failure counts as one failed check.
run_check() {
  local name=$1
  shift
  heading "$name: $*"
  local start status
  start=$(now_ms)
  "$@"
  status=$?
  local elapsed=$(($(now_ms) - start))
  if ((status == 0)); then
    record "$name" PASSED "$elapsed"
  else
    total_failed=$((total_failed + 1))
    record "$name" FAILED "$elapsed" "exit $status, counted as 1 failure"
  fi
}

# Reads a vitest JSON report and prints "passed failed skipped files_failed_without_tests".
read_vitest_report() {
  node -e '
    const report = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
    // A file that failed to load or whose hooks failed has status "failed" but no failed assertion.
    const brokenFiles = (report.testResults ?? []).filter(
      (file) => file.status === "failed" && !(file.assertionResults ?? []).some((t) => t.status === "failed"),
    ).length;
    console.log(report.numPassedTests ?? 0, report.numFailedTests ?? 0, skipped, brokenFiles);
  ' "$1"
}

# Prints one line per failed test (or broken file) of a vitest JSON report, with the first lines of its
# message, so the summary at the end of the log names what failed even when only the tail is kept.
list_vitest_failures() {
  node -e '
    const path = require("node:path");
    const report = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    const label = process.argv[2];
    const clip = (text) =>
      String(text ?? "").replace(/\x1b\[[0-9;]*m/g, "").split("\n").filter((l) => l.trim()).slice(0, 3)
        .map((l) => "        " + l.trim().slice(0, 200)).join("\n");
    for (const file of report.testResults ?? []) {
      const name = path.relative(process.cwd(), file.name);
      const failed = (file.assertionResults ?? []).filter((t) => t.status === "failed");
      for (const test of failed) {
        console.log(`  ${label} ✗ ${name} > ${test.fullName ?? test.title}`);
        const message = clip((test.failureMessages ?? []).join("\n"));
        if (message) console.log(message);
      }
      if (file.status === "failed" && failed.length === 0) {
        console.log(`  ${label} ✗ ${name} (file failed without a failing test)`);
        const message = clip(file.message);
        if (message) console.log(message);
      }
    }
  ' "$1" "$2"
}

# run_vitest NAME REPORT_FILE [ENV=VALUE...] -- [vitest args...]
run_vitest() {
  local name=$1 report=$2
  shift 2
  local env_args=()
  while [[ $# -gt 0 && $1 != -- ]]; do
    env_args+=("$1")
    shift
  done
  shift
  heading "$name: ${env_args[*]:+${env_args[*]} }vitest run $*"
  local start status
  start=$(now_ms)
  local progress="$report.progress"
  : >"$progress"
  # A run that overstays its limit is stopped (with every process of its group) and the files still running
  # are named, so one stuck test cannot hold the whole check until CI's own limit ends it without a word.
  # From a terminal, --foreground keeps Ctrl-C reaching vitest (timeout otherwise runs it in a process group of
  # its own, and then stops that whole group when the limit is reached).
  local timeout_args=(--kill-after=30s)
  [[ -t 0 ]] && timeout_args+=(--foreground)
  timeout "${timeout_args[@]}" "${run_limit_minutes}m" \
    env "${env_args[@]}" PTS_TEST_PROGRESS_FILE="$progress" npx --no-install vitest run \
    --reporter=default --reporter=json --reporter=./scripts/progress-reporter.ts --outputFile.json="$report" "$@"
  status=$?
  local elapsed=$(($(now_ms) - start))
  if ((status == 124 || status == 137)); then
    echo "${red}!! $name did not finish within ${run_limit_minutes} minutes (PTS_TEST_RUN_LIMIT_MINUTES); stopped.${reset}"
    echo "${red}!! Test files started and not finished:${reset}"
    awk '$1 == "start" { open[$3] = $2 } $1 == "end" { delete open[$3] } END { for (f in open) print "     " open[f] "  " f }' "$progress"
    failure_lines+=("  [$name] ✗ stopped after ${run_limit_minutes} minutes; see the files named above the summary")
  fi

  local passed=0 failed=0 skipped=0 broken=0 counts
  if [[ -s $report ]] && counts=$(read_vitest_report "$report"); then
    read -r passed failed skipped broken <<<"$counts"
    failure_lines+=("$(list_vitest_failures "$report" "[$name]")")
  else
    echo "${red}!! vitest wrote no readable JSON report ($report); counting the run as 1 failure${reset}"
    broken=1
  fi
  # Errors thrown outside any test (the progress reporter writes them) fail the run without failing a test;
  # name them in the summary, where a log cut to its tail still shows them.
  local unhandled
  unhandled=$(sed -n 's/^unhandled /  ['"$name"'] ✗ unhandled error in /p' "$progress" | head -n 5)
  [[ -n $unhandled ]] && failure_lines+=("$unhandled")
  # vitest failed (unhandled error, no tests found, ...) but the report shows no failure: still a failure.
  if ((status != 0 && failed + broken == 0)); then
    echo "${red}!! vitest exited with $status but reported no failing test; counting 1 failure${reset}"
    broken=1
  fi
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed + broken))
  total_skipped=$((total_skipped + skipped))

  local detail="$passed passed, $failed failed, $skipped skipped"
  ((broken > 0)) && detail+=", $broken broken file(s)/run"
  if ((status == 0 && failed + broken == 0)); then
    record "$name" PASSED "$elapsed" "$detail"
  else
    record "$name" FAILED "$elapsed" "$detail; exit $status"
  fi
}

# Whether the PostgreSQL run can go ahead; sets postgres_reason either way.
postgres_reachable() {
  if [[ -n ${PTS_TEST_DATABASE_URL:-} ]]; then
    postgres_reason="PTS_TEST_DATABASE_URL is set"
    return 0
  fi
  if [[ -n ${DATABASE_URL:-} ]]; then
    postgres_reason="DATABASE_URL is set"
    return 0
  fi
  if timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/5432' 2>/dev/null; then
    postgres_reason="127.0.0.1:5432 answers"
    return 0
  fi
  postgres_reason="neither PTS_TEST_DATABASE_URL nor DATABASE_URL is set and nothing answers on 127.0.0.1:5432"
  return 1
}

echo "${bold}pts: full check$([[ $in_ci == true ]] && echo " (CI=${CI})")${reset} — node $(node --version), $(date -u +%Y-%m-%dT%H:%M:%SZ)"

run_check typecheck npm run --silent typecheck
run_check "lint (biome)" npx --no-install biome check .
# PTS_TEST_DB is pinned so an exported PTS_TEST_DB=postgres in a developer's shell cannot hide the PGlite run.
run_vitest "tests (PGlite)" "$report_dir/pglite.json" PTS_TEST_DB=pglite -- "$@"

if postgres_reachable; then
  # Files that have no core-api tests at all would make vitest exit 1; the PGlite run already guards that.
  run_vitest "tests (PostgreSQL)" "$report_dir/postgres.json" PTS_TEST_DB=postgres -- \
    --project core-api --passWithNoTests "$@"
else
  heading "tests (PostgreSQL)"
  if [[ $in_ci == true ]]; then
    echo "${red}${bold}!!!! PostgreSQL run FAILED: PostgreSQL is not reachable in CI ($postgres_reason).${reset}"
    echo "${red}${bold}!!!! .ci/run is expected to install and start it; see docs/operations.md.${reset}"
    total_failed=$((total_failed + 1))
    record "tests (PostgreSQL)" FAILED 0 "PostgreSQL unreachable in CI, counted as 1 failure"
  else
    echo "${yellow}${bold}!!!! PostgreSQL run SKIPPED: $postgres_reason.${reset}"
    echo "${yellow}${bold}!!!! The DB-backed core-api tests ran on PGlite only. Start PostgreSQL or set${reset}"
    echo "${yellow}${bold}!!!! PTS_TEST_DATABASE_URL=postgres://USER[:PASSWORD]@HOST:PORT/postgres to run them there too.${reset}"
    record "tests (PostgreSQL)" SKIPPED 0 "$postgres_reason"
  fi
fi

heading "summary ($(($(date +%s) - run_started))s)"
printf '%s\n' "${stage_lines[@]}"
echo
if ((total_failed > 0)); then
  for lines in "${failure_lines[@]}"; do
    [[ -n $lines ]] && printf '%s\n' "$lines"
  done
  echo "${red}${bold}FAILED${reset}: see the stages marked FAILED above."
else
  echo "${green}${bold}OK${reset}"
fi
summary="$total_passed passed, $total_failed failed"
((total_skipped > 0)) && summary+=", $total_skipped skipped"
echo "$summary"
((total_failed == 0))
