// Builder for a diffusion pipeline: text encoder, K sampler steps of a DiT denoiser
// (classifier-free guidance doubles the batch), VAE decoder, device-to-host copy of the frames, and
// a fixed-time video encode on the host. T_total ~= K T_denoiser + T_fixed (seed 003, sec. 8).
//
// The op sequence mirrors validate/e2e/diffusion.py (CLIP-L-like encoder, DiT-XL/2-like blocks with
// adaLN modulation, nearest-upsample VAE stages of conv3x3 + GroupNorm + SiLU, uint8 postprocess).
// Video models add cross-attention to the text in each block and 3-D convs in the VAE: a kt x 3 x 3
// conv over F frames is timed as a 2-D implicit GEMM over F images with c_in x kt input channels
// (the same FLOPs: 2 x outputs x c_out x c_in x kt x 9). Temporal upsampling is applied before the
// first VAE stage (all stages run at the output frame count): an upper bound on VAE work.
#pragma once

#include "workloads/graph.hpp"
#include "workloads/model_config.hpp"

namespace ridge::workloads {

struct DiffusionOptions {
  int steps = 20;         ///< K sampler steps (denoiser calls)
  double guidance = 4.0;  ///< CFG scale (its combine is elementwise work)
  bool include_text = true;
  bool include_vae = true;
};

/// The whole pipeline, ending in a host synchronisation (and the video encode when configured).
Graph build_diffusion_pipeline(const DiffusionConfig& m, const DiffusionOptions& o);
/// One denoiser call at the CFG batch (a stage alone, as validate/e2e measures it).
Graph build_denoiser_call(const DiffusionConfig& m);
/// The text encoder alone, and the VAE decoder alone (without the host copy), as stages.
Graph build_text_encoder_call(const DiffusionConfig& m);
Graph build_vae_decode_call(const DiffusionConfig& m);

}  // namespace ridge::workloads
