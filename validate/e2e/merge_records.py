"""Merge the per-script ridge.records/1 files of validate/e2e into one e2e.json.

Usage: python3 validate/e2e/merge_records.py OUTDIR [LOGDIR]
Reads OUTDIR/e2e_{train,decode,diffusion}.json (whatever exists), and LOGDIR/status.txt plus
LOGDIR/<name>.log if given (exit codes, elapsed seconds, log tails of run_all.sh).
Writes OUTDIR/e2e.json and prints a compact summary table. Needs no torch.
"""

import datetime
import json
import os
import shlex
import sys

PARTS = ["train", "decode", "diffusion"]
SCHEMA = "ridge.records/1"


def _read_status(logdir):
    st = {}
    if not logdir:
        return st
    try:
        with open(os.path.join(logdir, "status.txt")) as f:
            for line in f:
                w = line.split()
                if len(w) >= 3:
                    st[w[0]] = {"rc": int(w[1]) if w[1].lstrip("-").isdigit() else w[1],
                                "elapsed_s": int(w[2]) if w[2].isdigit() else w[2],
                                "timeout_s": int(w[3]) if len(w) > 3 and w[3].isdigit() else None}
    except OSError:
        pass
    return st


def _tail(path, n=4000):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return None


def merge(outdir, logdir=None):
    status = _read_status(logdir)
    merged = {
        "schema": SCHEMA,
        "generated_by": {
            "tool": "validate/e2e/run_all.sh",
            "command": os.environ.get("RIDGE_E2E_COMMAND") or shlex.join(["python3"] + sys.argv),
            "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
            .isoformat().replace("+00:00", "Z"),
        },
        "device": {},
        "environment": {},
        "parts": [],
        "records": [],
        "errors": [],
        "skipped": [],
    }
    for name in PARTS:
        path = os.path.join(outdir, "e2e_%s.json" % name)
        part = {"name": name, "file": os.path.basename(path)}
        part.update(status.get(name, {}))
        doc = None
        try:
            with open(path) as f:
                doc = json.load(f)
        except FileNotFoundError:
            part["missing"] = True
        except Exception as e:  # noqa: BLE001
            part["read_error"] = repr(e)
        if isinstance(doc, dict):
            part["generated_by"] = doc.get("generated_by")
            part["status"] = doc.get("status")
            part["n_records"] = len(doc.get("records", []))
            if doc.get("device") and not merged["device"]:
                merged["device"] = doc["device"]
            if doc.get("environment"):
                merged["environment"][name] = doc["environment"]
            merged["records"].extend(doc.get("records", []))
            for e in doc.get("errors", []):
                e = dict(e)
                e["part"] = name
                merged["errors"].append(e)
            for s in doc.get("skipped", []):
                s = dict(s)
                s["part"] = name
                merged["skipped"].append(s)
        if logdir:
            part["log_tail"] = _tail(os.path.join(logdir, name + ".log"))
        merged["parts"].append(part)
    out = os.path.join(outdir, "e2e.json")
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(merged, f, indent=1)
    os.replace(tmp, out)
    return merged


def summary(merged):
    lines = []
    dev = merged.get("device", {})
    lines.append("device: %s sm=%s cc=%s driver=%s cuda=%s torch=%s clocks=%s" % (
        dev.get("name"), dev.get("sm_count"), dev.get("cc"), dev.get("driver"),
        dev.get("cuda_runtime"), dev.get("torch"), dev.get("clocks")))
    for p in merged["parts"]:
        lines.append("part %-9s status=%s rc=%s elapsed=%ss records=%s" % (
            p["name"], p.get("status", "missing" if p.get("missing") else "?"), p.get("rc"),
            p.get("elapsed_s"), p.get("n_records")))
    lines.append("%-52s %10s %10s %10s %8s %10s" % ("id", "median_ms", "p90_ms", "wall_ms",
                                                   "kernels", "busy_ms"))
    for r in merged["records"]:
        t = r.get("timing", {})
        prof = r.get("profile") or {}

        def ms(v):
            return "%.3f" % (v / 1e3) if isinstance(v, (int, float)) else "-"

        lines.append("%-52s %10s %10s %10s %8s %10s" % (
            r.get("id", "?")[:52], ms(t.get("median_us")), ms(t.get("p90_us")),
            ms(r.get("wall_us")), prof.get("kernel_launches", "-"), ms(prof.get("gpu_busy_us"))))
    for e in merged["errors"]:
        lines.append("ERROR %s/%s: %s" % (e.get("part"), e.get("case"), str(e.get("error"))[:300]))
    for s in merged["skipped"]:
        lines.append("SKIPPED %s/%s: %s" % (s.get("part"), s.get("case"), s.get("why")))
    return "\n".join(lines)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    merged = merge(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    print(summary(merged), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
