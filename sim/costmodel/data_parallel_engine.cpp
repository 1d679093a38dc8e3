#include "sim/costmodel/data_parallel_engine.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace bubblesim {
namespace {

constexpr std::array<std::pair<DataParallelEngine, std::string_view>, 5> kNames{{
    {DataParallelEngine::Ddp, "ddp"},
    {DataParallelEngine::Fsdp, "fsdp"},
    {DataParallelEngine::Fsdp2, "fsdp2"},
    {DataParallelEngine::DeepSpeed, "deepspeed"},
    {DataParallelEngine::Megatron, "megatron"},
}};

std::string dtype_name(double bytes) { return bytes >= 4 ? "fp32" : bytes >= 2 ? "bf16" : "fp8"; }

}  // namespace

std::string_view data_parallel_engine_name(DataParallelEngine engine) {
  for (const auto& [e, name] : kNames)
    if (e == engine) return name;
  return "ddp";
}

std::optional<DataParallelEngine> data_parallel_engine_from_name(std::string_view name) {
  for (const auto& [e, n] : kNames)
    if (n == name) return e;
  return std::nullopt;
}

const std::vector<std::string>& data_parallel_engine_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& kv : kNames) out.emplace_back(kv.second);
    return out;
  }();
  return names;
}

DataParallelEngine default_data_parallel_engine(std::int32_t zero) {
  switch (zero) {
    case 1:
      return DataParallelEngine::Megatron;
    case 2:
      return DataParallelEngine::DeepSpeed;
    case 3:
      return DataParallelEngine::Fsdp2;
    default:
      return DataParallelEngine::Ddp;
  }
}

std::string data_parallel_engine_error(DataParallelEngine engine, std::int32_t zero,
                                       std::int32_t stages) {
  switch (engine) {
    case DataParallelEngine::Ddp:
      if (zero != 0)
        return fmt::format(
            "PyTorch DDP keeps every parameter, gradient and optimizer state on every replica: "
            "zero must be 0 (got {}); shard with engine fsdp, fsdp2, deepspeed or megatron",
            zero);
      return "";
    case DataParallelEngine::Fsdp:
      if (zero < 2)
        return fmt::format(
            "FSDP shards gradients and parameters: zero 2 (SHARD_GRAD_OP) or 3 (FULL_SHARD), got "
            "{}; replicate with engine ddp, or shard the optimizer alone with megatron or "
            "deepspeed",
            zero);
      if (stages > 1)
        return "torch.distributed.pipelining runs FSDP2 modules (fully_shard), not FSDP1: with "
               "pipeline stages use engine fsdp2";
      return "";
    case DataParallelEngine::Fsdp2:
      if (zero < 2)
        return fmt::format(
            "fully_shard shards gradients and parameters: zero 2 (reshard_after_forward false) "
            "or 3 (true), got {}; replicate with engine ddp",
            zero);
      return "";
    case DataParallelEngine::DeepSpeed:
      if (zero >= 2 && stages > 1)
        return fmt::format(
            "DeepSpeed's pipeline engine refuses ZeRO {} (\"ZeRO-2 and ZeRO-3 are incompatible "
            "with pipeline parallelism\", deepspeed/runtime/pipe/engine.py): zero 0 or 1 with "
            "pipeline stages",
            zero);
      return "";
    case DataParallelEngine::Megatron:
      return "";
  }
  return "";
}

DataParallelSemantics data_parallel_semantics(const DataParallelChoices& c) {
  if (const std::string why = data_parallel_engine_error(c.engine, c.zero, c.stages); !why.empty())
    throw std::invalid_argument(why);
  DataParallelSemantics s;
  s.engine = c.engine;
  s.zero = c.zero;
  const double dtype = static_cast<double>(c.dtype_bytes);
  s.gather_bytes = dtype;
  s.fp8_param_gather = c.fp8_param_gather;
  const bool pipelined = c.stages > 1;
  auto& pm = s.per_microbatch;
  auto& end = s.end;
  double reduce = 4;
  switch (c.engine) {
    case DataParallelEngine::Ddp:
      // Reducer hooks launch each bucket's all-reduce as its last gradient arrives; the bucket
      // of the parameters defined first is capped at _DEFAULT_FIRST_BUCKET_BYTES (1 MiB) and,
      // the buckets being reversed, reduced last (torch/nn/parallel/distributed.py,
      // _build_reducer). Under torch.distributed.pipelining the earlier microbatches run under
      // no_sync() and the last backward prepares the reducer (stage.py,
      // backward_maybe_with_nosync). Gradients have the parameters' dtype: fp32 under
      // torch.amp, which keeps fp32 parameters.
      end.last_bucket_bytes = 1 << 20;
      break;
    case DataParallelEngine::Fsdp:
      // FULL_SHARD: all-gather before every forward and backward of a unit, reduce-scatter
      // after its backward; SHARD_GRAD_OP keeps the parameters from forward to backward
      // (torch/distributed/fsdp/_runtime_utils.py, _pre_forward_unshard, _post_backward_hook).
      // MixedPrecision.reduce_dtype None reduces in param_dtype (fsdp/api.py).
      pm = {true, c.zero >= 3, true};
      end.runs = false;
      reduce = dtype;
      break;
    case DataParallelEngine::Fsdp2:
      // torchtitan's MixedPrecisionPolicy(reduce_dtype=float32) (config mixed_precision_reduce).
      if (!pipelined) {
        // fully_shard(reshard_after_forward=True for zero 3): every microbatch gathers in F and
        // B and reduce-scatters after B (_fsdp_param_group.py, pre_forward, pre_backward,
        // post_backward); torchtitan's train loop does not turn gradient sync off.
        pm = {true, c.zero >= 3, true};
        end.runs = false;
      } else {
        // Under a pipeline torchtitan sets reshard_after_forward=False (apply_fsdp, the
        // "default" policy) and torch.distributed.pipelining runs every backward with
        // set_requires_gradient_sync(False) and set_reshard_after_backward(False), then calls
        // every unit's post_backward after the last one (stage.py,
        // backward_maybe_with_nosync): one gather per step, held through the microbatches,
        // and every unit's reduce-scatter after the last backward, one after another.
        end.reduce_scatter = true;
        end.per_unit = true;
        end.readiness = BucketReadiness::AfterBackward;
        s.gather = ParameterGather::BehindFill;
        s.unsharded_bytes = dtype + 4.0;  // gathered weights + fp32 unsharded gradients
      }
      break;
    case DataParallelEngine::DeepSpeed:
      // communication_data_type: the model's dtype under fp16 / bf16 (runtime/engine.py).
      reduce = dtype;
      if (c.zero >= 2) {
        // Stage 2 reduces every micro-step's gradients into their partition; stage 3 also
        // gathers each submodule's parameters before its forward and backward
        // (zero/stage_1_and_2.py reduce_ready_partitions_and_remove_grads, zero/stage3.py).
        pm = {c.zero >= 3, c.zero >= 3, true};
        end.runs = false;
        if (c.zero == 2) s.gather = ParameterGather::AfterStep;
      } else {
        // Stages 0 and 1 reduce at the gradient-accumulation boundary only; stage 1 then
        // all-gathers the updated partitions (all_gather_dp_groups) after the step.
        end.reduce_scatter = c.zero == 1;
        if (c.zero == 1) s.gather = ParameterGather::AfterStep;
      }
      break;
    case DataParallelEngine::Megatron:
      if (c.zero >= 2) {
        // Megatron-FSDP (use_megatron_fsdp): optim_grads reduce-scatters every backward
        // (grad_reduce_every_bprop), optim_grads_params also gathers each unit before its
        // forward and backward (megatron_fsdp.py, _process_post_backward_gradients); the
        // gradients keep the compute dtype (--megatron-fsdp-main-grads-dtype auto).
        pm = {c.zero >= 3, c.zero >= 3, true};
        end.runs = false;
        reduce = dtype;
        if (c.zero == 2)
          s.gather = c.overlap_param_gather.value_or(false) ? ParameterGather::BehindForward
                                                            : ParameterGather::AfterStep;
      } else {
        // DDP over a contiguous fp32 grad buffer (bf16 sets accumulate_allreduce_grads_in_fp32,
        // arguments.py); only pp rank 0's first chunk is bucketed; the distributed optimizer
        // reduce-scatters and all-gathers after the step or, with overlap_param_gather, in the
        // next forward's pre-hooks (distributed_data_parallel.py). --overlap-param-gather is off
        // unless given (arguments.py); the megatron-core framework preset turns it on as
        // Megatron-Bridge's recipes do.
        end.reduce_scatter = c.zero == 1;
        end.bucket_first_stage_only = true;
        if (c.zero == 1)
          s.gather = c.overlap_param_gather.value_or(false) ? ParameterGather::BehindForward
                                                            : ParameterGather::AfterStep;
      }
      break;
  }
  s.reduce_bytes = static_cast<double>(c.reduce_bytes.value_or(static_cast<std::int64_t>(reduce)));
  // Overlap: DDP and FSDP always overlap; Megatron's --overlap-grad-reduce as Megatron-Bridge's
  // recipes set it; DeepSpeed's overlap_comm defaults to stage 3 only (zero/config.py,
  // overlap_comm_valid). Without it the end-of-step buckets wait for the last compute op.
  const bool overlap_default = c.engine != DataParallelEngine::DeepSpeed || c.zero >= 3;
  const bool overlap = c.overlap.value_or(overlap_default);
  if (!overlap) end.readiness = BucketReadiness::AfterCompute;
  if (c.engine == DataParallelEngine::DeepSpeed) s.prefetch = overlap;
  return s;
}

std::int64_t megatron_bucket_parameters(std::int64_t dp_cp) {
  return std::max<std::int64_t>(40'000'000, 1'000'000 * dp_cp);
}

std::int64_t default_bucket_bytes(const DataParallelSemantics& s, std::int64_t dp_cp) {
  switch (s.engine) {
    case DataParallelEngine::Megatron:
      return static_cast<std::int64_t>(static_cast<double>(megatron_bucket_parameters(dp_cp)) *
                                       s.reduce_bytes);
    case DataParallelEngine::DeepSpeed:
      // reduce_bucket_size: 5e8 elements (zero/config.py).
      return static_cast<std::int64_t>(5e8 * s.reduce_bytes);
    default:
      return 25LL << 20;  // bucket_cap_mb = 25 (torch/nn/parallel/distributed.py)
  }
}

std::string describe(const DataParallelSemantics& s) {
  std::string out = fmt::format("{} (zero {})", data_parallel_engine_name(s.engine), s.zero);
  const auto& pm = s.per_microbatch;
  if (pm.gather_forward || pm.reduce_scatter) {
    std::vector<std::string> parts;
    if (pm.gather_forward) parts.emplace_back("all-gather before F");
    if (pm.gather_backward) parts.emplace_back("all-gather before B");
    if (pm.reduce_scatter) parts.emplace_back("reduce-scatter after B");
    out += fmt::format("; every microbatch, unit by unit{}: {}", s.prefetch ? " (prefetched)" : "",
                       fmt::join(parts, ", "));
  }
  if (s.end.runs) {
    const char* when = s.end.readiness == BucketReadiness::DuringBackward  ? "during"
                       : s.end.readiness == BucketReadiness::AfterBackward ? "after"
                                                                           : "after the compute of";
    out += fmt::format("; at the end of the step: {} in buckets {} the last backward",
                       s.end.reduce_scatter ? "reduce-scatter" : "all-reduce", when);
  }
  const char* gather = s.gather == ParameterGather::AfterStep       ? "after the optimizer step"
                       : s.gather == ParameterGather::BehindForward ? "behind the next forward"
                       : s.gather == ParameterGather::BehindFill    ? "behind the pipeline fill"
                                                                    : nullptr;
  if (gather) out += fmt::format("; parameter all-gather {}", gather);
  out += fmt::format("; gradients reduced in {}, parameters gathered in {}",
                     dtype_name(s.reduce_bytes),
                     s.fp8_param_gather ? "fp8 (linear weights)" : dtype_name(s.gather_bytes));
  return out;
}

}  // namespace bubblesim
