#pragma once
// The data-parallel engines of the training frameworks (`data_parallel.engine`, docs/parallelism.md
// "Data-parallel engines"): for an engine and a `parallelism.zero` level, which collectives the
// framework runs inside every microbatch's ops, which once at the end of the step and which after
// the optimizer step, how they are cut into buckets or units, when they may start, and in which
// dtype. Each rule is read from the framework's code (data_parallel_engine.cpp names the file and
// function); nothing here times a collective.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bubblesim {

enum class DataParallelEngine {
  Ddp,        // PyTorch DistributedDataParallel (torch/nn/parallel/distributed.py, reducer.cpp)
  Fsdp,       // PyTorch FSDP1, FullyShardedDataParallel (torch/distributed/fsdp/)
  Fsdp2,      // PyTorch FSDP2, fully_shard (torch/distributed/fsdp/_fully_shard/), torchtitan
  DeepSpeed,  // DeepSpeed ZeRO stages 0-3 (deepspeed/runtime/zero/)
  Megatron,   // Megatron-Core's DDP, distributed optimizer and Megatron-FSDP
};

/// "ddp", "fsdp", "fsdp2", "deepspeed", "megatron".
std::string_view data_parallel_engine_name(DataParallelEngine engine);
std::optional<DataParallelEngine> data_parallel_engine_from_name(std::string_view name);
const std::vector<std::string>& data_parallel_engine_names();

/// The engine when neither `data_parallel.engine` nor the framework preset names one: ZeRO 0
/// PyTorch DDP, 1 Megatron-Core's distributed optimizer, 2 DeepSpeed ZeRO-2, 3 FSDP2.
DataParallelEngine default_data_parallel_engine(std::int32_t zero);

/// Why `engine` cannot run ZeRO level `zero` on a pipeline of `stages`, or "" when it can.
std::string data_parallel_engine_error(DataParallelEngine engine, std::int32_t zero,
                                       std::int32_t stages);

/// When the end-of-step gradient buckets of a stage may start.
enum class BucketReadiness {
  DuringBackward,  // bucket i of k at (i + 1) / k of the stage's last gradient op (hooks)
  AfterBackward,   // all when the stage's last gradient op ends
  AfterCompute,    // all when the device's last compute op ends
};

/// Where the all-gather of the updated parameters runs (ZeRO 1-2; FSDP2 under a pipeline).
enum class ParameterGather {
  None,
  AfterStep,      // after the optimizer step, exposed
  BehindForward,  // before the next step's first forward, bucket by bucket behind its compute
  BehindFill,     // launched at the step's start: hidden by the pipeline fill, then as above
};

/// Choices a scenario makes beyond the engine and the ZeRO level (data_parallel section).
struct DataParallelChoices {
  DataParallelEngine engine = DataParallelEngine::Ddp;
  std::int32_t zero = 0;
  std::int32_t stages = 1;                   // pipeline stages: > 1 changes FSDP2's schedule
  std::int64_t dtype_bytes = 2;              // the model's parameter dtype
  std::optional<std::int64_t> reduce_bytes;  // `data_parallel.reduce_dtype`, unset = engine's
  std::optional<bool> overlap;               // `data_parallel.overlap`, unset = engine's
  std::optional<bool> overlap_param_gather;  // Megatron's, unset = the recipes' (true)
  bool fp8_param_gather = false;             // `data_parallel.fp8_param_gather`
};

/// What an engine runs (docs/parallelism.md, the engine table).
struct DataParallelSemantics {
  DataParallelEngine engine = DataParallelEngine::Ddp;
  std::int32_t zero = 0;
  /// ZeRO 2/3 inside every microbatch's ops, unit (layer) by unit: the parameters all-gathered
  /// before F and again before B, the gradients reduce-scattered after B.
  struct PerMicrobatch {
    bool gather_forward = false, gather_backward = false, reduce_scatter = false;
  } per_microbatch;
  /// The gradient collective after the last microbatch's backward (the "end lane").
  struct EndOfStep {
    bool runs = true;             // false: the gradients are already reduced inside the ops
    bool reduce_scatter = false;  // else an all-reduce
    BucketReadiness readiness = BucketReadiness::DuringBackward;
    /// Megatron: only the first pipeline rank's first model chunk is cut into buckets; every
    /// other stage syncs its gradients as one bucket (distributed_data_parallel.py).
    bool bucket_first_stage_only = false;
    /// PyTorch DDP's bucket of the parameters defined first, reduced last (1 MiB,
    /// dist._DEFAULT_FIRST_BUCKET_BYTES); 0 = none.
    std::int64_t last_bucket_bytes = 0;
    /// FSDP2 under a pipeline: one bucket per FSDP unit (layer), not a byte size.
    bool per_unit = false;
  } end;
  ParameterGather gather = ParameterGather::None;
  /// The per-microbatch collectives move unit by unit behind the compute (prefetch); false:
  /// each op waits for one collective of its whole stage (`parallelism.zero_overlap`).
  bool prefetch = true;
  /// FSDP2 under a pipeline keeps the gathered parameters and the unsharded gradients from the
  /// first forward to the last backward (reshard_after_forward false, requires_gradient_sync
  /// false until the last backward): bytes per parameter held beyond the ZeRO level's.
  double unsharded_bytes = 0;
  double reduce_bytes = 4;        // per parameter in every gradient collective
  double gather_bytes = 2;        // per parameter in every parameter all-gather
  bool fp8_param_gather = false;  // the linear layers' weights gathered as 1-byte FP8
};

/// The semantics of `choices`; throws std::invalid_argument naming what is not allowed.
DataParallelSemantics data_parallel_semantics(const DataParallelChoices& choices);

/// Megatron-Core's default bucket: max(40M, 1M x dp) parameters over a data-parallel group of
/// `dp_cp` GPUs (megatron/training/training.py, resolve_ddp_bucket_size).
std::int64_t megatron_bucket_parameters(std::int64_t dp_cp);

/// The default bucket in bytes when `data_parallel.bucket` is not given: DDP's 25 MiB, Megatron's
/// rule above at `reduce_bytes` per parameter, DeepSpeed's reduce_bucket_size of 5e8 elements.
std::int64_t default_bucket_bytes(const DataParallelSemantics& s, std::int64_t dp_cp);

/// One line per mechanism for the report: what runs, when and in which dtype.
std::string describe(const DataParallelSemantics& s);

}  // namespace bubblesim
