#!/usr/bin/env bash
# The GPU suite in one command, on a machine with CUDA and PyTorch but without sizer's own dependencies
# (the lent H100/H200 image: Python 3.12, torch, numpy, PyYAML, typer, rich; no pydantic or pint).
#   make gpu-wheels                     # here, once: pydantic and pint wheels into .whl/ (ignored by git)
#   bash validation/gpu_run.sh [OUT]    # there, with .whl carried: writes OUT (default $OUT/gpu, else validation/reports/gpu-DATE)
# The suite keeps itself under 270 s (runs left after that are reported as skipped); the timeout below is
# the last guard. Needs nothing from the network.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/sizer-site .whl/*.whl
  export PYTHONPATH="/tmp/sizer-site:${PYTHONPATH:-}"
fi
export PYTHONPATH="$PWD:${PYTHONPATH:-}" PYTHONUNBUFFERED=1
out="${1:-${OUT:+$OUT/gpu}}"
out="${out:-validation/reports/gpu-$(date -u +%Y-%m-%d)}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, torch.cuda.is_available() and torch.cuda.get_device_name(0))" || true
status=0
timeout 330 python3 -m sizer validate --suite gpu --out "$out" || status=$?
cat "$out/summary.md" 2>/dev/null || true
exit "$status"
