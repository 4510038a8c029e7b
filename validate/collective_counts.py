#!/usr/bin/env python3
"""Counts of `ridge compare ... --json` rows within the issue's budgets (docs/collectives.md):
rows of 1 MiB and more within 10%, rows up to 64 KiB within 20%, in all and by what ran
(Ridge's algorithm/protocol; point-to-point apart).
   ridge compare validate/data/h200x2/collectives.json --system dgx-h200 --no-nvls \\
       --host-issue-us 7.976 --json | python3 validate/collective_counts.py"""
import json
import sys

MIB = 1 << 20


def count(rows, budget):
    return f"{sum(abs(r['error']) <= budget for r in rows)} / {len(rows)}"


def main():
    rows = json.load(sys.stdin)["rows"]
    big = [r for r in rows if r["bytes"] >= MIB]
    small = [r for r in rows if r["bytes"] <= 64 * 1024]
    print(f"rows >= 1 MiB within 10%: {count(big, 0.10)}")
    print(f"rows <= 64 KiB within 20%: {count(small, 0.20)}")
    for name, sel, budget in [(">= 1 MiB within 10%", big, 0.10), ("<= 64 KiB within 20%", small, 0.20)]:
        groups = {}
        for r in sel:
            p2p = r["series"].split("/")[0] in ("sendrecv", "alltoall")
            groups.setdefault("point-to-point" if p2p else r["choice"], []).append(r)
        print(f"by what ran, {name}: " +
              ", ".join(f"{k} {count(v, budget)}" for k, v in sorted(groups.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
