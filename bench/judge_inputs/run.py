"""The judge's timed inputs: what one input set costs inside the timing window. Three parts, each
in a module beside this file, each replacing its own section of results-<machine>.md:

``seeding``: ``torch.manual_seed`` against ``kgym.harness.device.seed_generators`` before each
set, called from as deep a stack as the judge's timing rounds;

``into_slots``: one input set drawn and copied into its slot, against drawn straight into it
(``kgym.harness.input_slots.SlotDraw``), on the tasks' own sizes;

``normal_draw`` (a GPU): normals drawn by torch's generator, by Triton's Philox kernels, with
Box-Muller on the GPU's fast intrinsics, and by the judge's own draw
(``kgym.harness.fast_normals``), with a plain write as the bound;

``slot_copy`` (a GPU): a round's slots of one arena copied into another's, slot by slot or in
one strided copy, against drawing them again.

    python bench/judge_inputs/run.py seeding|into_slots|normal_draw|slot_copy [OPTIONS]
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

PARTS = ("seeding", "into_slots", "normal_draw", "slot_copy")
TITLE = "The judge's inputs inside the timing window"


def main(argv: list[str]) -> int:
    if argv[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if not argv or argv[0] not in PARTS:
        print(__doc__, file=sys.stderr)
        return 2
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    return int(importlib.import_module(argv[0]).main(argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
