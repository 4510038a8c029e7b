"""Writes skeleton.json for RIDGE_E2E_SET=prereg-e2e2 (validate/prereg/e2e_skeleton.py says how: run 16's
records with these shapes swapped in; only Ridge's predicted column of `ridge run --e2e-table
skeleton.json` is used, to pre-register the predictions).
Usage: python3 validate/prereg/e2e2/make_skeleton.py"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import e2e_skeleton  # noqa: E402

# validate/e2e/train_gpt.py and decode_llama.py, prereg-e2e2
GPT = {"gpt-neo-1.3b-shape": dict(layers=24, d_model=2048, heads=16, seq=2048, micro_batch=4),
       "pythia-410m-shape": dict(layers=24, d_model=1024, heads=16, seq=4096, micro_batch=2)}
LLAMA = [
    dict(model="llama2-7b-shape", layers=32, d_model=4096, heads=32, kv_heads=32, head_dim=128,
         ffn=11008, vocab=32000, tied_embeddings=False, rope_theta=10000.0, norm_eps=1e-5),
    dict(model="qwen2.5-1.5b-shape", layers=28, d_model=1536, heads=12, kv_heads=2, head_dim=128,
         ffn=8960, vocab=151936, tied_embeddings=True, rope_theta=1000000.0, norm_eps=1e-6),
]

e2e_skeleton.write(HERE, GPT, LLAMA)
