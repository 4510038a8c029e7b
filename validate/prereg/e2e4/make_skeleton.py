"""Writes skeleton.json for RIDGE_E2E_SET=prereg-e2e4 (validate/prereg/e2e_skeleton.py says how: run 16's
records with these shapes swapped in; only Ridge's predicted column of `ridge run --e2e-table
skeleton.json` is used, to pre-register the predictions).
Usage: python3 validate/prereg/e2e4/make_skeleton.py"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import e2e_skeleton  # noqa: E402

# validate/e2e/train_gpt.py and decode_llama.py, prereg-e2e4
GPT = {"opt-1.3b-shape": dict(layers=24, d_model=2048, heads=32, vocab=50272, seq=2048,
                              micro_batch=4),
       "bloom-1b1-shape": dict(layers=24, d_model=1536, heads=16, vocab=250880, seq=2048,
                               micro_batch=4)}
LLAMA = [
    dict(model="qwen2.5-7b-shape", layers=28, d_model=3584, heads=28, kv_heads=4, head_dim=128,
         ffn=18944, vocab=152064, tied_embeddings=False, rope_theta=1000000.0, norm_eps=1e-6),
    dict(model="phi-3-mini-shape", layers=32, d_model=3072, heads=32, kv_heads=32, head_dim=96,
         ffn=8192, vocab=32064, tied_embeddings=False, rope_theta=10000.0, norm_eps=1e-5),
]

e2e_skeleton.write(HERE, GPT, LLAMA)
