"""Cross-checks: every exact implementation must give the same answers on the same scene.

A benchmark that compares fast wrong answers with slow right ones is worthless, so the runner
compares the pair sets (of ``pairs``, ``oneshot`` and ``frame``), box-query hits and closest ray
hits of all implementations and reports every disagreement as a line containing ``MISMATCH``
(printed loudly and kept in the report).
"""
from __future__ import annotations

import numpy as np

from .adapters import Adapter
from .workload import Workload

#: Relative tolerance on ray distances between float32 (Open3D) and float64 answers.
FLOAT32_T_TOLERANCE = 1e-4
#: Below this share of agreeing rays an inexact peer is reported as a mismatch.
INEXACT_RAY_AGREEMENT = 0.99


def _agreement(op: str, answers: dict[str, dict], keys: tuple[str, ...],
               count_only: frozenset[str] = frozenset()) -> list[str]:
    """``count_only`` names implementations whose answers can be compared by count only (their
    object identities are ambiguous in this scene; see ``Adapter.ids_ambiguous``)."""
    if len(answers) < 2:
        return []
    distinct = {tuple(a.get(k) for k in keys) for name, a in answers.items() if name not in count_only}
    distinct_counts = {a.get(keys[0]) for a in answers.values()}
    counts = ", ".join(f"{name}={a.get(keys[0])}" + (" (count only)" if name in count_only else "")
                       for name, a in answers.items())
    if len(distinct) <= 1 and len(distinct_counts) == 1:
        return [f"{op}: {len(answers)} implementations agree ({counts})"]
    return [f"**MISMATCH** {op}: answers differ ({counts}; checksums "
            f"{', '.join(str(a.get('checksum')) for a in answers.values())})"]


def check_scene(scene: dict, w: Workload, adapters: list[Adapter], sides: dict[str, dict]) -> list[str]:
    """One line per checked operation of this scene; ``MISMATCH`` lines name the culprits."""
    prefix = f"{w.layout} N={w.n:,}: "
    cells = scene["cells"]
    exact = [a.label for a in adapters if a.exact and a.label in cells]
    ambiguous = frozenset(a.label for a in adapters if getattr(a, "ids_ambiguous", False))
    lines: list[str] = []

    def ok_checks(op):
        return {name: cells[name][op].check for name in exact
                if op in cells[name] and cells[name][op].status == "ok" and cells[name][op].check
                and "error" not in cells[name][op].check}

    lines += _agreement("pairs", ok_checks("pairs"), ("count", "checksum"), ambiguous)
    lines += _agreement("build + pairs", ok_checks("oneshot"), ("count", "checksum"), ambiguous)
    lines += _agreement("box queries (total hits)", ok_checks("box"), ("hits", "checksum"), ambiguous)
    frames = ok_checks("frame")
    for parity in (0, 1):
        same_state = {n: c for n, c in frames.items() if c.get("moves", 0) % 2 == parity}
        lines += _agreement("frame pairs", same_state, ("count", "checksum"), ambiguous)
    lines += _check_rays(sides, exact, [a.label for a in adapters if not a.exact])
    return [prefix + line for line in lines]


def _check_rays(sides: dict[str, dict], exact: list[str], inexact: list[str]) -> list[str]:
    with_rays = [name for name in exact if "rays" in sides.get(name, {})]
    if not with_rays:
        return []
    reference = with_rays[0]
    ref_ids, ref_t = sides[reference]["rays"]
    lines = []
    for name in with_rays[1:]:
        ids, t = sides[name]["rays"]
        same = (ids == ref_ids) & ((t == ref_t) | np.isclose(t, ref_t, rtol=1e-9, atol=1e-12))
        if same.all():
            lines.append(f"closest rays: {name} equals {reference} on all {len(ids):,} rays")
        else:
            lines.append(f"**MISMATCH** closest rays: {name} differs from {reference} on "
                         f"{int((~same).sum()):,} of {len(ids):,} rays")
    # A ray starting inside a box hits it at t = 0 for us; Embree reports the exit face instead.
    outside = ref_t > 0
    for name in inexact:
        if "rays" not in sides.get(name, {}):
            continue
        ids, t = sides[name]["rays"]
        both_miss = (ids == -1) & (ref_ids == -1)
        with np.errstate(invalid="ignore"):  # inf - inf where both miss
            close = np.abs(t - ref_t) <= FLOAT32_T_TOLERANCE * np.maximum(1.0, np.abs(ref_t))
        agree = (both_miss | (ids == ref_ids) | close)[outside]
        share = float(agree.mean()) if len(agree) else 1.0
        tag = "" if share >= INEXACT_RAY_AGREEMENT else "**MISMATCH** "
        lines.append(f"{tag}closest rays: {name} (float32) agrees with {reference} on "
                     f"{share:.2%} of the {int(outside.sum()):,} rays starting outside every box")
    return lines
