"""Error table of Ridge's predictions against a validate/torch measurement set.

  python3 validate/torch/errors.py MEASURED.json [--predicted PRED.json] [--ridge PATH]
                                   [--gpu h200] [--json OUT.json] [--markdown]

Predictions come from PRED.json (a `ridge predict --json` output, e.g. the pre-registered
validate/prereg/<set>/predictions.json) or, without it, from running `ridge predict MEASURED.json
--gpu GPU --json` now. Errors are signed (predicted - measured) / measured of the `kernel` timing
(sum of the op's kernel durations per call). Prints per record, then per op class (the op kind)
and per (op, pass): n, median |error|, p90 |error|, median signed error; and the targets of
issue 18 point 6 (kernels: median <= 5%, p90 <= 15%; every op class: median <= 10%).
"""
import argparse
import json
import subprocess
import sys


def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    pos = p / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def load_predictions(args):
    if args.predicted:
        with open(args.predicted) as f:
            doc = json.load(f)
    else:
        out = subprocess.run([args.ridge, "predict", args.measured, "--gpu", args.gpu, "--json"],
                             capture_output=True, text=True, check=True).stdout
        doc = json.loads(out)
    return {r["id"]: r["timing"]["median_us"] for r in doc["records"]}


def table(measured, pred):
    rows = []
    for r in measured["records"]:
        if r["id"] not in pred:
            continue
        m = r["timing"]["median_us"]
        p = pred[r["id"]]
        rows.append({"id": r["id"], "op": r["op"], "pass": r["params"].get("pass", "fwd"),
                     "measured_us": m, "predicted_us": p, "error": (p - m) / m})
    return rows


def summary(rows, key):
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r["error"])
    out = []
    for k in sorted(groups):
        e = groups[k]
        a = [abs(x) for x in e]
        out.append({"class": k, "n": len(e), "median_abs": pct(a, 50), "p90_abs": pct(a, 90),
                    "median_signed": pct(e, 50)})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("measured")
    ap.add_argument("--predicted")
    ap.add_argument("--ridge", default="./ridge")
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--json")
    ap.add_argument("--markdown", action="store_true", help="print only the markdown tables")
    args = ap.parse_args()
    with open(args.measured) as f:
        measured = json.load(f)
    pred = load_predictions(args)
    rows = table(measured, pred)
    missing = [r["id"] for r in measured["records"] if r["id"] not in pred]
    a = [abs(r["error"]) for r in rows]
    overall = {"n": len(rows), "median_abs": pct(a, 50), "p90_abs": pct(a, 90)}
    by_op = summary(rows, lambda r: r["op"])
    by_pass = summary(rows, lambda r: f"{r['op']} {r['pass']}")
    targets = {"kernels_median_le_5pct": overall["median_abs"] <= 0.05,
               "kernels_p90_le_15pct": overall["p90_abs"] <= 0.15,
               "every_class_median_le_10pct": all(c["median_abs"] <= 0.10 for c in by_op)}
    if not args.markdown:
        for r in rows:
            print(f"{r['id']:62s} meas {r['measured_us']:9.2f} pred {r['predicted_us']:9.2f} "
                  f"{100 * r['error']:+7.1f}%")
        if missing:
            print(f"not predicted: {len(missing)}: {', '.join(missing)}")
        print()
    print(f"All records: n = {overall['n']}, median |error| {100 * overall['median_abs']:.1f}%, "
          f"p90 |error| {100 * overall['p90_abs']:.1f}%\n")
    for title, s in (("op class", by_op), ("op class and pass", by_pass)):
        print(f"| {title} | n | median abs error | p90 abs error | median signed error |")
        print("|---|---:|---:|---:|---:|")
        for c in s:
            print(f"| {c['class']} | {c['n']} | {100 * c['median_abs']:.1f}% | "
                  f"{100 * c['p90_abs']:.1f}% | {100 * c['median_signed']:+.1f}% |")
        print()
    print("Targets (issue 18 point 6): " + ", ".join(
        f"{k} {'met' if v else 'MISSED'}" for k, v in targets.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"measured": args.measured, "predicted": args.predicted or "ridge predict (now)",
                       "overall": overall, "by_op": by_op, "by_op_pass": by_pass,
                       "targets": targets, "records": rows}, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
