#!/usr/bin/env python3
"""hopgen's fp8 row-wise and block-wise GEMMs beside torch._scaled_mm in the same scaling mode,
in one process, on the same random data; both checked against an f32 reference.

    HOPGEN_LIBRARY=build-gpu/libhopgen.so PYTHONPATH=python \\
        python3 scripts/fp8-torch.py [--modes row,block] [--shapes MxNxK,...] [--iters N]

Row-wise: scale_a (M, 1) and scale_b (1, N) f32 (hopgen: --scale row, one f32 per row of A and
column of B). Block-wise (DeepSeek-V3): A scaled per row and 128 of K (torch's BlockWise1x128:
scale_a (M, ceil(K/128)) with strides (1, M), hopgen's scale_lda = M), B per 128x128 block
(torch's BlockWise128x128 on b = B.t(): scale_b = S.t(), S (ceil(N/128), ceil(K/128)) with a
row stride of ceil(K/128) rounded up to 4, hopgen's scale_ldb). Scales are random powers of two
times 1, 1.25, 1.5 or 1.75. The reference dequantizes A and B to f32 and applies the scales
per 128 of K (f32 matmuls, TF32 off). Per line: TFLOP/s of each (CUDA events, median), the
ratio hopgen / torch (> 1: hopgen faster), each relative error ||D - ref|| / ||ref|| and their
ratio. Without a GPU or torch it says so and exits 0; a mode torch declines prints torch's
sentence. scripts/gpu-check.sh fp8torch runs it.
"""
import argparse
import ctypes as C
import math
import sys

ANCHORS = [(4096, 7168, 16384), (4096, 2112, 7168), (8192, 8192, 8192), (128, 7168, 2048),
           (4096, 24576, 1536), (64, 7168, 16384), (4096, 7168, 2048), (128, 2112, 7168)]
HG_E4M3, HG_BF16 = 2, 6
HG_SCALE = {"row": 1, "block": 2}


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--modes", default="row,block", help="comma-separated: row, block")
    ap.add_argument("--shapes", default="", help="MxNxK,... (default: the issue's anchors)")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1234)
    a = ap.parse_args(argv)
    a.modes = [m for m in a.modes.split(",") if m]
    for m in a.modes:
        if m not in HG_SCALE:
            ap.error(f"mode {m!r} is not one of row, block")
    a.shapes = ([tuple(int(x) for x in s.split("x")) for s in a.shapes.split(",") if s]
                if a.shapes else ANCHORS)
    for s in a.shapes:
        if len(s) != 3 or min(s) < 1:
            ap.error(f"shape {'x'.join(map(str, s))}: expected MxNxK with positive sizes")
    return a


def random_scales(torch, shape, gen):
    """Powers of two in [1/8, 8) times 1, 1.25, 1.5 or 1.75 (exact in f32)."""
    mant = 1 + torch.randint(0, 4, shape, generator=gen, device="cuda").float() / 4
    exp = torch.randint(-3, 4, shape, generator=gen, device="cuda").float()
    return mant * torch.exp2(exp)


def operands(torch, m, n, k, mode, gen):
    """A (M, K) and B (N, K) e4m3, K-major; hopgen's scale tensors, torch's views of them."""
    a = (torch.randn(m, k, generator=gen, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, generator=gen, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb, nb = (k + 127) // 128, (n + 127) // 128
    if mode == "row":
        sa, sb = random_scales(torch, (m,), gen), random_scales(torch, (n,), gen)
        return a, b, sa, sb, sa.view(m, 1), sb.view(1, n), 0, 0
    l4 = (kb + 3) // 4 * 4
    sa = random_scales(torch, (kb, m), gen)  # M-major: sa[kb, i]
    sb = random_scales(torch, (nb, l4), gen)  # sb[jb, kb], rows of l4
    return a, b, sa, sb, sa.t(), sb[:, :kb].t(), m, l4


def reference(torch, a, b, mode, sa, sb):
    """f32: per 128 of K, A_kb B_kb^T scaled (block), or the whole product (row)."""
    af, bf = a.float(), b.float()
    m, k = af.shape
    n = bf.shape[0]
    if mode == "row":
        return (af @ bf.t()) * sa.view(m, 1) * sb.view(1, n)
    d = torch.zeros(m, n, device="cuda")
    for q in range(0, k, 128):
        part = af[:, q:q + 128] @ bf[:, q:q + 128].t()
        colscale = sb[:, q // 128].repeat_interleave(128)[:n]
        d += part * sa[q // 128].view(m, 1) * colscale.view(1, n)
    return d


def rel_err(torch, d, ref):
    return (torch.linalg.vector_norm(d.float() - ref) / torch.linalg.vector_norm(ref)).item()


def timed(torch, fn, iters, warmup):
    for _ in range(warmup):
        fn()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(iters)]
    for s, e in ev:
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) for s, e in ev)
    return t[len(t) // 2]


class HopgenGemm:
    """An fp8 GEMM op with row- or block-wise scales through libhopgen's C API (the Python
    wrapper has no scale modes yet), on torch's current stream and context."""

    def __init__(self, m, n, k, mode, scale_lda, scale_ldb):
        from hopgen import _capi, ops
        from hopgen.errors import check
        self._capi, self._check = _capi, check
        p = _capi.GemmProblem(m=m, n=n, k=k, batch=1, a_type=HG_E4M3, b_type=HG_E4M3,
                              d_type=HG_BF16, a_k_major=True, b_k_major=True, alpha=1.0,
                              scale=HG_SCALE[mode], scale_lda=scale_lda, scale_ldb=scale_ldb)
        self.op = C.c_void_p()
        rt = ops._runtime(0)
        check(_capi.fn("hg_gemm_op_create")(rt, C.byref(p), None, 0, C.byref(self.op)),
              "hg_gemm_op_create: ")
        k = _capi.fn("hg_gemm_op_kernel")(self.op).contents
        buf = C.create_string_buffer(128)
        _capi.fn("hg_gemm_config_print")(C.byref(k.config), buf, 128)
        self.config = buf.value.decode()

    def run(self, torch, a, b, d, sa, sb):
        args = self._capi.GemmArgs(a=a.data_ptr(), b=b.data_ptr(), d=d.data_ptr(),
                                   scale_a=sa.data_ptr(), scale_b=sb.data_ptr())
        self._check(self._capi.fn("hg_gemm_op_run_args")(
            self.op, C.byref(args), C.c_void_p(torch.cuda.current_stream().cuda_stream)),
            "hg_gemm_op_run_args: ")

    def close(self):
        if self.op:
            self._capi.fn("hg_gemm_op_destroy")(self.op)
            self.op = C.c_void_p()


def main(argv=None):
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        print("fp8-torch: skipped (torch is not importable)")
        return 0
    if not torch.cuda.is_available():
        print("fp8-torch: skipped (no GPU)")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    print(f"{'mode':6} {'M':>6} {'N':>6} {'K':>6} {'hopgen config':38} {'hopgen':>8} {'torch':>8} "
          f"{'ratio':>6} {'err hg':>9} {'err torch':>9} {'err x':>6}")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(args.seed)
    fails = 0
    ratios = {m: [] for m in args.modes}
    for mode in args.modes:
        for (m, n, k) in args.shapes:
            a, b, sa, sb, tsa, tsb, lda, ldb = operands(torch, m, n, k, mode, gen)
            ref = reference(torch, a, b, mode, sa, sb)
            flop = 2.0 * m * n * k
            line = f"{mode:6} {m:6d} {n:6d} {k:6d} "
            hg = None
            try:
                hg = HopgenGemm(m, n, k, mode, lda, ldb)
                d = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
                hg.run(torch, a, b, d, sa, sb)
                torch.cuda.synchronize()
                e_hg = rel_err(torch, d, ref)
                t_hg = timed(torch, lambda: hg.run(torch, a, b, d, sa, sb), args.iters,
                             args.warmup)
                line += f"{hg.config:38} {flop / t_hg / 1e9:8.1f} "
            except Exception as ex:  # a refusal is a line of the table, not the end of it
                print(line + f"hopgen failed: {ex}")
                fails += 1
                continue
            finally:
                if hg:
                    hg.close()
            try:
                bt = b.t()
                out = torch._scaled_mm(a, bt, tsa, tsb, out_dtype=torch.bfloat16)
                e_t = rel_err(torch, out, ref)
                t_t = timed(torch, lambda: torch._scaled_mm(a, bt, tsa, tsb,
                                                            out_dtype=torch.bfloat16),
                            args.iters, args.warmup)
                ratios[mode].append(t_t / t_hg)
                line += (f"{flop / t_t / 1e9:8.1f} {t_t / t_hg:6.3f} {e_hg:9.3g} {e_t:9.3g} "
                         f"{e_hg / e_t:6.2f}")
            except Exception as ex:
                msg = str(ex).strip().splitlines()[0][:160] if str(ex).strip() else repr(ex)
                line += f"{'-':>8} {'-':>6} {e_hg:9.3g}  torch declined: {msg}"
            if not (e_hg < 2e-2):
                line += "  FAIL (hopgen's error)"
                fails += 1
            print(line, flush=True)
    for mode, r in ratios.items():
        if r:
            g = math.exp(sum(math.log(x) for x in r) / len(r))
            print(f"{mode}: geomean ratio {g:.3f} over {len(r)} shapes (min {min(r):.3f})")
    print(f"fp8-torch: {fails} failed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
