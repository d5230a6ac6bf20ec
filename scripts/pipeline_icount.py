"""Instructions per pipeline session, counted by callgrind: the deterministic cost of one diagnosis
session (what ``veridiag bench --only pipeline`` times) as a measure a shared machine's load does not
move.

Runs the pipeline bench's session (``veridiag.bench.pipeline``: 20 claims × 2 bindings over 10
invocations of 8 KB, scripted roles, persisted to SQLite) ``--few`` times and ``--many`` times, each
in its own process under callgrind counting the whole process, and prints
``(I_many − I_few) / (many − few)``: start-up, imports and the first session's lazy work are in both
counts and cancel. Sessions run as the bench runs them (three warm-up sessions before the counted
ones are part of both counts too), no interpreter teardown.

The cyclic GC is off during the sessions unless ``--gc``: a session makes about 3 young
collections, but a full (oldest-generation) collection of the ~170,000 objects start-up leaves
falls about every 33 sessions, where allocation counts cross thresholds. With ``--gc`` the count
says whether one fell inside the window of ``many − few`` sessions: on 2026-12-07 main's fell in its
18th session (the last of 3 + 15) and 04bec5a's not before its 19th, which alone made main look
~7 M instructions a session dearer.

Measured 2026-12-07 (5 and 15 sessions, one BLAS thread), 04bec5a → main 087972f:
GC off 119.58 → 121.87 M a session (+2.3 M, +1.9 %); ``--gc`` 120.61 → 129.94 M. Of the rise,
f718d42 (the text checks of stated_content, entities, derived, tallies, bounds, zones, when) holds
~0 (GC off 119.40 → 120.23 M, 1.4 M of it numpy's BLAS threads spinning before they were pinned
to one); the rest is the redaction of the session's executor JSON (10.8 KB, part Chinese): 17.4 →
19.8 M instructions for its one uncached pass (the prefilter's 64 literals, was 37: +0.8 M; the key
anchors of 30 more languages, 68, was 42: +0.6 M; the split-key tail with combining marks for a
non-ASCII text: +0.8 M; the entry and wrapped-JWT rules: +0.2 M).

Usage, from a worktree (its own ``src`` first)::

    PYTHONPATH=$PWD/src .venv/bin/python scripts/pipeline_icount.py
    PYTHONPATH=$PWD/src .venv/bin/python scripts/pipeline_icount.py --few 5 --many 15 --annotate /tmp/x

``--annotate DIR``: keep both callgrind outputs in DIR (``few.out``, ``many.out``) for
``callgrind_annotate --inclusive=yes``. On CPython 3.11 they name C functions only (the regex engine,
``str.find``, ``in``, the GC), no Python ones: the per-session difference of two trees' ``few`` and
``many`` self costs says what kind of work grew, a profile or a K-times segment count says where.

Comparing two worktrees: their paths must be of the same length (paths are in strings the code
hashes and searches), e.g. /work/wt/perf44 against /work/wt/base44. The store lives in a directory
of fixed name length, PYTHONHASHSEED is 0 and OpenBLAS has one thread.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

_IN_VALGRIND = "VERIDIAG_ICOUNT_CHILD"
_WARM_UP = 3  # as the bench


def _child(sessions: int, store_dir: str, collect: bool) -> None:
    import gc
    from pathlib import Path

    from veridiag.agents import scripted_roles
    from veridiag.bench.pipeline import Recorder, _scenario, _shift_ids
    from veridiag.pipeline import DiagnosisPipeline, PipelineOptions
    from veridiag.store import SessionStore

    outputs, executor, verifier, composer = _scenario()
    store = SessionStore(f"sqlite:///{Path(store_dir) / 'store.db'}")
    setup = Recorder(store, outputs)  # as the bench: the tools' invocations persisted

    verdicts: set[str | None] = set()
    if not collect:
        gc.collect()
        gc.disable()
    for _ in range(_WARM_UP + sessions):
        cited = _shift_ids(executor, setup.next_id - 1)
        roles = scripted_roles(executor=cited, verifier=verifier, composer=composer)
        pipeline = DiagnosisPipeline(store, roles, options=PipelineOptions(max_rounds=1))
        verdicts.add(pipeline.run("为什么下单接口报错？", on_session=setup).verdict)
    store.close()
    print("verdicts:", ",".join(sorted(v or "none" for v in verdicts)))
    sys.stdout.flush()
    os._exit(0)  # no teardown in the count


def _count(sessions: int, keep: str | None, name: str, collect: bool) -> tuple[int, str]:
    """Instructions of a whole process running ``sessions`` counted sessions, and its verdicts."""
    with tempfile.TemporaryDirectory(prefix="vd-icount-") as tmp:
        out = os.path.join(keep or tmp, f"{name}.out")
        store_dir = os.path.join(tmp, "store")  # a name of fixed length
        os.mkdir(store_dir)
        command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        command += [sys.executable, sys.argv[0], "--sessions", str(sessions), "--store-dir", store_dir]
        command += ["--gc"] if collect else []
        # one BLAS thread: numpy's idle OpenBLAS workers otherwise count 0.2–1.4 M a session of spinning
        environment = {**os.environ, _IN_VALGRIND: "1", "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1"}
        done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)
        collected = [line for line in done.stderr.splitlines() if "Collected :" in line]
        if done.returncode != 0 or not collected:
            raise SystemExit(done.stderr[-2000:])
        verdicts = [line for line in done.stdout.splitlines() if line.startswith("verdicts:")]
        return int(collected[-1].split(":")[-1]), (verdicts[-1] if verdicts else "verdicts: ?")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--few", type=int, default=5)
    parser.add_argument("--many", type=int, default=15)
    parser.add_argument("--annotate", help="a directory to keep the two callgrind outputs in")
    parser.add_argument("--gc", action="store_true", help="the cyclic GC on during the sessions, as the bench runs")
    parser.add_argument("--sessions", type=int, help=argparse.SUPPRESS)  # the child's
    parser.add_argument("--store-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if os.environ.get(_IN_VALGRIND):
        _child(args.sessions, args.store_dir, args.gc)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed")
    if args.many <= args.few:
        raise SystemExit("--many must be more than --few")
    if args.annotate:
        os.makedirs(args.annotate, exist_ok=True)
    few, verdicts = _count(args.few, args.annotate, "few", args.gc)
    many, _ = _count(args.many, args.annotate, "many", args.gc)
    per_session = (many - few) / (args.many - args.few)
    print(
        f"{per_session / 1e6:.2f} M instructions per session "
        f"({args.few} sessions {few}, {args.many} sessions {many}; GC {'on' if args.gc else 'off'}; {verdicts})"
    )


if __name__ == "__main__":
    main()
