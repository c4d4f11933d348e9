"""Generation from Python without a GPU: plans as dicts, PTX / MLIR text, ptxas."""
import pytest

import hopgen
from conftest import tool


def test_plan_tma_is_the_cli_json():
    p = hopgen.plan_tma("bf16", (1000, 4096), (128, 64), cluster=2, origin=(0, 64))
    tm = p["tensor_map"]
    assert p["op"] == "load" and p["dtype"] == "bf16"
    assert p["tensor"] == {"shape": [1000, 4096], "stride": [4096, 1]}
    assert tm["global_dim"] == [4096, 1000] and tm["global_strides_bytes"] == [8192]
    assert tm["box_dim"][0] * 2 <= 128 and tm["swizzle_name"] == "128B"
    assert p["multicast"]["cluster"] == 2 and len(p["multicast"]["ctas"]) == 2
    assert sum(b["cta"] == 1 for b in p["boxes"]) == p["multicast"]["boxes_per_cta"]
    assert all(b["abs_coords"][0] == b["coords"][0] + 64 for b in p["boxes"])
    assert p["smem"]["layout"] == "Sw<3,3,3> o 0 o (128,64):(64,1)"  # in 2-byte elements
    # an explicit stage layout, and the widest swizzle choice for narrow rows
    q = hopgen.plan_tma("f16", (64, 64), layout=hopgen.Layout((64, 64), (64, 1)))
    assert q["tensor_map"]["swizzle_name"] == "none" and q["smem"]["bytes"] == 64 * 64 * 2
    assert hopgen.plan_tma("f16", (64, 16), (64, 16))["tensor_map"]["swizzle_name"] == "32B"


def test_plan_tma_refusals_carry_the_rule():
    with pytest.raises(hopgen.InvalidError, match="16"):
        hopgen.plan_tma("bf16", (100, 100), (64, 64), stride=(100, 1))
    with pytest.raises(hopgen.ParseError):
        hopgen.plan_tma("bf17", (64, 64), (64, 64))


def test_plan_mma():
    m = hopgen.plan_mma("bf16", tile=(128, 256, 64), warpgroups=2)
    assert m["wgmma"]["ptx"] == "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16"
    assert m["threads"] == 256 and m["atoms"] == {"m": 1, "n": 1, "k": 4}
    assert len(m["instructions"]) == 2 * 4
    assert m["a"]["desc"]["swizzle"] == "128B" and m["b"]["smem_base"] % 1024 == 0
    r = hopgen.plan_mma("f16", tile=(64, 64, 64), a_regs=True, swizzle="64B")
    assert "a_tv_layout" in r and r["a"]["swizzle"] == "64B"
    with pytest.raises(hopgen.HopgenError, match="N"):
        hopgen.plan_mma("s8", acc="s32", tile=(64, 40, 64))


def test_gemm_kernel_and_config():
    k = hopgen.gemm_kernel(4096, 4096, 4096, dtype="bf16")
    assert f".entry {k.name}" in k.ptx and k.ptx.count(".entry") == 1
    assert k.threads in (256, 384) and k.smem_bytes > 0 and str(k.config) == \
        str(hopgen.gemm_config(4096, 4096, 4096))
    assert set(k.plans) >= {"a", "b"} and k.problem["lda"] == 4096
    c = hopgen.GemmConfig.parse("128x128x64,c1x2,s5,pp,n4")
    assert c.cluster_n == 2 and c.schedule == "pingpong" and str(c) == "128x128x64,c1x2,s5,pp,n4,e0"
    assert c.mainloop == "auto"
    # fp8's accurate accumulation (the default) keeps two accumulator sets: a 128x128
    # ping-pong tile does not hold them, the cooperative one does
    with pytest.raises(hopgen.UnsupportedError, match="accurate accumulation"):
        hopgen.gemm_kernel(1000, 512, 256, dtype="e4m3", out_dtype="f32", config=c)
    c = hopgen.GemmConfig.parse("128x128x64,c1x2,s5,coop,n4")
    k2 = hopgen.gemm_kernel(1000, 512, 256, dtype="e4m3", out_dtype="f32", config=c)
    # the kernel's configuration has its mainloop resolved
    assert "e4m3" in k2.name and k2.config == str(c) + ",tma-wgmma"
    assert k2.operands == {"a": {"path": "tma"}, "b": {"path": "tma"}}
    assert hopgen.plan_gemm(256, 256, 128, a_major="mn", b_major="mn")["problem"]["a_major"] == "m"
    with pytest.raises(hopgen.InvalidError, match="K-major"):
        hopgen.gemm_kernel(256, 256, 128, dtype="e4m3", a_major="mn")
    with pytest.raises(hopgen.HopgenError):
        hopgen.gemm_kernel(256, 256, 128, config="128x100x64")
    # stream-K: the field round-trips through the text form, the kernel is one entry
    c = hopgen.GemmConfig.parse("128x128x64,pp,sk")
    assert c.stream_k and c.splits == 0 and str(c) == "128x128x64,c1x1,s4,pp,m8,e0,sk"
    k3 = hopgen.gemm_kernel(2500, 3500, 1000, dtype="bf16", config=c)
    assert k3.name.endswith("_sk") and k3.ptx.count(".entry") == 1
    with pytest.raises(hopgen.InvalidError, match="stream-K with split-K"):
        hopgen.gemm_kernel(2500, 3500, 1000, config="128x128x64,k4,sk")
    # split-K by atomic adds: "kSa" round-trips, one entry (no reduction pass), named "_kSa"
    c = hopgen.GemmConfig.parse("128x128x64,k8a")
    assert c.split_atomic and c.splits == 8 and str(c) == "128x128x64,c1x1,s4,coop,m8,e0,k8a"
    assert hopgen.GemmConfig.parse(str(c)) == c
    assert not hopgen.GemmConfig.parse("128x128x64,k8").split_atomic
    k5 = hopgen.gemm_kernel(512, 512, 16384, dtype="bf16", config=c)
    assert k5.name.endswith("_k8a") and k5.ptx.count(".entry") == 1
    assert "red.global.add.v4.f32" in k5.ptx
    k6 = hopgen.gemm_kernel(512, 512, 16384, dtype="bf16", config="128x128x64,k8")
    assert k6.ptx.count(".entry") == 2 and "red.global.add.v4.f32" not in k6.ptx
    # split-K reduced in the GEMM: "kSr" round-trips, one entry, no atomic additions into the
    # slots, deterministic problems take it (split order)
    c = hopgen.GemmConfig.parse("128x128x64,k8r")
    assert c.split_scatter and not c.split_atomic and str(c) == "128x128x64,c1x1,s4,coop,m8,e0,k8r"
    assert hopgen.GemmConfig.parse(str(c)) == c
    k7 = hopgen.gemm_kernel(512, 512, 16384, dtype="bf16", config=c, deterministic=True)
    assert k7.name.endswith("_k8r") and k7.ptx.count(".entry") == 1
    assert "red.global.add.v4.f32" not in k7.ptx and "atom.global.add.u32" in k7.ptx
    with pytest.raises(hopgen.UnsupportedError, match="ping-pong"):
        hopgen.gemm_kernel(512, 512, 16384, config="128x128x64,pp,k8r")
    # the heuristic adds a long K's splits by atomics on 64x64 tiles (33 splits of ~1k), unless
    # the problem is deterministic: then the pass, on 64x128 tiles in 64 splits
    assert hopgen.gemm_kernel(128, 128, 32768).config.startswith("64x64x64,c1x1,s8,coop,m8,e0,k33a")
    kd = hopgen.gemm_kernel(128, 128, 32768, deterministic=True)
    assert kd.config.startswith("64x128x64,c1x1,s8,coop,m8,e0,k64,"), kd.config
    with pytest.raises(hopgen.InvalidError, match="deterministic"):
        hopgen.gemm_kernel(512, 512, 16384, config="128x128x64,k8a", deterministic=True)
    # fp8's promotion variants and staged block scales survive the round trip too
    for text, field in (("ps", "promote_stagger"), ("pd", "promote_double"),
                        ("pt", "promote_turns"), ("pa", "promote_ahead"),
                        ("bs", "staged_scales")):
        c = hopgen.GemmConfig.parse("128x128x128,c2x1,s6,coop,m8,e32," + text)
        assert getattr(c, field), text
        assert str(c) == "128x128x128,c2x1,s6,coop,m8,e32," + text
        assert hopgen.GemmConfig.parse(str(c)) == c
    c = hopgen.GemmConfig.parse("128x128x128,c2x1,s6,coop,m8,e32,pd,bs")
    assert c.promote_double and c.staged_scales and not c.promote_turns
    c = hopgen.GemmConfig.parse("128x128x128,c2x1,s6,coop,m8,e32,pd,pa,bs")
    assert c.promote_double and c.promote_ahead and c.staged_scales
    assert str(c) == "128x128x128,c2x1,s6,coop,m8,e32,pd,pa,bs"
    # the erf GELU's formula and direct stores: configuration fields, not the environment
    for text, want in (("gas", ("as", False)), ("gp5", ("poly5", False)),
                       ("gt5", ("poly5t", False)), ("ds", ("poly7", True)),
                       ("gp5,ds", ("poly5", True))):
        c = hopgen.GemmConfig.parse("128x256x64,c2x1,s4,coop,m8,e0," + text)
        assert (c.gelu, c.direct_stores) == want, text
        assert str(c) == "128x256x64,c2x1,s4,coop,m8,e0," + text
        assert hopgen.GemmConfig.parse(str(c)) == c
    assert hopgen.GemmConfig.parse("128x256x64,gp7") == hopgen.GemmConfig(128, 256, 64)
    with pytest.raises(hopgen.InvalidError, match="gelu = 'tanh'"):
        str(hopgen.GemmConfig(128, 256, 64, gelu="tanh"))
    c = hopgen.GemmConfig(128, 256, 64, cluster_m=2, direct_stores=True)
    k5 = hopgen.gemm_kernel(4095, 4097, 128, dtype="bf16", config=c)
    assert k5.name.endswith("_ds") and k5.config == str(c) + ",tma-wgmma", (k5.name, k5.config)
    with pytest.raises(hopgen.InvalidError, match="activation is none"):
        hopgen.gemm_kernel(4096, 4096, 4096, config=hopgen.GemmConfig(128, 256, 64, gelu="as"))
    # a kernel generated from the object keeps the variant (fp8 per-tensor, accurate mode)
    c = hopgen.GemmConfig.parse("128x128x128,c2x1,s6,coop,m8,e0,pd")
    k4 = hopgen.gemm_kernel(4096, 4096, 4096, dtype="e4m3", config=c)
    assert k4.config == str(c) + ",tma-wgmma", (k4.config, str(c))


def test_gemm_mainloops_and_operand_paths():
    # every mainloop by name; the configuration text carries it, the kernel name the MMA kind
    names = {}
    for ml in [m for m in hopgen.MAINLOOPS if m != "ldg-mmasync"]:
        k = hopgen.gemm_kernel(512, 256, 256, dtype="f16", mainloop=ml)
        want = "tma-wgmma" if ml == "auto" else ml
        assert k.config.endswith("," + want), (ml, k.config)
        assert hopgen.GemmConfig.parse(k.config).mainloop == want
        names[ml] = k.name
        path = "cp.async" if ml == "cpasync-wgmma" else "tma"
        assert k.operands["a"]["path"] == k.operands["b"]["path"] == path, (ml, k.operands)
        assert (set(k.plans) >= {"a", "b"}) == (path == "tma")
    assert "_ms" in names["tma-mmasync"] and "_rs" in names["tma-ldmatrix-wgmma-rs"]
    assert len(set(names.values()) - {names["auto"]}) == 3  # auto is tma-wgmma here
    # the decode kernel is for M <= 16 (refused above that, with the rule), and auto takes it
    # for a decode shape whose rows TMA cannot address, reading both operands in place
    k = hopgen.gemm_kernel(8, 256, 256, dtype="f16", mainloop="ldg-mmasync")
    assert k.config.endswith(",ldg-mmasync") and "_ldg" in k.name, (k.config, k.name)
    with pytest.raises(hopgen.UnsupportedError, match="M <= 16"):
        hopgen.gemm_kernel(512, 256, 256, dtype="f16", mainloop="ldg-mmasync")
    k = hopgen.gemm_kernel(1, 7168, 2049, dtype="bf16")
    assert k.config.endswith(",ldg-mmasync"), k.config
    assert "repacked" not in str(k.operands), k.operands
    # with auto, an operand TMA cannot address (lda of 100 bf16: 200-byte rows) is repacked
    # into packed rows the kernel reads with TMA; the problem becomes the packed one
    k = hopgen.gemm_kernel(1000, 256, 96, dtype="bf16", lda=100)
    assert k.operands == {"a": {"path": "tma", "repacked": True}, "b": {"path": "tma"}}
    assert k.config.endswith(",tma-wgmma") and "a" in k.plans and k.problem["lda"] != 100
    # cpasync-wgmma reads it in place, in chunks that fit it (200 B: 8-byte chunks)
    k = hopgen.gemm_kernel(1000, 256, 96, dtype="bf16", lda=100, mainloop="cpasync-wgmma")
    assert k.operands == {"a": {"path": "cp.async", "vec_bytes": 8}, "b": {"path": "cp.async", "vec_bytes": 16}}
    assert k.config.endswith(",cpasync-wgmma") and "_cpa8" in k.name and "a" not in k.plans
    k = hopgen.gemm_kernel(1000, 256, 96, dtype="bf16", b_align=2, mainloop="tma-mmasync")
    assert k.operands["a"] == {"path": "tma"}
    assert k.operands["b"] == {"path": "cp.async", "vec_bytes": 2}
    assert k.problem["b_align"] == 2 and k.config.endswith(",tma-mmasync")
    assert hopgen.plan_gemm(1000, 256, 96, lda=100,
                            mainloop="cpasync-wgmma")["operands"]["a"]["vec_bytes"] == 8
    # the configuration's mainloop, and mainloop= replacing it
    c = "128x128x64,c1x1,s4,coop,m8,e0,tma-ldmatrix-wgmma-rs"
    assert hopgen.gemm_kernel(512, 256, 256, config=c).config == c
    assert hopgen.gemm_kernel(512, 256, 256, config=c, mainloop="tma-mmasync").config == \
        c.replace("tma-ldmatrix-wgmma-rs", "tma-mmasync")
    assert hopgen.gemm_config(4096, 4096, 4096, mainloop="tma-mmasync").mainloop == "tma-mmasync"


def test_gemm_mainloop_refusals_carry_the_c_sentence():
    with pytest.raises(hopgen.ParseError, match="mainloop 'tma-bogus' is not one of auto, "
                       "tma-wgmma, cpasync-wgmma, tma-mmasync, tma-ldmatrix-wgmma-rs"):
        hopgen.gemm_ptx(256, 256, 256, mainloop="tma-bogus")
    with pytest.raises(hopgen.ParseError, match="mainloop"):
        hopgen.GemmConfig(128, 128, 64, mainloop="wgmma").__str__()
    # mma.sync and wgmma RS take 16-bit types only: with a configuration, and without one
    # (no configuration fits: the sentence still names the rule)
    with pytest.raises(hopgen.UnsupportedError, match="bf16/f16"):
        hopgen.gemm_kernel(256, 256, 256, dtype="e4m3", config="128x128x64,tma-mmasync")
    with pytest.raises(hopgen.UnsupportedError, match="tma-ldmatrix-wgmma-rs takes bf16/f16"):
        hopgen.gemm_kernel(256, 256, 256, dtype="e4m3", mainloop="tma-ldmatrix-wgmma-rs")


def test_tma_kernel():
    k = hopgen.tma_kernel("load", "f16", (256, 256), (64, 64), origin=(-8, -16))
    assert k.name.startswith("hg_tma_load_f16") and k.threads == 128
    assert k.plans["tile"]["boxes"][0]["abs_coords"] is not None
    s = hopgen.tma_kernel("reduce-add", "f32", (128, 128), (32, 32), swizzle="none")
    assert "cp.reduce.async.bulk.tensor" in s.ptx
    with pytest.raises(hopgen.HopgenError):
        hopgen.tma_kernel("reduce-inc", "bf16", (64, 64), (64, 64))  # inc takes u32 only


@pytest.mark.skipif(not tool("ptxas"), reason="no ptxas (CUDA toolkit)")
def test_ptxas_accepts_the_generated_code():
    r = hopgen.ptxas_check(hopgen.gemm_ptx(2048, 2048, 2048))
    assert r["registers"] > 0 and r["spill_store_bytes"] == 0
    for ml in hopgen.MAINLOOPS[1:]:  # awkward problems read in place: operands through cp.async
        m = 9 if ml == "ldg-mmasync" else 1000  # the decode kernel: ld.global, shifted blocks
        for k in (4098, 4097):  # 4-byte chunks; 2-byte register copies
            r = hopgen.ptxas_check(hopgen.gemm_ptx(m, 100, k, dtype="f16", mainloop=ml))
            assert r["registers"] > 0 and r["spill_store_bytes"] == 0, (ml, k, r)
    assert hopgen.ptxas_check(hopgen.tma_kernel("store", "bf16", (128, 128), (64, 64)).ptx)
    with pytest.raises(hopgen.JitError):
        hopgen.ptxas_check(".version 8.0\n.target sm_90a\n.address_size 64\nbogus;\n")


@pytest.mark.skipif(not tool("mlir-opt-22"), reason="no mlir-opt-22")
def test_mlir_text():
    mlir = hopgen.gemm_mlir(1024, 1024, 1024)
    assert "gpu.module" in mlir and "nvvm" in mlir
    t = hopgen.tma_kernel("load", "f16", (256, 256), (64, 64), backend="mlir")
    assert "gpu.module" in t.mlir and t.ptx.count(".entry") == 1


def test_bench_shape_sets_are_the_cli_sets():
    # python -m hopgen.bench --set NAME runs the C bench's sets (hg_gemm_shape_set), not a copy
    from hopgen.bench import SETS, shape_set

    assert shape_set("splitk") == [(128, 128, 32768), (512, 512, 16384), (64, 1024, 65536),
                                   (192, 320, 40000)]
    assert len(shape_set("decode")) == 20 and shape_set("decode")[0] == (1, 7168, 2048)
    assert shape_set("waves")[3] == (132 * 128, 256, 512)
    assert shape_set("mid")[0] == (200, 2000, 16384) and "mid" in SETS
    assert all(len(shape_set(s)) > 0 for s in SETS)
    with pytest.raises(hopgen.InvalidError, match="not one of llm"):
        shape_set("nope")
