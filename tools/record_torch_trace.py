#!/usr/bin/env python3
"""Record a torch.profiler trace of one CPU training iteration of a small model (the fixtures of
tools/import_torch_trace.py; docs/profiles.md, "Importing a torch.profiler trace").

    /usr/bin/python3 tools/record_torch_trace.py --model cnn --format torch \\
        --output tests/fixtures/torch_traces/cnn_torch.trace.json.gz

Trains --model for three iterations under torch.profiler with schedule(wait=1, warmup=1, active=1)
(CPU activity, record_shapes, with_stack, with_modules), so the trace holds one ProfilerStep: the
third iteration (zero_grad, forward, cross-entropy loss, backward, optimizer step).

Every module's forward is wrapped in record_function("module: <path>") by forward pre/post hooks
(the root is "module: (root)"): a torch built without Kineto (Debian's 1.13) writes no
"nn.Module: ..." spans even with with_modules=True, and the importer needs module spans.

--format torch writes what the profiler's export_chrome_trace writes (on a torch without Kineto: a
bare JSON list of operator spans with empty args, so no shapes and no sequence numbers).
--format events writes the profiler's own events (prof.events(): the same operators, with the
shapes, autograd sequence numbers and threads that export drops) in Kineto's layout:
{"traceEvents": [...]} with "cat": "cpu_op" / "user_annotation" and args "Input Dims",
"Sequence number", "Fwd thread id", "External id".

The model's parameters ({name: numel} from named_parameters()) are written beside the trace
(--parameters-out, default: the trace's name with .parameters.json), the input to the importer's
--parameters.

Models: cnn (the EventGraD paper's CNN-2, 27,480 parameters, 1x28x28 inputs, as
tools/profile_torch.py's eventgrad_cnn) and transformer (token and position embeddings, two
nn.TransformerEncoderLayer blocks of width 64 with 4 heads and a 128-wide feed-forward, a final
LayerNorm and a linear head over a 256-token vocabulary; 16 tokens per sample; 101,120 parameters).
"""

import argparse
import gzip
import json
import os
import shutil
import sys

PROG = "record_torch_trace.py"


def die(message, status=2):
    print(f"{PROG}: error: {message}", file=sys.stderr)
    raise SystemExit(status)


def build(torch, name):
    """(model, make_batch(batch) -> (x, y), loss(out, y))."""
    nn, F = torch.nn, torch.nn.functional
    if name == "cnn":
        # The EventGraD CNN-2 that tools/profile_torch.py measures (soumyadipghosh/eventgrad).
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import profile_torch
        model, _, _ = profile_torch.build_model(torch, "eventgrad_cnn", 10)

        def batch(b):
            return torch.randn(b, 1, 28, 28), torch.randint(0, 10, (b,))

        return model, batch, F.nll_loss
    if name == "transformer":
        vocab, width, seq = 256, 64, 16

        class TinyTransformer(nn.Module):
            def __init__(self):
                super().__init__()
                self.tok = nn.Embedding(vocab, width)
                self.pos = nn.Embedding(seq, width)
                self.blocks = nn.ModuleList(
                    nn.TransformerEncoderLayer(width, 4, 128, dropout=0.1, batch_first=True) for _ in range(2))
                self.ln_f = nn.LayerNorm(width)
                self.head = nn.Linear(width, vocab)

            def forward(self, idx):
                x = self.tok(idx) + self.pos(torch.arange(idx.size(1)))
                for block in self.blocks:
                    x = block(x)
                return self.head(self.ln_f(x))

        def batch(b):
            tokens = torch.randint(0, vocab, (b, seq + 1))
            return tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()

        def loss(out, y):
            return F.cross_entropy(out.reshape(-1, vocab), y.reshape(-1))

        return TinyTransformer(), batch, loss
    die(f"unknown model {name!r}: cnn or transformer")


def label_modules(torch, model):
    """Forward pre/post hooks that open and close record_function("module: <path>") around every module."""
    from torch.autograd.profiler import record_function
    handles = []
    for path, module in model.named_modules():
        label = f"module: {path or '(root)'}"

        def pre(mod, inputs, label=label):
            rf = record_function(label)
            rf.__enter__()
            mod.__dict__.setdefault("_trace_labels", []).append(rf)

        def post(mod, inputs, output):
            mod.__dict__["_trace_labels"].pop().__exit__(None, None, None)

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    return handles


def events_trace(prof, step_name):
    """The profiler's events in Kineto's layout, with the args the legacy export drops (prof.events() calls
    the step "ProfilerStep*"; it is given export_chrome_trace's name back)."""
    out = []
    for ext, e in enumerate(prof.events(), start=1):
        start = e.time_range.start
        dur = e.time_range.end - e.time_range.start
        args = {"External id": ext}
        if e.input_shapes:
            args["Input Dims"] = [list(s) for s in e.input_shapes]
        if e.sequence_nr is not None and e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
            if e.fwd_thread:
                args["Fwd thread id"] = e.fwd_thread
        op = "::" in e.name or e.name.endswith("Backward0") or e.name.endswith("Backward1")
        out.append({"ph": "X", "cat": "cpu_op" if op else "user_annotation",
                    "name": step_name if e.name == "ProfilerStep*" else e.name,
                    "pid": os.getpid(), "tid": e.thread, "ts": start, "dur": dur, "args": args})
    out.sort(key=lambda ev: (ev["ts"], -ev["dur"]))
    return {"schemaVersion": 1, "traceName": "record_torch_trace.py (prof.events())", "traceEvents": out}


def write(path, text):
    if path.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8", compresslevel=9) as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=["cnn", "transformer"], default="cnn")
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--format", choices=["torch", "events"], default="torch",
                    help="torch: export_chrome_trace's output; events: prof.events() in Kineto's layout, with "
                         "Input Dims and sequence numbers")
    ap.add_argument("--output", required=True, help="trace file (.json or .json.gz)")
    ap.add_argument("--parameters-out", default=None,
                    help="parameters file (default: the trace's name with .parameters.json)")
    ap.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.batch_size < 1:
        die("--batch-size must be >= 1")
    try:
        import torch
    except ImportError:
        die("PyTorch is not installed (Debian: apt-get install python3-torch)")
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    model, make_batch, loss_fn = build(torch, args.model)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = make_batch(args.batch_size)
    label_modules(torch, model)

    out = args.output
    raw = out[:-3] if out.endswith(".gz") else out
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    done = {}

    def ready(prof):
        if args.format == "torch":
            prof.export_chrome_trace(raw)
            if raw != out:
                with open(raw, "rb") as src, gzip.open(out, "wb", compresslevel=9) as dst:
                    shutil.copyfileobj(src, dst)
                os.remove(raw)
        else:
            import tempfile
            with tempfile.TemporaryDirectory() as tmp:  # the step's name as export_chrome_trace writes it
                prof.export_chrome_trace(os.path.join(tmp, "t.json"))
                with open(os.path.join(tmp, "t.json"), encoding="utf-8") as f:
                    exported = json.load(f)
            exported = exported.get("traceEvents", []) if isinstance(exported, dict) else exported
            step = next((e["name"] for e in exported if str(e.get("name", "")).startswith("ProfilerStep#")),
                        f"ProfilerStep#{prof.step_num}")
            write(out, json.dumps(events_trace(prof, step), separators=(",", ":")))
        done["yes"] = True

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=1, repeat=1),
                 record_shapes=True, with_stack=True, with_modules=True, on_trace_ready=ready) as prof:
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    if not done:
        die("the profiler wrote no trace")
    params_out = args.parameters_out or (out[:-3] if out.endswith(".gz") else out)
    if not args.parameters_out:
        params_out = params_out[:-5] if params_out.endswith(".json") else params_out
        params_out = (params_out[:-6] if params_out.endswith(".trace") else params_out) + ".parameters.json"
    params = {n: p.numel() for n, p in model.named_parameters()}
    with open(params_out, "w", encoding="utf-8") as f:
        json.dump(params, f, indent=1)
        f.write("\n")
    print(f"{args.model}: {sum(params.values()):,} parameters, batch {args.batch_size}, torch {torch.__version__}; "
          f"wrote {out} and {params_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
