#!/usr/bin/env bash
# Runs every control job in this directory through the real binary and
# compares what happened with expected.tsv. Writes results.log (a header,
# then one line per control: control, expected, observed, ok) and exits 1
# if any control is not ok. See README.md.
#
# Usage: evaluation/controls/run.sh [-o DIR] [-j N] [--check | --check-only] [--keep] [BINARY]
#
#   -o DIR        write results.log (and check.log) into DIR (default: this
#                 directory)
#   -j N          workers of the batch of plain controls and of check (default 2)
#   --check       also run `agent-runtime check` on every control (one run each)
#                 and compare each verdict with the check column: check.log
#   --check-only  run only check (check.log), not the controls
#   --keep        keep the data dirs of the run (their path is printed)
#   BINARY        the agent-runtime binary (default: the debug build under
#                 $CARGO_TARGET_DIR or target/)
#
# Observed outcomes are read from the reports (results.tsv) and the event
# log (JSON lines), never from the binary's human output. Only bash,
# coreutils, grep and awk are used.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out_dir="$here"
workers=2
with_controls=1
with_check=0
keep=0
bin=""

usage() {
    sed -n '2,/^set /{/^#/s/^# \{0,1\}//p}' "$0" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case "$1" in
        -o) [ $# -ge 2 ] || usage; out_dir="$2"; shift 2 ;;
        -j) [ $# -ge 2 ] || usage; workers="$2"; shift 2 ;;
        --check) with_check=1; shift ;;
        --check-only) with_check=1; with_controls=0; shift ;;
        --keep) keep=1; shift ;;
        -h | --help) usage ;;
        -*) echo "error: unknown option $1" >&2; usage ;;
        *) [ -z "$bin" ] || usage; bin="$1"; shift ;;
    esac
done
if [ -z "$bin" ]; then
    bin="${CARGO_TARGET_DIR:-$root/target}/debug/agent-runtime"
fi
case "$bin" in /*) ;; *) bin="$PWD/$bin" ;; esac
if [ ! -x "$bin" ]; then
    echo "error: no agent-runtime binary at $bin (build it, or pass its path)" >&2
    exit 2
fi
mkdir -p "$out_dir" || exit 2
out_dir="$(cd "$out_dir" && pwd)"

work="$(mktemp -d "${TMPDIR:-/tmp}/controls.XXXXXX")" || exit 2
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "data dirs kept in $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

# A bound on every run of the binary, so a hang fails the suite instead of
# blocking it.
limit=600
started=$SECONDS

# --- The expected outcomes ------------------------------------------------

names=()
declare -A drive expected verdict observed
errors=0
while IFS=$'\t' read -r name how outcome check rest; do
    case "$name" in '' | '#'* | control) continue ;; esac
    if [ -z "$check" ] || [ -n "$rest" ] || [ -n "${drive[$name]+x}" ]; then
        echo "error: expected.tsv: bad or repeated line for $name" >&2
        errors=1
        continue
    fi
    names+=("$name")
    drive[$name]="$how"
    expected[$name]="$outcome"
    verdict[$name]="$check"
done <"$here/expected.tsv"

# Every manifest has an expected outcome, and every expectation a manifest.
for manifest in "$here"/*.toml; do
    name="$(basename "$manifest" .toml)"
    if [ -z "${drive[$name]+x}" ]; then
        names+=("$name")
        drive[$name]="none"
        expected[$name]="(not in expected.tsv)"
        verdict[$name]="(not in expected.tsv)"
        observed[$name]="not_run"
    fi
done
for name in "${names[@]}"; do
    if [ ! -f "$here/$name.toml" ]; then
        observed[$name]="no_manifest"
        drive[$name]="none"
    fi
done

# --- Reading what happened -----------------------------------------------

# The outcome of NAME in the report DIR/results.tsv: `succeeded`,
# `cancelled`, `pending` or `failed:KIND`, then `+attempts=N` when the job
# did not use exactly one attempt, for a failure judged test by test
# `+f2p=PASSED/TOTAL+p2p=PASSED/TOTAL`, and `+signals=N` when the last
# attempt's integrity record holds tamper signals.
report_outcome() {
    local dir="$1" name="$2"
    if [ ! -f "$dir/results.tsv" ]; then
        echo "no_report"
        return
    fi
    awk -F'\t' -v name="$name" '
        NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
        $col["instance"] == name {
            o = $col["outcome"]
            t = (o == "failed") ? "failed:" $col["failure_kind"] : o
            if ($col["attempts"] != 1) t = t "+attempts=" $col["attempts"]
            if (o == "failed" && $col["verified_per_test"] == "true")
                t = t "+f2p=" $col["f2p_passed"] "/" $col["f2p_total"] \
                      "+p2p=" $col["p2p_passed"] "/" $col["p2p_total"]
            if (("integrity_signals" in col) && $col["integrity_signals"] + 0 > 0)
                t = t "+signals=" $col["integrity_signals"]
            print t
            found = 1
        }
        END { if (!found) print "not_in_report" }' "$dir/results.tsv"
}

# The records of job NAME in DATA/events.log, one per line.
job_events() {
    grep -F "\"job\":\"$2\"" "$1/events.log" 2>/dev/null
}

# How many records of type TYPE job NAME has in DATA/events.log.
count_events() {
    local n
    n="$(job_events "$1" "$2" | grep -cF "\"type\":\"$3\"")"
    echo "${n:-0}"
}

# What a crash did to job NAME in DATA: `+interrupted=N` (attempts
# recorded interrupted), `+killed_in=PHASE` (the phase the first
# interruption cut short: baseline, agent, patch, acceptance, finalizing)
# and `+repeated=LIST` (phases recorded more than once for one attempt, or
# `none`).
crash_facts() {
    local data="$1" name="$2" interrupted killed repeated
    interrupted="$(count_events "$data" "$name" attempt_interrupted)"
    killed="$(job_events "$data" "$name" | awk '
        BEGIN { phase = "baseline" }
        /"type":"attempt_interrupted"/ { hit = 1; exit }
        /"type":"baseline"/ { phase = "agent" }
        /"type":"agent_finished"/ { phase = "patch" }
        /"type":"patch"/ { phase = "acceptance" }
        /"type":"acceptance"/ { phase = "finalizing" }
        END { print (hit ? phase : "none") }')"
    repeated="$(job_events "$data" "$name" | awk '
        {
            t = ""; a = ""
            if (match($0, /"type":"[a-z_]+"/)) t = substr($0, RSTART + 8, RLENGTH - 9)
            if (match($0, /"attempt":[0-9]+/)) a = substr($0, RSTART + 10, RLENGTH - 10)
            if (t ~ /^(baseline|agent_finished|patch|acceptance|attempt_finished)$/ \
                && ++seen[t "#" a] == 2)
                list = list (list == "" ? "" : ",") t
        }
        END { print (list == "" ? "none" : list) }')"
    echo "+interrupted=$interrupted+killed_in=$killed+repeated=$repeated"
}

# Waits until job NAME in DATA has a record containing NEEDLE, while the
# process PID runs; returns 1 if it never comes.
wait_for() {
    local data="$1" name="$2" needle="$3" pid="$4" deadline=$((SECONDS + 120))
    while [ $SECONDS -lt $deadline ]; do
        if job_events "$data" "$name" | grep -qF "$needle"; then
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# Runs the binary with a time bound, output appended to the file OUT.
ar() {
    local out="$1"
    shift
    timeout -k 5 "$limit" "$bin" "$@" >>"$out" 2>&1
}

# --- The drives --------------------------------------------------------------

# One control driven by the script, in a data dir of its own; sets
# observed[NAME].
drive_one() {
    local name="$1" how="$2" manifest="$here/$1.toml" dir="$work/$1"
    local data="$work/$1/data" log="$work/$1/output" pid extra=""
    mkdir -p "$dir"
    case "$how" in
        cancel_running)
            # Cancel from another process while the tool command runs.
            ar "$log" batch "$data" "$manifest" &
            pid=$!
            if wait_for "$data" "$name" '"kind":"run_tool"' "$pid"; then
                sleep 0.2
                ar "$log" cancel "$data" "$name"
            fi
            wait "$pid"
            ;;
        cancel_queued)
            ar "$log" enqueue "$data" --job "$manifest"
            ar "$log" cancel "$data" "$name"
            ar "$log" batch "$data" "$manifest"
            ;;
        crash_agent | crash_acceptance)
            # SIGKILL the batch mid-agent (while its tool command runs) or
            # mid-acceptance (once the patch is recorded), then run the
            # same command again.
            local needle='"kind":"run_tool"'
            [ "$how" = crash_acceptance ] && needle='"type":"patch"'
            "$bin" batch "$data" "$manifest" >>"$log" 2>&1 &
            pid=$!
            # If the phase never comes, the kill still stops the batch, and
            # the facts below show that nothing was interrupted.
            wait_for "$data" "$name" "$needle" "$pid" && sleep 0.3
            kill -KILL "$pid" 2>/dev/null
            { wait "$pid"; } 2>/dev/null
            ar "$log" batch "$data" "$manifest"
            extra="$(crash_facts "$data" "$name")"
            ;;
        rerun)
            # The same batch command twice: the second starts nothing.
            local before after
            ar "$log" batch "$data" "$manifest"
            before="$(count_events "$data" "$name" attempt_started)"
            ar "$log" batch "$data" "$manifest"
            after="$(count_events "$data" "$name" attempt_started)"
            extra="+rerun_started=$((after - before))"
            ;;
        retry)
            # run fails, retry requeues, run again.
            ar "$log" enqueue "$data" --job "$manifest"
            ar "$log" run "$data" "$name"
            ar "$log" retry "$data" "$name"
            ar "$log" run "$data" "$name"
            ;;
        *)
            observed[$name]="unknown_drive:$how"
            return
            ;;
    esac
    if [ -f "$data/events.log" ]; then
        ar "$log" report "$data" --out "$dir/report"
    fi
    observed[$name]="$(report_outcome "$dir/report" "$name")$extra"
}

# The plain controls: one batch, every job in it, on WORKERS workers.
# Runs every control and writes results.log; adds the controls not ok to
# `failed`.
run_controls() {
    local name code ok batch_pid=""
    local batch_manifests=()
    for name in "${names[@]}"; do
        [ "${drive[$name]}" = batch ] && batch_manifests+=("$here/$name.toml")
    done
    # The plain controls: one batch, every job in it, on WORKERS workers.
    mkdir -p "$work/batch"
    if [ ${#batch_manifests[@]} -gt 0 ]; then
        ar "$work/batch/output" batch "$work/batch/data" "${batch_manifests[@]}" \
            -j "$workers" --report "$work/batch/report" &
        batch_pid=$!
    fi
    # Meanwhile, the controls that need orchestration, one after another.
    for name in "${names[@]}"; do
        case "${drive[$name]}" in
            batch | none) ;;
            *) drive_one "$name" "${drive[$name]}" ;;
        esac
    done
    if [ -n "$batch_pid" ]; then
        wait "$batch_pid"
        code=$?
        # Some controls fail by design, so the batch exits 1; anything else
        # (2: it could not run, 124: it hung) is worth a note.
        if [ "$code" != 0 ] && [ "$code" != 1 ]; then
            echo "note: the batch of plain controls exited $code; its output ends:" >&2
            tail -n 20 "$work/batch/output" >&2
        fi
        for name in "${names[@]}"; do
            if [ "${drive[$name]}" = batch ]; then
                observed[$name]="$(report_outcome "$work/batch/report" "$name")"
            fi
        done
    fi

    local results="$out_dir/results.log" bad=0
    {
        printf 'control\texpected\tobserved\tok\n'
        for name in "${names[@]}"; do
            ok=ok
            [ "${observed[$name]}" = "${expected[$name]}" ] || { ok=FAIL; bad=$((bad + 1)); }
            printf '%s\t%s\t%s\t%s\n' "$name" "${expected[$name]}" "${observed[$name]}" "$ok"
        done
    } >"$results.tmp" && mv "$results.tmp" "$results"
    cat "$results"
    echo "controls: $((${#names[@]} - bad)) ok of ${#names[@]} in $((SECONDS - started))s ($results)"
    failed=$((failed + bad))
}

# Runs `check` once on every control and writes check.log; adds the
# controls whose verdict is not the expected one to `failed`.
run_check() {
    local name v ok check_started=$SECONDS bad=0
    local manifests=()
    declare -A got
    for name in "${names[@]}"; do
        [ -f "$here/$name.toml" ] && manifests+=("$here/$name.toml")
    done
    timeout -k 5 "$limit" "$bin" check "${manifests[@]}" --runs 1 -j "$workers" \
        --data "$work/check" --json >"$work/check.json" 2>"$work/check.stderr"
    # `check --json` prints one key per line, keys sorted: "job" comes
    # before "verdict" in each job's object.
    while IFS=$'\t' read -r name v; do
        got[$name]="$v"
    done < <(awk '
        /^ *"job": "/ { j = $0; sub(/^ *"job": "/, "", j); sub(/",?$/, "", j) }
        /^ *"verdict": "/ { v = $0; sub(/^ *"verdict": "/, "", v); sub(/",?$/, "", v); print j "\t" v }
    ' "$work/check.json")
    local check_log="$out_dir/check.log"
    {
        printf 'control\texpected\tobserved\tok\n'
        for name in "${names[@]}"; do
            ok=ok
            v="${got[$name]:-missing}"
            [ "$v" = "${verdict[$name]}" ] || { ok=FAIL; bad=$((bad + 1)); }
            printf '%s\t%s\t%s\t%s\n' "$name" "${verdict[$name]}" "$v" "$ok"
        done
    } >"$check_log.tmp" && mv "$check_log.tmp" "$check_log"
    cat "$check_log"
    echo "check: $((${#names[@]} - bad)) ok of ${#names[@]} in $((SECONDS - check_started))s ($check_log)"
    failed=$((failed + bad))
}

failed=0
[ "$with_controls" = 1 ] && run_controls
[ "$with_check" = 1 ] && run_check
[ "$failed" = 0 ] && [ "$errors" = 0 ]
