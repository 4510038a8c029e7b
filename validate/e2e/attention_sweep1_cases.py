"""Writes validate/e2e/attention_sweep1.cases.json: the attention shapes measured to model
attention's mechanisms (issue 18 point 3), timed by validate/e2e/attention_cases.py.

  python3 validate/e2e/attention_sweep1_cases.py

A sweep, for fitting and for finding mechanisms, not a test: the pre-registered test of what is
built on it is validate/prereg/attn-set1 (other shapes, committed before any model change). Axes:
head_dim 64 and 128 (plus 96 and 256 at two lengths), causal or not, sequence 512-16384 at a
constant ~1 G score elements a head group, GQA groups 1-32, decode (one query) over 1K-64K keys
at batch 1-64, query chunks of 16-256 over 4K and 16K keys, and forward+backward at 1K-8K. bf16
unless the id ends in _fp16. Deterministic: the same script writes the same bytes.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def case(passes, b, h, kvh, sq, skv, d, causal, dtype="bf16", label=None):
    cid = "attention_cases/%s/b%d_h%d_kv%d_q%d_k%d_d%d%s%s" % (
        passes, b, h, kvh, sq, skv, d, "_causal" if causal else "",
        "" if dtype == "bf16" else "_" + dtype)
    r = {"id": cid, "op": "attention",
         "params": {"batch": b, "heads": h, "kv_heads": kvh, "seq_q": sq, "seq_kv": skv,
                    "head_dim": d, "causal": causal, "dtype": dtype, "pass": passes},
         "timing": {"method": "kernel"}}
    if label:
        r["label"] = label
    return r


def cases():
    out = []
    # Prefill: sequence 512-16384, batch so that batch x seq = 16384 tokens.
    for d, h, kvh in ((128, 32, 8), (64, 16, 16)):
        for causal in (True, False):
            for s in (512, 1024, 2048, 4096, 8192, 16384):
                out.append(case("fwd", max(1, 16384 // s), h, kvh, s, s, d, causal))
    # GQA group size at 4096 causal, head_dim 128 (32 query heads).
    for kvh in (1, 4, 32):
        out.append(case("fwd", 4, 32, kvh, 4096, 4096, 128, True))
    # head_dim 96 and 256 (other tiles), and 80.
    for d, h in ((96, 32), (256, 16), (80, 32)):
        for s in (2048, 8192):
            for causal in (True, False):
                out.append(case("fwd", 16384 // s, h, h, s, s, d, causal))
    # fp16 at two shapes.
    out.append(case("fwd", 4, 32, 8, 4096, 4096, 128, True, "fp16"))
    out.append(case("fwd", 8, 16, 16, 2048, 2048, 64, False, "fp16"))
    # Heads and batch: few heads (a wave short of the SMs) and many.
    for b, h in ((1, 8), (1, 16), (2, 64), (1, 128)):
        out.append(case("fwd", b, h, h, 2048, 2048, 128, True))
    # Small prefill (sub-wave grids).
    for s in (128, 256):
        out.append(case("fwd", 4, 32, 8, s, s, 128, True))
        out.append(case("fwd", 4, 16, 16, s, s, 64, True))
    # Decode: one query over the cache.
    for d, h, kvh in ((128, 32, 8), (64, 32, 8), (128, 64, 8)):
        for b in (1, 8, 64):
            for skv in (1024, 4096, 16384, 65536):
                if b * skv > 8 * 65536 and d != 128:
                    continue
                if h == 64 and skv not in (4096, 65536):
                    continue
                out.append(case("fwd", b, h, kvh, 1, skv, d, False))
    # Query chunks over a cache (chunked prefill, speculative verification).
    for sq in (16, 64, 256):
        for skv in (4096, 16384):
            out.append(case("fwd", 4, 32, 8, sq, skv, 128, False))
    # Forward + backward.
    for d, h, kvh in ((128, 32, 8), (64, 16, 16)):
        for s in (1024, 2048, 4096, 8192):
            out.append(case("fwd_bwd", max(1, 16384 // s), h, kvh, s, s, d, True))
    out.append(case("fwd_bwd", 4, 32, 32, 2048, 2048, 128, False))
    out.append(case("fwd_bwd", 8, 16, 16, 2048, 2048, 64, False))
    ids = [r["id"] for r in out]
    assert len(ids) == len(set(ids)), "duplicate case"
    return out


if __name__ == "__main__":
    doc = {"schema": "ridge.records/1",
           "generated_by": {"tool": "validate/e2e/attention_sweep1_cases.py"},
           "records": cases()}
    path = os.path.join(HERE, "attention_sweep1.cases.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("%s: %d cases" % (path, len(doc["records"])))
