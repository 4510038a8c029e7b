// Parameters of the framework-op model (models/op_framework.cpp): their H200 values, each with
// the kernels and records that set it, and a table naming them so that the identifiability
// analysis (models/op_framework_ident.hpp) can perturb them one at a time.
#pragma once

#include <string_view>
#include <vector>

namespace ridge::models {

// ---- parameters ---------------------------------------------------------------------------------
//
// H200 values (132 SMs at 1980 MHz, HBM3e 4.8 TB/s datasheet), each set on the training set
// validate/data/h200/torch/train/train.json (torch 2.11.0+cu130, driver 580.159.04, SM clock
// 1980 MHz and memory 3201 MHz throughout) by the kernels named beside it, and frozen before set 2
// was measured (validate/prereg/torch-set2/); those marked v2 were added after set 2 (fitted on
// sets 1 and 2), those in the v3 block below after set 3 (least squares, weighted by relative
// error, on the kernels of sets 1-3 named beside each; the fits' medians and p90s are the
// kernels' own, before summing into ops). Other GPUs scale the bandwidths by their datasheet HBM
// bandwidth and the rates by SMs x clock (not validated).
struct FwParams {
  // Fixed duration of any kernel as the profiler reports it (start-up and drain): the shortest
  // kernels of the set (add-eps and rsqrt over 4-8 blocks) run 0.90-0.99 us.
  double t0_s = 1.0e-6;
  // Streaming bandwidth, reads + writes, of PyTorch's vectorised kernels: fp32 GELU over 64 Mi
  // elements (537 MB in 127.8 us), fp32->bf16 casts (786 MB in 177.8 us).
  double stream_bw = 4.4e12;
  // Write-only streams (FillFunctor zeroing the cross-entropy gradient: 524 MB in 113 us).
  double write_bw = 4.65e12;
  // cat's CatArrayBatchedCopy_vectorized: 134-201 MB moved at 3.9-4.1 TB/s (5 shapes).
  double cat_bw = 4.0e12;
  // Row reductions over the last dimension (reduce_kernel<512,1>, mean/sum): 12.6-67 MB at
  // 2.8-3.7 TB/s.
  double row_reduce_bw = 3.8e12;
  // Device-to-device memcpy (expand's copy in the composed RMSNorm backward): 3.6-3.7 TB/s.
  double memcpy_bw = 3.7e12;
  // 32-byte sectors between L2 and the SMs when a warp's loads scatter (2-D transposes, strided
  // copies): 570 MB of sectors for a 4096x4096 bf16 transpose in 122.7 us, fp32 stride 8: 604 MB
  // in 137 us.
  double sector_bw = 4.7e12;
  // Elements per second of PyTorch's non-vectorised loops (unrolled_elementwise_kernel,
  // elementwise_kernel<128, 2|4> with an offset calculator per operand): bf16->fp32 casts
  // (131 M elements in 381 us) and 4-D transposes (8.4-33.5 M elements at 0.34-0.36 T/s).
  double unrolled_rate = 0.345e12;
  // Block-per-row softmax backward kernels (cunn_SoftMaxBackward{,Smem}; v1, set 1): each
  // block's row is loaded in rounds of threads x 16 B; a round takes the loaded latency
  // max(row_latency_min, bytes in flight on the GPU / row_latency_bw) (Little's law), and a block
  // pays row_block_base for its reductions and barriers.
  // (v4) row_latency_min_s is the unloaded HBM load latency, the H200's pointer chase (333.1 ns:
  // validate/data/h200/memory.json, configs/hw/h200-sxm-141gb.calibrated.yaml hbm_latency): the
  // records of sets 1-3 never reach this floor (any value below 1.08 us fits them alike), so v1's
  // 0.6 us was not set by them.
  double row_latency_min_s = 333.1e-9;
  double row_latency_bw = 4.0e12;
  double row_block_base_s = 2.36e-6;
  // ---- v3 (fitted on sets 1-3, after set 3 was measured; validate/prereg/torch-set4/) ----------
  // SIMT-bound kernels: an SM's time for a piece of work is its issue cost plus the latency the
  // resident warps cannot hide, issue + latency / W, with W the warps resident on the SM (from
  // the kernel's registers and shared memory: models/occupancy). Costs are SM-seconds at 1980 MHz.
  //
  // softmax_warp_forward: a hardware warp handles WARP_BATCH rows of WARP_SIZE lanes
  // (min(next_pow2(cols), 32) lanes, 2 rows when next_pow2(cols) <= 128, 32 / WARP_SIZE logical
  // warps per hardware warp); each lane walks n = WARP_BATCH x cols / WARP_SIZE elements. A
  // hardware warp costs its SM warp_fwd_task_s + n x (warp_fwd_issue_s + warp_fwd_latency_s /
  // W). Least squares on the 24 warp-forward kernels of sets 1-3 (16 to 2048 columns, 4096 to
  // 262144 rows): median 3.1%, p90 9.9%. The 2048-column rows (80 registers, W = 24) cost 1.35 x
  // the 512-column ones (32 registers, W = 64) per element: the latency term.
  double warp_fwd_task_s = 14.28e-9, warp_fwd_issue_s = 3.811e-9, warp_fwd_latency_s = 151.7e-9;
  // softmax_warp_backward, the same form without a task cost: 3 kernels (256, 512, 1024 columns;
  // 32, 55, 96 registers): 1024 columns at 96 registers run 1.6 x slower per element than 256.
  double warp_bwd_issue_s = 4.402e-9, warp_bwd_latency_s = 86.9e-9;
  // Block-per-row softmax forward (1024 threads a row), per element of the SM's rows:
  // cunn_SoftMaxForwardReg: 12 kernels (4096-8192 columns); at 8192 columns its 37 registers
  // leave one block (W = 32) per SM and the element cost rises 20-35% (set 3's 3072 x 8192 was
  // -22 to -30% under v2's latency chain, which had no occupancy term).
  double reg_issue_s = 0.3141e-9, reg_latency_s = 7.25e-9;
  // cunn_SoftMaxForwardSmem: 4 kernels (10240-20480 columns): 2.0-2.3 ps an element whatever the
  // rows (v2's three latency-bound passes gave +43% at 10240 columns). (v4) One cost an element:
  // its 1024-thread blocks fit two an SM at every row length (W = 64 on the H200), so v3's
  // issue + latency / W pair was one number to the data (collinear; validate/README.md,
  // identifiability); v3's 0.2374 + 2.704 / 64 ps.
  double smem_issue_s = 0.2806e-9;
  // cunn_SoftMaxForward (three passes over global memory): issue-bound in bf16 (2.0-2.25 ps an
  // element from 64 to 1024 rows: one row per SM below 132 rows) and HBM-bound in fp32, where the
  // max and sum passes' re-reads hit L2 for a fraction min(1, l2_reread_fraction x L2 / bytes of
  // the rows in flight) and stream from HBM otherwise, at plain_hbm_bw. 46 kernels (rows 64-16384,
  // columns 16384-262144): median 2.0%, p90 6.1%. (v2 had a step: all re-reads hit below 75% of
  // L2, none above; 4096 x 32000 fp32 lies between.)
  // (v4) One cost an element for the same reason (32 registers, two blocks an SM, W = 64 at
  // every shape): v3's 0.2285 + 2.812 / 64 ps.
  double plain_issue_s = 0.2735e-9;
  double l2_reread_fraction = 0.1629, plain_hbm_bw = 4.01e12;
  // vectorized_layer_norm_kernel (LayerNorm and RMSNorm forward): a 128-thread block per row in
  // two passes (statistics, then normalise and write), each in rounds of 128 threads x 4
  // elements (vec_size 4 for every dtype: 8 B a thread in bf16, 16 B in fp32). A block's time is
  // a base (the block reduction: Welford's combine for LayerNorm, a sum for RMSNorm) plus per
  // round the loaded latency ln_l0 + bytes in flight on the GPU / ln_bw; LayerNorm's Welford
  // update adds ln_welford_s a round to the first pass. When the rows in flight exceed
  // l2_keep_fraction of L2, the second pass re-reads from HBM: then x is read twice and y written
  // at ln_spill_bw. 36 kernels of sets 1-3: median 6.1%, p90 16.9% (v2's bandwidth-plus-wave form:
  // set 3's LayerNorm class median 11.8%).
  // (v4) RMSNorm's block base is dropped (0): sets 1-3 left it within a factor 2.9 either way
  // (0.13-1.09 us at 95%); its sum-reduction is in the rounds' latency.
  double ln_fwd_base_s = 1.862e-6, ln_l0_s = 0.3285e-6;
  double ln_bw = 5.841e12, ln_welford_s = 0.09548e-6, ln_spill_bw = 3.265e12;
  double l2_keep_fraction = 0.75;
  // layer_norm_grad_input_kernel_vectorized: the same two-pass form with two arrays (dY and x) in
  // flight; when the rows in flight pass lngi_keep_fraction of L2, dY and x are read twice from
  // HBM and dX written (5 x the tensor) at lngi_spill_bw. 36 kernels: median 5.4%, p90 14.0%.
  double lngi_base_s = 0.7748e-6, lngi_l0_s = 0.3979e-6, lngi_bw = 9.48e12;
  double lngi_spill_bw = 4.701e12, lngi_keep_fraction = 0.5077;
  // GammaBetaBackwardCUDAKernelTemplate: a 32 x 32-thread block per 32 columns walks all rows, 256
  // rows an iteration (8 per thread); an iteration costs the loaded latency gb_l0 + bytes in
  // flight / gb_bw, with at most one block per SM progressing (above 132 blocks the iterations
  // of the SM's blocks serialise: 160 blocks run 1.5 x, 256 blocks 2 x the time of 128);
  // LayerNorm's (weight and bias sums) cost gb_ln_factor times RMSNorm's. 36 kernels: median 7.5%.
  // (v4) v3's extra fixed cost of 0.078 us a kernel is dropped: no record moved with it.
  double gb_l0_s = 0.7565e-6, gb_bw = 6.234e12, gb_ln_factor = 1.172;
  // elementwise_kernel<128, vt> direct copies (transposes, strided reads): a thread copies vt
  // elements (4 of 2 bytes, 2 of 4 bytes) after computing its offsets: copy_elem_s an element
  // (GPU-seconds), or the sectors or bytes, whichever is longest. 28 records of sets 1-3:
  // median 1.3%, p90 15.6%; the fp32 stride 2 copy (vt 2) runs at 0.31 T elements/s, the bf16 one
  // (vt 4) at 0.42 T/s (v2: one rate, 0.345). (v4) v3 had a cost a thread (2.728 ps) and one per
  // offset dimension a thread (0.3987 ps) beside the element's: sets 1-3 pin neither (95% intervals
  // 0.13-1.18 ps for the dimension's, a factor 3 either way; dropping it leaves the thread's at
  // 0.68-6.0 ps; dropping the thread's instead leaves the dimension's at 0.11-1.20 ps), so both are
  // dropped and the element's re-fitted on sets 1-3.
  double copy_elem_s = 2.793e-12;
  // reduce_kernel<128,4> summing over rows (a weight gradient): a fixed cost and a time per row.
  double column_reduce_base_s = 9.0e-6, column_reduce_per_row_s = 0.9e-9;
  // nll_loss's single-block kernels: one latency per row a thread handles (rows / threads, the
  // threads being rows / 16 clamped to [32, 1024]); forward after log_softmax 1.08 us per
  // iteration (18.3 us at 16 iterations, 9 kernels), alone 0.44 us (8.0-8.4 us, 3 kernels);
  // backward 0.53 us (9.3-10.4 us, 9 kernels).
  double nll_fwd_iter_s = 1.08e-6, nll_fwd_alone_iter_s = 0.44e-6, nll_bwd_iter_s = 0.53e-6;
  // (v2, fitted on set 2: nll_loss forward alone at 16384 and 32768 rows, 1024 threads, 0.72-0.78
  // us an iteration) the single SM drains the block's gathers at 53 GB/s.
  double nll_sm_bytes_per_s = 53e9;
  // GELU's arithmetic, issue cycles per element per SM (the SFU erf/tanh and the FP32 work around
  // them): bf16 over 64 Mi elements runs below the streaming rate (exact forward 89.7 us, tanh
  // 77.3 us, exact backward 121.3 us, tanh backward 103.0 us).
  double gelu_exact_fwd_cpe = 0.345, gelu_tanh_fwd_cpe = 0.297;
  double gelu_exact_bwd_cpe = 0.468, gelu_tanh_bwd_cpe = 0.397;
  double memset_s = 0.8e-6;  // Memset of a few bytes (0.74-0.80 us)
};

/// One parameter of FwParams: its name (the member's), the member, and the kernels whose time it
/// enters (as the model's code uses it).
struct FwParamDecl {
  std::string_view name;
  double FwParams::*member;
  std::string_view kernels;
  bool fitted = true;  ///< false: fixed at a measured or derived value (see its comment)
};

/// Every parameter of FwParams, in declaration order.
const std::vector<FwParamDecl>& framework_param_table();

}  // namespace ridge::models
