"""What the pre-registered own-program sets (validate/prereg/own-set*/) share: the case helpers
and the committed-records check of their make_cases.py, and the scoring of their errors.py.

Each set's scripts keep what is the set's own, fixed before it was measured: its cases, which
sets before it a case must not repeat, its op classes and which of them are not scored.
"""
import json
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "validate", "data", "h200")
L2_BYTES = 62914560  # validate/data/h200/device.json device.l2_bytes (H200: 60 MiB)
MiB = 1 << 20
GiB = 1 << 30

# Controls (not scored, not new): committed records measured again in the same device call, to
# show whether the lent GPU runs as the one the model was fitted on (validate/data/h200).
CONTROLS = ["gemm/bf16/m4096_n4096_k4096", "gemm/fp8_e4m3/m16_n8192_k8192",
            "gemm/tf32/m2048_n2048_k2048", "membw/read/1_GiB", "softmax/bf16/r4096_c4096",
            "layernorm/fp32/r8192_c4096", "elementwise/add/bf16/n16777216/s1",
            "elementwise/copy/fp32/n16777216/s8", "copy/h2d/pinned/64_MiB", "copy/d2d/64_MiB",
            "launch/graph/100"]


# ---- cases (make_cases.py) ----------------------------------------------------------------------

def rotation_sets(working_set, max_sets):
    """validate/bench_common.cu rotation_sets: enough buffer sets to cover 4x L2."""
    want = (4 * L2_BYTES + working_set - 1) // working_set
    return max(1, min(want, max_sets))


def human(b):
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    while u < 4 and b >= 1024 and b % 1024 == 0:
        b //= 1024
        u += 1
    return f"{b}_{units[u]}"


def rec(id_, op, params, method="kernel"):
    return {"id": id_, "op": op, "params": params, "timing": {"method": method}}


def gemm_rec(dtype, m, n, k):
    # Only the model's parameters (ridge describe ops); ridge-bench's record adds group
    # ("cases"), out_dtype (bf16 for fp8, else the input's) and fast_accum (false).
    p = {"m": m, "n": n, "k": k, "dtype": dtype, "batch": 1, "trans_a": False, "trans_b": True}
    return rec(f"gemm/{dtype}/m{m}_n{n}_k{k}", "gemm", p)


def elementwise_rec(op, dtype, n, stride):
    return rec(f"elementwise/{op}/{dtype}/n{n}/s{stride}", "elementwise",
               {"op": op, "n": n, "dtype": dtype, "stride": stride})


def strided_rec(op, dtype, n, stride):
    """An elementwise case with the buffer sets ridge-bench will rotate over beside its params
    (validate/suite_elementwise.cu run_ew_case: rotation_sets(inputs x n x stride x element +
    n x element, 128)), as the measured record carries them and ridge predict reads them."""
    r = elementwise_rec(op, dtype, n, stride)
    e = {"fp32": 4, "bf16": 2, "fp16": 2}[dtype]
    inputs = 2 if op in ("add", "mul") else 1
    r["buffers"] = rotation_sets(inputs * n * stride * e + n * e, 128)
    return r


def row_rec(op, rows, cols, dtype):
    """softmax, layernorm or rmsnorm over rows x cols."""
    return rec(f"{op}/{dtype}/r{rows}_c{cols}", op, {"rows": rows, "cols": cols, "dtype": dtype})


def membw_rec(kind, b):
    # Working sets under 4 x L2 rotate over buffers so that each pass reads from HBM.
    ws = 2 * b if kind == "copy" else b
    sets = rotation_sets(ws, 512) if ws < 4 * L2_BYTES else 1
    id_ = f"membw/{kind}/{human(b)}" + (f"/rotate{sets}" if sets > 1 else "")
    return rec(id_, "membw", {"kind": kind, "bytes": b, "buffers": sets})


def copy_rec(direction, memory, b):
    """d2d copies are timed as kernels; host copies per call (cudaMemcpy's own overhead in)."""
    if direction == "d2d":
        return rec(f"copy/d2d/{human(b)}", "copy",
                   {"bytes": b, "direction": "d2d", "memory": memory})
    return rec(f"copy/{direction}/{memory}/{human(b)}", "copy",
               {"bytes": b, "direction": direction, "memory": memory}, "per_call")


def launch_rec(kind, kernels):
    return rec(f"launch/{kind}/{kernels}", "launch", {"kind": kind, "kernels": kernels})


def gemm_cases(shapes, misaligned):
    """GEMM records: shapes {dtype: [(m, n, k), ...]} in order, then misaligned [(dtype, m, n, k)]."""
    out = [gemm_rec(dt, m, n, k) for dt, lst in shapes.items() for m, n, k in lst]
    return out + [gemm_rec(dt, m, n, k) for dt, m, n, k in misaligned]


def elementwise_cases(contiguous, strided):
    """Contiguous [(op, dtype, n)], then strided [(op, dtype, n, stride)] with their buffer sets."""
    out = [elementwise_rec(op, dt, n, 1) for op, dt, n in contiguous]
    return out + [strided_rec(op, dt, n, s) for op, dt, n, s in strided]


def row_cases(sets):
    """sets {op: [(rows, cols, dtype), ...]} in order."""
    return [row_rec(op, r, c, dt) for op, lst in sets.items() for r, c, dt in lst]


def membw_cases(pairs):
    return [membw_rec(kind, b) for kind, b in pairs]


def copy_cases(d2d, pinned, pageable):
    """d2d sizes, then h2d and d2h each over the pinned sizes and the pageable sizes."""
    out = [copy_rec("d2d", "device", b) for b in d2d]
    for d in ["h2d", "d2h"]:
        out += [copy_rec(d, "pinned", b) for b in pinned]
        out += [copy_rec(d, "pageable", b) for b in pageable]
    return out


def launch_cases(dependent, others):
    """Dependent chains of the given lengths, then [(kind, kernels)]."""
    return ([launch_rec("dependent", n) for n in dependent] +
            [launch_rec(kind, n) for kind, n in others])


def key(r):
    """What makes two records the same case: op and the params that shape the work."""
    p = dict(r["params"])
    for k in ("group", "label", "batch", "trans_a", "trans_b", "out_dtype", "math"):
        p.pop(k, None)
    if r["op"] == "membw":
        p.pop("buffers", None)
    if p.get("fast_accum") is False:  # fp8 GEMMs: the default, as ridge-bench runs them here
        p.pop("fast_accum")
    return r["op"], json.dumps(p, sort_keys=True)


def write_cases(set_name, here, cases, earlier_sets=()):
    """Stops (exit 1) if a case repeats a committed H200 record, a case of an earlier set or
    another case's id; else writes here/cases.json and here/controls.json (unless --check-only)."""
    seen = {}
    controls = {}
    for f in ["gemm", "kernels", "memory", "launch", "compute"]:
        with open(os.path.join(DATA, f + ".json")) as fh:
            for r in json.load(fh)["records"]:
                seen.setdefault(key(r), r["id"])
                if r["id"] in CONTROLS and f != "compute":
                    controls[r["id"]] = rec(r["id"], r["op"], r["params"], r["timing"]["method"])
    for earlier in earlier_sets:
        with open(os.path.join(ROOT, "validate", "prereg", earlier, "cases.json")) as fh:
            for r in json.load(fh)["records"]:
                seen.setdefault(key(r), earlier + " " + r["id"])
    clash = [(c["id"], seen[key(c)]) for c in cases if key(c) in seen]
    ids = [c["id"] for c in cases]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if clash or dup:
        for a, b in clash:
            print(f"case {a} is already measured as {b}", file=sys.stderr)
        for a in dup:
            print(f"case id {a} appears twice", file=sys.stderr)
        sys.exit(1)
    tool = f"validate/prereg/{set_name}/make_cases.py"
    doc = {"schema": "ridge.records/1",
           "generated_by": {"tool": tool,
                            "note": "cases without timings: predicted by ridge predict, "
                                    "measured by ridge-bench --cases"},
           "records": cases}
    by_op = {}
    for c in cases:
        by_op[c["op"]] = by_op.get(c["op"], 0) + 1
    print(f"{len(cases)} cases, none in the committed records: {by_op}", file=sys.stderr)
    if "--check-only" in sys.argv:
        return
    with open(os.path.join(here, "cases.json"), "w") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    ctl = {"schema": "ridge.records/1",
           "generated_by": {"tool": tool,
                            "note": "controls: committed records measured again, not scored"},
           "records": [controls[i] for i in CONTROLS]}
    with open(os.path.join(here, "controls.json"), "w") as fh:
        json.dump(ctl, fh, indent=1)
        fh.write("\n")


# ---- scoring (errors.py) ------------------------------------------------------------------------

def pct(v, p):
    """Linear interpolation between closest ranks (models/records.hpp percentile)."""
    v = sorted(v)
    if not v:
        return float("nan")
    pos = p / 100 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def base_op_class(r):
    """ridge calibrate's op classes (models/calibration.cpp op_class): GEMMs by dtype, strided
    elementwise apart, copies by direction, else the op."""
    p = r["params"]
    if r["op"] == "gemm":
        return "gemm " + p["dtype"]
    if r["op"] == "elementwise":
        return "elementwise strided" if p["stride"] > 1 else "elementwise"
    if r["op"] == "copy":
        return "copy " + p["direction"]
    return r["op"]


ELEM_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}


def misaligned(p):
    """k (rows of A and B) or n (rows of C; bf16 for fp8 inputs) not a multiple of 16 bytes."""
    e_in = ELEM_BYTES[p["dtype"]]
    e_out = 2 if p["dtype"].startswith("fp8") else e_in
    return (p["k"] * e_in) % 16 != 0 or (p["n"] * e_out) % 16 != 0


def op_class_misaligned_apart(r):
    """base_op_class, with GEMMs whose rows are not 16-byte aligned as "gemm misaligned" (the
    classes of sets 4, 7 and 8)."""
    if r["op"] == "gemm" and misaligned(r["params"]):
        return "gemm misaligned"
    return base_op_class(r)


def compute(measured_path, predicted_path, op_class, unscored):
    with open(measured_path) as f:
        measured = json.load(f)
    with open(predicted_path) as f:
        pred = {r["id"]: r["timing"]["median_us"] for r in json.load(f)["records"]}
    rows = []
    ids = {r["id"] for r in measured["records"]}
    for r in measured["records"]:
        if r["id"] not in pred:
            continue
        m, p = r["timing"]["median_us"], pred[r["id"]]
        rows.append({"id": r["id"], "class": op_class(r), "measured_us": m, "predicted_us": p,
                     "error": (p - m) / m, "scored": op_class(r) not in unscored,
                     "sm_mhz": r["timing"].get("sm_mhz", -1)})
    missing = sorted(set(pred) - ids)
    scored = [x for x in rows if x["scored"]]
    a = [abs(x["error"]) for x in scored]
    overall = {"n": len(scored), "median_abs": pct(a, 50), "p90_abs": pct(a, 90),
               "max_abs": max(a) if a else float("nan")}
    classes = {}
    for x in rows:
        classes.setdefault(x["class"], []).append(x["error"])
    by_class = []
    for c in sorted(classes):
        e = classes[c]
        ab = [abs(v) for v in e]
        by_class.append({"class": c, "n": len(e), "median_abs": pct(ab, 50), "p90_abs": pct(ab, 90),
                         "median_signed": pct(e, 50), "scored": c not in unscored})
    targets = {"median_le_5pct": overall["median_abs"] <= 0.05,
               "p90_le_15pct": overall["p90_abs"] <= 0.15,
               "every_class_median_le_10pct": all(c["median_abs"] <= 0.10 for c in by_class
                                                  if c["scored"])}
    return {"measured": os.path.relpath(measured_path, ROOT),
            "predicted": os.path.relpath(predicted_path, ROOT), "overall": overall,
            "by_class": by_class, "targets": targets, "missing": missing, "records": rows}


def markdown(res, unscored_label):
    o = res["overall"]
    t = res["targets"]
    out = [f"Scored cases (all but {unscored_label}): {o['n']}; median |error| "
           f"{100 * o['median_abs']:.1f}% (target 5%: {'met' if t['median_le_5pct'] else 'missed'}), "
           f"p90 {100 * o['p90_abs']:.1f}% (target 15%: {'met' if t['p90_le_15pct'] else 'missed'}), "
           f"max {100 * o['max_abs']:.1f}%; every op class's median <= 10%: "
           f"{'met' if t['every_class_median_le_10pct'] else 'missed'}"
           + ("" if t["every_class_median_le_10pct"] else " (" + ", ".join(
               f"{c['class']} {100 * c['median_abs']:.1f}%" for c in res["by_class"]
               if c["scored"] and c["median_abs"] > 0.10) + ")") + ".",
           "",
           "| op class | n | median abs error | p90 abs error | median signed error |",
           "|---|---:|---:|---:|---:|"]
    for c in res["by_class"]:
        name = c["class"] + ("" if c["scored"] else " (not scored)")
        out.append(f"| {name} | {c['n']} | {100 * c['median_abs']:.1f}% | "
                   f"{100 * c['p90_abs']:.1f}% | {100 * c['median_signed']:+.1f}% |")
    if res["missing"]:
        out += ["", f"Predicted but not measured: {', '.join(res['missing'])}."]
    return "\n".join(out) + "\n"


def per_record(res):
    out = ["| case | measured (us) | predicted (us) | error | SM MHz |", "|---|---:|---:|---:|---:|"]
    for x in res["records"]:
        out.append(f"| {x['id']}{'' if x['scored'] else ' (not scored)'} | {x['measured_us']:.2f} | "
                   f"{x['predicted_us']:.2f} | {100 * x['error']:+.1f}% | {x['sm_mhz']} |")
    return "\n".join(out) + "\n"


def launch_conditioned(pred_path, table_path, probe_path, out_path):
    """Writes to out_path the predictions of pred_path with every launch case replaced by the
    pre-registered launch table's prediction at the host's measured launch cost (launch_table.py
    says how): h is where the table's probe prediction equals the measured probe (linear between
    the table's columns; the probe, the mean of its runs just before and just after the cases, must
    lie inside the table), and each launch case is the table's value at h. Returns (h in us, the probe's measured us per kernel)."""
    with open(table_path) as f:
        table = json.load(f)
    with open(probe_path) as f:
        probe = json.load(f)["records"]
    want = table["probe"][0].split("/", 1)[1]
    runs = [r["timing"]["median_us"] for r in probe if r["id"].split("/", 1)[1] == want]
    if len(table["probe"]) != 1 or len(runs) != 2:
        raise SystemExit(f"{probe_path}: two runs of {want} (before/ and after/) expected")
    measured = (runs[0] + runs[1]) / 2
    hosts, col = table["host_launch_us"], table["cases"][table["probe"][0]]
    if not col[0] <= measured <= col[-1]:
        raise SystemExit(f"{probe_path}: probe {measured} us per kernel outside the table "
                         f"({col[0]}-{col[-1]} us)")
    i = max(j for j in range(len(col) - 1) if col[j] <= measured)
    w = (measured - col[i]) / (col[i + 1] - col[i])
    h = hosts[i] + w * (hosts[i + 1] - hosts[i])
    with open(pred_path) as f:
        pred = json.load(f)
    for r in pred["records"]:
        if r["id"].startswith("launch/"):
            v = table["cases"][r["id"]]
            r["timing"]["median_us"] = v[i] + w * (v[i + 1] - v[i])
    with open(out_path, "w") as f:
        json.dump(pred, f, indent=1)
        f.write("\n")
    return h, measured


def errors_main(set_name, here, op_class, unscored, unscored_label, gpus=("h200",),
                launch_probe=False):
    """errors.py's command line: [--gpu G] [--measured M] [--predicted P] [--write] [--readme].

    A set pre-registered for several GPUs (gpus, the first the default) keeps one predictions file
    per GPU: predictions.json for the first, predictions-<gpu>.json for the others, measured under
    validate/data/<gpu>/<set>/, scored into errors[-<gpu>].md/json and the README block
    <!-- <set>[-<gpu>]:begin -->.

    launch_probe (own-set12 on): the launch cases are scored at the host's measured launch cost
    (launch_conditioned: launch_table[-<gpu>].json beside the predictions, the probe
    launch-probe.json beside the measurement); --host-blind scores the predictions file as it is,
    into errors[-<gpu>]-host-blind.md/json and the README block <set>[-<gpu>]-host-blind."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", choices=gpus, default=gpus[0])
    ap.add_argument("--measured")
    ap.add_argument("--predicted")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--readme", action="store_true")
    if launch_probe:
        ap.add_argument("--host-blind", action="store_true")
        ap.add_argument("--probe")
    args = ap.parse_args()
    suffix = "" if args.gpu == gpus[0] else f"-{args.gpu}"
    measured = args.measured or os.path.join(
        ROOT, f"validate/data/{args.gpu}/{set_name}/{set_name}.json")
    predicted = args.predicted or os.path.join(here, f"predictions{suffix}.json")
    note = ""
    if launch_probe and args.host_blind:
        suffix += "-host-blind"
        note = ("Launch cases scored on the predictions file as it is (host-blind: the overlay's "
                "launch cost).\n\n")
    elif launch_probe:
        import tempfile
        probe = args.probe or os.path.join(os.path.dirname(measured), "launch-probe.json")
        table = os.path.join(here, f"launch_table{suffix}.json")
        tmp = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
        h, m = launch_conditioned(predicted, table, probe, tmp)
        predicted = tmp
        note = (f"Launch cases scored at the host's measured launch cost (the pre-registered rule): "
                f"probe {m:.3f} us per kernel -> host_launch_cuda {h:.3f} us, each launch case read "
                f"off launch_table{suffix.replace('-host-blind', '')}.json at it.\n\n")
    res = compute(measured, predicted, op_class, unscored)
    md = note + markdown(res, unscored_label)
    print(per_record(res))
    print(md)
    cmd = f"python3 validate/prereg/{set_name}/errors.py" + (
        f" --gpu {args.gpu}" if args.gpu != gpus[0] else "") + (
        " --host-blind" if launch_probe and args.host_blind else "")
    if args.write:
        with open(os.path.join(here, f"errors{suffix}.md"), "w") as f:
            f.write(f"# {set_name}{suffix}: pre-registered predictions against the measurement\n\n"
                    f"Made by `{cmd} --write`.\n\n{md}\n{per_record(res)}")
        with open(os.path.join(here, f"errors{suffix}.json"), "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
            f.write("\n")
    if args.readme:
        path = os.path.join(ROOT, "validate", "README.md")
        with open(path) as f:
            text = f.read()
        b, e = f"<!-- {set_name}{suffix}:begin -->\n", f"<!-- {set_name}{suffix}:end -->"
        if b not in text or e not in text:
            print(f"{path}: markers {b.strip()} / {e} not found", file=sys.stderr)
            return 2
        head, rest = text.split(b, 1)
        _, tail = rest.split(e, 1)
        with open(path, "w") as f:
            f.write(head + b + md + f"\nMade by `{cmd} --readme`.\n" + e + tail)
    return 0
