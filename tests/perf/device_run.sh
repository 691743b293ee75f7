#!/usr/bin/env bash
# The device check on a lent GPU machine, after tests/perf/device_prepare.sh here:
#   run(command="bash tests/perf/device_run.sh", carry=["build/gpu-carry"], timeout_s=540)
# Installs the carried wheels without network into the machine's python3, runs
# tests/perf/gpu_check.py under an overall limit (LIMIT seconds, 480 by default) and leaves
# the report in $OUT/report.txt and the steps' full output in $OUT/gpu_check.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
carry=build/gpu-carry
out=${OUT:-/tmp/gpu-check-out}
mkdir -p "$out"
{
    echo "agentgym wheel from commit $(cat $carry/commit)"
    python3 -m pip install --quiet --no-index --no-deps "$carry"/wheels/*.whl 2>&1 | tail -3
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv
    python3 -c "import sys, torch, transformers; print(sys.version.split()[0], torch.__version__, transformers.__version__)"
    timeout "${LIMIT:-480}" python3 tests/perf/gpu_check.py --shape "$carry/shape" --out /tmp/gpu-check
    echo "[gpu_check: exit $?]"
} 2>&1 | tee "$out/report.txt"
cp /tmp/gpu-check/gpu_check.log "$out/" 2>/dev/null || true
