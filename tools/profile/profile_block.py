#!/usr/bin/env python3
"""Measure F, B and W of a GPT-style transformer block and write a bubblesim cost profile.

Builds `--layers` pre-LayerNorm GPT blocks (LayerNorm, causal self-attention with `--heads`
heads, LayerNorm, MLP with 4h hidden units, GELU; no dropout) and times, per microbatch:
(`--attention standard`: softmax(QK^T)V as three matmuls; `flash`: torch's fused
scaled_dot_product_attention)

  forward          F  the blocks' forward pass
  backward_input   B  torch.autograd.grad(output, input): gradients of the activations only
  backward_weight  W  the parameter gradients, computed afterwards from what B left behind

To time W apart from B, every parameterized op (the four Linear layers, the two LayerNorm
affines) is a small autograd.Function whose backward returns the input gradient only and queues
the weight-gradient computation (input^T @ grad_output, and the bias sums); W runs that queue.
This is the split the zero-bubble schedules use. (Calling torch.autograd.grad a second time for
the parameters would re-run the whole activation-gradient chain and time B + W, not W.)
`--check` verifies once that this split gives the same gradients as a plain backward.

Memory: `activation` is what the forward leaves allocated until B (on GPU the
torch.cuda.memory_allocated delta across the forward; on CPU the summed sizes of the distinct
storages autograd saves, via torch.autograd.graph.saved_tensors_hooks, parameters excluded);
`weight_grad` is what B leaves queued for W (distinct storages the W queue holds); `p2p` is the
stage output, s b h dtype bytes.

The CSV (format: docs/profile-format.md) has one row per (op, stage) for `--stages` stages, each
stage `--layers-per-stage` layers: times and activation/weight_grad bytes are the measured values
per layer times the layers per stage; p2p is not scaled. The `cv` column gives each time's
coefficient of variation over the timed repetitions (sample standard deviation / mean, not
scaled: see docs/variability.md), which a scenario with `variability:` uses as its op-time noise.
`#` lines record the device, versions, shapes, date and each op's median and spread. Nothing is
downloaded.

Exit status: 0 ok, 1 the --check failed, 2 bad arguments or PyTorch missing.
"""

import argparse
import datetime
import math
import platform
import statistics
import sys
import time

DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hidden", type=int, required=True, help="hidden size h")
    p.add_argument("--heads", type=int, required=True, help="attention heads a (must divide h)")
    p.add_argument("--seq-len", type=int, required=True, help="sequence length s")
    p.add_argument("--micro-batch-size", type=int, default=1, help="microbatch size b (default 1)")
    p.add_argument("--dtype", choices=sorted(DTYPE_BYTES), default="bf16",
                   help="bf16 (default), fp16 (GPU only) or fp32")
    p.add_argument("--device", default=None, help="cuda, cuda:N or cpu (default: cuda if available)")
    p.add_argument("--layers", type=int, default=1, help="blocks built and timed together (default 1)")
    p.add_argument("--attention", choices=["standard", "flash"], default="standard",
                   help="standard (default): softmax(QK^T)V as three matmuls, the s x s scores "
                        "materialised; flash: torch's fused scaled_dot_product_attention (FlashAttention "
                        "or cuDNN, as PyTorch picks), the model's `attention: flash`")
    p.add_argument("--layers-per-stage", type=int, default=1,
                   help="layers of one pipeline stage: measured per-layer values are scaled by it")
    p.add_argument("--stages", type=int, default=1, help="pipeline stages: rows 0..stages-1 (default 1)")
    p.add_argument("--warmup", type=int, default=5, help="untimed repetitions first (default 5)")
    p.add_argument("--reps", type=int, default=20, help="timed repetitions (default 20)")
    p.add_argument("--threads", type=int, default=0, help="CPU threads (default: PyTorch's choice)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--check", action="store_true",
                   help="first verify that the B/W split gives the gradients of a plain backward")
    p.add_argument("-o", "--output", default="-", help="CSV file to write (default: stdout)")
    args = p.parse_args(argv)
    for name in ("hidden", "heads", "seq_len", "micro_batch_size", "layers", "layers_per_stage", "stages", "reps"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.warmup < 0:
        p.error("--warmup must be at least 0")
    if args.hidden % args.heads != 0:
        p.error(f"--hidden {args.hidden} is not divisible by --heads {args.heads}")
    return args


def import_torch():
    try:
        import torch  # noqa: F401  (imported here so a missing PyTorch gives a clear message)
    except ImportError:
        sys.stderr.write("profile_block.py: PyTorch is not installed. On Debian: apt-get install python3-torch "
                         "(or BUBBLESIM_WITH_TORCH=1 tools/setup); elsewhere: pip install torch. If it is installed for "
                         f"another interpreter, run the script with that one (this is {sys.executable}).\n")
        sys.exit(2)
    return torch


def cuda_torch(script):
    """PyTorch with a CUDA GPU for the GPU-only probes, or None after saying which is missing."""
    try:
        import torch
    except ImportError:
        sys.stderr.write(f"{script}: PyTorch is not installed\n")
        return None
    if not torch.cuda.is_available():
        sys.stderr.write(f"{script}: PyTorch sees no CUDA GPU (this measures GPU kernels)\n")
        return None
    return torch


def timed_microbatch(torch, stack, queue, x, grad_out):
    """F, B and W of one microbatch on the current CUDA stream, between four CUDA events.

    W runs without autograd: its GEMMs build no graph (one would chain the repetitions through
    the accumulated gradients)."""
    events = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
    events[0].record()
    out = stack(x)
    events[1].record()
    torch.autograd.grad(out, x, grad_out)
    events[2].record()
    with torch.no_grad():
        queue.run()
    events[3].record()
    return events


def write_output(path, text):
    """`text` to the file `path`, or to standard output for '-'."""
    if path == "-":
        sys.stdout.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def build(torch, args, device, dtype):
    """The block stack and its W queue; `plain=True` on the stack turns the deferral off."""
    fn = torch.nn.functional

    class WeightGradQueue:
        """Weight-gradient work queued by B, run by W. `held` lists the tensors it keeps alive."""

        def __init__(self):
            self.work = []
            self.held = []

        def put(self, work, tensors):
            self.work.append(work)
            self.held.extend(tensors)

        def run(self):
            for work in self.work:
                work()
            self.work.clear()
            self.held.clear()

    def accumulate(param, grad):
        param.grad = grad if param.grad is None else param.grad + grad

    class DeferredLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias, queue):
            ctx.save_for_backward(x, weight, bias)
            ctx.queue = queue
            return fn.linear(x, weight, bias)

        @staticmethod
        def backward(ctx, grad_out):
            x, weight, bias = ctx.saved_tensors

            def weight_grad():
                g = grad_out.reshape(-1, grad_out.shape[-1])
                accumulate(weight, g.t().mm(x.reshape(-1, x.shape[-1])))
                accumulate(bias, g.sum(0))

            ctx.queue.put(weight_grad, [x, grad_out])
            return grad_out.matmul(weight), None, None, None

    class DeferredAffine(torch.autograd.Function):
        """y = xhat * gamma + beta, the affine part of LayerNorm."""

        @staticmethod
        def forward(ctx, xhat, gamma, beta, queue):
            ctx.save_for_backward(xhat, gamma, beta)
            ctx.queue = queue
            return torch.addcmul(beta, xhat, gamma)

        @staticmethod
        def backward(ctx, grad_out):
            xhat, gamma, beta = ctx.saved_tensors

            def weight_grad():
                g = grad_out.reshape(-1, grad_out.shape[-1])
                accumulate(gamma, (g * xhat.reshape(-1, xhat.shape[-1])).sum(0))
                accumulate(beta, g.sum(0))

            ctx.queue.put(weight_grad, [xhat, grad_out])
            return grad_out * gamma, None, None, None

    class Linear(torch.nn.Module):
        def __init__(self, n_in, n_out, queue):
            super().__init__()
            bound = 1.0 / math.sqrt(n_in)
            self.weight = torch.nn.Parameter(torch.empty(n_out, n_in, device=device, dtype=dtype).uniform_(-bound, bound))
            self.bias = torch.nn.Parameter(torch.zeros(n_out, device=device, dtype=dtype))
            self.queue = queue
            self.plain = False

        def forward(self, x):
            if self.plain:
                return fn.linear(x, self.weight, self.bias)
            return DeferredLinear.apply(x, self.weight, self.bias, self.queue)

    class LayerNorm(torch.nn.Module):
        def __init__(self, n, queue):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(n, device=device, dtype=dtype))
            self.bias = torch.nn.Parameter(torch.zeros(n, device=device, dtype=dtype))
            self.queue = queue
            self.plain = False

        def forward(self, x):
            xhat = fn.layer_norm(x, (x.shape[-1],))
            if self.plain:
                return torch.addcmul(self.bias, xhat, self.weight)
            return DeferredAffine.apply(xhat, self.weight, self.bias, self.queue)

    class Block(torch.nn.Module):
        """Pre-LN GPT block on [s, b, h] tensors: x + attn(ln1(x)), then + mlp(ln2(.))."""

        def __init__(self, h, heads, queue):
            super().__init__()
            self.heads = heads
            self.fused_attention = getattr(args, "attention", "standard") == "flash"
            self.ln1 = LayerNorm(h, queue)
            self.qkv = Linear(h, 3 * h, queue)
            self.proj = Linear(h, h, queue)
            self.ln2 = LayerNorm(h, queue)
            self.fc1 = Linear(h, 4 * h, queue)
            self.fc2 = Linear(4 * h, h, queue)

        def forward(self, x):
            s, b, h = x.shape
            d = h // self.heads
            qkv = self.qkv(self.ln1(x)).view(s, b, 3, self.heads, d)
            q, k, v = (qkv[:, :, i].permute(1, 2, 0, 3) for i in range(3))  # [b, heads, s, d]
            if self.fused_attention:
                context = fn.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
                causal = torch.ones(s, s, device=x.device, dtype=torch.bool).triu(1)
                probs = torch.softmax(scores.masked_fill(causal, float("-inf")), dim=-1)
                context = torch.matmul(probs, v)
            context = context.permute(2, 0, 1, 3).reshape(s, b, h)
            x = x + self.proj(context)
            return x + self.fc2(fn.gelu(self.fc1(self.ln2(x))))

    queue = WeightGradQueue()
    stack = torch.nn.Sequential(*[Block(args.hidden, args.heads, queue) for _ in range(args.layers)])
    return stack, queue


def set_plain(torch, stack, plain):
    for m in stack.modules():
        if hasattr(m, "plain"):
            m.plain = plain


def storage_key(t):
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def distinct_bytes(tensors, excluded):
    seen = {}
    for t in tensors:
        key = storage_key(t)
        if key[0] not in excluded:
            seen[key[0]] = key[1]
    return sum(seen.values())


def check_split(torch, args, stack, queue, device, dtype):
    """The deferred B + W gradients equal those of a plain backward (fp32 tolerance)."""
    params = list(stack.parameters())
    x = torch.randn(args.seq_len, args.micro_batch_size, args.hidden, device=device, dtype=dtype, requires_grad=True)
    g = torch.randn(args.seq_len, args.micro_batch_size, args.hidden, device=device, dtype=dtype)
    set_plain(torch, stack, True)
    ref = torch.autograd.grad(stack(x), [x] + params, g)
    set_plain(torch, stack, False)
    for p in params:
        p.grad = None
    (gx,) = torch.autograd.grad(stack(x), x, g)
    queue.run()
    got = [gx] + [p.grad for p in params]
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    worst = 0.0
    for a, b in zip(got, ref):
        if a is None:
            return "a parameter got no gradient from W"
        scale = max(b.abs().max().item(), 1e-12)
        worst = max(worst, (a - b).abs().max().item() / scale)
    for p in params:
        p.grad = None
    return None if worst <= tol else f"largest relative difference {worst:.3g} > {tol:g}"


def measure(torch, args, stack, queue, device, dtype):
    cuda = device.type == "cuda"
    params = list(stack.parameters())
    param_storages = {storage_key(p)[0] for p in params}
    shape = (args.seq_len, args.micro_batch_size, args.hidden)
    x = torch.randn(*shape, device=device, dtype=dtype, requires_grad=True)
    grad_out = torch.randn(*shape, device=device, dtype=dtype)
    times = {"forward": [], "backward_input": [], "backward_weight": []}

    def sync():
        if cuda:
            torch.cuda.synchronize(device)

    for rep in range(args.warmup + args.reps):
        for p in params:
            p.grad = None
        sync()
        if cuda:
            events = timed_microbatch(torch, stack, queue, x, grad_out)
            torch.cuda.synchronize(device)
            spans = [events[i].elapsed_time(events[i + 1]) * 1e-3 for i in range(3)]  # ms -> s
        else:
            t0 = time.perf_counter()
            out = stack(x)
            t1 = time.perf_counter()
            torch.autograd.grad(out, x, grad_out)
            t2 = time.perf_counter()
            queue.run()
            t3 = time.perf_counter()
            spans = [t1 - t0, t2 - t1, t3 - t2]
            del out
        if rep >= args.warmup:
            for key, span in zip(times, spans):
                times[key].append(span)

    # Memory, in one more untimed pass.
    memory = {}
    for p in params:
        p.grad = None
    if cuda:
        sync()
        base = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        out = stack(x)
        sync()
        memory["activation"] = torch.cuda.memory_allocated(device) - base
        memory["forward_peak"] = torch.cuda.max_memory_allocated(device) - base
        torch.autograd.grad(out, x, grad_out)
        sync()
        memory["backward_peak"] = torch.cuda.max_memory_allocated(device) - base
    else:
        saved = []

        def pack(t):
            saved.append(t)
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            out = stack(x)
        memory["activation"] = distinct_bytes(saved, param_storages)
        saved.clear()
        torch.autograd.grad(out, x, grad_out)
    memory["weight_grad"] = distinct_bytes(queue.held, param_storages)
    memory["p2p"] = out.numel() * out.element_size()
    queue.run()
    del out
    return times, memory


def summary(samples):
    ordered = sorted(samples)
    if len(ordered) >= 4:
        q = statistics.quantiles(ordered, n=4)
        q1, q3 = q[0], q[2]
    else:
        q1, q3 = ordered[0], ordered[-1]
    return statistics.median(ordered), q1, q3, ordered[0], ordered[-1]


def coefficient_of_variation(samples):
    """Sample standard deviation over the mean (0 for fewer than two samples)."""
    if len(samples) < 2:
        return 0.0
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / mean if mean > 0 else 0.0


def us(seconds):
    return f"{seconds * 1e6:.6f}us"  # picosecond resolution, the simulator's time unit


def device_name(torch, device):
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"CPU {platform.processor() or platform.machine()}, {torch.get_num_threads()} threads"


def main(argv):
    args = parse_args(argv)
    torch = import_torch()
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[args.dtype]
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.stderr.write("profile_block.py: --device cuda but PyTorch sees no CUDA GPU\n")
        return 2
    if device.type == "cpu" and args.dtype == "fp16":
        sys.stderr.write("profile_block.py: fp16 needs a GPU; on CPU use --dtype fp32 or bf16\n")
        return 2
    if args.attention == "flash" and not hasattr(torch.nn.functional, "scaled_dot_product_attention"):
        sys.stderr.write(f"profile_block.py: --attention flash needs torch's scaled_dot_product_attention "
                         f"(PyTorch 2.0 or later; this is {torch.__version__}); use --attention standard\n")
        return 2
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    stack, queue = build(torch, args, device, dtype)
    if args.check:
        problem = check_split(torch, args, stack, queue, device, dtype)
        if problem:
            sys.stderr.write(f"profile_block.py: --check failed: the B/W split changes the gradients ({problem})\n")
            return 1
    times, memory = measure(torch, args, stack, queue, device, dtype)

    scale = args.layers_per_stage / args.layers  # measured stack -> one stage
    now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    lines = [
        "# bubblesim cost profile written by tools/profile/profile_block.py",
        f"# date: {now}",
        f"# device: {device_name(torch, device)}",
        f"# software: torch {torch.__version__}, cuda {torch.version.cuda or 'none'}, python {platform.python_version()}",
        f"# model: hidden={args.hidden} heads={args.heads} seq_len={args.seq_len} "
        f"micro_batch_size={args.micro_batch_size} dtype={args.dtype} attention={args.attention}",
        f"# measured: {args.layers} layer(s), {args.warmup} warm-up + {args.reps} timed repetitions"
        + (", B/W split checked against a plain backward" if args.check else ""),
        f"# scaled: {args.layers_per_stage} layer(s) per stage, {args.stages} stage(s) "
        "(times and activation/weight_grad bytes x layers_per_stage / layers)",
    ]
    for op, samples in times.items():
        med, q1, q3, lo, hi = summary(samples)
        lines.append(f"# {op} of the measured layers: median {us(med)}, IQR {us(q1)}..{us(q3)}, "
                     f"min {us(lo)}, max {us(hi)}, cv {100 * coefficient_of_variation(samples):.2f}%")
    if "forward_peak" in memory:
        lines.append(f"# GPU peak above the start: forward {memory['forward_peak']}B, "
                     f"through B {memory['backward_peak']}B")
    lines.append("op,stage,duration,bytes,cv")
    for op in times:
        value = statistics.median(times[op]) * scale
        cv = coefficient_of_variation(times[op])
        lines += [f"{op},{stage},{us(value)},,{cv:.6f}" for stage in range(args.stages)]
    for op in ("activation", "weight_grad"):
        value = round(memory[op] * scale)
        lines += [f"{op},{stage},,{value}B," for stage in range(args.stages)]
    lines += [f"p2p,{stage},,{memory['p2p']}B," for stage in range(args.stages)]
    write_output(args.output, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
