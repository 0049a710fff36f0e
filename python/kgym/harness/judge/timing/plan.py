"""How the timing window is laid out before it starts: how many input sets the arenas hold
(``plan_slots``), how many calls make one sample of each side (``calls_per_sample``), and how a
sample's fixed costs come off it (``per_call_ms``)."""

from __future__ import annotations

import math
from dataclasses import dataclass

# Enough input sets that a sample of a sub-millisecond kernel is many calls (a batch of ~10 ms
# amortises the round trip and synchronisation around it). The arenas' size is a share of the
# GPU's total memory, not of what is free at the moment: the calls per sample (and so the fixed
# cost left in each call) then depend on the GPU, not on what other jobs hold. Timing holds the
# GPU's lock exclusively and frees its arenas before letting it go, so only one job's timing
# arenas exist per GPU; the others' load and checks keep running beside it and are left a
# reserve. Only when less than the budget plus that reserve is free do the arenas shrink, and
# the Result says so.
ARENA_SHARE_OF_TOTAL = 0.3
ARENA_MAX_BYTES = 32 << 30
RESERVE_SHARE_OF_TOTAL = 0.25
# While timing, each slot's tensors are held in the candidate's arena and in the reference's;
# the judge keeps a third copy of a batch's fresh inputs for its check only when the task's
# inputs cannot be generated again from their seed (``inputs_regenerable``).
COPIES_PER_SLOT = 3
COPIES_PER_SLOT_REGENERATED = 2


@dataclass(frozen=True)
class SlotPlan:
    slots: int
    memory_limited: bool
    note: str | None


def plan_slots(
    slot_bytes: int,
    free_bytes: int,
    max_batch: int,
    total_bytes: int,
    copies_per_slot: int = COPIES_PER_SLOT,
) -> SlotPlan:
    """How many input sets the arenas hold while timing: up to ``max_batch``, within a share of
    the device's total memory, less when other jobs leave too little free. At KernelBench's
    largest sizes one call's tensors take gigabytes, so there is room for one set: every sample
    is then one call, still on fresh inputs, and the Result says so."""
    budget = min(int(total_bytes * ARENA_SHARE_OF_TOTAL), ARENA_MAX_BYTES)
    room = free_bytes - int(total_bytes * RESERVE_SHARE_OF_TOTAL)
    pressed = room < budget
    if pressed:
        budget = max(room, free_bytes // 4)
    fit = budget // max(copies_per_slot * slot_bytes, 1)
    slots = int(max(1, min(max_batch, fit)))
    if fit >= max_batch:
        return SlotPlan(slots, False, None)
    why = (
        f"other jobs left {free_bytes / 2**30:.1f} GiB free"
        if pressed
        else f"the timing arenas' share of the GPU's {total_bytes / 2**30:.1f} GiB"
    )
    note = (
        f"one call's tensors take {slot_bytes / 2**20:.1f} MiB: {slots} input set(s) fit in "
        f"{budget / 2**30:.1f} GiB ({why}), so a sample is at most {slots} call(s), each on "
        f"fresh inputs"
    )
    return SlotPlan(slots, True, note)


# A sample is never taken below this share of its raw time per call, whatever is subtracted:
# the subtracted costs are estimates, and a tiny remainder would make a ratio explode.
MIN_SHARE_AFTER_SUBTRACTION = 0.05


def calls_per_sample(
    estimates: dict[str, float], batch_ms: float, max_slots: int
) -> dict[str, int]:
    """Each series' calls per sample: enough that a sample lasts ``batch_ms`` (so the fixed
    cost of a sample weighs the same on both sides), within the slots the arenas hold."""
    return {
        name: int(min(max_slots, max(1, math.ceil(batch_ms / max(ms, 1e-6)))))
        for name, ms in estimates.items()
    }


def per_call_ms(total_ms: float, calls: int, overhead_ms: float, copy_ms: float) -> float:
    """One sample's time per call, without the sample's fixed cost and the output copy."""
    raw = total_ms / max(calls, 1)
    net = (total_ms - overhead_ms) / max(calls, 1) - copy_ms
    return max(net, raw * MIN_SHARE_AFTER_SUBTRACTION)
