#!/usr/bin/env python3
"""The serving loop's housekeeping as Ridge's engine.row_move / row_shift, from its timing alone
(housekeeping.json, validate/e2e/serve_housekeeping.py on the H200). The rule, written before the
measurement: each timing is brought to the GPU spec's host speed (host_probe_us = 197 us) by its
own CPU probe p with the engine's host share (host_probe_share = 0.85, the share Ridge applies to
every host cost): t / (1 - 0.85 + 0.85 x p / 197); each point's figure is the median of its 40;
row_move is the median over the move points (spans 64-512 columns), row_shift the median over the
shift points (2-16 rows, widths 128-512). Writes model.json (what serve_compare.py --housekeeping
reads) and prints each point.

  python3 validate/data/h200/serve_housekeeping/derive.py
"""
import json
import os
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
SHARE, REF_US = 0.85, 197.0


def main():
    doc = json.load(open(os.path.join(HERE, "housekeeping.json")))
    per = {"move": [], "shift": []}
    for p in doc["points"]:
        norm = [t / (1 - SHARE + SHARE * q / REF_US) for t, q in zip(p["times_s"], p["probes_us"])]
        m = statistics.median(norm)
        per[p["kind"]].append(m)
        what = ("span %d" % p["span"]) if p["kind"] == "move" else \
            ("n %d width %d" % (p["n"], p["width"]))
        print("%s %s: %.3f ms raw, %.3f ms at 197 us (probe median %.0f us)"
              % (p["kind"], what, p["median_s"] * 1e3, m * 1e3, p["probe_median_us"]))
    out = {"generated_by": "validate/data/h200/serve_housekeeping/derive.py",
           "row_move_ms": round(statistics.median(per["move"]) * 1e3, 4),
           "row_shift_ms": round(statistics.median(per["shift"]) * 1e3, 4),
           "source": "timed alone on the H200, validate/data/h200/serve_housekeeping"}
    with open(os.path.join(HERE, "model.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("row_move %.4f ms, row_shift %.4f ms" % (out["row_move_ms"], out["row_shift_ms"]))


if __name__ == "__main__":
    main()
