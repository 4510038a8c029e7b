"""Writes skeleton.json for RIDGE_E2E_SET=prereg-e2e1 (validate/prereg/e2e_skeleton.py says how: run 16's
records with these shapes swapped in; only Ridge's predicted column of `ridge run --e2e-table
skeleton.json` is used, to pre-register the predictions).
Usage: python3 validate/prereg/e2e1/make_skeleton.py"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import e2e_skeleton  # noqa: E402

# validate/e2e/train_gpt.py and decode_llama.py, prereg-e2e1
GPT = {"gpt2-large": dict(layers=36, d_model=1280, heads=20, seq=1024, micro_batch=8),
       "gpt2-xl": dict(layers=48, d_model=1600, heads=25, seq=1024, micro_batch=4)}
LLAMA = [dict(model="llama3.2-3b", layers=28, d_model=3072, heads=24, kv_heads=8, head_dim=128,
              ffn=8192, vocab=128256, tied_embeddings=True)]

e2e_skeleton.write(HERE, GPT, LLAMA)
