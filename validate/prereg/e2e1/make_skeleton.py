"""Writes skeleton.json: the records validate/e2e/train_gpt.py and decode_llama.py will write for
RIDGE_E2E_SET=prereg-e2e1, built from run 16's records of the same scripts with the model's shape
swapped in (their timings are run 16's, not these models': only Ridge's predicted column of
`ridge run --e2e-table skeleton.json` is used, to pre-register the predictions).
Usage: python3 validate/prereg/e2e1/make_skeleton.py"""
import copy
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "../../data/h200/e2e_run16/e2e.json")

GPT = {"gpt2-large": (36, 1280, 20, 8), "gpt2-xl": (48, 1600, 25, 4)}
LLAMA = dict(model="llama3.2-3b", layers=28, d_model=3072, heads=24, kv_heads=8, head_dim=128,
             ffn=8192, vocab=128256, tied_embeddings=True)

doc = json.load(open(SRC))
out = []
for r in doc["records"]:
    p = r.get("params", {})
    if r["op"] == "e2e_train" and p.get("model") == "gpt2-small":
        for name, (layers, d, heads, mb) in GPT.items():
            x = copy.deepcopy(r)
            q = x["params"]
            q.update(model=name, layers=layers, d_model=d, heads=heads, kv_heads=heads,
                     head_dim=d // heads, ffn=4 * d, micro_batch=mb)
            q.pop("params_count", None)
            x["id"] = "e2e/train/%s/b%d_s1024" % (name, mb)
            x.pop("profile", None)
            out.append(x)
    elif r["op"] in ("e2e_prefill", "e2e_decode") and p.get("model") == "llama3.2-1b":
        x = copy.deepcopy(r)
        x["params"].update(LLAMA)
        x["params"].pop("params_count", None)
        x["id"] = r["id"].replace("llama3.2-1b", "llama3.2-3b")
        x.pop("profile", None)
        out.append(x)
json.dump({"schema": doc["schema"], "generated_by": {"tool": "make_skeleton.py"},
           "records": out}, open(os.path.join(HERE, "skeleton.json"), "w"), indent=1)
print("\n".join(r["id"] for r in out))
