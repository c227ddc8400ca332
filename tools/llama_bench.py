"""llama.cpp on the tangle driver, on lavapipe and on its own CPU back end: tokens per second,
peak memory and ggml-vulkan's per-op times (issue 31 item 1). tools/llama-bench.sh runs it.

Usage (the Python of tools/llama-cpp-vulkan.sh's environment):
    python tools/llama_bench.py --models DIR --out DIR --manifest tangle_icd.json
        [--chroot LVP_SID_DIR] [--only dense-f16,...] [--backends cpu,tangle,lavapipe]
        [--prompt 512] [--gen 16] [--threads 2] [--flash-attn 0,1] [--cpu-reps 5]
    python tools/llama_bench.py --out DIR --tables-only   (the tables again from DIR's results)
Results merge into OUT/results.json across calls (a back end or a model run again replaces
its entry).

Every (back end, model) runs in a child process of its own (ggml picks its Vulkan devices once
per process), twice: once timed, once with `GGML_VK_PERF_LOGGER=1` (the logger waits for the
device after every op, so its run is not the timed one). A child evaluates one prompt of
PROMPT tokens in one batch (n_batch = n_ubatch = PROMPT: ggml's matrix-matrix and flash-attention
kernels) twice, the first to create and compile the pipelines, the KV cache cleared between,
then 2 warm-up tokens and GEN tokens one at a time (its matrix-vector kernels); the second
prompt and the GEN tokens are timed (the CPU back end: the best of --cpu-reps of each). Back ends:
  * `cpu`:      n_gpu_layers=0, no Vulkan device (llama.cpp's CPU back end), n_threads=THREADS;
  * `tangle`:   every layer on the tangle driver (VK_DRIVER_FILES=the manifest,
                TANGLE_THREADS=THREADS);
  * `lavapipe`: every layer on lavapipe from the Debian-sid chroot (`chroot DIR python3`, the
                llama_cpp package copied in by tools/lavapipe-sid-llama.sh, LP_NUM_THREADS=THREADS).
Peak memory is the child's maximum resident set (wait4's ru_maxrss). Results: OUT/results.json,
OUT/tables.md (the tables docs/executor.md quotes), the children's logs in OUT/logs/.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve()


# ---------------------------------------------------------------- the child: one model, timed


def clear_memory(llm):
    """Empties the KV cache, so the prompt can be evaluated again from position 0."""
    llm.reset()
    ctx = llm._ctx
    for name in ("memory_clear", "kv_cache_clear"):
        f = getattr(ctx, name, None)
        if f is not None:
            f()
            return
    raise RuntimeError("no way to clear the KV cache in this llama_cpp")


def child(args):
    import llama_cpp
    from llama_cpp import Llama

    def evaluate(tokens):
        # llama_decode only queues the graph on the Vulkan back end: wait for it.
        llm.eval(tokens)
        llama_cpp.llama_synchronize(llm._ctx.ctx)

    prompt = [1] + [3 + (i * 7919) % 509 for i in range(args.prompt - 1)]
    t0 = time.perf_counter()
    llm = Llama(
        model_path=args.model,
        n_gpu_layers=args.n_gpu_layers,
        n_ctx=args.prompt + (args.reps + 2) * args.gen + 16,
        n_batch=args.prompt,
        n_ubatch=args.prompt,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        flash_attn=bool(args.flash_attn),
        seed=0,
        verbose=True,
    )
    load_s = time.perf_counter() - t0
    mark = lambda phase: print(f"@@phase {phase}", file=sys.stderr, flush=True)
    mark("pp-first")
    t0 = time.perf_counter()
    evaluate(prompt)
    pp_first_s = time.perf_counter() - t0
    # The best of REPS evaluations (REPS > 1 for the CPU back end, whose 2 threads spin at
    # barriers: on a loaded machine one descheduled thread stalls the other, and single
    # runs of a few milliseconds swing tenfold).
    mark("pp")
    pp_s = float("inf")
    for _ in range(args.reps):
        clear_memory(llm)
        t0 = time.perf_counter()
        evaluate(prompt)
        pp_s = min(pp_s, time.perf_counter() - t0)
    # Generation feeds fixed tokens: the kernels' work does not depend on which.
    mark("tg-warm")
    for i in range(2):
        evaluate([3 + i])
    mark("tg")
    tg_s = float("inf")
    for r in range(args.reps):
        t0 = time.perf_counter()
        for i in range(args.gen):
            evaluate([5 + i + r * args.gen])
        tg_s = min(tg_s, time.perf_counter() - t0)
    mark("end")
    print(json.dumps({"load_s": load_s, "pp_first_s": pp_first_s, "pp_s": pp_s, "tg_s": tg_s,
                      "pp_tok_s": args.prompt / pp_s, "tg_tok_s": args.gen / tg_s}), flush=True)
    # The tangle driver writes TANGLE_REPORT when the device is destroyed: ggml does that when
    # its last backend and buffer are freed, at the latest in llama_backend_free.
    del llm
    llama_cpp.llama_backend_free()


# ---------------------------------------------------------------- the parent


BACKENDS = ("cpu", "tangle", "lavapipe")
# ggml's plain shaders on both drivers: no cooperative-matrix, no integer-dot kernels.
PLAIN = {"GGML_VK_DISABLE_COOPMAT": "1", "GGML_VK_DISABLE_INTEGER_DOT_PRODUCT": "1"}


def child_command(args, backend, model, fa, perf):
    """The child's command line and environment."""
    common = ["--child", "--prompt", str(args.prompt), "--gen", str(args.gen),
              "--threads", str(args.threads), "--flash-attn", str(fa)]
    env = dict(os.environ)
    for k in ("GGML_VK_PERF_LOGGER", "VK_DRIVER_FILES", "VK_ICD_FILENAMES", "TANGLE_REPORT",
              "TANGLE_TIERS"):
        env.pop(k, None)
    env["GGML_VK_DEBUG_MARKERS"] = "1"
    if perf:
        env["GGML_VK_PERF_LOGGER"] = "1"
    # `tangle-plain`, `lavapipe-plain`: the same driver on ggml's plain shaders.
    plain = backend.endswith("-plain")
    backend = backend.removesuffix("-plain")
    if plain:
        env.update(PLAIN)
    if backend == "cpu":
        env["GGML_VK_VISIBLE_DEVICES"] = ""
        return [sys.executable, str(HERE), *common, "--reps", str(args.cpu_reps), "--model", str(model),
                "--n-gpu-layers", "0"], env
    if backend == "tangle":
        env["GGML_VK_VISIBLE_DEVICES"] = "0"
        env["VK_DRIVER_FILES"] = str(Path(args.manifest).resolve())
        env["TANGLE_THREADS"] = str(args.threads)
        if perf:
            # Where each pipeline ran and why (crates/tangle-icd/src/tiers.rs): ggml never
            # destroys its device, so TANGLE_REPORT is not written.
            env["TANGLE_TIERS"] = str(Path(args.out).resolve() / "logs" /
                                      f"tangle{'-plain' if plain else ''}-{model.stem}-fa{fa}-tiers.json")
        return [sys.executable, str(HERE), *common, "--model", str(model),
                "--n-gpu-layers", "-1"], env
    # lavapipe, inside the chroot: the script and the model are copied under /opt/llama.
    root = Path(args.chroot)
    (root / "opt/llama/models").mkdir(parents=True, exist_ok=True)
    inside_model = Path("/opt/llama/models") / model.name
    target = root / inside_model.relative_to("/")
    if not target.exists() or target.stat().st_size != model.stat().st_size:
        target.write_bytes(model.read_bytes())
    (root / "opt/llama/llama_bench.py").write_text(HERE.read_text())
    env = {"PATH": "/usr/bin:/bin", "HOME": "/root", "PYTHONPATH": "/opt/llama/site",
           "GGML_VK_VISIBLE_DEVICES": "0", "LP_NUM_THREADS": str(args.threads),
           "GGML_VK_DEBUG_MARKERS": "1",
           "VK_DRIVER_FILES": ":".join(str(Path("/") / p.relative_to(root)) for p in
                                       sorted((root / "usr/share/vulkan/icd.d").glob("lvp_icd*.json")))}
    if perf:
        env["GGML_VK_PERF_LOGGER"] = "1"
    if plain:
        env.update(PLAIN)
    return [shutil.which("chroot") or "/usr/sbin/chroot", str(root), "/usr/bin/python3", "/opt/llama/llama_bench.py", *common,
            "--model", str(inside_model), "--n-gpu-layers", "-1"], env


def run_child(args, backend, model, fa, perf):
    cmd, env = child_command(args, backend, model, fa, perf)
    logs = Path(args.out) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    name = f"{backend}-{model.stem}-fa{fa}{'-perf' if perf else ''}"
    t0 = time.perf_counter()
    with open(logs / f"{name}.log", "w") as err:
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    log = (logs / f"{name}.log").read_text(errors="replace")
    if code != 0:
        print(f"FAIL {name}: exit {code} after {wall:.0f} s (log {logs / (name + '.log')})",
              flush=True)
        print(log[-3000:], flush=True)
        return None
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = usage.ru_maxrss / 1024
    result["wall_s"] = wall
    device = [l for l in log.splitlines() if l.startswith("ggml_vulkan: 0 = ")]
    result["device"] = device[0] if device else ""
    if perf:
        result["ops"] = perf_ops(log)
    print(f"{name}: " + (f"ops timed in {wall:.0f} s" if perf else
          f"prompt {result['pp_tok_s']:.1f} tok/s (first {result['pp_first_s']:.1f} s), "
          f"generation {result['tg_tok_s']:.2f} tok/s, peak {result['peak_mb']:.0f} MB, "
          f"wall {wall:.0f} s"), flush=True)
    return result


TIMING = re.compile(r"^(.*): (\d+) x ([0-9.e+-]+) us = ([0-9.e+-]+) us")


def perf_ops(log):
    """ggml-vulkan's perf logger lines, summed per op name and phase: {phase: {op: [n, us]}}."""
    phase, ops = "load", defaultdict(lambda: defaultdict(lambda: [0, 0.0]))
    for line in log.splitlines():
        if line.startswith("@@phase "):
            phase = line.split()[1]
            continue
        m = TIMING.match(line)
        if m:
            op = ops[phase][m.group(1)]
            op[0] += int(m.group(2))
            op[1] += float(m.group(4))
    return {p: dict(v) for p, v in ops.items()}


def family(op):
    """The kernel family of a perf-logger op name (`MUL_MAT q8_0 m=.. n=.. k=..`): the op (a
    fused op counts as the op it starts from) and, for matrix products, f16 or quantized
    weights."""
    words = op.split()
    # A fused op's name leads with the fusion's (`MUL_MAT_ADD MUL_MAT_VEC q8_0 ...`,
    # `RMS_NORM_MUL RMS_NORM(...)`).
    if len(words) > 1 and re.fullmatch(r"[A-Z][A-Z0-9_]*(\(.*)?", words[1]):
        words = words[1:]
    head = words[0].split("(")[0]
    if head.startswith("MUL_MAT"):
        wtype = words[1] if len(words) > 1 else "?"
        return f"{head} {wtype if wtype in ('f32', 'f16', 'bf16') else 'quantized'}"
    if head in ("FLASH_ATTN_EXT", "SOFT_MAX", "RMS_NORM", "ROPE", "GET_ROWS", "SET_ROWS",
                "ARGSORT", "TOP_K", "CPY", "CONT", "GLU"):
        return head
    return "element-wise (ADD, MUL, ...)"


def path(fam, feats):
    """The shader path ggml-vulkan picks for a family on a device with `feats`."""
    if not fam.startswith("MUL_MAT") or (fam.startswith("MUL_MAT_ID") and "_VEC" not in fam):
        # MUL_MAT_ID's matrix-matrix kernel is chosen by more than the features (on tangle
        # the tiers table names it: `matmul_id_subgroup_*`).
        return ""
    if fam.endswith("f32"):
        return "plain"
    if "_VEC" not in fam:
        return "coopmat" if feats["coopmat"] else "plain"
    if fam.endswith("quantized"):
        return "integer-dot" if feats["int_dot"] else "plain"
    return "plain"


def features(device_line):
    return {"coopmat": "KHR_coopmat" in device_line, "int_dot": "int dot: 1" in device_line}


def tables(args, results, meta):
    """The markdown tables: tokens per second with ratios, then per-op families."""
    out = []
    out.append(f"Prompt of {args.prompt} tokens in one batch, then {args.gen} tokens one at a "
               f"time; {args.threads} threads each. Ratios: tangle's rate over the other's.\n")
    out.append("| model | fa | tangle pp tok/s | lavapipe pp | cpu pp | tangle/lvp pp | "
               "tangle/cpu pp | tangle tg tok/s | lavapipe tg | cpu tg | tangle/lvp tg | "
               "tangle/cpu tg | peak MB tangle / lvp / cpu |")
    out.append("|" + " --- |" * 13)
    ratio = lambda a, b: f"{a / b:.3g}×" if a and b else "–"
    num = lambda r, k, f: (f.format(r[k]) if r else "–")
    for key, suffix in [(k, s) for s in ("", "-plain") for k in meta["runs"]]:
        t, l = (results.get(f"{b}{suffix}|{key}") for b in ("tangle", "lavapipe"))
        c = results.get(f"cpu|{key}")
        if suffix and not (t or l):
            continue
        g = lambda r, k: r[k] if r else None
        model, fa = key.split("|")
        out.append(f"| {model}{' (plain shaders)' if suffix else ''} | {fa} | {num(t, 'pp_tok_s', '{:.1f}')} | {num(l, 'pp_tok_s', '{:.1f}')} | "
                   f"{num(c, 'pp_tok_s', '{:.1f}')} | {ratio(g(t, 'pp_tok_s'), g(l, 'pp_tok_s'))} | "
                   f"{ratio(g(t, 'pp_tok_s'), g(c, 'pp_tok_s'))} | {num(t, 'tg_tok_s', '{:.2f}')} | "
                   f"{num(l, 'tg_tok_s', '{:.2f}')} | {num(c, 'tg_tok_s', '{:.2f}')} | "
                   f"{ratio(g(t, 'tg_tok_s'), g(l, 'tg_tok_s'))} | {ratio(g(t, 'tg_tok_s'), g(c, 'tg_tok_s'))} | "
                   f"{num(t, 'peak_mb', '{:.0f}')} / {num(l, 'peak_mb', '{:.0f}')} / {num(c, 'peak_mb', '{:.0f}')} |")
    # Per-op families, summed over every model, per phase.
    for suffix, phase in [(s, p) for s in ("", "-plain") for p in ("pp", "tg")]:
        fam = {b: defaultdict(lambda: [0, 0.0]) for b in ("tangle", "lavapipe")}
        feats = {b: {"coopmat": False, "int_dot": False} for b in fam}
        if suffix and not any(k.startswith("tangle-plain-perf|") for k in results):
            continue
        for key in meta["runs"]:
            t = results.get(f"tangle{suffix}-perf|{key}")
            l = results.get(f"lavapipe{suffix}-perf|{key}")
            if not (t and l):
                continue
            for b, r in (("tangle", t), ("lavapipe", l)):
                feats[b] = features(r["device"])
                for op, (n, us) in r["ops"].get(phase, {}).items():
                    f = fam[b][family(op)]
                    f[0] += n
                    f[1] += us
        names = sorted(set(fam["tangle"]) | set(fam["lavapipe"]),
                       key=lambda k: -fam["tangle"][k][1])
        out.append(f"\nPer-op times{', plain shaders' if suffix else ''}, "
                   f"{'prompt' if phase == 'pp' else 'generation'} phase, summed "
                   f"over the models (ggml-vulkan's GGML_VK_PERF_LOGGER; the family from the "
                   f"op and each device's features):\n")
        out.append("| kernel family | path: tangle / lavapipe | ops | tangle ms | lavapipe ms | "
                   "tangle speed / lavapipe | tangle ms per op | lavapipe µs per op |")
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for k in names:
            (tn, tus), (ln, lus) = fam["tangle"][k], fam["lavapipe"][k]
            r = f"{lus / tus:.3g}×" if tus and lus else "–"
            paths = f"{path(k, feats['tangle']) or '–'} / {path(k, feats['lavapipe']) or '–'}"
            out.append(f"| {k} | {paths} | {tn or ln} | {tus / 1e3:.1f} | {lus / 1e3:.1f} | {r} | "
                       f"{(tus / tn / 1e3 if tn else 0):.2f} | {(lus / ln if ln else 0):.0f} |")
    out.append(tiers_table(args))
    return "\n".join(out) + "\n"


def tiers_table(args):
    """Where tangle ran each pipeline, and why not faster (TANGLE_TIERS of the perf runs),
    summed over the models."""
    rows = defaultdict(lambda: {"dispatches": 0, "native": 0, "wide": 0, "invocations": 0,
                                "ms": 0.0, "why": defaultdict(int)})
    for f in sorted((Path(args.out) / "logs").glob("tangle-*-tiers.json")):
        if f.name.startswith("tangle-plain-"):
            continue
        for p in json.loads(f.read_text()):
            name = p["pipeline"].split("'")[1] if "'" in p["pipeline"] else p["pipeline"]
            r = rows[name]
            r["dispatches"] += p["dispatches"]
            r["native"] += p["native_invocations"]
            r["wide"] += p["wide_invocations"]
            r["invocations"] += p["invocations"]
            r["ms"] += p["driver_ms"]
            for why, n in p["why"].items():
                r["why"][why.split(": ", 1)[-1] if why.startswith(("native", "wide")) else why] += n
    total = sum(r["ms"] for r in rows.values()) or 1.0
    out = ["\nWhere tangle ran each pipeline (TANGLE_TIERS of the perf runs, every model; "
           "the tier by invocations; why: the fast tiers' own reasons):\n",
           "| pipeline | dispatches | ms (share) | ms per dispatch | native / wide / reference "
           "invocations | why not faster |", "| --- | --- | --- | --- | --- | --- |"]
    for name, r in sorted(rows.items(), key=lambda kv: -kv[1]["ms"]):
        ref = r["invocations"] - r["native"] - r["wide"]
        why = "; ".join(sorted(r["why"]))
        out.append(f"| `{name}` | {r['dispatches']} | {r['ms']:.0f} ({100 * r['ms'] / total:.1f}%) | "
                   f"{r['ms'] / max(r['dispatches'], 1):.1f} | {r['native']} / {r['wide']} / {ref} | {why} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--model")
    ap.add_argument("--models")
    ap.add_argument("--out")
    ap.add_argument("--manifest")
    ap.add_argument("--chroot")
    ap.add_argument("--only", default="")
    ap.add_argument("--backends", default=",".join(BACKENDS),
                    help="of cpu, tangle, lavapipe, tangle-plain, lavapipe-plain")
    ap.add_argument("--flash-attn", default="1")
    ap.add_argument("--prompt", type=int, default=512)
    ap.add_argument("--gen", type=int, default=16)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n-gpu-layers", type=int, default=-1)
    ap.add_argument("--reps", type=int, default=1, help="(child) timed repetitions, best kept")
    ap.add_argument("--cpu-reps", type=int, default=5, help="repetitions of the CPU back end")
    ap.add_argument("--no-perf", action="store_true")
    ap.add_argument("--tables-only", action="store_true",
                    help="write tables.md again from OUT/results.json and OUT/meta.json")
    args = ap.parse_args()
    if args.child:
        args.flash_attn = int(args.flash_attn)
        return child(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.tables_only:
        meta = json.loads((out / "meta.json").read_text())
        args.prompt, args.gen, args.threads = meta["prompt"], meta["gen"], meta["threads"]
        text = tables(args, json.loads((out / "results.json").read_text()), meta)
        (out / "tables.md").write_text(text)
        print(text)
        return
    models = sorted(Path(args.models).glob("*.gguf"))
    if args.only:
        models = [m for m in models if m.stem in args.only.split(",")]
    backends = args.backends.split(",")
    fas = [int(f) for f in args.flash_attn.split(",")]
    results_path = out / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    # The runs of earlier calls into the same OUT stay in the tables.
    old = json.loads((out / "meta.json").read_text()) if (out / "meta.json").exists() else {}
    meta = {"runs": list(old.get("runs", [])), "load_start": open("/proc/loadavg").read().split()[:3],
            "prompt": args.prompt, "gen": args.gen, "threads": args.threads}
    for model in models:
        for fa in fas:
            key = f"{model.stem}|{fa}"
            if key not in meta["runs"]:
                meta["runs"].append(key)
            for backend in backends:
                for perf in ([False] if args.no_perf or backend == "cpu" else [False, True]):
                    r = run_child(args, backend, model, fa, perf)
                    if r:
                        r["load_avg"] = open("/proc/loadavg").read().split()[:3]
                        results[f"{backend}{'-perf' if perf else ''}|{key}"] = r
                    results_path.write_text(json.dumps(results, indent=1))
    meta["load_end"] = open("/proc/loadavg").read().split()[:3]
    text = tables(args, results, meta)
    (out / "tables.md").write_text(text)
    (out / "meta.json").write_text(json.dumps(meta, indent=1))
    print(text)


if __name__ == "__main__":
    main()
