#!/usr/bin/env bash
# GPU discovery through NVML loaded at run time: a stand-in libnvidia-ml
# (agent/fake_nvml.c, four H100s in NVLink pairs 0-1 and 2-3) is built here
# and loaded with dlopen; the node report names every GPU, its memory and
# its NVLink group. Without any NVML the node simply has no GPU.
source "$(dirname "$0")/agent/lib.sh"
command -v cc >/dev/null || px_skip cc "no C compiler to build the stand-in NVML"
T=$(mktemp -d /tmp/pxnvml.XXXXXX)
trap 'rm -rf "$T"' EXIT
cc -shared -fPIC -o "$T/libnvidia-ml.so.1" "$PX_SRC/tests/integration/agent/fake_nvml.c"
PHALANX_NVML_LIB=$T/libnvidia-ml.so.1 "$PHALANX" agent --discover --node g1 >"$T/r.json"
[ "$(jq '.gpus | length' "$T/r.json")" -eq 4 ] || fail "want 4 GPUs: $(cat "$T/r.json")"
# 80 GiB = 81920 MiB; "NVIDIA H100 80GB HBM3" -> type h100; pairs -> groups 0,0,1,1
[ "$(jq -c '[.gpus[] | .group]' "$T/r.json")" = "[0,0,1,1]" ] || fail "groups: $(jq -c '[.gpus[].group]' "$T/r.json")"
[ "$(jq -r '.gpus[2] | "\(.index) \(.uuid) \(.type) \(.mem_mib)"' "$T/r.json")" = "2 GPU-fake-2 h100 81920" ] ||
  fail "GPU 2: $(jq -c '.gpus[2]' "$T/r.json")"
ok "NVML via dlopen: 4 GPUs, names, UUIDs, memory, NVLink groups"
PHALANX_NVML_LIB=$T/absent.so "$PHALANX" agent --discover --node g1 >"$T/none.json" 2>"$T/err"
[ "$(jq '.gpus | length' "$T/none.json")" -eq 0 ] && grep -q "NVML not available" "$T/err" || fail "without NVML: $(cat "$T/err")"
ok "no NVML: a node without GPUs, and the agent says why"
