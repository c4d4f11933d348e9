"""python -m hopgen.bench: hopgen's GEMM against torch in one process, on the same fresh
random data, after a correctness check (the shape set of `hopgen bench gemm`).

    python -m hopgen.bench                        # bf16 and e4m3, the 13 shapes
    python -m hopgen.bench --set all --types bf16 # every set of `hopgen bench gemm --set`
    python -m hopgen.bench --types bf16 --shapes 4096x4096x4096,128x7168x2048
    python -m hopgen.bench --overhead             # host time per call (no GPU work timed)
    python -m hopgen.bench --types bf16 --mainloop tma-mmasync   # one mainloop throughout
    python -m hopgen.bench --grouped              # the MoE set: hopgen.grouped_gemm vs torch

bf16 runs against torch.matmul; e4m3 (bf16 output, per-tensor scales 1.25 and 0.75) against
torch._scaled_mm with use_fast_accum=False, the same accumulation as hopgen's default (partial
sums promoted into f32; the Python wrapper has no fast mode yet); e4m3-accurate is the same.
Both read K-major operands ("TN": a row-major [M, K], b = w.t() of a row-major [N, K]).
Timing: 5 warm-up calls, then GPU time: 10 calls captured in a CUDA graph, each replay
event-timed, the median per call, two interleaved rounds, the better of each side (eager
times, each call event-timed alone, are kept in the JSON: for small problems they count the
host's time per call, more so through Python). Calls take copies of the operands in turn,
enough to pass twice the L2, as bench gemm does: each reads its operands from memory, as a
model's layers do (the same operands every call would leave decode weights in the L2). The
ratio is torch's time over hopgen's (> 1: hopgen faster). Relative errors are
||D - ref|| / ||ref|| against an f32 reference.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time

SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384),
          (8192, 28672, 8192), (8192, 8192, 28672), (4096, 7168, 2048), (4096, 2112, 7168),
          (4096, 24576, 1536), (4096, 7168, 16384), (128, 7168, 2048), (128, 24576, 1536),
          (64, 7168, 16384)]
TOLERANCE = {"bf16": 1e-2, "f16": 1e-2, "e4m3": 1e-2, "e4m3-accurate": 1e-2}


GRAPH_CALLS = 10


def _timed_graph(torch, fn, iters: int) -> float:
    """fn's GPU time, ms: GRAPH_CALLS calls captured in a CUDA graph, each replay event-timed,
    the median over the calls. Eager calls timed one by one also count the host's time per
    call wherever it exceeds the kernel's (small problems, more so through Python): both
    sides are timed this way, so the ratio compares the kernels."""
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # allocations made while capturing come from its pool
        fn()
        torch.cuda.synchronize()
        with torch.cuda.graph(g, stream=side):
            for _ in range(GRAPH_CALLS):
                fn()
    torch.cuda.current_stream().wait_stream(side)
    g.replay()
    torch.cuda.synchronize()
    return _timed(torch, g.replay, max(3, iters // 2)) / GRAPH_CALLS


def _timed(torch, fn, iters: int) -> float:
    stream = torch.cuda.current_stream()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(iters)]
    for a, b in ev:
        a.record(stream)
        fn()
        b.record(stream)
    torch.cuda.synchronize()
    t = sorted(a.elapsed_time(b) for a, b in ev)
    return t[len(t) // 2]


def _copies(torch, a, w):
    """Copies of the operands (the same values at other addresses), enough to pass twice the
    L2 (at most GRAPH_CALLS): calls that take them in turn read their operands from memory,
    as a model's layers do, not from the L2 the previous call filled."""
    l2 = getattr(torch.cuda.get_device_properties(a.device), "L2_cache_size", 50 << 20)
    nbytes = a.numel() * a.element_size() + w.numel() * w.element_size()
    n = max(1, min(GRAPH_CALLS, -(-2 * l2 // max(nbytes, 1))))
    return [a] + [a.clone() for _ in range(n - 1)], [w] + [w.clone() for _ in range(n - 1)]


def _in_turn(aa, ww, call):
    """A function of no arguments calling call(a_i, w_i) on the copies in turn."""
    turn = [0]

    def fn():
        i = turn[0]
        turn[0] = (i + 1) % len(aa)
        return call(aa[i], ww[i])
    return fn


def run_one(kind: str, m: int, n: int, k: int, iters: int = 30, check: bool = True,
            mainloop: str = "auto") -> dict:
    """Check and time one problem; returns a dict (TFLOP/s, ratio, errors, config)."""
    import torch
    import hopgen

    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(time.time_ns()) & 0xFFFFFFFF)  # fresh data every run
    a32 = torch.randn(m, k, device=dev, generator=gen)
    w32 = torch.randn(n, k, device=dev, generator=gen)
    if kind in ("bf16", "f16"):
        dt = torch.bfloat16 if kind == "bf16" else torch.float16
        a, w = a32.to(dt), w32.to(dt)
        scale = 1.0
        d = torch.full((m, n), float("nan"), device=dev, dtype=dt)
        aa, ww = _copies(torch, a, w)
        hg = _in_turn(aa, ww, lambda x, y: hopgen.gemm(x, y.t(), out=d, mainloop=mainloop))
        th = _in_turn(aa, ww, lambda x, y: torch.matmul(x, y.t()))
    else:
        a, w = a32.to(torch.float8_e4m3fn), w32.to(torch.float8_e4m3fn)
        sa = torch.tensor([1.25], device=dev)
        sb = torch.tensor([0.75], device=dev)
        scale = 1.25 * 0.75
        d = torch.full((m, n), float("nan"), device=dev, dtype=torch.bfloat16)
        # hopgen.gemm runs fp8's accurate accumulation (the default; the Python wrapper has no
        # fast mode yet): torch runs its accurate mode too, like for like
        fast = False
        aa, ww = _copies(torch, a, w)
        hg = _in_turn(aa, ww, lambda x, y: hopgen.gemm(x, y.t(), out=d, scale_a=sa, scale_b=sb,
                                                       mainloop=mainloop))
        th = _in_turn(aa, ww, lambda x, y: torch._scaled_mm(
            x, y.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=fast))
    del a32, w32
    t0 = time.perf_counter()
    hg()
    torch.cuda.synchronize()
    first_ms = (time.perf_counter() - t0) * 1e3
    r = {"type": kind, "m": m, "n": n, "k": k, "first_call_ms": first_ms,
         "operand_copies": len(aa)}
    op = hopgen.ops._last_op[0]  # the operation the call above ran
    r["config"], r["kernel"] = op.config, op.kernel
    if check:
        ref = (a.float() @ w.float().t()) * scale
        nrm = ref.norm()
        r["nonfinite"] = int((~torch.isfinite(d.float())).sum())
        r["rel_err"] = float((d.float() - ref).norm() / nrm)
        try:
            r["rel_err_torch"] = float((th().float() - ref).norm() / nrm)
        except RuntimeError as e:  # e.g. _scaled_mm refusing a shape
            r["rel_err_torch"], th = math.nan, None
            r["torch_error"] = str(e).splitlines()[0]
        del ref
        r["ok"] = r["nonfinite"] == 0 and r["rel_err"] <= TOLERANCE[kind]
    for _ in range(5):
        hg()
        if th:
            th()
    best_h = best_t = eager_h = eager_t = math.inf
    r["timing"] = "cuda-graph"
    for _ in range(2):
        eager_h = min(eager_h, _timed(torch, hg, iters))
        if th:
            eager_t = min(eager_t, _timed(torch, th, iters))
        try:
            best_h = min(best_h, _timed_graph(torch, hg, iters))
            if th:
                best_t = min(best_t, _timed_graph(torch, th, iters))
        except RuntimeError as e:  # a capture refused: eager times, and the reason kept
            r["timing"], r["graph_error"] = "eager", str(e).splitlines()[0]
            best_h, best_t = eager_h, eager_t
    # eager: each call timed alone on the stream, the host's time per call included where it
    # exceeds the kernel's
    r["hopgen_eager_ms"], r["torch_eager_ms"] = eager_h, eager_t if th else math.nan
    flop = 2.0 * m * n * k
    r["hopgen_ms"], r["hopgen_tflops"] = best_h, flop / best_h / 1e9
    r["torch_ms"] = best_t if th else math.nan
    r["torch_tflops"] = flop / best_t / 1e9 if th else math.nan
    r["ratio"] = best_t / best_h if th else math.nan
    return r


# The MoE set of issue 11: (experts, tokens per expert, N, K).
MOE = [(8, 4096, 4096, 7168), (32, 512, 4096, 7168), (128, 128, 1536, 2048),
       (256, 64, 2048, 7168)]


def run_grouped(kind: str, e: int, t: int, n: int, k: int, iters: int = 30,
                check: bool = True) -> dict:
    """hopgen.grouped_gemm (contiguous, torch's offs) against torch._grouped_mm (bf16) or
    torch._scaled_grouped_mm with row-wise scales (e4m3), on the same data; falls back to a
    loop of per-expert torch GEMMs where torch lacks them (said in the result's "torch")."""
    import torch
    import hopgen

    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(int(time.time_ns()) & 0xFFFFFFFF)
    total = e * t
    offs = torch.arange(1, e + 1, device=dev, dtype=torch.int32) * t
    a32 = torch.randn(total, k, device=dev, generator=gen)
    w32 = torch.randn(e, n, k, device=dev, generator=gen)  # [E, N, K]: K-major weights
    d = torch.full((total, n), float("nan"), device=dev, dtype=torch.bfloat16)
    r = {"type": kind, "experts": e, "tokens": t, "n": n, "k": k}
    if kind == "bf16":
        a, w = a32.bfloat16(), w32.bfloat16()
        b = w.transpose(1, 2)
        hg = lambda: hopgen.grouped_gemm(a, b, offs, out=d)  # noqa: E731
        if hasattr(torch, "_grouped_mm"):
            th = lambda: torch._grouped_mm(a, b, offs=offs, out_dtype=torch.bfloat16)  # noqa
            r["torch"] = "torch._grouped_mm"
        else:
            th = lambda: [a[i * t:(i + 1) * t] @ b[i] for i in range(e)]  # noqa: E731
            r["torch"] = "per-expert torch.matmul"
        ref_fn = lambda i: a[i * t:(i + 1) * t].float() @ b[i].float()  # noqa: E731
    else:
        a, w = a32.to(torch.float8_e4m3fn), w32.to(torch.float8_e4m3fn)
        b = w.transpose(1, 2)
        sa = torch.rand(total, device=dev, generator=gen) + 0.5
        sb = torch.rand(e, n, device=dev, generator=gen) + 0.5
        hg = lambda: hopgen.grouped_gemm(a, b, offs, out=d, scale_a=sa, scale_b=sb)  # noqa
        if hasattr(torch, "_scaled_grouped_mm"):
            th = lambda: torch._scaled_grouped_mm(a, b, sa, sb, offs=offs,  # noqa: E731
                                                  out_dtype=torch.bfloat16)
            r["torch"] = "torch._scaled_grouped_mm (row-wise)"
        else:
            th, r["torch"] = None, "none (torch lacks _scaled_grouped_mm)"
        ref_fn = lambda i: (a[i * t:(i + 1) * t].float() @ b[i].float()) * \
            sa[i * t:(i + 1) * t, None] * sb[i][None, :]  # noqa: E731
    del a32, w32
    hg()
    torch.cuda.synchronize()
    if check:
        num = den = 0.0
        for i in range(e):
            ref = ref_fn(i)
            num += float((d[i * t:(i + 1) * t].float() - ref).norm()) ** 2
            den += float(ref.norm()) ** 2
        r["nonfinite"] = int((~torch.isfinite(d.float())).sum())
        r["rel_err"] = math.sqrt(num / den)
        r["ok"] = r["nonfinite"] == 0 and r["rel_err"] <= 1e-2
    if th is not None:
        try:
            th()
        except RuntimeError as ex:
            r["torch_error"] = str(ex).splitlines()[0]
            th = None
    for _ in range(5):
        hg()
        if th:
            th()
    best_h = best_t = math.inf
    for _ in range(2):
        best_h = min(best_h, _timed(torch, hg, iters))
        if th:
            best_t = min(best_t, _timed(torch, th, iters))
    flop = 2.0 * total * n * k
    r["hopgen_ms"], r["hopgen_tflops"] = best_h, flop / best_h / 1e9
    r["torch_ms"] = best_t if th else math.nan
    r["torch_tflops"] = flop / best_t / 1e9 if th else math.nan
    r["ratio"] = best_t / best_h if th else math.nan
    return r


def grouped_main(types, iters: int, check: bool, json_path) -> int:
    import torch
    results, failures = [], 0
    print(f"{'type':<6} {'E x T':>10} {'N':>6} {'K':>6} {'hopgen':>8} {'torch':>8} {'ratio':>7} "
          f"{'err':>9}  torch", flush=True)
    for kind in types:
        for (e, t, n, k) in MOE:
            try:
                r = run_grouped(kind, e, t, n, k, iters, check)
            except Exception as ex:
                print(f"{kind:<6} {e:>4}x{t:<5} {n:>6} {k:>6}  ERROR {ex}", flush=True)
                results.append({"type": kind, "experts": e, "tokens": t, "error": str(ex)})
                failures += 1
                continue
            results.append(r)
            torch.cuda.empty_cache()
            bad = r.get("ok") is False
            failures += bad
            print(f"{kind:<6} {e:>4}x{t:<5} {n:>6} {k:>6} {r['hopgen_tflops']:>8.1f} "
                  f"{r['torch_tflops']:>8.1f} {r['ratio']:>7.3f} {r.get('rel_err', math.nan):>9.2e}"
                  f"  {r['torch']}{' ' + r['torch_error'] if 'torch_error' in r else ''}"
                  f"{'  FAILED' if bad else ''}", flush=True)
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "grouped": results}, f, indent=1)
    return 1 if failures else 0


def host_overhead(m: int = 256, n: int = 256, k: int = 256, calls: int = 3000) -> dict:
    """Host time per call, microseconds: hopgen.gemm (out given, and allocating its output),
    the C launch alone (hg_gemm_op_run_workspace through ctypes with the arguments prepared), and
    torch.matmul, on a problem small enough that the GPU keeps up with the launches."""
    import torch
    import hopgen
    from hopgen import ops

    a = torch.randn(m, k, device="cuda").bfloat16()
    w = torch.randn(n, k, device="cuda").bfloat16()
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    b = w.t()
    hopgen.gemm(a, b, out=d)
    torch.cuda.synchronize()
    op = ops._last_op[0]
    run = ops._run
    pa, pb, pd = a.data_ptr(), b.data_ptr(), d.data_ptr()
    stream = torch.cuda.current_stream().cuda_stream

    def per_call(fn) -> float:
        best = math.inf
        for _ in range(3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            best = min(best, (t1 - t0) / calls * 1e6)
        return best

    c_us = per_call(lambda: run(op.handle, pa, pb, 0, pd, 0, 0, 0, 0, stream))
    py_us = per_call(lambda: hopgen.gemm(a, b, out=d))
    alloc_us = per_call(lambda: hopgen.gemm(a, b))
    torch_us = per_call(lambda: torch.matmul(a, b))
    return {"problem": f"{m}x{n}x{k} bf16", "c_launch_us": c_us, "hopgen_gemm_us": py_us,
            "hopgen_gemm_alloc_us": alloc_us, "torch_matmul_us": torch_us,
            "overhead_us": py_us - c_us}


# The shape sets of `hopgen bench gemm --set`, read from the library (one list for both).
SETS = ("llm", "decode", "splitk", "odd", "waves", "mid", "unaligned")


def shape_set(name: str):
    """The (M, N, K) shapes of `hopgen bench gemm --set name` (hg_gemm_shape_set)."""
    import ctypes as C
    from . import _capi
    from .errors import check

    buf = (C.c_int64 * 3 * 64)()
    count = C.c_int(0)
    check(_capi.fn("hg_gemm_shape_set")(name.encode(), buf, C.byref(count)),
          "hopgen.bench: ")
    return [tuple(int(v) for v in buf[i]) for i in range(count.value)]


def _shapes(text: str, base=SHAPES):
    if text == "all":
        return base
    if text.isdigit():
        return base[:int(text)]
    return [tuple(int(x) for x in s.split("x")) for s in text.split(",")]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m hopgen.bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--types", default="bf16,e4m3",
                    help="comma-separated: bf16, f16, e4m3, e4m3-accurate (default bf16,e4m3)")
    ap.add_argument("--set", default="llm",
                    help="the shape set(s) of `hopgen bench gemm --set`, comma-separated: "
                         + ", ".join(SETS) + ", or all (default llm)")
    ap.add_argument("--shapes", default="all",
                    help="all, N (the first N of each set), or MxNxK,... (instead of --set)")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--mainloop", default="auto",
                    help="auto, tma-wgmma, cpasync-wgmma, tma-mmasync, tma-ldmatrix-wgmma-rs, "
                         "ldg-mmasync")
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--json", help="write every result to this file")
    ap.add_argument("--overhead", action="store_true", help="only the host time per call")
    ap.add_argument("--grouped", action="store_true",
                    help="the MoE set: hopgen.grouped_gemm against torch._grouped_mm (bf16) and "
                         "torch._scaled_grouped_mm row-wise (e4m3)")
    args = ap.parse_args(argv)
    import torch
    import hopgen

    if not torch.cuda.is_available():
        print("hopgen.bench: no CUDA device visible to torch", file=sys.stderr)
        return 1
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"libhopgen {hopgen.library_path()}", flush=True)
    if args.grouped:
        return grouped_main([x for x in args.types.split(",") if x in ("bf16", "e4m3")],
                            args.iters, not args.no_check, args.json)
    if args.overhead:
        o = host_overhead()
        print(f"host time per call ({o['problem']}): C launch {o['c_launch_us']:.2f} us, "
              f"hopgen.gemm(out=) {o['hopgen_gemm_us']:.2f} us (+{o['overhead_us']:.2f} us), "
              f"hopgen.gemm allocating {o['hopgen_gemm_alloc_us']:.2f} us, torch.matmul "
              f"{o['torch_matmul_us']:.2f} us")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(o, f, indent=1)
        return 0
    results, failures = [], 0
    if args.shapes != "all" and not args.shapes.isdigit():
        groups = [("shapes", _shapes(args.shapes))]
    else:
        names = SETS if args.set == "all" else args.set.split(",")
        groups = [(s, _shapes(args.shapes, shape_set(s))) for s in names]
    for set_name, shapes in groups:
        for kind in args.types.split(","):
            ref = "torch._scaled_mm" if kind.startswith("e4m3") else "torch.matmul"
            print(f"set {set_name}\n{'type':<6} {'M':>6} {'N':>6} {'K':>6}  {'config':<44} "
                  f"{'hopgen':>8} {ref[:8]:>8} {'ratio':>7} {'err':>9} {'err_t':>9}", flush=True)
            logs = []
            for (m, n, k) in shapes:
                try:
                    r = run_one(kind, m, n, k, args.iters, not args.no_check, args.mainloop)
                except Exception as e:  # a refusal is a finding, not the end of the run
                    print(f"{kind:<6} {m:>6} {n:>6} {k:>6}  ERROR {e}", flush=True)
                    results.append({"set": set_name, "type": kind, "m": m, "n": n, "k": k,
                                    "error": str(e)})
                    failures += 1
                    continue
                r["set"] = set_name
                results.append(r)
                torch.cuda.empty_cache()
                bad = r.get("ok") is False
                failures += bad
                if r["ratio"] == r["ratio"]:
                    logs.append(math.log(r["ratio"]))
                note = f"  (torch: {r['torch_error'][:60]})" if "torch_error" in r else ""
                print(f"{kind:<6} {m:>6} {n:>6} {k:>6}  {r['config']:<44} "
                      f"{r['hopgen_tflops']:>8.1f} {r['torch_tflops']:>8.1f} {r['ratio']:>7.3f} "
                      f"{r.get('rel_err', math.nan):>9.2e} "
                      f"{r.get('rel_err_torch', math.nan):>9.2e}{'  FAILED' if bad else ''}{note}",
                      flush=True)
            if logs:
                print(f"{set_name} {kind}: geometric-mean ratio "
                      f"{math.exp(sum(logs) / len(logs)):.3f} over {len(logs)} shapes, lowest "
                      f"{math.exp(min(logs)):.3f}\n", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "runs": results}, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
