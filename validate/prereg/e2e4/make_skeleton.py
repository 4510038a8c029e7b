"""Writes skeleton.json: the records validate/e2e/train_gpt.py and decode_llama.py will write for
RIDGE_E2E_SET=prereg-e2e4, built from run 16's records of the same scripts with the models' shapes
swapped in (their timings are run 16's, not these models': only Ridge's predicted column of
`ridge run --e2e-table skeleton.json` is used, to pre-register the predictions).
Usage: python3 validate/prereg/e2e3/make_skeleton.py"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "../../data/h200/e2e_run16/e2e.json")

# name: layers, d_model, heads, vocab, seq, micro_batch (validate/e2e/train_gpt.py, prereg-e2e4)
GPT = {"opt-1.3b-shape": (24, 2048, 32, 50272, 2048, 4),
       "bloom-1b1-shape": (24, 1536, 16, 250880, 2048, 4)}
LLAMA = [
    dict(model="qwen2.5-7b-shape", layers=28, d_model=3584, heads=28, kv_heads=4, head_dim=128,
         ffn=18944, vocab=152064, tied_embeddings=False, rope_theta=1000000.0, norm_eps=1e-6),
    dict(model="phi-3-mini-shape", layers=32, d_model=3072, heads=32, kv_heads=32, head_dim=96,
         ffn=8192, vocab=32064, tied_embeddings=False, rope_theta=10000.0, norm_eps=1e-5),
]

doc = json.load(open(SRC))
out = []
for r in doc["records"]:
    p = r.get("params", {})
    if r["op"] == "e2e_train" and p.get("model") == "gpt2-small":
        for name, (layers, d, heads, vocab, seq, mb) in GPT.items():
            x = copy.deepcopy(r)
            q = x["params"]
            q.update(model=name, layers=layers, d_model=d, heads=heads, kv_heads=heads,
                     head_dim=d // heads, ffn=4 * d, vocab=vocab, seq=seq, micro_batch=mb)
            q.pop("params_count", None)
            x["id"] = "e2e/train/%s/b%d_s%d" % (name, mb, seq)
            x.pop("profile", None)
            out.append(x)
    elif r["op"] in ("e2e_prefill", "e2e_decode") and p.get("model") == "llama3.2-1b":
        for m in LLAMA:
            x = copy.deepcopy(r)
            x["params"].update(m)
            x["params"].pop("params_count", None)
            x["id"] = r["id"].replace("llama3.2-1b", m["model"])
            x.pop("profile", None)
            out.append(x)
json.dump({"schema": doc["schema"], "generated_by": {"tool": "make_skeleton.py"},
           "records": out}, open(os.path.join(HERE, "skeleton.json"), "w"), indent=1)
print("\n".join(r["id"] for r in out))
