"""Ridge e2e: the host-bound e2e calls timed in alternation, so that every call sees the same host.

The e2e scripts time each case in its own stretch of the run, and the lent machine's host speed
moves between stretches (validate/e2e/README.md): a case timed while the host runs slow has few
or no steps at nominal CPU probe. Here the host-bound calls of the e2e scripts (the same models,
inputs and calls: decode_llama.make_decode_step for the eager decode steps of Llama-3.2 1B and
Llama-3 8B at batch 1 and 16, the 1B prefill, diffusion.build_calls for the text encoder and
denoiser calls and the K = 1, 4, 20 pipelines) run round-robin, one call each per round in a
rotating order, each call timed as e2e_common.time_calls times it (synchronize, CPU probe, CUDA
events around the call, synchronize, probe). The records are e2e records (same id, op and params
as the e2e scripts'; `interleaved` says how they were made), so `ridge run --e2e-table` compares
them; per round, each call's time over the denoiser's is also kept as a ratio. Records the host's
CPU (/proc/cpuinfo) so leases can be told apart. No torch.profiler runs before the timing: a
profiler session leaves later host work of the process ~28% slower.

With --profile-between: two more phases of --rounds rounds; before each, one
e2e_common.profile_fn() pass (torch.profiler, CPU + CUDA activities, as diffusion.py and
train_gpt.py ran right after timing a case until that was found) over the text encoder call,
then over the denoiser call. Their records are op "host_interleave" (not e2e records).

With --with-training: also train_gpt.py's GPT-2 small and medium training steps (GPU-bound,
with a host part that the host's speed moves), in the same rounds.

Usage: python3 validate/e2e/host_interleave.py --out OUT/e2e_interleaved.json [--rounds 60]
           [--profile-between] [--with-training]
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_common import (CPU_PROBE_WORK, RecordFile, log, percentile, profile_fn,  # noqa: E402
                        start_run, time_one_call)


def host_cpu():
    info = {"nproc": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
        for key in ("model name", "cpu MHz", "cache size", "vendor_id", "cpu family", "model",
                    "stepping", "microcode"):
            vals = [ln.split(":", 1)[1].strip() for ln in lines
                    if ln.split(":", 1)[0].strip() == key]
            if vals:
                info[key] = vals[0] if len(set(vals)) == 1 else sorted(set(vals))
    except OSError as e:
        info["error"] = repr(e)
    return info


def build_calls(torch, nn, F, with_training=False):
    """The host-bound e2e calls with their e2e record id, op and params: [(id, op, params, fn)].
    The models, inputs and calls are the e2e scripts' own (decode_llama.make_decode_step,
    diffusion.build_calls)."""
    import decode_llama as dl
    import diffusion as dm

    calls = []
    use_gqa = dl.gqa_supported(torch, F)
    for mname in ("llama3.2-1b", "llama3-8b"):
        cfg = [m for m in dl.MODELS if m["model"] == mname][0]
        torch.manual_seed(dl.SEED)
        model = dl.build_bf16(torch, nn, F, cfg, use_gqa)
        n_params = sum(p.numel() for p in model.parameters())
        with torch.inference_mode():
            if mname == "llama3.2-1b":  # host-bound prefill (the 8B's is GPU-bound)
                pcaches = dl.make_caches(torch, cfg, 1)
                toks = torch.randint(0, cfg["vocab"], (1, dl.PREFILL_LEN), device="cuda")
                ppos = torch.arange(dl.PREFILL_LEN, device="cuda", dtype=torch.long)

                def prefill(model=model, toks=toks, ppos=ppos, pcaches=pcaches):
                    return model(toks, ppos, pcaches, dl.PREFILL_LEN, True)

                calls.append(("e2e/prefill/%s/b1_s%d" % (mname, dl.PREFILL_LEN), "e2e_prefill",
                              dl.prefill_params(cfg, use_gqa, n_params), prefill))
            for batch in dl.BATCHES:
                step = dl.make_decode_step(torch, cfg, model, batch)[0]
                calls.append(("e2e/decode/%s/b%d_ctx%d/eager" % (mname, batch, dl.CONTEXT),
                              "e2e_decode", dl.decode_params(cfg, use_gqa, batch, False, n_params),
                              step))

    if with_training:  # GPU-bound, but their host part is sensitive to the host's speed
        import train_gpt as tg

        for cfg in tg.CONFIGS:
            model, _opt, _idx, _tgt, step = tg.training_step(torch, nn, F, cfg)
            n_params = sum(p.numel() for p in model.parameters())

            def train_step(step=step):  # the rounds run under inference_mode: not this one
                with torch.inference_mode(False):
                    return step()

            calls.append((tg.train_case(cfg), "e2e_train", tg.train_params(cfg, n_params),
                          train_step))

    d = dm.build_calls(torch, nn, F)
    for name, fn, extra in d["stages"]:
        if name in ("text_encoder", "denoiser"):
            params = {"stage": name, "dtype": "bf16"}
            params.update(extra)
            calls.append(("e2e/diffusion/stage/%s" % name, "e2e_stage", params, fn))
    for K in dm.K_LIST:
        params = d["common_params"]()
        params.update({"K": K})
        calls.append(("e2e/diffusion/pipeline/K%d" % K, "e2e_diffusion", params,
                      lambda K=K: d["pipeline"](K)))
    return calls


def run_rounds(torch, calls, rounds):
    names = [c[0] for c in calls]
    calls = [(c[0], c[3]) for c in calls]
    ev = {n: [] for n in names}
    issue = {n: [] for n in names}
    probe = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(calls)
        for name, fn in calls[k:] + calls[:k]:
            e, _wall, i, p = time_one_call(fn)
            ev[name].append(round(e, 3))
            issue[name].append(round(i, 3))
            probe[name].append(round(p, 3))
    return ev, issue, probe


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="host_interleave.json")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile-between", action="store_true")
    ap.add_argument("--with-training", action="store_true",
                    help="also the GPT-2 small and medium training steps of train_gpt.py")
    args = ap.parse_args()
    out = RecordFile(args.out, "validate/e2e/host_interleave.py")
    torch, nn, F = start_run(out, "host_interleave", e2e=False)
    out.doc["host_cpu"] = host_cpu()
    log("host cpu: %s" % out.doc["host_cpu"])
    out.write()
    calls = build_calls(torch, nn, F, args.with_training)
    by_name = {c[0]: c[3] for c in calls}
    meta = {c[0]: (c[1], c[2]) for c in calls}
    ref = "e2e/diffusion/stage/denoiser"
    names = [c[0] for c in calls]
    phases = [("clean", None)]
    if args.profile_between:
        phases += [("after_profile_text_encoder", "e2e/diffusion/stage/text_encoder"),
                   ("after_profile_denoiser", ref)]
    results = []
    with torch.inference_mode():
        for _ in range(args.warmup):
            for c in calls:
                c[3]()
        for phase, profiled in phases:
            if profiled:
                summ = profile_fn(by_name[profiled], name=None)
                log("profiled %s: %d kernels" % (profiled, summ.get("kernel_launches", -1)))
            t_start = time.perf_counter()
            ev, issue, probe = run_rounds(torch, calls, args.rounds)
            log("%s: %d rounds in %.1f s" % (phase, args.rounds, time.perf_counter() - t_start))
            results.append((phase, profiled, ev, issue, probe))
    fastest = min(p for _, _, _, _, probe in results for n in names for p in probe[n])
    for phase, profiled, ev, issue, probe in results:
        suffix = "" if phase == "clean" else "/" + phase
        for n in names:
            nominal = [e for e, p in zip(ev[n], probe[n]) if p <= 1.25 * fastest]
            timing = {"method": "per_call", "warmup": args.warmup, "reps": len(ev[n]),
                      "samples_us": ev[n], "median_us": round(percentile(ev[n], 50), 3)}
            interleaved = {"rounds": args.rounds, "order": "round-robin, rotating",
                           "phase": phase, "profiled_before": profiled,
                           "nominal_steps": len(nominal),
                           "median_us_nominal": (round(percentile(nominal, 50), 3)
                                                 if len(nominal) >= 3 else None)}
            if phase == "clean":  # an e2e record: ridge run --e2e-table reads it
                op, params = meta[n]
                rec = {"id": n, "suite": "e2e", "op": op, "params": params}
            else:
                rec = {"id": "host_interleave/" + n + suffix, "suite": "host_interleave",
                       "op": "host_interleave", "params": {"case": n}}
            rec.update({"timing": timing,
                        "host_issue_timing": {"method": "host_issue", "samples_us": issue[n]},
                        "cpu_probe": {"method": "cpu_probe", "work": CPU_PROBE_WORK,
                                      "samples_us": probe[n]},
                        "interleaved": interleaved})
            out.add(rec)
            log("%-26s %-42s median %9.1f us, nominal %s (%d of %d)"
                % (phase, n, timing["median_us"], interleaved["median_us_nominal"], len(nominal),
                   len(ev[n])))
        for n in names:
            if n == ref:
                continue
            ratios = sorted(a / b for a, b in zip(ev[n], ev[ref]))
            rec = {"id": "host_interleave/ratio/%s%s" % (n, suffix), "suite": "host_interleave",
                   "op": "host_interleave_ratio",
                   "params": {"case": n, "over": ref, "rounds": args.rounds, "phase": phase},
                   "ratio_median": round(percentile(ratios, 50), 4),
                   "ratio_p10": round(percentile(ratios, 10), 4),
                   "ratio_p90": round(percentile(ratios, 90), 4)}
            out.add(rec)
            log("%-26s ratio %-42s / denoiser: median %.4f (p10 %.4f, p90 %.4f)"
                % (phase, n, rec["ratio_median"], rec["ratio_p10"], rec["ratio_p90"]))
    out.doc["host_speed"] = {"fastest_probe_us": fastest, "nominal_probe_ratio": 1.25}
    out.finish()


if __name__ == "__main__":
    main()
