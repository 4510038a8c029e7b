"""Writes skeleton.json for RIDGE_E2E_SET=prereg-e2e3 (validate/prereg/e2e_skeleton.py says how: run 16's
records with these shapes swapped in; only Ridge's predicted column of `ridge run --e2e-table
skeleton.json` is used, to pre-register the predictions).
Usage: python3 validate/prereg/e2e3/make_skeleton.py"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import e2e_skeleton  # noqa: E402

# validate/e2e/train_gpt.py and decode_llama.py, prereg-e2e3
GPT = {"opt-2.7b-shape": dict(layers=32, d_model=2560, heads=32, vocab=50304, seq=2048,
                              micro_batch=2),
       "bloom-560m-shape": dict(layers=24, d_model=1024, heads=16, vocab=250880, seq=2048,
                                micro_batch=4)}
LLAMA = [
    dict(model="mistral-7b-shape", layers=32, d_model=4096, heads=32, kv_heads=8, head_dim=128,
         ffn=14336, vocab=32000, tied_embeddings=False, rope_theta=10000.0, norm_eps=1e-5),
    dict(model="llama2-13b-shape", layers=40, d_model=5120, heads=40, kv_heads=40, head_dim=128,
         ffn=13824, vocab=32000, tied_embeddings=False, rope_theta=10000.0, norm_eps=1e-5),
]

e2e_skeleton.write(HERE, GPT, LLAMA)
