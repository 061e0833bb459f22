#!/bin/sh
# The bf16 GEMM's ARM path is BF16 code: its object has the 24 BFDOTs of the
# 8×12 tile's loop (8 rows × 3 vectors of 4 columns, one pair of k each) on
# NEON vectors, each taking its row's pair by lane (bfdot v.4s, v.8h, v.2h[i]).
# Fewer means the tile is not unrolled into registers, none that the
# intrinsics were compiled to something else; qemu's speed cannot show either.
#   sh tests/aarch64/bf16_kernel.sh BUILD OBJDUMP
build=$1 objdump=${2:-aarch64-linux-gnu-objdump}
obj=$build/obj/tensor/kernels/gemm_bf16_neon.o want=24
have=$("$objdump" -d --no-show-raw-insn "$obj" |
    grep -cE '[[:space:]]bfdot[[:space:]]+v[0-9]+\.4s, v[0-9]+\.8h, v[0-9]+\.2h\[[0-3]\]') || true
if [ "$have" -lt "$want" ]; then
    echo "bf16 kernel: $obj has $have bfdot by lane on .4s vectors, want at least $want"
    exit 1
fi
echo "bf16 kernel: the ARM BF16 path's tile is $have bfdot on NEON vectors"
