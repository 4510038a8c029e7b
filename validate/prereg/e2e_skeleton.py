"""The skeleton records of a pre-registered end-to-end set (validate/prereg/e2eN/make_skeleton.py):
the records validate/e2e/train_gpt.py and decode_llama.py will write for RIDGE_E2E_SET=prereg-e2eN,
built from run 16's records of the same scripts with the set's model shapes swapped in. Their
timings are run 16's, not these models': only Ridge's predicted column of `ridge run --e2e-table
skeleton.json` is used, to pre-register the predictions."""
import copy
import json
import os

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../data/h200/e2e_run16/e2e.json")


def write(here, gpt, llama):
    """Writes here/skeleton.json and prints its case ids.

    gpt: {name: dict of train params to set (layers, d_model, heads, micro_batch, seq, and any of
    vocab ...)}, each from run 16's gpt2-small training record (kv_heads = heads, head_dim and
    ffn = 4 d derived); llama: [dict of params (model, ...)], each from every llama3.2-1b prefill
    and decode record."""
    doc = json.load(open(SRC))
    out = []
    for r in doc["records"]:
        p = r.get("params", {})
        if r["op"] == "e2e_train" and p.get("model") == "gpt2-small":
            for name, g in gpt.items():
                x = copy.deepcopy(r)
                q = x["params"]
                d, heads = g["d_model"], g["heads"]
                q.update(model=name, kv_heads=heads, head_dim=d // heads, ffn=4 * d, **g)
                q.pop("params_count", None)
                x["id"] = "e2e/train/%s/b%d_s%d" % (name, q["micro_batch"], q["seq"])
                x.pop("profile", None)
                out.append(x)
        elif r["op"] in ("e2e_prefill", "e2e_decode") and p.get("model") == "llama3.2-1b":
            for m in llama:
                x = copy.deepcopy(r)
                x["params"].update(m)
                x["params"].pop("params_count", None)
                x["id"] = r["id"].replace("llama3.2-1b", m["model"])
                x.pop("profile", None)
                out.append(x)
    json.dump({"schema": doc["schema"], "generated_by": {"tool": "make_skeleton.py"},
               "records": out}, open(os.path.join(here, "skeleton.json"), "w"), indent=1)
    print("\n".join(r["id"] for r in out))
