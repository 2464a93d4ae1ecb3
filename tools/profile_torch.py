#!/usr/bin/env python3
"""Measure a training profile (docs/profiles.md) of a torchvision model on this machine.

Runs forward + backward + optimizer step on a synthetic batch and times every module that owns
parameters with hooks (time.perf_counter on CPU; on CUDA a CUDA event recorded on the stream in
every hook, without synchronising, read against an event at the phase's start once the phase has
synchronised, so that the host keeps launching ahead of the device as it does without hooks):

* forward: a forward hook records when each parameter-owning module finishes; a module's
  forward_s is the time since the previous such event (or since the forward pass started), so
  non-parametric work (ReLU, pooling, residual adds, functional ops) is charged to the next
  parametric module, and the time after the last one (head, loss) to the last one. The layers'
  forward_s therefore add up to the measured forward pass.
* backward: a hook on every parameter fires when its gradient is computed; a module's
  backward_s is the time since the previous gradient event (or since backward() started), plus
  the remainder of backward() for the last one. The layers' backward_s add up to backward().
* optimizer_s: the optimizer step (--optimizer, default SGD with momentum 0.9).
* io_s: moving the input batch and labels from host memory to the device (a pinned-memory
  copy on CUDA; on CPU a plain in-memory copy).
* unattributed_s: the training iteration as it runs without hooks (zero_grad, input copy,
  forward, loss, backward, optimizer step; --iterations back-to-back iterations timed as one,
  synchronised once at the end) minus io_s, the layers' forward_s and backward_s and optimizer_s:
  what no hook captures (zero_grad, the loop's Python, framework bookkeeping, the allocator), so
  the layers + optimizer_s + io_s + unattributed_s = the measured iteration. Clamped at 0 when the
  hooked phases take longer than the un-hooked iteration (the hooks' own overhead), with a note in
  the provenance.

Times are averaged over --iterations after --warmup iterations. Each module with parameters
is one layer (so a conv and its batch norm are two layers; tools/make_profiles.py folds them),
named by its module path; parameters and grad_bytes are exact (grad_bytes = gradient element
size x numel, so 4 B per parameter under autocast, whose parameters stay fp32).

The phases (input copy, forward, backward, optimizer step) are synchronised at their ends. Small
per-layer times are dominated by launch/hook overhead; treat per-layer numbers on GPU as approximate
and check the totals against an un-hooked run (printed at the end).

Example:
  python3 tools/profile_torch.py --model resnet18 --batch-size 2 --iterations 2 --warmup 1 \\
      --device cpu --output scenarios/profiles/measured/resnet18_cpu.json

With --batch-sizes 8,16,32 the model is measured at each batch (increasing) and ONE multi-batch
profile is written: the first batch's times at the top level, every other batch's io_s,
optimizer_s and per-layer forward_s/backward_s under "batch_profiles" (docs/profiles.md). The
layers, their order, parameters and grad_bytes must be the same at every batch (they are checked).

Besides torchvision model names, --model mnist_cnn profiles the pytorch/examples MNIST CNN,
--model eventgrad_cnn the EventGraD paper's CNN-2 (soumyadipghosh/eventgrad, 27,480 parameters) and
--model gpt2 GPT-2 small as a causal language model (124,439,808 parameters: HuggingFace
GPT2LMHeadModel's modules, names and tied head written in plain torch, so no transformers package is
needed; --seq-len tokens per sample, default 1024, next-token cross-entropy on random tokens).
--kineto-trace PATH also records one un-hooked training iteration (after one warm-up) with
torch.profiler (CPU and, on --device cuda, CUDA activity; Python stacks with module names) and writes
its Chrome/Kineto trace to PATH (gzipped when PATH ends in .gz).
Requires torch and torchvision (e.g. Debian's python3-torch and python3-torchvision); without them it
prints one error line naming the package and exits 2.
"""

import argparse
import datetime
import json
import os
import platform
import socket
import sys
import time

PROG = "profile_torch.py"


def die(message, status=1):
    """One error line on stderr, no traceback."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    raise SystemExit(status)


def import_optional(module, package, what):
    """Imports torch or torchvision, or exits 2 with one line naming the Debian package to install.

    A module that is absent gives "<what> is not installed (Debian: apt-get install <package>)"; one that is
    present but fails to import (a missing shared library, a broken install) gives
    "<what> cannot be imported: <the ImportError>", so the cause is not hidden.
    """
    try:
        return __import__(module)
    except ImportError as e:
        if isinstance(e, ModuleNotFoundError) and e.name == module:
            die(f"{what} is not installed (Debian: apt-get install {package})", 2)
        die(f"{what} cannot be imported: {e} (Debian: apt-get install {package})", 2)


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def dumps(profile):
    """JSON with one layer object per line (same layout as tools/make_profiles.py)."""
    def layer_rows(layers, indent):
        return ",\n".join(f"{indent}{json.dumps(l, separators=(', ', ': '))}" for l in layers)

    head = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in profile.items() if k not in ("layers", "batch_profiles")]
    out = "{\n" + ",\n".join(head) + ',\n  "layers": [\n' + layer_rows(profile["layers"], "    ") + "\n  ]"
    if "batch_profiles" in profile:
        entries = []
        for b in profile["batch_profiles"]:
            fields = ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in b.items() if k != "layers")
            entries.append("    {" + fields + ', "layers": [\n' + layer_rows(b["layers"], "      ") + "\n    ]}")
        out += ',\n  "batch_profiles": [\n' + ",\n".join(entries) + "\n  ]"
    return out + "\n}\n"


GPT2_VOCAB, GPT2_CONTEXT, GPT2_WIDTH, GPT2_LAYERS, GPT2_HEADS = 50257, 1024, 768, 12, 12


def build_gpt2(torch):
    """GPT-2 small (Radford et al. 2019) with HuggingFace GPT2LMHeadModel's module paths and defaults:
    pre-LayerNorm blocks, tanh-approximated GELU, dropout 0.1 (embeddings, attention, residuals), the
    language-model head tied to transformer.wte (its gradient lands in wte). nn.Linear stands for HF's
    Conv1D (same parameters, transposed storage)."""
    nn, F = torch.nn, torch.nn.functional
    sdpa = getattr(F, "scaled_dot_product_attention", None)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(GPT2_WIDTH, 3 * GPT2_WIDTH)
            self.c_proj = nn.Linear(GPT2_WIDTH, GPT2_WIDTH)
            self.resid_dropout = nn.Dropout(0.1)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.c_attn(x).split(c, dim=2)
            q, k, v = (z.view(b, t, GPT2_HEADS, c // GPT2_HEADS).transpose(1, 2) for z in (q, k, v))
            if sdpa is not None:
                y = sdpa(q, k, v, dropout_p=0.1 if self.training else 0.0, is_causal=True)
            else:  # torch < 2.0
                att = (q @ k.transpose(-2, -1)) / (k.size(-1) ** 0.5)
                mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
                att = F.dropout(att.masked_fill(mask, float("-inf")).softmax(dim=-1), 0.1, self.training)
                y = att @ v
            return self.resid_dropout(self.c_proj(y.transpose(1, 2).reshape(b, t, c)))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(GPT2_WIDTH, 4 * GPT2_WIDTH)
            self.c_proj = nn.Linear(4 * GPT2_WIDTH, GPT2_WIDTH)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x):
            return self.dropout(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(GPT2_WIDTH, eps=1e-5)
            self.attn = Attention()
            self.ln_2 = nn.LayerNorm(GPT2_WIDTH, eps=1e-5)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class Transformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(GPT2_VOCAB, GPT2_WIDTH)
            self.wpe = nn.Embedding(GPT2_CONTEXT, GPT2_WIDTH)
            self.drop = nn.Dropout(0.1)
            self.h = nn.ModuleList(Block() for _ in range(GPT2_LAYERS))
            self.ln_f = nn.LayerNorm(GPT2_WIDTH, eps=1e-5)

    class GPT2LMHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = Transformer()
            for m in self.modules():  # HF's _init_weights: N(0, 0.02), zero biases
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    nn.init.normal_(m.weight, std=0.02)
                if isinstance(m, nn.Linear):
                    nn.init.zeros_(m.bias)

        def forward(self, idx):
            tr = self.transformer
            pos = torch.arange(idx.size(1), device=idx.device)
            x = tr.drop(tr.wte(idx) + tr.wpe(pos))
            for block in tr.h:
                x = block(x)
            return F.linear(tr.ln_f(x), tr.wte.weight)  # lm_head, tied to wte

    return GPT2LMHead()


def build_model(torch, name, num_classes):
    nn = torch.nn
    if name == "gpt2":
        return build_gpt2(torch), None, GPT2_VOCAB
    if name == "mnist_cnn":
        class Net(nn.Module):  # pytorch/examples mnist/main.py
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 32, 3, 1)
                self.conv2 = nn.Conv2d(32, 64, 3, 1)
                self.dropout1 = nn.Dropout(0.25)
                self.dropout2 = nn.Dropout(0.5)
                self.fc1 = nn.Linear(9216, 128)
                self.fc2 = nn.Linear(128, 10)

            def forward(self, x):
                x = torch.relu(self.conv1(x))
                x = torch.relu(self.conv2(x))
                x = torch.nn.functional.max_pool2d(x, 2)
                x = torch.flatten(self.dropout1(x), 1)
                x = self.dropout2(torch.relu(self.fc1(x)))
                return torch.nn.functional.log_softmax(self.fc2(x), dim=1)

        return Net(), (1, 28, 28), 10
    if name == "eventgrad_cnn":
        F = torch.nn.functional

        class EventGradCNN2(nn.Module):  # soumyadipghosh/eventgrad dmnist/event/event.cpp, "CNN-2"
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 10, 3)
                self.conv2 = nn.Conv2d(10, 20, 3)
                self.conv2_drop = nn.Dropout2d()
                self.fc1 = nn.Linear(500, 50)
                self.fc2 = nn.Linear(50, 10)

            def forward(self, x):
                x = torch.relu(F.max_pool2d(self.conv1(x), 2))
                x = torch.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
                x = torch.relu(self.fc1(x.view(-1, 500)))
                x = F.dropout(x, 0.5, self.training)
                return F.log_softmax(self.fc2(x), 1)

        return EventGradCNN2(), (1, 28, 28), 10
    torchvision = import_optional("torchvision", "python3-torchvision", "torchvision")
    models = torchvision.models
    kwargs = {"num_classes": num_classes}
    if name in ("inception_v3", "googlenet"):
        kwargs["init_weights"] = False  # the scipy truncated-normal init is slow and irrelevant here
        kwargs["aux_logits"] = True
    ctor = getattr(models, name, None)
    if ctor is None or not callable(ctor) or name.startswith("_"):
        available = sorted(n for n in dir(models) if not n.startswith("_") and n.islower()
                           and callable(getattr(models, n)) and n not in ("get_model", "get_weight",
                                                                           "list_models", "get_model_weights"))
        die(f"unknown model {name!r}; torchvision {torchvision.__version__} has: "
            + ", ".join(available) + ", mnist_cnn and eventgrad_cnn")
    model = ctor(**kwargs)
    size = 299 if name == "inception_v3" else 224
    return model, (3, size, size), num_classes


def unattributed(whole, attributed):
    """unattributed_s of one measured batch: (seconds, note or None).

    `whole` is the un-hooked training iteration, `attributed` what the profile's parts add up to (io_s,
    every layer's forward_s and backward_s, optimizer_s, from the hooked run). The difference, or 0 with a
    note when the parts take longer (the hooks' synchronisation and overhead inflate them).
    """
    if whole >= attributed:
        return whole - attributed, None
    return 0.0, (f"unattributed_s clamped at 0: the hooked phases add up to {1e3 * attributed:.3f} ms, "
                 f"{1e3 * (attributed - whole):.3f} ms more than the un-hooked iteration ({1e3 * whole:.3f} ms)")


def parse_batch_sizes(text):
    """"8,16,32" -> [8, 16, 32]; None if not a strictly increasing list of integers >= 1."""
    try:
        sizes = [int(t) for t in text.split(",")]
    except ValueError:
        return None
    if not sizes or any(b < 1 for b in sizes) or any(b <= a for a, b in zip(sizes, sizes[1:])):
        return None
    return sizes


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="resnet50",
                    help="torchvision model name, mnist_cnn, eventgrad_cnn or gpt2 (default resnet50)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--batch-sizes", default=None,
                    help="comma-separated increasing batches, e.g. 8,16,32: measure each and write one "
                         "multi-batch profile (the first at the top level; replaces --batch-size)")
    ap.add_argument("--iterations", type=int, default=10, help="timed iterations to average (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed iterations first (default 3)")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="fp32",
                    help="compute precision; fp16/bf16 use torch.autocast (parameters stay fp32)")
    ap.add_argument("--input-size", type=int, default=None, help="image height = width (default: the model's)")
    ap.add_argument("--seq-len", type=int, default=GPT2_CONTEXT,
                    help=f"gpt2: tokens per sample, 1 to {GPT2_CONTEXT} (default {GPT2_CONTEXT})")
    ap.add_argument("--num-classes", type=int, default=1000)
    ap.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd",
                    help="optimizer whose step is timed as optimizer_s (default sgd, momentum 0.9)")
    ap.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (CPU)")
    ap.add_argument("--expect-parameters", type=int, default=None,
                    help="exit non-zero unless the model has exactly this many parameters")
    ap.add_argument("--output", default=None,
                    help="profile JSON to write (default scenarios/profiles/measured/<model>_<device>.json)")
    ap.add_argument("--kineto-trace", default=None,
                    help="also write a torch.profiler (Kineto) trace of one un-hooked training iteration at the "
                         "first batch to this path (.json, or .json.gz gzipped)")
    args = ap.parse_args(argv)
    if not 1 <= args.seq_len <= GPT2_CONTEXT:
        ap.error(f"--seq-len must be in [1, {GPT2_CONTEXT}], got {args.seq_len}")
    if args.batch_size < 1 or args.iterations < 1 or args.warmup < 0:
        ap.error("--batch-size and --iterations must be >= 1 and --warmup >= 0")
    batches = [args.batch_size]
    if args.batch_sizes is not None:
        batches = parse_batch_sizes(args.batch_sizes)
        if batches is None:
            ap.error(f"--batch-sizes: expected increasing integers >= 1 separated by commas, got {args.batch_sizes!r}")

    # Imported only now, so that --help and argument errors work without PyTorch.
    torch = import_optional("torch", "python3-torch", "PyTorch")

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        die("--device cuda but torch.cuda.is_available() is false")
    if args.device == "cpu" and args.dtype == "fp16":
        die("fp16 autocast needs --device cuda (use bf16 on CPU)")
    device = torch.device(args.device)
    cuda = args.device == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize()

    torch.manual_seed(0)
    model, in_shape, classes = build_model(torch, args.model, args.num_classes)
    if args.input_size and args.model not in ("mnist_cnn", "eventgrad_cnn", "gpt2"):
        in_shape = (in_shape[0], args.input_size, args.input_size)
    language = args.model == "gpt2"
    model.to(device).train()

    total_params = sum(p.numel() for p in model.parameters())
    if args.expect_parameters is not None and total_params != args.expect_parameters:
        die(f"{args.model} has {total_params:,} parameters, expected {args.expect_parameters:,}")

    autocast_dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.dtype)

    def autocast():
        if autocast_dtype is None:
            return torch.autocast(device_type=args.device, enabled=False)
        return torch.autocast(device_type=args.device, dtype=autocast_dtype)

    if args.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    loss_fn = torch.nn.NLLLoss() if args.model in ("mnist_cnn", "eventgrad_cnn") else torch.nn.CrossEntropyLoss()

    # Modules owning parameters directly (in registration order), keyed by module path.
    owners = [(name or "(root)", m) for name, m in model.named_modules()
              if any(True for _ in m.parameters(recurse=False))]
    index = {id(m): i for i, (_, m) in enumerate(owners)}
    fwd_events, bwd_events = [], []
    state = {"timing": False}

    def stamp():
        """Now: on CPU the host clock; on CUDA an event recorded on the stream (no synchronisation, so the
        host keeps launching ahead as it does unhooked), read once the iteration has synchronised."""
        if cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def fwd_hook(mod, inputs, output):
        if state["timing"]:
            fwd_events.append((stamp(), index[id(mod)]))

    def grad_hook_for(i):
        def hook(grad):
            if state["timing"]:
                bwd_events.append((stamp(), i))
            return None
        return hook

    def add_hooks():
        handles = []
        for i, (_, m) in enumerate(owners):
            handles.append(m.register_forward_hook(fwd_hook))
            for p in m.parameters(recurse=False):
                if p.requires_grad:
                    handles.append(p.register_hook(grad_hook_for(i)))
        return handles

    n = len(owners)
    iters = args.iterations

    def attribute(events, start, end, acc):
        """Each event's layer gets the time since the previous event (the phase's start for the first),
        the last one also the rest of the phase. On CUDA the stamps are events read against the phase's
        start event `start[1]` and the phase lasts end - start[0] host seconds."""
        if cuda:
            origin, base = start[1], start[0]
            events = [(base + origin.elapsed_time(ev) / 1e3, i) for ev, i in events]
            start = base
        prev = start
        for t, i in events:
            acc[i] += max(0.0, t - prev)
            prev = max(prev, t)
        if events:
            acc[events[-1][1]] += max(0.0, end - prev)

    def record_trace(host_x, host_y, losses):
        """One un-hooked training iteration under torch.profiler (after one warm-up, as the schedule's
        ProfilerStep spans mark them), its Kineto trace written to --kineto-trace."""
        from torch.profiler import ProfilerActivity, profile, schedule
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
        path = args.kineto_trace
        raw = path[:-3] if path.endswith(".gz") else path
        with profile(activities=activities, schedule=schedule(wait=0, warmup=1, active=1, repeat=1), with_stack=True,
                     on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
            for _ in range(2):
                opt.zero_grad(set_to_none=True)
                x, y = (host_x.to(device, non_blocking=True), host_y.to(device, non_blocking=True)) if cuda \
                    else (host_x.clone(), host_y.clone())
                with autocast():
                    loss = losses(model(x), y)
                loss.backward()
                opt.step()
                sync()
                prof.step()
        if raw != path:
            import gzip
            import shutil
            with open(raw, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
                shutil.copyfileobj(src, dst)
            os.remove(raw)
        print(f"wrote {path}")

    def measure(batch):
        """One batch: per-layer forward/backward seconds, io/optimizer seconds, forward order, un-hooked time."""
        if language:  # random tokens; the labels are the next tokens (HF shifts inside the model)
            tokens = torch.randint(0, classes, (batch, args.seq_len + 1))
            host_x, host_y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
        else:
            host_x = torch.randn(batch, *in_shape)
            host_y = torch.randint(0, classes, (batch,))
        if cuda:
            host_x, host_y = host_x.pin_memory(), host_y.pin_memory()

        def losses(out, y):
            if language:
                return loss_fn(out.float().view(-1, out.size(-1)), y.view(-1))
            if isinstance(out, torch.Tensor):
                return loss_fn(out.float(), y)
            parts = [o for o in out if isinstance(o, torch.Tensor)]  # e.g. InceptionOutputs(logits, aux)
            total = loss_fn(parts[0].float(), y)
            for aux in parts[1:]:
                total = total + 0.4 * loss_fn(aux.float(), y)
            return total

        fwd_acc, bwd_acc = [0.0] * n, [0.0] * n
        first_fwd = [None] * n
        sums = {"io": 0.0, "fwd": 0.0, "bwd": 0.0, "opt": 0.0}
        handles = add_hooks()
        for it in range(args.warmup + iters):
            timed = it >= args.warmup
            opt.zero_grad(set_to_none=True)
            fwd_events.clear()
            bwd_events.clear()
            sync()
            t0 = time.perf_counter()
            if cuda:
                x = host_x.to(device, non_blocking=True)
                y = host_y.to(device, non_blocking=True)
            else:
                x, y = host_x.clone(), host_y.clone()
            sync()
            t1 = time.perf_counter()
            start_fwd = (t1, stamp()) if cuda else t1
            state["timing"] = timed
            with autocast():
                out = model(x)
                loss = losses(out, y)
            sync()
            t2 = time.perf_counter()
            start_bwd = (t2, stamp()) if cuda else t2
            loss.backward()
            sync()
            t3 = time.perf_counter()
            state["timing"] = False
            opt.step()
            sync()
            t4 = time.perf_counter()
            if not timed:
                continue
            sums["io"] += t1 - t0
            sums["fwd"] += t2 - t1
            sums["bwd"] += t3 - t2
            sums["opt"] += t4 - t3
            attribute(fwd_events, start_fwd, t2, fwd_acc)
            attribute(bwd_events, start_bwd, t3, bwd_acc)
            for k, (_, i) in enumerate(fwd_events):
                if first_fwd[i] is None:
                    first_fwd[i] = k

        # Reference: the same iteration without hooks, to show the hooks' overhead.
        for h in handles:
            h.remove()
        plain = 0.0
        y_dev = host_y.to(device)
        for _ in range(iters):
            opt.zero_grad(set_to_none=True)
            sync()
            t0 = time.perf_counter()
            with autocast():
                loss = losses(model(host_x.to(device)), y_dev)
            loss.backward()
            sync()
            plain += time.perf_counter() - t0
        # The whole training iteration without hooks, as a training loop runs it (no synchronisation
        # inside): what the profile's parts must add up to; the rest is unattributed_s.
        sync()
        start = time.perf_counter()
        for _ in range(iters):
            opt.zero_grad(set_to_none=True)
            if cuda:
                x = host_x.to(device, non_blocking=True)
                y = host_y.to(device, non_blocking=True)
            else:
                x, y = host_x.clone(), host_y.clone()
            with autocast():
                loss = losses(model(x), y)
            loss.backward()
            opt.step()
        sync()
        whole = (time.perf_counter() - start) / iters
        if args.kineto_trace and batch == batches[0]:
            record_trace(host_x, host_y, losses)
        return {"fwd_acc": fwd_acc, "bwd_acc": bwd_acc, "first_fwd": first_fwd,
                "sums": {k: v / iters for k, v in sums.items()}, "plain": plain / iters, "whole": whole}

    runs = [measure(b) for b in batches]

    # Layer order: forward execution order of the first batch; modules that never ran forward hooks
    # (parameters used functionally by a parent) follow the module registered just before them.
    def layer_order(first_fwd):
        order_key = []
        last = -1.0
        for i in range(n):
            key = float(first_fwd[i]) if first_fwd[i] is not None else last + 1e-3
            order_key.append(key)
            last = key
        return sorted(range(n), key=lambda i: order_key[i])

    order = layer_order(runs[0]["first_fwd"])
    for b, r in zip(batches[1:], runs[1:]):
        if layer_order(r["first_fwd"]) != order:
            die(f"the layers ran forward in another order at batch {b} than at batch {batches[0]}; "
                "a multi-batch profile needs the same layers in the same order at every batch")

    def g6(v):
        return float(f"{v:.6g}")

    def unattributed_of(r):
        """(unattributed seconds, note or None) of one batch's run."""
        attributed = (r["sums"]["io"] + sum(r["fwd_acc"]) / iters + sum(r["bwd_acc"]) / iters + r["sums"]["opt"])
        return unattributed(r["whole"], attributed)

    unattributed_runs = [unattributed_of(r) for r in runs]

    layers = []
    for i in order:
        name, m = owners[i]
        params = list(m.parameters(recurse=False))
        layers.append({
            "name": name,
            "forward_s": g6(runs[0]["fwd_acc"][i] / iters),
            "backward_s": g6(runs[0]["bwd_acc"][i] / iters),
            "parameters": sum(p.numel() for p in params),
            "grad_bytes": sum(p.numel() * (p.grad.element_size() if p.grad is not None else p.element_size())
                              for p in params),
        })

    if cuda:
        dev_desc = f"{torch.cuda.get_device_name(device)} (CUDA {torch.version.cuda})"
    else:
        dev_desc = f"CPU {cpu_name()}, {torch.get_num_threads()} thread(s)"
    try:
        import torchvision
        tv = f", torchvision {torchvision.__version__}"
    except ImportError:
        tv = ""
    command = "tools/profile_torch.py " + " ".join(argv if argv is not None else sys.argv[1:])
    hooks = "; ".join(f"batch {b}: hooked forward+backward {1e3 * (r['sums']['fwd'] + r['sums']['bwd']):.3f} ms vs "
                      f"{1e3 * r['plain']:.3f} ms without hooks" for b, r in zip(batches, runs))
    prov = (f"measured by tools/profile_torch.py on {socket.gethostname()}: {dev_desc}; torch {torch.__version__}{tv}, "
            f"Python {platform.python_version()}, {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}; "
            f"model {args.model}, batch{'es ' + ', '.join(map(str, batches)) if len(batches) > 1 else ' ' + str(batches[0])}, "
            f"input {f'{args.seq_len} tokens' if language else 'x'.join(map(str, in_shape))}, {args.dtype}"
            f"{' autocast' if autocast_dtype else ''}, synthetic data, {iters} timed iterations after {args.warmup} "
            f"warm-up{' per batch' if len(batches) > 1 else ''}; per-layer times from module forward hooks and parameter "
            f"gradient hooks{' (CUDA events on the stream, no synchronisation inside a phase)' if cuda else ''} (non-parametric ops charged to the next parametric module); optimizer_s = {args.optimizer} "
            f"step; io_s = {'host-to-device copy of the batch' if cuda else 'in-memory copy of the batch'}; "
            f"unattributed_s = the un-hooked training iteration (zero_grad, input copy, forward, loss, backward, "
            f"step; {iters} back-to-back iterations timed as one) minus io_s, the layers and optimizer_s; {hooks}")
    notes = [f"batch {b}: {note}" for b, (_, note) in zip(batches, unattributed_runs) if note]
    if notes:
        prov += "; " + "; ".join(notes)
    if len(batches) > 1:
        prov += f"; command: {command}"
    first = runs[0]["sums"]
    profile = {
        "model": args.model,
        "batch_size": batches[0],
        "device": dev_desc,
        "dtype": args.dtype,
        "provenance": prov,
        "optimizer_s": g6(first["opt"]),
        "io_s": g6(first["io"]),
        "unattributed_s": g6(unattributed_runs[0][0]),
        "layers": layers,
    }
    if len(batches) > 1:
        profile["batch_profiles"] = [
            {"batch_size": b, "io_s": g6(r["sums"]["io"]), "optimizer_s": g6(r["sums"]["opt"]),
             "unattributed_s": g6(u),
             "layers": [{"name": owners[i][0], "forward_s": g6(r["fwd_acc"][i] / iters),
                         "backward_s": g6(r["bwd_acc"][i] / iters)} for i in order]}
            for b, r, (u, _) in zip(batches[1:], runs[1:], unattributed_runs[1:])]
    out = args.output or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scenarios", "profiles",
                                      "measured", f"{args.model}_{args.device}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(dumps(profile))
    for b, r, (u, note) in zip(batches, runs, unattributed_runs):
        t = r["sums"]
        print(f"{args.model} batch {b}: {total_params:,} parameters in {len(layers)} layers; per iteration: io "
              f"{1e3 * t['io']:.3f} ms, forward {1e3 * t['fwd']:.3f} ms, backward {1e3 * t['bwd']:.3f} ms, optimizer "
              f"{1e3 * t['opt']:.3f} ms, unattributed {1e3 * u:.3f} ms; without hooks forward+backward "
              f"{1e3 * r['plain']:.3f} ms, whole iteration {1e3 * r['whole']:.3f} ms")
        if note:
            print(f"{PROG}: note: batch {b}: {note}", file=sys.stderr)
    print(f"wrote {os.path.normpath(out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
