"""Instructions per Gatekeeper check, counted by callgrind: a cost measure a shared machine's load
does not move (wall-clock p50s on 2 cores shared with other work moved 7.5 → 30 ms in one hour).

Runs ``K`` checks of the gatekeeper bench's scenarios (``veridiag.bench.gatekeeper``: 20 claims × 2
bindings over 10 invocations of 64 KB, seeds taken in turn) after the same warm-up the bench does
(each invocation's index built), with callgrind's instrumentation switched on only for the K checks,
the cyclic GC off during them (its collections fall where allocation counts cross thresholds) and
no interpreter teardown. Prints the instructions per check.

Usage, from a worktree (its own ``src`` first)::

    PYTHONPATH=$PWD/src .venv/bin/python scripts/gatekeeper_icount.py --checks 20
    PYTHONPATH=$PWD/src .venv/bin/python scripts/gatekeeper_icount.py --off claim.entity_grounding
    PYTHONPATH=$PWD/src .venv/bin/python scripts/gatekeeper_icount.py --free lex --free locate

``--off RULE``: the rule disabled (its marginal cost, rules sharing the per-check memos aside).
``--free lex|locate``: what-if — the lexer's or the matcher's answers cached across checks (filled
by the warm-up), so the difference to a plain run is what that work costs per check.

Noise, measured on 2026-12-06: most repeated runs of 20 checks agree to 0.1 %, but some land up to
~2 % higher (address layout, probably; 992–1012 M for one tree): compare the least of 3 runs each.
"""

from __future__ import annotations

import argparse
import functools
import gc
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

_IN_VALGRIND = "VERIDIAG_ICOUNT_CHILD"


def _cached(owner: Any, name: str, key: Callable[..., object]) -> None:
    """``owner.name`` answering from a cache kept across checks (what-if: that work free)."""
    original = getattr(owner, name)
    cache: dict[object, object] = {}

    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> object:
        found = key(*args, **kwargs)
        if found not in cache:
            cache[found] = original(*args, **kwargs)
        return cache[found]

    setattr(owner, name, wrapper)


def _make_free(what: str) -> None:
    if what == "lex":
        from veridiag.text import entities

        _cached(entities.TextFacts, "_lex", lambda self: (self.text, self._services, self._ignored))
    elif what == "locate":
        from veridiag.gatekeeper import matching

        _cached(matching.AnchoredMatcher, "locate", lambda _self, excerpt, source, *_a, **_k: (excerpt, id(source)))
    else:
        raise SystemExit(f"--free takes lex or locate, not {what!r}")


def _instrumentation(on: bool) -> None:
    """Ask callgrind to start (or stop) counting this process; wait until it has."""
    flag = "on" if on else "off"
    control = subprocess.Popen(
        ["callgrind_control", "-i", flag, str(os.getpid())], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    while control.poll() is None:
        time.sleep(0.005)


def _child(checks: int, off: list[str], free: list[str]) -> None:
    from veridiag.bench.gatekeeper import SEEDS, build_scenario
    from veridiag.gatekeeper import AnchoredMatcher, Gatekeeper, load_ruleset

    for what in free:
        _make_free(what)
    scenarios = [build_scenario(seed=seed) for seed in SEEDS]
    overrides = {"rules": [{"id": rule_id, "enabled": False} for rule_id in off]}
    gatekeeper = Gatekeeper(load_ruleset().with_overrides(overrides, "icount")) if off else Gatekeeper()
    for scenario in scenarios:  # the bench's warm-up: each invocation's index built
        for _ in range(2):
            gatekeeper.matcher = AnchoredMatcher()
            scenario.check(gatekeeper)
    gc.collect()
    gc.disable()
    _instrumentation(True)
    for index in range(checks):
        gatekeeper.matcher = AnchoredMatcher()  # as the bench: no matcher state between checks
        scenarios[index % len(scenarios)].check(gatekeeper)
    sys.stdout.flush()
    os._exit(0)  # no teardown in the count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=20)
    parser.add_argument("--off", action="append", default=[], help="a rule id to disable (repeatable)")
    parser.add_argument("--free", action="append", default=[], help="lex or locate: what-if that work is free")
    args = parser.parse_args()
    if os.environ.get(_IN_VALGRIND):
        _child(args.checks, args.off, args.free)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        command += [sys.executable, *sys.argv]
        environment = {**os.environ, _IN_VALGRIND: "1", "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
        collected = [line for line in done.stderr.splitlines() if "Collected :" in line]
        if done.returncode != 0 or not collected:
            raise SystemExit(done.stderr[-2000:])
        total = int(collected[-1].split(":")[-1])
    print(f"{total / args.checks / 1e6:.2f} M instructions per check ({args.checks} checks, {total} in all)")


if __name__ == "__main__":
    main()
