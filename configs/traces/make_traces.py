#!/usr/bin/env python3
"""Writes the two synthetic serving traces of configs/traces/ (deterministic: fixed seeds).

Shapes (token lengths are log-normal, fitted by moments to published means and spreads):
  chat.csv  ShareGPT-like chat. vLLM (Kwon et al., SOSP 2023, Section 6.1 and Fig. 11) reports
            ShareGPT conversations with mean input 161 tokens and mean output 338 tokens, inputs
            and outputs both long-tailed; we use CV 1.2 for inputs, 0.9 for outputs, clipped to
            [4, 4096] and [1, 2048]. Poisson arrivals at 8 requests/s.
  summarization.csv  CNN/DailyMail-like summarization. See et al. (ACL 2017, Section 4): articles
            average 781 tokens, summaries 56 tokens (3.75 sentences); we use CV 0.5 for the
            article, 0.4 for the summary, clipped to [64, 4096] and [8, 256]. Poisson arrivals at
            4 requests/s.
Usage: python3 configs/traces/make_traces.py   (run from anywhere; writes beside this file)
"""
import math
import os
import random


def lognormal(rng, mean, cv):
    s2 = math.log(1 + cv * cv)
    return rng.lognormvariate(math.log(mean) - s2 / 2, math.sqrt(s2))


def write(path, seed, n, rate, p_mean, p_cv, p_lo, p_hi, o_mean, o_cv, o_lo, o_hi):
    rng = random.Random(seed)
    t = 0.0
    with open(path, "w") as f:
        f.write("arrival_s,prompt_tokens,output_tokens\n")
        for _ in range(n):
            t += rng.expovariate(rate)
            p = min(p_hi, max(p_lo, round(lognormal(rng, p_mean, p_cv))))
            o = min(o_hi, max(o_lo, round(lognormal(rng, o_mean, o_cv))))
            f.write(f"{t:.6f},{p},{o}\n")


here = os.path.dirname(os.path.abspath(__file__))
write(os.path.join(here, "chat.csv"), 3, 2000, 8.0, 161, 1.2, 4, 4096, 338, 0.9, 1, 2048)
write(os.path.join(here, "summarization.csv"), 4, 2000, 4.0, 781, 0.5, 64, 4096, 56, 0.4, 8, 256)
