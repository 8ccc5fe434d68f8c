"""gpusim's fuzz campaign: seeded cases in forked children (tests/fuzz_lib.py), printing the counts.

    python scripts/fuzz_campaign.py --cases 100000 --seed 1 [--jobs 2] [--mix 0.9,0.05,0.05] [--start 64000]

Prints progress, then one line of totals (cases, ok, error, raw, internal, leak, crash, hang) and the first
findings with their case index (``make_case(seed, index)`` rebuilds a case). Exit status 1 on any finding.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import fuzz_lib as F  # noqa: E402


def _slice(job):
    seed, first, last, mix, batch = job
    total = collections.Counter()
    failures = []
    for start in range(first, last, batch):
        cases = [F.make_case(seed, i, mix) for i in range(start, min(start + batch, last))]
        counts, found = F.run_batch(cases, watchdog_s=60)
        total.update(counts)
        failures.extend(found)
    return total, failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="first case index (to continue a campaign)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--mix", default="0.9,0.05,0.05", help="shares of frontend,launch,api cases")
    args = parser.parse_args(argv)
    mix = tuple(float(x) for x in args.mix.split(","))
    chunk = 1_000
    jobs = [(args.seed, first, min(first + chunk, args.cases), mix, args.batch)
            for first in range(args.start, args.cases, chunk)]
    total: collections.Counter = collections.Counter()
    failures: list = []
    kinds: collections.Counter = collections.Counter(
        F.make_case(args.seed, i, mix)["kind"] for i in range(args.start, args.cases, max(1, args.cases // 2000)))
    started = time.time()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for counts, found in pool.map(_slice, jobs):
            total.update(counts)
            failures.extend(found)
            print(f"  {F.summary(total)}  ({time.time() - started:.0f} s)", flush=True)
    print(f"seed {args.seed}: {F.summary(total)} in {time.time() - started:.0f} s; case kinds (sampled): "
          + ", ".join(f"{k} {v / sum(kinds.values()):.0%}" for k, v in sorted(kinds.items())))
    for f in failures[:20]:
        case = f["case"]
        print(f"FINDING {f['outcome']} {case['kind']} case {case['index']} ({case.get('source')}): "
              f"{f['detail'][:800]}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
