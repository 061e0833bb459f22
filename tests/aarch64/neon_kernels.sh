#!/bin/sh
# The hot row kernels of an aarch64 build are NEON code: each object holding
# them has at least a given number of `fmla`/`fmls` on 4-float vectors.
# GCC vectorizes them only with the Makefile's aarch64 flags (no FP traps, no
# errno, loop unswitching, contraction); without them it quietly emits scalar
# code, which emulation under qemu cannot show by speed. The minimums are about
# half of what GCC 12 emits with the flags, and above what it emits when any
# one of them is missing (LayerNorm/RMSNorm backward without unswitching,
# AdamW without -fno-math-errno, everything without -fno-trapping-math).
#   sh tests/aarch64/neon_kernels.sh BUILD OBJDUMP
build=$1 objdump=${2:-aarch64-linux-gnu-objdump}
fail=0
for spec in tensor/op_activation:20 tensor/op_layernorm:8 tensor/op_rmsnorm:4 \
            tensor/op_softmax:6 tensor/kernels/adamw:4; do
    obj=$build/obj/${spec%%:*}.o want=${spec##*:}
    have=$("$objdump" -d --no-show-raw-insn "$obj" | grep -cE '[[:space:]]fml[as][[:space:]]+v[0-9]+\.4s') || true
    if [ "$have" -lt "$want" ]; then
        echo "neon kernels: $obj has $have fmla/fmls on .4s vectors, want at least $want (scalar code?)"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "neon kernels: the activations, norms, softmax and AdamW use fmla on NEON vectors"
exit $fail
