"""Every GEMM record of the H200 data sets beside the fast model's plan for it.

  python3 validate/gemm_plan_table.py [--ridge build/dev/cli/ridge] [--filter EXPR] [--json OUT]

For each GEMM record of validate/data/h200/gemm.json and own-set1..4, 7, 8, 9: the measured median,
the sampled SM clock, what cuBLASLt ran (algo, tile as a row-major m x n tile, stages, split-K,
cluster, waves_count) and the model's plan (tile, split-K, tile count, waves, bound) with its
error, from `ridge predict --json` on the calibrated H200. cuBLASLt reports its column-major tile
(n side first), so its "320x128" is printed here as 128x320. --filter keeps rows for which the
Python expression is true over the row's fields (e.g. "r['dtype'] == 'bf16' and abs(r['err']) > 0.1").
"""
import argparse
import json
import os
import subprocess
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DATA = os.path.join(ROOT, "validate", "data", "h200")
GPU = os.path.join(ROOT, "configs", "hw", "h200-sxm-141gb.calibrated.yaml")
SETS = ["gemm"] + [f"own-set{i}" for i in (1, 2, 3, 4, 7, 8, 9)]
MODEL_PARAMS = ("m", "n", "k", "dtype", "batch", "trans_a", "trans_b")
BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1}


def measured(s):
    path = os.path.join(DATA, "gemm.json") if s == "gemm" else os.path.join(DATA, s, s + ".json")
    with open(path) as f:
        return [r for r in json.load(f)["records"] if r["op"] == "gemm"]


def predict(ridge, recs):
    cases = [{"id": r["id"], "op": "gemm", "timing": {"method": "kernel"},
              "params": {k: v for k, v in r["params"].items() if k in MODEL_PARAMS}} for r in recs]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"schema": "ridge.records/1", "records": cases}, f)
    try:
        out = subprocess.run([ridge, "predict", f.name, "--gpu", GPU, "--json"], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    return {r["id"]: r for r in json.loads(out)["records"]}


def row_major_tile(t):
    parts = (t or "").split("x")
    return f"{parts[1]}x{parts[0]}" if len(parts) >= 2 and parts[0].isdigit() else (t or "-")


def aligned(p):
    e = BYTES[p["dtype"]]
    return (p["k"] * e) % 16 == 0 and (p["n"] * (2 if e == 1 else e)) % 16 == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build", "dev", "cli", "ridge"))
    ap.add_argument("--filter", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    rows = []
    for s in SETS:
        recs = measured(s)
        pred = predict(a.ridge, recs)
        for r in recs:
            pr = pred[r["id"]]["prediction"]
            d = pr.get("detail", {})
            lib = r.get("library", {})
            p = r["params"]
            t = pred[r["id"]]["timing"]["median_us"]
            rows.append({
                "set": s, "id": r["id"], "dtype": p["dtype"], "m": p["m"], "n": p["n"], "k": p["k"],
                "aligned": aligned(p), "measured_us": r["timing"]["median_us"], "predicted_us": t,
                "err": t / r["timing"]["median_us"] - 1, "sm_mhz": r["timing"].get("sm_mhz"),
                "cublas_algo": lib.get("algo_id"), "cublas_tile": row_major_tile(lib.get("tile")),
                "cublas_stages": lib.get("stages"), "cublas_splitk": lib.get("splitk"),
                "cublas_cluster": lib.get("cluster_shape"), "cublas_waves": lib.get("waves_count"),
                "model_tile": f"{d.get('tile_m')}x{d.get('tile_n')}" if "tile_m" in d else "-",
                "model_splitk": d.get("split_k"), "model_tiles": d.get("tiles"),
                "model_waves": pr.get("waves"), "model_bound": pr.get("bound")})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    for r in sorted(rows, key=lambda x: x["err"]):
        if a.filter and not eval(a.filter, {}, {"r": r}):  # noqa: S307 (the user's own expression)
            continue
        cw = r["cublas_waves"]
        print(f"{r['set']:>9} {r['dtype']:8} {r['m']:>6}x{r['n']:>6}x{r['k']:>6} "
              f"err {100 * r['err']:+6.1f}% meas {r['measured_us']:9.2f} us {r['sm_mhz']} MHz | "
              f"cuBLAS algo {r['cublas_algo']} {r['cublas_tile']:>7} st {r['cublas_stages']} "
              f"sk {r['cublas_splitk']} cl {r['cublas_cluster']} waves "
              f"{cw if cw is None else round(cw, 2)} | model {r['model_tile']} sk "
              f"{r['model_splitk']} tiles {r['model_tiles']} waves {r['model_waves']} "
              f"{r['model_bound']}")


if __name__ == "__main__":
    main()
