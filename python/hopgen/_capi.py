"""ctypes mirror of the public C API (include/hopgen/*.h) and the loader of libhopgen.so.

Only functions declared in the public headers are bound. Every struct here mirrors its C
definition field by field; tests/test_abi.py compiles a C program that prints the C offsets
and sizes and compares them with these, so a header change that is not mirrored fails CI.

The library is found, in order: $HOPGEN_LIBRARY (a path to libhopgen.so), the copy installed
inside this package (pip install), then build/libhopgen.so of the source tree this package
sits in (development: PYTHONPATH=python).
"""
from __future__ import annotations

import ctypes as C
import os
import threading
from pathlib import Path

# ----------------------------------------------------------------------------- constants

HG_TUPLE_MAX = 64
HG_LEAF = -1
HG_UNDERSCORE = -(2**63)
HG_TILER_MAX = 16
HG_STATUS_MSG_BYTES = 1024
HG_TMA_MAX_RANK = 5
HG_TMA_MAX_BOXES = 256
HG_TMA_MAX_CLUSTER = 16
HG_GMMA_MAX_BLOCKS = 64

# hg_dtype_t
DTYPES = ["u8", "s8", "e4m3", "e5m2", "u16", "f16", "bf16", "u32", "s32", "f32", "tf32", "u64",
          "f64"]
DTYPE_CODE = {name: i for i, name in enumerate(DTYPES)}
# hg_code_t
CODE_NAMES = ["ok", "parse", "invalid", "overflow", "capacity", "unsupported", "no-driver",
              "no-device", "cuda", "jit", "tool", "io", "nomem", "mismatch"]
BACKENDS = {"ptx": 0, "mlir": 1}
# hg_gemm_mainloop_t, in enum order (hg_gemm_mainloop_name)
MAINLOOPS = ["auto", "tma-wgmma", "cpasync-wgmma", "tma-mmasync", "tma-ldmatrix-wgmma-rs",
             "ldg-mmasync"]
SWIZZLE_MODES = {"none": 0, "32B": 1, "64B": 2, "128B": 3}
TMA_OPS = ["load", "prefetch", "store", "reduce-add", "reduce-min", "reduce-max", "reduce-inc",
           "reduce-dec", "reduce-and", "reduce-or", "reduce-xor"]

# ----------------------------------------------------------------------------- structs


class Status(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * HG_STATUS_MSG_BYTES)]


class Tuple(C.Structure):
    _fields_ = [("n", C.c_int16), ("arity", C.c_int8 * HG_TUPLE_MAX),
                ("v", C.c_int64 * HG_TUPLE_MAX)]


class LayoutC(C.Structure):
    _fields_ = [("shape", Tuple), ("stride", Tuple)]


class Tiler(C.Structure):
    _fields_ = [("rank", C.c_int), ("skip", C.c_bool * HG_TILER_MAX),
                ("mode", LayoutC * HG_TILER_MAX), ("sub", C.c_int8 * HG_TILER_MAX)]


class SwizzleC(C.Structure):
    _fields_ = [("b", C.c_int), ("m", C.c_int), ("s", C.c_int)]


class Composed(C.Structure):
    _fields_ = [("sw", SwizzleC), ("offset", C.c_int64), ("layout", LayoutC)]


class Text(C.Structure):
    _fields_ = [("data", C.c_void_p), ("len", C.c_size_t)]


class TensormapParams(C.Structure):
    _fields_ = [("dtype", C.c_int), ("rank", C.c_int),
                ("global_dim", C.c_uint64 * HG_TMA_MAX_RANK),
                ("global_stride_bytes", C.c_uint64 * (HG_TMA_MAX_RANK - 1)),
                ("box_dim", C.c_uint32 * HG_TMA_MAX_RANK),
                ("element_strides", C.c_uint32 * HG_TMA_MAX_RANK),
                ("interleave", C.c_int), ("swizzle", C.c_int), ("l2_promotion", C.c_int),
                ("oob_nan", C.c_bool)]


class TmaTensor(C.Structure):
    _fields_ = [("dtype", C.c_int), ("rank", C.c_int), ("shape", C.c_int64 * HG_TMA_MAX_RANK),
                ("stride", C.c_int64 * HG_TMA_MAX_RANK), ("base_align_bytes", C.c_uint64)]


class TmaOptions(C.Structure):
    _fields_ = [("op", C.c_int), ("cluster", C.c_int), ("mcast_rank_stride", C.c_int),
                ("l2_promotion", C.c_int), ("oob_nan", C.c_bool), ("origin_known", C.c_bool),
                ("origin", C.c_int32 * HG_TMA_MAX_RANK)]


class TmaBox(C.Structure):
    _fields_ = [("coord", C.c_int32 * HG_TMA_MAX_RANK), ("smem_offset", C.c_uint32)]


class TmaPlan(C.Structure):
    _fields_ = [("op", C.c_int), ("map", TensormapParams),
                ("tmap_mode", C.c_int * HG_TMA_MAX_RANK), ("mode_dim", C.c_int * HG_TMA_MAX_RANK),
                ("tile", C.c_int * HG_TMA_MAX_RANK), ("smem", Composed),
                ("smem_bytes", C.c_uint32), ("smem_align_bytes", C.c_uint32),
                ("box_bytes", C.c_uint32), ("tile_bytes", C.c_uint32), ("num_boxes", C.c_int),
                ("box", TmaBox * HG_TMA_MAX_BOXES), ("cluster", C.c_int),
                ("mcast_rank_stride", C.c_int), ("mcast_mask", C.c_uint16),
                ("boxes_per_cta", C.c_int), ("cta_first_box", C.c_int * HG_TMA_MAX_CLUSTER),
                ("cta_issue_bytes", C.c_uint32), ("expect_tx_bytes", C.c_uint32)]


class WgmmaAtom(C.Structure):
    _fields_ = [("m", C.c_int), ("n", C.c_int), ("k", C.c_int), ("a", C.c_int), ("b", C.c_int),
                ("acc", C.c_int), ("a_major", C.c_int), ("b_major", C.c_int),
                ("a_regs", C.c_bool), ("trans_a", C.c_bool), ("trans_b", C.c_bool),
                ("acc_values", C.c_int), ("acc_regs", C.c_int), ("a_values", C.c_int),
                ("a_regs_count", C.c_int), ("c_tv", LayoutC), ("a_tv", LayoutC),
                ("ptx", C.c_char * 80)]


class GmmaDescFields(C.Structure):
    _fields_ = [("start_address", C.c_uint32), ("lbo_bytes", C.c_uint32),
                ("sbo_bytes", C.c_uint32), ("base_offset", C.c_int), ("layout_type", C.c_int)]


class GmmaOperand(C.Structure):
    _fields_ = [("dtype", C.c_int), ("major", C.c_int), ("swizzle", C.c_int), ("mn", C.c_int),
                ("k", C.c_int), ("atom_mn", C.c_int), ("atom_k", C.c_int), ("layout", Composed),
                ("stage_bytes", C.c_uint32), ("align_bytes", C.c_uint32),
                ("desc", GmmaDescFields), ("mn_atoms", C.c_int), ("kblocks", C.c_int),
                ("mn_atom_offset_bytes", C.c_uint32 * HG_GMMA_MAX_BLOCKS),
                ("kblock_offset_bytes", C.c_uint32 * HG_GMMA_MAX_BLOCKS),
                ("mn_atom_stride_bytes", C.c_uint32), ("kblock_stride_bytes", C.c_uint32)]


class TiledMmaSpec(C.Structure):
    _fields_ = [("a", C.c_int), ("b", C.c_int), ("acc", C.c_int), ("tile_m", C.c_int),
                ("tile_n", C.c_int), ("tile_k", C.c_int), ("wg_m", C.c_int), ("wg_n", C.c_int),
                ("a_major", C.c_int), ("b_major", C.c_int), ("a_swizzle", C.c_int),
                ("b_swizzle", C.c_int), ("auto_swizzle", C.c_bool), ("a_regs", C.c_bool),
                ("atom_n", C.c_int)]


class TiledMma(C.Structure):
    _fields_ = [("atom", WgmmaAtom), ("tile_m", C.c_int), ("tile_n", C.c_int),
                ("tile_k", C.c_int), ("wg_m", C.c_int), ("wg_n", C.c_int),
                ("warpgroups", C.c_int), ("threads", C.c_int), ("atoms_m", C.c_int),
                ("atoms_n", C.c_int), ("atoms_k", C.c_int), ("a_op", GmmaOperand),
                ("b_op", GmmaOperand), ("acc_values", C.c_int), ("acc_tv", LayoutC),
                ("a_tv", LayoutC)]


class Kernel(C.Structure):
    _fields_ = [("ptx", Text), ("mlir", Text), ("name", C.c_char * 128), ("threads", C.c_uint32),
                ("smem_bytes", C.c_uint32), ("cluster", C.c_uint32 * 3), ("gen_ms", C.c_double)]


class GemmArgs(C.Structure):
    """hg_gemm_args_t: a run's device pointers (the epilogue's vectors among them)."""
    _fields_ = [(n, C.c_uint64) for n in ("a", "b", "c", "d", "scale_a", "scale_b", "bias",
                                          "rowscale", "colscale", "residual", "scale_d", "amax",
                                          "aux", "workspace")] + \
               [("workspace_bytes", C.c_size_t), ("workspace_zeroed", C.c_bool)]


class GemmProblem(C.Structure):
    _fields_ = [("m", C.c_int64), ("n", C.c_int64), ("k", C.c_int64), ("batch", C.c_int),
                ("a_type", C.c_int), ("b_type", C.c_int), ("d_type", C.c_int),
                ("a_k_major", C.c_bool), ("b_k_major", C.c_bool), ("lda", C.c_int64),
                ("ldb", C.c_int64), ("ldc", C.c_int64), ("ldd", C.c_int64),
                ("batch_stride_a", C.c_int64), ("batch_stride_b", C.c_int64),
                ("batch_stride_c", C.c_int64), ("batch_stride_d", C.c_int64),
                ("alpha", C.c_float), ("beta", C.c_float), ("d_no_tma", C.c_bool),
                ("a_align", C.c_int), ("b_align", C.c_int), ("act", C.c_int),
                ("act_lo", C.c_float), ("act_hi", C.c_float), ("bias", C.c_int),
                ("bias_type", C.c_int), ("rowscale", C.c_bool), ("colscale", C.c_bool),
                ("residual", C.c_bool),
                ("batch_invariant", C.c_bool), ("group", C.c_int), ("c_type", C.c_int),
                ("amax", C.c_bool), ("aux", C.c_bool), ("aux_type", C.c_int),
                ("ldaux", C.c_int64), ("batch_stride_aux", C.c_int64), ("fp8_accum", C.c_int),
                ("fp8_promote", C.c_int), ("scale", C.c_int), ("scale_lda", C.c_int64),
                ("scale_ldb", C.c_int64), ("deterministic", C.c_bool)]


class GroupedGemmProblem(C.Structure):
    """hg_grouped_gemm_problem_t."""
    _fields_ = [("layout", C.c_int), ("groups", C.c_int), ("rows", C.c_int64),
                ("n", C.c_int64), ("k", C.c_int64), ("a_type", C.c_int), ("b_type", C.c_int),
                ("d_type", C.c_int), ("b_k_major", C.c_bool), ("alpha", C.c_float),
                ("expected_rows", C.c_int64), ("scale", C.c_int), ("fp8_accum", C.c_int),
                ("scale_lda", C.c_int64), ("scale_ldb", C.c_int64)]


class GemmConfig(C.Structure):
    _fields_ = [("tile_m", C.c_int), ("tile_n", C.c_int), ("tile_k", C.c_int),
                ("cluster_m", C.c_int), ("cluster_n", C.c_int), ("stages", C.c_int),
                ("schedule", C.c_int), ("raster", C.c_int), ("raster_group", C.c_int),
                ("epi_n", C.c_int), ("mainloop", C.c_int), ("splits", C.c_int),
                ("promote_overlap", C.c_int), ("stream_k", C.c_int), ("block_scales", C.c_int),
                ("split_atomic", C.c_int), ("split_scatter", C.c_int), ("gelu", C.c_int),
                ("epi_direct", C.c_int), ("swap_ab", C.c_int)]


class GemmKernel(C.Structure):
    _fields_ = [("k", Kernel), ("problem", GemmProblem), ("config", GemmConfig),
                ("tma_store", C.c_bool), ("staged_store", C.c_bool), ("aux_tma", C.c_bool),
                ("aux_staged", C.c_bool), ("aux_n", C.c_int), ("aux_sw", SwizzleC),
                ("a_tma", C.c_bool), ("b_tma", C.c_bool),
                ("a_vec", C.c_int), ("b_vec", C.c_int), ("repack_a", C.c_bool),
                ("repack_b", C.c_bool), ("plan_a", TmaPlan), ("plan_b", TmaPlan),
                ("plan_d", TmaPlan), ("plan_aux", TmaPlan), ("scales_tma", C.c_bool),
                ("map_scale_a", TensormapParams), ("map_scale_b", TensormapParams),
                ("from_cache", C.c_bool),
                ("reduce_name", C.c_char * 64),
                ("reduce_threads", C.c_uint32), ("reduce_smem", C.c_uint32),
                ("reduce_groups", C.c_int), ("swapped", C.c_bool)]


class TmaSpec(C.Structure):
    _fields_ = [("op", C.c_int), ("dtype", C.c_int), ("rank", C.c_int),
                ("shape", C.c_int64 * HG_TMA_MAX_RANK), ("stride", C.c_int64 * HG_TMA_MAX_RANK),
                ("tile", C.c_int * HG_TMA_MAX_RANK), ("grid", C.c_int * HG_TMA_MAX_RANK),
                ("origin", C.c_int32 * HG_TMA_MAX_RANK), ("cluster", C.c_int),
                ("swizzle", C.c_int), ("oob_nan", C.c_bool)]


class CopyConfig(C.Structure):
    _fields_ = [("stages", C.c_int), ("box_rows", C.c_int), ("ctas_per_sm", C.c_int),
                ("evict_first", C.c_bool), ("store_evict_first", C.c_bool),
                ("split_roles", C.c_bool), ("order", C.c_int), ("store_threads", C.c_bool),
                ("ldg", C.c_bool), ("store_cs", C.c_bool), ("store_warps", C.c_int),
                ("unroll", C.c_int), ("ldg_threads", C.c_int)]


class DeviceInfo(C.Structure):
    _fields_ = [("name", C.c_char * 128), ("ordinal", C.c_int), ("cc_major", C.c_int),
                ("cc_minor", C.c_int), ("sm_count", C.c_int),
                ("max_smem_per_block_optin", C.c_int), ("max_smem_per_sm", C.c_int),
                ("l2_bytes", C.c_int), ("clock_khz", C.c_int), ("mem_clock_khz", C.c_int),
                ("mem_bus_bits", C.c_int), ("driver_version", C.c_int),
                ("total_mem_bytes", C.c_uint64)]


class JitInfo(C.Structure):
    _fields_ = [("cache_hit", C.c_bool), ("compile_ms", C.c_double), ("load_ms", C.c_double),
                ("cache_path", C.c_char * 512), ("cache_note", C.c_char * 256)]


class Launch(C.Structure):
    _fields_ = [("grid", C.c_uint32 * 3), ("block", C.c_uint32 * 3),
                ("cluster", C.c_uint32 * 3), ("smem_bytes", C.c_uint32),
                ("stream", C.c_void_p), ("pdl", C.c_bool), ("cooperative", C.c_bool)]


class PtxasReport(C.Structure):
    _fields_ = [("registers", C.c_int), ("spill_store_bytes", C.c_int),
                ("spill_load_bytes", C.c_int), ("stack_frame_bytes", C.c_int),
                ("smem_bytes", C.c_int), ("barriers", C.c_int),
                ("setmaxnreg_ignored", C.c_bool), ("notes", C.c_char * 512)]


class ExportOptions(C.Structure):
    _fields_ = [("dir", C.c_char_p), ("name", C.c_char_p), ("cubin", C.c_bool)]


class ExportResult(C.Structure):
    _fields_ = [("count", C.c_int), ("files", (C.c_char * 512) * 4), ("has_cubin", C.c_bool),
                ("note", C.c_char * 256)]


# The structs mirrored above, by C type name (tests/test_abi.py checks each against C).
MIRRORED = {
    "hg_status_t": Status, "hg_tuple_t": Tuple, "hg_layout_t": LayoutC, "hg_tiler_t": Tiler,
    "hg_swizzle_t": SwizzleC, "hg_composed_t": Composed, "hg_text_t": Text,
    "hg_tensormap_params_t": TensormapParams, "hg_tma_tensor_t": TmaTensor,
    "hg_tma_options_t": TmaOptions, "hg_tma_box_t": TmaBox, "hg_tma_plan_t": TmaPlan,
    "hg_wgmma_atom_t": WgmmaAtom, "hg_gmma_desc_fields_t": GmmaDescFields,
    "hg_gmma_operand_t": GmmaOperand, "hg_tiled_mma_spec_t": TiledMmaSpec,
    "hg_tiled_mma_t": TiledMma, "hg_kernel_t": Kernel, "hg_gemm_problem_t": GemmProblem,
    "hg_gemm_args_t": GemmArgs, "hg_grouped_gemm_problem_t": GroupedGemmProblem,
    "hg_gemm_config_t": GemmConfig, "hg_gemm_kernel_t": GemmKernel, "hg_tma_spec_t": TmaSpec,
    "hg_copy_config_t": CopyConfig, "hg_device_info_t": DeviceInfo, "hg_jit_info_t": JitInfo,
    "hg_launch_t": Launch, "hg_ptxas_report_t": PtxasReport,
    "hg_export_options_t": ExportOptions, "hg_export_result_t": ExportResult,
}

# ----------------------------------------------------------------------------- functions

P = C.POINTER
_vp, _i, _i64, _u32, _u64, _sz, _b, _s = (C.c_void_p, C.c_int, C.c_int64, C.c_uint32,
                                         C.c_uint64, C.c_size_t, C.c_bool, C.c_char_p)

# name: (restype, argtypes). Status-returning functions have restype Status.
_PROTOS = {
    "hg_code_name": (_s, [_i]),
    # layout.h
    "hg_tuple_parse": (Status, [_s, P(Tuple)]),
    "hg_tuple_print": (_i, [P(Tuple), _s, _sz]),
    "hg_layout_parse": (Status, [_s, P(LayoutC)]),
    "hg_layout_print": (_i, [P(LayoutC), _s, _sz]),
    "hg_composed_parse": (Status, [_s, P(Composed)]),
    "hg_composed_print": (_i, [P(Composed), _s, _sz]),
    "hg_tiler_parse": (Status, [_s, P(Tiler)]),
    "hg_tiler_print": (_i, [P(Tiler), _s, _sz]),
    "hg_make_layout": (Status, [P(Tuple), P(Tuple), P(LayoutC)]),
    "hg_make_layout_col_major": (Status, [P(Tuple), P(LayoutC)]),
    "hg_make_layout_row_major": (Status, [P(Tuple), P(LayoutC)]),
    "hg_make_ordered_layout": (Status, [P(Tuple), P(Tuple), P(LayoutC)]),
    "hg_layout_concat": (Status, [_i, P(LayoutC), P(LayoutC)]),
    "hg_size": (Status, [P(LayoutC), P(_i64)]),
    "hg_cosize": (Status, [P(LayoutC), P(_i64)]),
    "hg_crd2idx": (Status, [P(LayoutC), P(Tuple), P(_i64)]),
    "hg_idx2crd": (Status, [P(Tuple), _i64, P(Tuple)]),
    "hg_slice": (Status, [P(LayoutC), P(Tuple), P(LayoutC), P(_i64)]),
    "hg_coalesce": (Status, [P(LayoutC), P(LayoutC)]),
    "hg_coalesce_profile": (Status, [P(LayoutC), P(Tuple), P(LayoutC)]),
    "hg_filter": (Status, [P(LayoutC), P(LayoutC)]),
    "hg_composition": (Status, [P(LayoutC), P(LayoutC), P(LayoutC)]),
    "hg_composition_tiler": (Status, [P(LayoutC), P(Tiler), P(LayoutC)]),
    "hg_complement": (Status, [P(LayoutC), _i64, P(LayoutC)]),
    "hg_right_inverse": (Status, [P(LayoutC), P(LayoutC)]),
    "hg_left_inverse": (Status, [P(LayoutC), P(LayoutC)]),
    "hg_layout_mode": (Status, [P(LayoutC), _i, P(LayoutC)]),
    "hg_layout_rank": (_i, [P(LayoutC)]),
    "hg_layout_depth": (_i, [P(LayoutC)]),
    **{"hg_" + op: (Status, [P(LayoutC), P(Tiler), P(LayoutC)])
       for op in ("logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
                  "logical_product", "zipped_product", "tiled_product", "flat_product")},
    "hg_blocked_product": (Status, [P(LayoutC), P(LayoutC), P(LayoutC)]),
    "hg_raked_product": (Status, [P(LayoutC), P(LayoutC), P(LayoutC)]),
    "hg_local_tile": (Status, [P(LayoutC), P(Tiler), P(Tuple), P(LayoutC), P(_i64)]),
    "hg_local_partition": (Status, [P(LayoutC), P(LayoutC), _i64, P(LayoutC), P(_i64)]),
    "hg_max_common_vector": (Status, [P(LayoutC), P(LayoutC), P(_i64)]),
    "hg_max_common_layout": (Status, [P(LayoutC), P(LayoutC), P(LayoutC)]),
    "hg_upcast": (Status, [P(LayoutC), _i64, P(LayoutC)]),
    "hg_downcast": (Status, [P(LayoutC), _i64, P(LayoutC)]),
    "hg_recast_layout": (Status, [P(LayoutC), _i, _i, P(LayoutC)]),
    "hg_swizzle_make": (Status, [_i, _i, _i, P(SwizzleC)]),
    "hg_swizzle_apply": (_i64, [SwizzleC, _i64]),
    "hg_composed_eval": (Status, [P(Composed), P(Tuple), P(_i64)]),
    "hg_composed_composition": (Status, [P(Composed), P(LayoutC), P(Composed)]),
    "hg_layout_op": (Status, [_s, _i, P(_s), _s, _sz]),
    "hg_layout_picture": (Status, [P(Composed), P(LayoutC), _b, _s, _sz, P(_sz)]),
    # sm90.h
    "hg_dtype_parse": (Status, [_s, P(_i)]),
    "hg_tma_smem_layout": (Status, [P(TmaTensor), P(_i), _i, P(Composed)]),
    "hg_tma_smem_padded": (_b, [P(TmaTensor), P(_i), _i]),
    "hg_tma_plan_make": (Status, [P(TmaTensor), P(Composed), P(TmaOptions), P(TmaPlan)]),
    "hg_tma_options_default": (TmaOptions, [_i]),
    "hg_tma_plan_json": (_i, [P(TmaTensor), P(TmaPlan), P(C.c_int32), _s, _sz]),
    "hg_tiled_mma_make": (Status, [P(TiledMmaSpec), P(TiledMma)]),
    "hg_tiled_mma_json": (_i, [P(TiledMma), _u32, _u32, _s, _sz]),
    "hg_gmma_operand_desc": (Status, [P(GmmaOperand), _u32, _i, _i, P(_u64)]),
    # emit.h
    "hg_text_free": (None, [P(Text)]),
    "hg_ptxas_check": (Status, [_s, P(PtxasReport)]),
    "hg_mlir_to_ptx": (Status, [_s, P(Text)]),
    # kernels.h
    "hg_kernel_free": (None, [P(Kernel)]),
    "hg_gemm_problem_normalize": (Status, [P(GemmProblem)]),
    "hg_gemm_config_print": (_i, [P(GemmConfig), _s, _sz]),
    "hg_gemm_config_parse": (Status, [_s, P(GemmConfig)]),
    "hg_gemm_config_check": (Status, [P(GemmProblem), P(GemmConfig)]),
    "hg_gemm_heuristic": (Status, [P(GemmProblem), _i, P(GemmConfig)]),
    "hg_gemm_generate": (Status, [P(GemmProblem), P(GemmConfig), _i, P(GemmKernel)]),
    "hg_gemm_kernel_free": (None, [P(GemmKernel)]),
    "hg_gemm_mainloop_name": (_s, [_i]),
    "hg_gemm_mainloop_parse": (Status, [_s, P(_i)]),
    "hg_gemm_operand_align": (_i, [P(GemmProblem), _i]),
    "hg_gemm_mainloop_resolve": (_i, [P(GemmProblem), _i]),
    "hg_gemm_build": (Status, [P(GemmProblem), P(GemmConfig), _i, P(DeviceInfo), _i,
                               P(GemmKernel)]),
    "hg_gemm_op_create": (Status, [_vp, P(GemmProblem), P(GemmConfig), _i, P(_vp)]),
    "hg_gemm_op_run": (Status, [_vp, _u64, _u64, _u64, _u64, _u64, _u64, _vp]),
    "hg_gemm_op_run_workspace": (Status, [_vp, _u64, _u64, _u64, _u64, _u64, _u64, _u64,
                                          C.c_size_t, _vp]),
    "hg_gemm_op_workspace_bytes": (C.c_size_t, [_vp]),
    "hg_gemm_op_workspace_zero_bytes": (C.c_size_t, [_vp]),
    "hg_gemm_op_run_args": (Status, [_vp, P(GemmArgs), _vp]),
    "hg_gemm_act_parse": (Status, [_s, P(_i), P(C.c_float), P(C.c_float)]),
    "hg_gemm_op_destroy": (None, [_vp]),
    "hg_gemm_op_kernel": (P(GemmKernel), [_vp]),
    "hg_gemm_op_jit": (P(JitInfo), [_vp]),
    "hg_gemm_op_grid": (_i, [_vp]),
    "hg_gemm_shape_set": (Status, [_s, P(_i64 * 3), P(_i)]),
    "hg_grouped_gemm_op_create": (Status, [_vp, P(GroupedGemmProblem), P(GemmConfig), _i,
                                           P(_vp)]),
    "hg_grouped_gemm_op_run": (Status, [_vp, _u64, _u64, _u64, _u64, _u64, _u64, _vp]),
    "hg_grouped_gemm_op_destroy": (None, [_vp]),
    "hg_grouped_gemm_op_kernel": (P(GemmKernel), [_vp]),
    "hg_grouped_gemm_op_grid": (_i, [_vp]),
    "hg_tma_spec_default": (TmaSpec, [_i]),
    "hg_tma_spec_normalize": (Status, [P(TmaSpec)]),
    "hg_tma_spec_tiles": (_i64, [P(TmaSpec)]),
    "hg_tma_generate": (Status, [P(TmaSpec), _i, P(Kernel), P(TmaPlan)]),
    "hg_gen_copy": (Status, [P(CopyConfig), _i, P(Kernel)]),
    # runtime.h
    "hg_rt_open": (Status, [_i, P(_vp)]),
    "hg_rt_close": (None, [_vp]),
    "hg_rt_device": (P(DeviceInfo), [_vp]),
    "hg_rt_module_load": (Status, [_vp, _s, P(_vp), P(JitInfo)]),
    "hg_rt_module_unload": (None, [_vp, _vp]),
    "hg_rt_function": (Status, [_vp, _vp, _s, _u32, P(_vp)]),
    "hg_rt_tensormap_encode": (Status, [_vp, P(TensormapParams), _u64, _vp]),
    "hg_rt_stream_capture_id": (Status, [_vp, _vp, P(_u64)]),
    "hg_rt_launch": (Status, [_vp, _vp, P(Launch), P(_vp)]),
    "hg_rt_max_active_clusters": (Status, [_vp, _vp, P(Launch), P(_i)]),
    # export.h
    "hg_export_gemm": (Status, [P(GemmProblem), P(GemmConfig), _i, P(ExportOptions),
                                P(ExportResult)]),
}

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates():
    env = os.environ.get("HOPGEN_LIBRARY")
    if env:
        return [Path(env).expanduser().resolve()]
    here = Path(__file__).resolve().parent
    return [here / "libhopgen.so", here.parent.parent / "build" / "libhopgen.so"]


def library_path() -> str:
    """The path of the libhopgen.so this package uses (loading it if needed)."""
    lib()
    return str(_lib_path)


def lib() -> C.CDLL:
    """libhopgen.so with every prototype set; raises ImportError with what was tried."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            tried.append(str(path))
            if not path.is_file():
                continue
            handle = C.CDLL(str(path))
            for name, (res, args) in _PROTOS.items():
                fn = getattr(handle, name, None)
                if fn is None:  # an older library: bind what exists, fail on use
                    continue
                fn.restype = res
                fn.argtypes = args
            _lib_path = path
            _lib = handle
            return _lib
        raise ImportError(
            "hopgen: libhopgen.so not found (tried " + ", ".join(tried) + "). Install the "
            "package with `pip install ./python`, or build the library (cmake --build build) "
            "and set HOPGEN_LIBRARY=/path/to/libhopgen.so")


def fn(name: str):
    """The bound C function `name`; a clear error when the library predates it."""
    f = getattr(lib(), name, None)
    if f is None or name not in _PROTOS:
        raise NotImplementedError(f"hopgen: {library_path()} has no function {name}; rebuild it")
    return f
