"""kgym.rewards.similarity returns exactly difflib.SequenceMatcher(...).ratio().

10,000 distinct pairs (6,000 random, 4,000 from real sources) are each compared for exact float
equality twice, with autojunk off (Kernel Coder's setting) and on (difflib's default, whose "popular element" rule starts at len(b) >= 200):
random strings over small and large alphabets (non-ASCII and astral code points included), and
pairs of real Triton/PyTorch sources from the task suite (or kgym's own sources) with mutations.
"""

from __future__ import annotations

import difflib
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgym import rewards

ROOT = Path(__file__).resolve().parents[1]

SYNTHETIC_TRITON = """
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x + y, mask=mask)


class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        out = torch.empty_like(x)
        n = out.numel()
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK_SIZE"]),)
        add_kernel[grid](x, y, out, n, BLOCK_SIZE=1024)
        return out
"""


def corpus() -> list[str]:
    files = sorted((ROOT / "tasks").rglob("*.py")) + sorted(
        (ROOT / "python" / "kgym").rglob("*.py")
    )
    texts = [p.read_text(encoding="utf-8") for p in files]
    texts = [t for t in texts if len(t) >= 200]
    return texts + [SYNTHETIC_TRITON, SYNTHETIC_TRITON.replace("add", "mul").replace("+", "*")]


def mutate(text: str, rng: random.Random, edits: int) -> str:
    chars = list(text)
    lines_pool = text.splitlines(keepends=True) or ["\n"]
    for _ in range(edits):
        op = rng.randrange(6)
        pos = rng.randrange(len(chars) + 1)
        if op == 0 and chars:  # delete a span
            del chars[pos : pos + rng.randint(1, 20)]
        elif op == 1:  # insert a snippet from elsewhere
            chars[pos:pos] = list(rng.choice(lines_pool))
        elif op == 2 and chars:  # replace a character
            chars[min(pos, len(chars) - 1)] = rng.choice("abcxyz_0123456789 ()[]:+-*/\n")
        elif op == 3:  # rename an identifier-ish token
            s = "".join(chars).replace(rng.choice(["x", "ptr", "mask", "BLOCK", "self"]), "tmp", 3)
            chars = list(s)
        elif op == 4:  # insert non-ASCII
            chars[pos:pos] = list(rng.choice(["é", "λ", "中文", "\U0001f680", "\u00a0"]))
        else:  # duplicate a line
            chars[pos:pos] = list(rng.choice(lines_pool))
    return "".join(chars)


def check(pairs: list[tuple[str, str]]) -> int:
    n = 0
    for a, b in pairs:
        for autojunk in (False, True):
            want = difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio()
            got = rewards.similarity(a, b, autojunk=autojunk)
            assert got == want, (a[:80], b[:80], autojunk, got, want)
            n += 1
    return n


def test_random_strings_exact():
    rng = random.Random(20240601)
    alphabets = ["ab", "abc \n", "abcdefgh(){}[]:=+- \n\t", "aé中\U0001f600 \n", "xyz"]
    pairs: dict[tuple[str, str], None] = {}  # distinct pairs, in generation order
    i = 0
    while len(pairs) < 3000:
        alpha = alphabets[i % len(alphabets)]
        hi = 420 if i % 10 == 0 else 120
        a = "".join(rng.choice(alpha) for _ in range(rng.randint(0, hi)))
        if i % 3 == 0:  # b derived from a: long common blocks
            b = mutate(a, rng, rng.randint(0, 6))
        else:
            b = "".join(rng.choice(alpha) for _ in range(rng.randint(0, hi)))
        pairs[(a, b)] = None
        i += 1
    assert check(list(pairs)) == 6000


def test_real_sources_with_mutations_exact():
    rng = random.Random(7)
    texts = corpus()
    assert len(texts) >= 3
    pairs: dict[tuple[str, str], None] = {}
    small = [t for t in texts if len(t) <= 3000]
    i = 0
    # Distinct pairs, however the corpus (the repository's own sources) changes over time.
    while len(pairs) < 2000:
        src = rng.choice(texts)
        if i % 100 == 0:  # whole files, including pairs of different files
            a = rng.choice(small)
            b = mutate(a, rng, rng.randint(1, 8)) if i % 200 else rng.choice(small)
        else:  # excerpts of 60-600 characters, mutated
            start = rng.randrange(max(1, len(src) - 60))
            a = src[start : start + rng.randint(60, 600)]
            b = mutate(a, rng, rng.randint(0, 10))
            if rng.random() < 0.5:
                a, b = b, a
        pairs[(a, b)] = None
        i += 1
    assert check(list(pairs)) == 4000


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.text(max_size=60), st.booleans())
def test_arbitrary_unicode_exact(a, b, autojunk):
    want = difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio()
    assert rewards.similarity(a, b, autojunk=autojunk) == want


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet="ab \n", min_size=190, max_size=320), st.text(alphabet="ab \n", max_size=320)
)
def test_autojunk_threshold_exact(b, a):
    """Around len(b) = 200, where difflib's popular-element rule switches on."""
    for autojunk in (False, True):
        want = difflib.SequenceMatcher(None, a, b, autojunk=autojunk).ratio()
        assert rewards.similarity(a, b, autojunk=autojunk) == want
        assert rewards.matching_blocks(a, b, autojunk=autojunk) == [
            tuple(m)
            for m in difflib.SequenceMatcher(None, a, b, autojunk=autojunk).get_matching_blocks()
        ]


def test_lone_surrogates_and_empty():
    # Python strs may hold lone surrogates; the binding reads code points, not UTF-8.
    a, b = "x\ud800y", "xy\udfff"
    assert rewards.similarity(a, b) == difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()
    assert rewards.similarity("", "") == 1.0
    assert rewards.similarity("", "abc") == 0.0


@pytest.mark.parametrize("autojunk", [False, True])
def test_many_against_one_reference(autojunk):
    rng = random.Random(3)
    ref = corpus()[0]
    cands = [mutate(ref, rng, k) for k in range(0, 40, 4)]
    got = rewards.similarity_many(cands, ref, autojunk=autojunk)
    want = [difflib.SequenceMatcher(None, c, ref, autojunk=autojunk).ratio() for c in cands]
    assert list(got) == want
