"""Pre-registers a set's launch predictions as a function of the host's launch cost.

  python3 validate/prereg/launch_table.py own-setN [--ridge build/dev/cli/ridge]
      [--gpu configs/hw/h200-sxm-141gb.calibrated.yaml] [--probe FILE]

How long a host takes to launch one kernel (host_launch_cuda) is a property of the host: the same
kind of lent machine has launched eager kernels at 3.2 to 4.7 us each across eleven leases
(docs/accuracy.md, "Launches across hosts"), and nothing else the harness records predicts it.
So, from own-set12 on, a set measures the host's eager launch period with a probe just before its
cases (validate/prereg/own-setN/host_launch_probe.json), and its launch cases are scored at that
period: the launch model is tested given the host, as the kernels are given the clock.

This script writes validate/prereg/own-setN/launch_table.json before the measurement: the
frozen model's prediction (us per kernel) of every launch case of the set and of the probe's
case, at host_launch_cuda = 2.80, 2.85, ..., 5.20 us (an overlay on --gpu that changes that one
figure). own_prereg.launch_conditioned reads it after the measurement: the host period h is where
the table's probe prediction equals the measured probe (linear interpolation between columns),
and each launch case's prediction is the table's at h. Deterministic: the same model writes the
same bytes.
"""
import argparse
import json
import os
import subprocess
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HOSTS_US = [round(2.80 + 0.05 * i, 2) for i in range(49)]  # 2.80 .. 5.20 us


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("set_name")
    ap.add_argument("--ridge", default=os.path.join(ROOT, "build/dev/cli/ridge"))
    ap.add_argument("--gpu", default="configs/hw/h200-sxm-141gb.calibrated.yaml")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    here = os.path.join(ROOT, "validate", "prereg", args.set_name)
    with open(os.path.join(here, "cases.json")) as f:
        cases = json.load(f)
    with open(os.path.join(here, "host_launch_probe.json")) as f:
        probe = json.load(f)
    launch = [r for r in cases["records"] if r["id"].startswith("launch/")]
    probe_recs = [dict(r, id="probe/" + r["id"]) for r in probe["records"]]
    doc = {"schema": "ridge.records/1", "generated_by": cases["generated_by"],
           "records": launch + probe_recs}
    gpu = os.path.join(ROOT, args.gpu)
    table = {r["id"]: [] for r in doc["records"]}
    with tempfile.TemporaryDirectory() as tmp:
        cases_path = os.path.join(tmp, "launch_cases.json")
        with open(cases_path, "w") as f:
            json.dump(doc, f)
        for h in HOSTS_US:
            ov = os.path.join(tmp, "host.yaml")
            with open(ov, "w") as f:
                f.write(f"base: {gpu}\ngpu:\n  name: launch-table-host\n"
                        f"  aliases: [launch-table-host]\n  model:\n"
                        f"    host_launch_cuda: {{value: {h:.2f} us, source: \"launch_table.py\"}}\n")
            out = subprocess.run([args.ridge, "predict", cases_path, "--gpu", ov, "--json"],
                                 check=True, capture_output=True, text=True).stdout
            for r in json.loads(out)["records"]:
                table[r["id"]].append(r["timing"]["median_us"])
    res = {"schema": "ridge.launch_table/1",
           "set": args.set_name,
           "gpu": args.gpu,
           "command": f"python3 validate/prereg/launch_table.py {args.set_name} --gpu {args.gpu}",
           "host_launch_us": HOSTS_US,
           "probe": [r["id"] for r in probe_recs],
           "cases": table}
    out_path = args.out or os.path.join(here, "launch_table.json")
    with open(out_path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"{os.path.relpath(out_path, ROOT)}: {len(launch)} launch cases and "
          f"{len(probe_recs)} probe case(s) at {len(HOSTS_US)} host launch costs")


if __name__ == "__main__":
    main()
