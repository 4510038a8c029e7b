#!/usr/bin/env python3
"""Runs every bad input of issue 21 through `ridge` in a scratch directory and prints the Markdown
table of docs/hardening.md (command, exit status, first lines of the message).

usage: scripts/hardening-table.py [build/dev/cli/ridge] > table.md
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RIDGE = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/dev/cli/ridge"))
MODELS = os.path.join(ROOT, "configs/models")
SMALL = "study:\n  model: gpt2-small\n  gpu: h200\n  workloads:\n    - {kind: decode, batch: 1, context: 128}\n"

BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{n}: &{n} [{','.join('*' + p for _ in range(9))}]\n" for p, n in zip("abcdefgh", "bcdefghi"))

FILES = {
    "small.yaml": SMALL,
    "nokind.yaml": "study:\n  model: gpt2-small\n  workloads:\n    - {batch: 1, context: 8}\n",
    "badkind.yaml": "study:\n  model: gpt2-small\n  workloads:\n    - {kind: decod, batch: 1}\n",
    "whatif.yaml": SMALL + "  what_if: [gemm*2, sm_count*0.001]\n",
    "bomb.yaml": BOMB,
    "zero.yaml": "base: /dev/zero\n",
    "shadow.yaml": "base: /etc/shadow\n",
    "steps.yaml": "study:\n  model: wan2.1-t2v-1.3b\n  workload: {kind: diffusion, steps: 100000}\n",
    "accum.yaml": "study:\n  model: gpt2-small\n  workload: {kind: train, grad_accum: 4096}\n",
    "layers.yaml": f"base: {MODELS}/gpt2-small.yaml\nmodel: {{layers: 100000}}\n",
    "layers-study.yaml": "study:\n  model: layers.yaml\n  workload: {kind: decode, context: 8}\n",
    "heads.yaml": f"base: {MODELS}/gpt2-small.yaml\nmodel: {{heads: 7}}\n",
    "heads-study.yaml": "study:\n  model: heads.yaml\n  workload: {kind: decode, context: 8}\n",
    "dmodel.yaml": f"base: {MODELS}/gpt2-small.yaml\nmodel: {{d_model: 1e12}}\n",
    "dmodel-study.yaml": "study:\n  model: dmodel.yaml\n  workload: {kind: decode, context: 8}\n",
    "vae.yaml": f"base: {MODELS}/dit-xl2-image-e2e.yaml\nmodel:\n  vae:\n    stages: [[512abc, 512], [512, 256]]\n",
    "vae-study.yaml": "study:\n  model: vae.yaml\n  workload: {kind: diffusion, steps: 1}\n",
    "context.yaml": "study:\n  model: gpt2-small\n  workloads:\n    - {kind: decode, context: 4096}\n",
    "cache.yaml": "study:\n  model: llama3-8b\n  workloads:\n    - {kind: decode, context: 4096}\n",
    "empty.yaml": "study:\n  model: gpt2-small\n  workloads: []\n",
    "unknown-op.json": '{"schema": "ridge.records/1", "records": [{"id": "a", "op": "gemm", "params": {"m": 64, "n": 64, "k": 64}, "timing": {"median_us": 5}}, {"id": "b", "op": "gemmm", "params": {}, "timing": {"median_us": 5}}]}',
    "together-model.yaml": f"base: {MODELS}/gpt2-small.yaml\nmodel: {{norm: rmsnrom}}\n",
    "together.yaml": "study:\n  model: together-model.yaml\n  gpu: h2000\n  mode: fsat\n  workload: {kind: decode, context: 8}\n",
    "out.yaml": "existing overlay\n",
    "tokens.yaml": "study:\n  model: llama3-8b\n  workload: {kind: train, micro_batch: 1048576, seq: 8192}\n",
    "disagg.yaml": "kind: serve\nserve:\n  model: llama3-8b\n  arrivals: {process: poisson, rate_per_s: 10, requests: 100000000, prompt_tokens: 512, output_tokens: 128}\n"
                   "  disaggregated: {prefill_gpus: 1, decode_gpus: 1}\n",
    "cases.yaml": "- {op: gemm, parms: {m: 8, n: 8, k: 8}}\n",
    "precision.yaml": "study:\n  model: gpt2-small\n  workloads:\n    - {label: autocast, kind: train, seq: 256, precision: autocast}\n"
                      "    - {label: mixed, kind: train, seq: 256, precision: mixed}\n",
    "nokind-graph.yaml": "question: q\n",
    "selective.yaml": "study:\n  model: gpt2-small\n  workload: {kind: train, seq: 256, recompute: selective}\n",
}

ROWS = [
    ("crash", "workload without `kind`", "ridge run nokind.yaml"),
    ("crash", "unknown workload kind", "ridge run badkind.yaml"),
    ("crash", "what-if factor near zero", "ridge run small.yaml --what-if 'sm_count*0.001'"),
    ("crash", "what-if factor huge", "ridge run small.yaml --what-if 'sm_count*1e300'"),
    ("crash", "what-if in a study", "ridge run whatif.yaml"),
    ("crash", "graph file without `kind` (found by fuzz_graph)", "ridge export chakra nokind-graph.yaml --out g.et"),
    ("crash", "JSON nested 300,000 deep", "ridge predict deep.json"),
    ("crash", "JSON nested 300,000 deep", "ridge compare deep-records.json"),
    ("crash", "JSON nested 300,000 deep", "ridge calibrate deep-records.json --out o.yaml"),
    ("unbounded", "YAML alias bomb (342 bytes)", "ridge run bomb.yaml"),
    ("unbounded", "`base: /dev/zero`", "ridge hw show zero.yaml"),
    ("unbounded", "input over 64 MiB (sparse file)", "ridge run big.yaml"),
    ("unbounded", "`steps: 100000`", "ridge run steps.yaml"),
    ("unbounded", "`grad_accum: 4096`", "ridge run accum.yaml"),
    ("unbounded", "100,000 layers", "ridge run layers-study.yaml"),
    ("unbounded", "detailed mode on a 2^20-cubed GEMM", "ridge kernel gemm m=1048576 n=1048576 k=1048576 --mode detailed"),
    ("files", "`--trace` onto a FIFO", "ridge run small.yaml --trace fifo"),
    ("files", "`--svg` onto a directory", "ridge run small.yaml --svg dir"),
    ("files", "`--out` onto a device node", "ridge run small.yaml --timeline-svg /dev/null"),
    ("files", "`calibrate --out` onto its own input", "ridge calibrate launch.json --out launch.json"),
    ("files", "`calibrate --out` onto the overlay it reads", "ridge calibrate launch.json --gpu cal.yaml --out cal.yaml"),
    ("files", "one output of several cannot be written", "ridge run small.yaml --trace t.json --svg /missing/r.svg"),
    ("silent", "GEMM dims 2^40", "ridge kernel gemm m=1099511627776 n=1099511627776 k=1099511627776"),
    ("silent", "`heads` not dividing `d_model`", "ridge run heads-study.yaml"),
    ("silent", "`d_model: 1e12`", "ridge run dmodel-study.yaml"),
    ("silent", "VAE stage `512abc`", "ridge run vae-study.yaml"),
    ("silent", "decode `context` over max_positions", "ridge run context.yaml"),
    ("silent", "decode `context` over the cache's max_len", "ridge run cache.yaml"),
    ("silent", "negative shared memory", "ridge occupancy --gpu h200 --threads 256 --registers 64 --shared '-48 KiB'"),
    ("silent", "A100 FP8 GEMM", "ridge kernel gemm m=4096 n=4096 k=4096 dtype=fp8_e4m3 --gpu a100"),
    ("silent", "records with an unknown op in `compare`", "ridge compare unknown-op.json"),
    ("silent", "`workloads: []`", "ridge run empty.yaml"),
    ("silent", "`base: /etc/shadow`", "ridge hw show shadow.yaml"),
    ("questionable", "`communication*2` where nothing communicates", "ridge run small.yaml --what-if 'communication*2'"),
    ("unbounded", "disaggregated serving of 10^8 requests", "ridge serve disagg.yaml"),
    ("questionable", "faster HBM makes the host-bound eager decode slower", "ridge run " + os.path.join(ROOT, "configs/studies/default.yaml") + " | grep -E 'hbm_bandwidth|note'"),
    ("questionable", "`precision: autocast` and `mixed` give identical step times", "ridge run precision.yaml | grep -E '^(== |step time)'"),
    ("questionable", "`recompute: selective` equals `none` with no note", "ridge run selective.yaml | grep -E 'note:'"),
    ("questionable", "B200 8192-cubed bf16 GEMM reported latency-bound", "ridge kernel gemm m=8192 n=8192 k=8192 --gpu b200 | grep -E '^(bound|achieved|roof|why)'"),
    ("questionable", "a PCIe copy's bandwidth labelled HBM", "ridge kernel copy bytes=1073741824 direction=h2d | grep -E '^(bound|achieved|roof)'"),
    ("unexplained", "errors in study, model and GPU together; did-you-mean for values", "ridge run together.yaml"),
    ("unexplained", "an op the kernel model refuses names no file or line", "ridge run tokens.yaml"),
    ("unexplained", "a misspelt key in a `predict` cases file was ignored", "ridge predict cases.yaml"),
    ("unexplained", "CLI argument error", "ridge run --no-such-flag"),
]


def main():
    with tempfile.TemporaryDirectory() as d:
        for name, text in FILES.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        with open(os.path.join(d, "deep.json"), "w") as f:
            f.write("[" * 300000 + "]" * 300000)
        with open(os.path.join(d, "deep-records.json"), "w") as f:
            f.write('{"schema": "ridge.records/1", "records": ' + "[" * 300000 + "]" * 300000 + "}")
        with open(os.path.join(d, "big.yaml"), "w") as f:
            f.truncate((64 << 20) + 1)
        os.mkfifo(os.path.join(d, "fifo"))
        os.mkdir(os.path.join(d, "dir"))
        with open(os.path.join(ROOT, "validate/data/h200/launch.json")) as src, open(os.path.join(d, "launch.json"), "w") as dst:
            dst.write(src.read())
        subprocess.run([RIDGE, "calibrate", "launch.json", "--out", "cal.yaml"], cwd=d, capture_output=True)
        print("| class | input | command | exit | message (first lines) |")
        print("|---|---|---|---:|---|")
        for cls, what, cmd in ROWS:
            p = subprocess.run(cmd.replace("ridge ", RIDGE + " ", 1), shell=True, cwd=d, capture_output=True, text=True, timeout=120)
            out = p.stderr.strip() if p.returncode != 0 else (p.stderr.strip() or p.stdout.strip())
            lines = [l for l in out.splitlines() if l][:4]
            msg = "<br>".join(l.replace("|", "\\|").replace(d + "/", "").replace(ROOT + "/", "") for l in lines)
            extra = ""
            if "t.json" in cmd:
                extra = " (t.json written: %s)" % ("yes" if os.path.exists(os.path.join(d, "t.json")) else "no")
            shown = cmd.replace(ROOT + "/", "").replace("|", "\\|")
            print(f"| {cls} | {what} | `{shown}` | {p.returncode} | {msg}{extra} |")


main()
