"""L4w: L4v's chess update (learners/l4v_block_rows) with layer 2's five products (its forward
for s and for s' under each network, dW2 and dL/dz1) on bf16 operands with float32 sums,
VDPBF16PS: LEARNER.md's *bf16* arithmetic, which the harness checks it by. Written for the
lean block only: 48 hidden units (a recipe's), AVX-512 VBMI2 and AVX512-BF16. Another width is
refused (FITS, which the harness reads), and a CPU without the instructions is skipped. Sums grouped by thread as L4v's."""
from __future__ import annotations

from typing import Optional

from core.learner import Learner
from learners.l4c_native_chess.learner import ChessRoundLearner
from learners.l4v_block_rows.learner import LEARNER as L4V

MODULE = "_l4w_bf16_layer2"
ISA_FLAGS = ("avx512_bf16", "avx512_vbmi2")
HIDDEN = 48


def make(cfg, replay):
    return ChessRoundLearner(cfg, replay, MODULE)


def _available() -> Optional[str]:
    from native.loader import available, cpu_flags
    missing = [f for f in ISA_FLAGS if f not in cpu_flags()]
    if missing:
        return f"CPU lacks {' and '.join(missing)}: L4w's bf16 layer 2 is written for them"
    return available(MODULE)


def FITS(cfg) -> Optional[str]:
    """Why L4w cannot run `cfg`'s update, or None (harness/learner_verify.py, misfit)."""
    if cfg.hidden != HIDDEN:
        return f"L4w's bf16 layer 2 is written for {HIDDEN} hidden units (a recipe's), not {cfg.hidden}"
    return None


def _build_info():
    from native.loader import build_info
    return {**build_info(MODULE), "sums": "per thread", "precision": "bf16"}


LEARNER = Learner(
    number="4w", title="C++ round, chess, layer 2 on bf16 pairs",
    summary=("L4v's chess update with layer 2's five products (forward for s and for s' under "
             "each network, dW2, dL/dz1) on bf16 operands with float32 sums (VDPBF16PS, two "
             "products a lane per instruction); everything else float32 as L4v's"),
    threads=(1, 2), workloads=("chess",), make=make, available=_available, build_info=_build_info,
    sources=L4V.sources + ("learners/l4v_block_rows/block_rows.hpp",))
