#!/usr/bin/env python3
"""Import a torch.profiler Chrome trace of one training step as a ddlsim profile (docs/profiles.md,
"Importing a torch.profiler trace").

    python3 tools/import_torch_trace.py TRACE.json[.gz] --batch-size 32 --output profile.json \\
        [--parameters FILE | --parameters-from-profile PROFILE.json] [--step N] [--dtype bf16]

Reads (standard library only; no torch needed):

* the step: the ProfilerStep#N span (--step N; default the last one that holds a backward pass).
  With GPU activity (kernels, copies, memsets), the step is measured on the GPU, from the first to
  the last activity launched by an operator of the CPU step on any thread (not the step's
  gpu_user_annotation span, which leaves out what the autograd thread launches), and every GPU
  activity in it is a piece of work (GPU clock); otherwise the CPU span, and the pieces are the
  outermost operators on the CPU threads (CPU clock);
* modules: "nn.Module: <Class>_<i>" spans (Kineto, with_stack/with_modules) or
  record_function("module: <path>") spans (tools/record_torch_trace.py labels every module so);
* which operator a piece of work belongs to: the piece itself on the CPU clock; on the GPU clock the
  CPU operator that launched it ("External id");
* forward: an operator inside a module span on the step's thread; backward: an operator inside an
  "autograd::engine::evaluate_function: <Node>" span, mapped to the forward operator that created
  the node by "Sequence number", or, where the trace has none (torch builds without Kineto export
  empty args), to the latest unmatched forward operator of the same name (AddmmBackward0 ->
  aten::addmm), which is the autograd engine's own order for a chain of layers;
* optimizer: work inside "Optimizer.step#..." annotations; io: host-to-device copies outside the
  modules (GPU clock only).

Layers are the modules that own parameters: with a parameters file, the modules it names; else the
innermost modules (no module span inside) that run a weighted operator (convolution, linear,
batch/layer/group/instance norm, embedding, ...). As tools/profile_torch.py's hooks do, work inside
the model but outside every layer (activations, pooling, residual adds, a tied head) is charged to
the next layer in execution order (forward: the next layer to start; backward: the next layer whose
gradient is computed), after the last layer to the last one; AccumulateGrad to the layer whose
gradient it accumulates. Work outside every module (the loss and its backward, zero_grad, Python
between them) is unattributed_s.

Time: the pieces are laid on the step's clock in order of start; each piece gets the time from the
end of the previous work (or the step's start) to its own end (--gaps next: idle time is charged to
the work that waited for it, as a stream's timestamps do), or its busy time only (--gaps
unattributed: idle time goes to unattributed_s). The time after the last piece is unattributed_s.
So unattributed_s + io_s + layers + optimizer_s equals the traced step.

Parameters (gradient sizes): "Input Dims" of the layers' weighted operators when the trace has them
(record_shapes=True); else --parameters FILE: a JSON object {parameter name: numel}, as
{n: p.numel() for n, p in model.named_parameters()} gives (each parameter goes to the module span
whose path is its longest prefix; with "nn.Module: <Class>_<i>" spans, which carry no paths, the
owners in the file's order are matched to the layers in forward order), or a JSON list of per-layer
counts (integers or {"name", "parameters", "grad_bytes"} objects) in forward order; or
--parameters-from-profile PROFILE.json: a ddlsim profile's layers, in order. Without any of them
it refuses. grad_bytes = parameters x --grad-bytes-per-parameter (default 4: fp32 gradients, as
under autocast), or the profile's grad_bytes.
"""

import argparse
import bisect
import gzip
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_torch import dumps  # noqa: E402  (standard library only at import time)

PROG = "import_torch_trace.py"
EPS = 1e-3  # µs: tolerance when nesting spans with fractional timestamps

# Operators that read a module's parameters, with the positions of their parameter inputs
# ("Input Dims" index); None: the operator marks a layer but its parameters cannot be counted from it.
WEIGHTED = {
    "conv1d": (1, 2), "conv2d": (1, 2), "conv3d": (1, 2), "convolution": (1, 2), "_convolution": (1, 2),
    "conv_transpose1d": (1, 2), "conv_transpose2d": (1, 2), "conv_transpose3d": (1, 2),
    "linear": (1, 2), "bilinear": (2, 3), "batch_norm": (1, 2), "instance_norm": (1, 2),
    "layer_norm": (2, 3), "group_norm": (2, 3), "rms_norm": (2,), "embedding": (0,), "embedding_bag": (0,),
    "prelu": (1,), "_native_multi_head_attention": (5, 6, 7, 8),
    "lstm": None, "gru": None, "rnn_tanh": None, "rnn_relu": None,
}
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
EVALFN = "autograd::engine::evaluate_function: "


class ImportError_(Exception):
    pass


def fail(message):
    raise ImportError_(message)


def op_like(name):
    """Legacy traces have no categories: operators are namespaced or autograd nodes; the rest are labels."""
    return "::" in name or re.search(r"Backward\d*$", name) is not None


def module_key(name):
    for prefix in ("nn.Module: ", "module: "):
        if name.startswith(prefix):
            return name[len(prefix):]
    return None


def short(name):
    """aten::native_batch_norm -> nativebatchnorm; AddmmBackward0 -> addmm (for name matching)."""
    base = name.split("::")[-1]
    base = re.sub(r"Backward\d*$", "", base)
    return re.sub(r"[^a-z0-9]", "", base.lower())


def numel(dims):
    if not isinstance(dims, list) or not dims or not all(isinstance(d, int) for d in dims):
        return 0  # [] is an absent (None) input here, never a 0-d parameter
    n = 1
    for d in dims:
        n *= d
    return n


def g6(v):
    return float(f"{v:.6g}")


class Node:
    __slots__ = ("i", "name", "cat", "thread", "ts", "end", "args", "op", "parent", "module", "evalfn",
                 "annot", "op_parent", "key")

    def __init__(self, i, e, op):
        self.i, self.name, self.cat = i, e["name"], e.get("cat", "")
        self.thread = (e.get("pid"), e.get("tid"))
        self.ts = float(e["ts"])
        self.end = self.ts + float(e.get("dur", 0) or 0)
        self.args = e.get("args") or {}
        self.op = op
        self.key = module_key(self.name)
        self.parent = self.module = self.evalfn = self.annot = self.op_parent = None


def read_trace(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            fail(f"{os.path.basename(path)} is not a trace: broken gzip ({e})")
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        fail(f"{os.path.basename(path)} is not a trace: not JSON ({str(e).splitlines()[0]})")
    if isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list):
        return doc["traceEvents"], doc, "kineto"
    if isinstance(doc, list):
        return doc, {}, "legacy"
    fail(f"{os.path.basename(path)} is not a Chrome trace: expected a JSON list of events or an object with \"traceEvents\"")


class Trace:
    def __init__(self, path, step=None, clock="auto"):
        self.path = path
        events, self.meta, self.format = read_trace(path)
        base = os.path.basename(path)
        self.nodes, self.gpu = [], []
        for e in events:
            if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e or "name" not in e:
                continue
            cat = e.get("cat")
            if cat in GPU_CATS:
                self.gpu.append(e)
                continue
            if cat == "gpu_user_annotation":
                continue
            name = e["name"]
            if cat is None:  # legacy: no categories
                op = op_like(name)
            elif cat == "cpu_op":
                op = True
            elif cat == "user_annotation" or (cat == "python_function" and module_key(name) is not None):
                op = False
            else:
                continue
            self.nodes.append(Node(len(self.nodes), e, op))
        if not self.nodes and not self.gpu:
            fail(f"{base} is not a torch.profiler trace: it has no operator spans")
        steps = {}
        for n in self.nodes:
            m = re.fullmatch(r"ProfilerStep#(\d+)", n.name)
            if m and not n.op:
                steps.setdefault(int(m.group(1)), n)
        if not steps:
            fail(f"{base} has no ProfilerStep#N span: record it with torch.profiler.profile(schedule=...) "
                 "and call prof.step() after every iteration")
        self.nest()
        if step is not None:
            if step not in steps:
                fail(f"{base} has no ProfilerStep#{step} (it has " + ", ".join(f"#{k}" for k in sorted(steps)) + ")")
            self.step = steps[step]
            if not self.evalfns_in(self.step):
                fail(f"{base}: ProfilerStep#{step} has no backward operators (\"{EVALFN}...\"): "
                     "import the step of a training iteration")
        else:
            full = [k for k in sorted(steps) if self.evalfns_in(steps[k])]
            if not full:
                fail(f"{base}: no ProfilerStep holds a backward pass (\"{EVALFN}...\" operators): "
                     "import a trace of a training iteration")
            step = full[-1]
            self.step = steps[step]
        self.step_number = step
        self.main = self.step.thread
        gpu_steps = [e for e in events if isinstance(e, dict) and e.get("cat") == "gpu_user_annotation"
                     and e.get("name") == self.step.name and e.get("ph") == "X"]
        ext = self.step.args.get("External id")
        match = [e for e in gpu_steps if ext is None or (e.get("args") or {}).get("External id") == ext]
        self.gpu_step = match[0] if match else None
        if clock == "gpu" and not self.gpu:
            fail(f"{base}: --clock gpu, but the trace has no GPU activity")
        self.clock = clock if clock != "auto" else ("gpu" if self.gpu else "cpu")

    def nest(self):
        """Parent of every CPU span on its thread, and each span's context: its innermost module span,
        its evaluate_function span, its optimizer annotation, its outermost enclosing operator."""
        by_thread = {}
        for n in self.nodes:
            by_thread.setdefault(n.thread, []).append(n)
        for spans in by_thread.values():
            spans.sort(key=lambda n: (n.ts, -(n.end - n.ts), n.op))
            stack = []
            for n in spans:
                while stack and not (n.ts >= stack[-1].ts - EPS and n.end <= stack[-1].end + EPS):
                    stack.pop()
                p = stack[-1] if stack else None
                n.parent = p
                if p is not None:
                    n.module, n.evalfn, n.annot = p.module, p.evalfn, p.annot
                    n.op_parent = p if p.op else p.op_parent
                if n.key is not None:
                    n.module = n
                if n.op and n.name.startswith(EVALFN) and n.evalfn is None:
                    n.evalfn = n
                if not n.op and (n.name.startswith("Optimizer.step") or n.name.startswith("Optimizer.zero_grad")):
                    n.annot = n
                stack.append(n)
        self.threads = by_thread

    def evalfns_in(self, step):
        return [n for n in self.nodes if n.evalfn is n and n.ts >= step.ts - EPS and n.ts <= step.end + EPS]


def load_parameter_source(path, kind):
    """('named', {name: numel}) or ('list', [(name or None, parameters, grad_bytes or None)])."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        fail(f"cannot read {kind} {path}: {e.strerror}")
    except ValueError as e:
        fail(f"{kind} {path} is not JSON ({str(e).splitlines()[0]})")
    if kind == "--parameters-from-profile" and not (isinstance(doc, dict) and isinstance(doc.get("layers"), list)):
        fail(f"--parameters-from-profile {path}: not a ddlsim profile (no \"layers\" array)")
    if isinstance(doc, dict) and isinstance(doc.get("layers"), list):
        doc = doc["layers"]
    if isinstance(doc, dict):
        for k, v in doc.items():
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                fail(f"{kind} {path}: \"{k}\": expected a parameter count (integer >= 0), got {json.dumps(v)}")
        if not doc:
            fail(f"{kind} {path}: no parameters")
        return "named", doc
    if isinstance(doc, list) and doc:
        rows = []
        for i, v in enumerate(doc):
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                rows.append((None, v, None))
            elif isinstance(v, dict) and isinstance(v.get("parameters", 0), int) and v.get("parameters", 0) >= 0:
                gb = v.get("grad_bytes")
                rows.append((v.get("name"), v.get("parameters", 0), gb if isinstance(gb, (int, float)) else None))
            else:
                fail(f"{kind} {path}: entry {i}: expected a parameter count or an object with \"parameters\", "
                     f"got {json.dumps(v)[:60]}")
        return "list", rows
    fail(f"{kind} {path}: expected an object {{parameter name: numel}}, a list of per-layer counts or a profile")


def build_profile(tr, args, params_src):
    base = os.path.basename(tr.path)
    step = tr.step
    in_step = [n for n in tr.nodes if n.ts >= step.ts - EPS and n.end <= step.end + EPS]
    mod_spans = [n for n in in_step if n.key is not None and n.thread == tr.main]
    if not mod_spans:
        fail(f"{base} has no module spans in {step.name}: record with with_stack=True (\"nn.Module: ...\" spans) "
             "or label every module with record_function(\"module: <name>\") (tools/record_torch_trace.py does)")
    # Module instances, in order of first call; leaves; their direct (outermost-within-module) operators.
    first, has_child, direct = {}, set(), {}
    for n in mod_spans:
        first.setdefault(n.key, n)
        up = n.parent.module if n.parent is not None else None
        if up is not None and up.key != n.key:
            has_child.add(up.key)
    for n in in_step:
        if n.op and n.thread == tr.main and n.module is not None and n.evalfn is None and n.annot is None:
            if n.op_parent is None or n.op_parent.module is not n.module:
                direct.setdefault(n.module.key, []).append(n)
    order = sorted(first, key=lambda k: first[k].ts)
    weighted = [k for k in order if k not in has_child
                and any(short(o.name) in {short(w) for w in WEIGHTED} for o in direct.get(k, []))]
    dims_known = any("Input Dims" in n.args for n in in_step if n.op)

    # Layers and their parameters.
    layers = []  # [key, name, parameters, grad_bytes]
    bpp = args.grad_bytes_per_parameter
    how = ""
    if params_src is not None:
        kind, data = params_src
        src = args.parameters or args.parameters_from_profile
        if kind == "named":
            known = set(first)
            owner_of = {}
            for k in data:
                parts = k.split(".")
                owner = next((".".join(parts[:j]) for j in range(len(parts), 0, -1) if ".".join(parts[:j]) in known), None)
                owner_of[k] = owner
            if any(o is not None for o in owner_of.values()):
                root = "(root)" if "(root)" in known else None
                per = {}
                for k, o in owner_of.items():
                    o = o or root
                    if o is None:
                        fail(f"--parameters {src}: parameter \"{k}\" belongs to no module span in the trace")
                    per[o] = per.get(o, 0) + data[k]
                for k in order:
                    if k in per:
                        layers.append([k, k, per[k], per[k] * bpp])
                how = f"parameters from {os.path.basename(src)} by module path"
            else:
                owners = []
                for k, v in data.items():
                    o = k.rsplit(".", 1)[0] if "." in k else "(root)"
                    if owners and owners[-1][0] == o:
                        owners[-1][1] += v
                    else:
                        owners.append([o, v])
                rows = [(o, v, None) for o, v in owners]
                kind = "list"
                data = rows
        if kind == "list":
            if len(data) != len(weighted):
                fail(f"{os.path.basename(src)} gives {len(data)} parameter-owning modules, but {step.name} has "
                     f"{len(weighted)} innermost modules with weighted operators; list one entry per such module, "
                     "in forward order")
            for k, (name, p, gb) in zip(weighted, data):
                layers.append([k, name or k, p, gb if gb is not None else p * bpp])
            how = (f"parameters from {os.path.basename(src)} in forward order (matched to the {len(weighted)} "
                   "innermost modules with weighted operators)")
    elif dims_known:
        for k in weighted:
            total, seen = 0, False
            for o in direct.get(k, []):
                if o.module is not first[k] and o.ts > first[k].end:
                    continue  # count the first call only
                pos = WEIGHTED.get(next((w for w in WEIGHTED if short(w) == short(o.name)), ""), None)
                if pos is None:
                    continue
                dims = o.args.get("Input Dims") or []
                total += sum(numel(dims[j]) for j in pos if j < len(dims))
                seen = True
            if not seen:
                fail(f"{base}: cannot count the parameters of module {k} from \"Input Dims\" (its operators: "
                     + ", ".join(sorted({o.name for o in direct.get(k, [])})) + "); give --parameters FILE")
            layers.append([k, k, total, total * bpp])
        how = "parameters from the weighted operators' \"Input Dims\" (first call of each module)"
    else:
        fail(f"{base} has no \"Input Dims\" (record with record_shapes=True) and no --parameters FILE was given: "
             "give --parameters FILE (JSON {name: numel}, e.g. {n: p.numel() for n, p in "
             "model.named_parameters()}) or --parameters-from-profile PROFILE.json")
    if not layers:
        fail(f"{base}: no module of {step.name} owns parameters")
    layer_of = {l[0]: i for i, l in enumerate(layers)}

    # Forward: the layer of an operator; outside layers but inside the model: the next layer to start.
    starts = sorted((n.ts, layer_of[n.key]) for n in mod_spans if n.key in layer_of)
    start_ts = [s for s, _ in starts]

    def fwd_layer(n):
        m = n.module
        while m is not None:
            if m.key in layer_of:
                return layer_of[m.key]
            m = m.parent.module if m.parent is not None else None
        if n.module is None:
            return None
        j = bisect.bisect_left(start_ts, n.ts)
        return starts[j][1] if j < len(starts) else starts[-1][1]

    # Backward: evaluate_function spans of the step, mapped to their forward operators.
    evalfns = sorted(tr.evalfns_in(step), key=lambda n: n.ts)
    fwd_ops = [n for n in in_step if n.op and n.evalfn is None and n.annot is None]
    by_seq = {}
    for n in fwd_ops:
        s = n.args.get("Sequence number")
        if isinstance(s, int) and s >= 0:
            by_seq.setdefault(s, n)
    use_seq = bool(by_seq) and any(isinstance(n.args.get("Sequence number"), int) for n in evalfns)
    forward_of = {}
    if use_seq:
        for b in evalfns:
            forward_of[b.i] = by_seq.get(b.args.get("Sequence number"))
        mapping = "backward nodes mapped to forward operators by \"Sequence number\""
    else:
        t0 = evalfns[0].ts
        stacks = {}
        for n in sorted((n for n in fwd_ops if n.thread == tr.main and n.end <= t0 + EPS), key=lambda n: n.ts):
            up = n.op_parent
            while up is not None and short(up.name) != short(n.name):
                up = up.op_parent
            if up is None:  # aten::_convolution inside aten::convolution: one autograd node, the outer one
                stacks.setdefault(short(n.name), []).append(n)
        for b in evalfns:
            node = b.name[len(EVALFN):]
            st = stacks.get(short(node))
            forward_of[b.i] = st.pop() if st and "AccumulateGrad" not in node else None
        mapping = ("no \"Sequence number\" in the trace: backward nodes mapped to the latest unmatched forward "
                   "operator of the same name")
    OUT, OTHER, ACC = -1, -2, -3
    raw = []
    for b in evalfns:
        f = forward_of[b.i]
        if "AccumulateGrad" in b.name:
            raw.append(ACC)
        elif f is None:
            raw.append(OTHER)
        elif f.module is None:
            raw.append(OUT)
        else:
            m, hit = f.module, None
            while m is not None:
                if m.key in layer_of:
                    hit = layer_of[m.key]
                    break
                m = m.parent.module if m.parent is not None else None
            raw.append(hit if hit is not None else OTHER)
    direct_idx = [j for j, r in enumerate(raw) if r >= 0]
    bwd_of = {}
    for j, b in enumerate(evalfns):
        r = raw[j]
        if r == OUT:
            r = None
        elif r in (OTHER, ACC) and direct_idx:
            k = bisect.bisect_right(direct_idx, j)
            nxt = raw[direct_idx[k]] if k < len(direct_idx) else None
            prv = raw[direct_idx[k - 1]] if k > 0 else None
            r = (prv if prv is not None else nxt) if r == ACC else (nxt if nxt is not None else prv)
        elif r in (OTHER, ACC):
            r = None
        bwd_of[b.i] = r

    # Pieces of work on the step's clock.
    if tr.clock == "gpu":
        by_ext = {}
        for n in tr.nodes:
            if n.op and "External id" in n.args:
                by_ext.setdefault(n.args["External id"], n)
        # The step on the GPU: from the first to the last GPU activity launched by an operator of the CPU
        # step, on any thread. (The step's gpu_user_annotation span covers only what the step's own thread
        # launched: without the backward pass, whose kernels the autograd thread launches.)
        linked = []
        for e in tr.gpu:
            n = by_ext.get((e.get("args") or {}).get("External id"))
            ts = float(e["ts"])
            linked.append((ts, ts + float(e.get("dur", 0)), n, e))
        mine = [(ts, end) for ts, end, n, _ in linked if n is not None and step.ts - EPS <= n.ts <= step.end + EPS]
        if not mine:
            fail(f"{base}: no GPU activity was launched by the operators of {step.name}")
        w0, w1 = min(ts for ts, _ in mine), max(end for _, end in mine)
        pieces = []
        for ts, end, n, e in linked:
            if w0 - EPS <= ts < w1:
                htod = e.get("cat") == "gpu_memcpy" and "HtoD" in e.get("name", "")
                pieces.append((ts, end, n, htod))
    else:
        w0, w1 = step.ts, step.end
        pieces = [(n.ts, n.end, n, False) for n in in_step if n.op and n.op_parent is None]
    if not pieces:
        fail(f"{base}: {step.name} has no operators")
    pieces.sort(key=lambda p: (p[0], p[1]))

    fwd = [0.0] * len(layers)
    bwd = [0.0] * len(layers)
    acc = {"optimizer": 0.0, "io": 0.0, "loss and other work outside the modules": 0.0, "zero_grad": 0.0,
           "idle": 0.0}
    busy = 0.0
    cursor = w0
    for ts, end, n, htod in pieces:
        s, e = max(ts, cursor), min(end, w1)
        work = max(0.0, e - s)
        gap = max(0.0, min(ts, w1) - cursor)
        busy += work
        if args.gaps == "unattributed":
            acc["idle"] += gap
            t = work
        else:
            t = work + gap
        if n is None:
            acc["loss and other work outside the modules"] += t
        elif n.annot is not None and n.annot.name.startswith("Optimizer.step"):
            acc["optimizer"] += t
        elif n.annot is not None:
            acc["zero_grad"] += t
        elif n.evalfn is not None:
            j = bwd_of.get(n.evalfn.i)
            if j is None:
                acc["loss and other work outside the modules"] += t
            else:
                bwd[j] += t
        elif htod and n.module is None:
            acc["io"] += t
        else:
            j = fwd_layer(n) if n.thread == tr.main else None
            if j is None:
                acc["loss and other work outside the modules"] += t
            else:
                fwd[j] += t
        cursor = max(cursor, min(end, w1))
    acc["idle"] += max(0.0, w1 - cursor)
    step_s = (w1 - w0) / 1e6

    out_layers = [{"name": name, "forward_s": g6(fwd[i] / 1e6), "backward_s": g6(bwd[i] / 1e6), "parameters": p,
                   "grad_bytes": int(round(gb))} for i, (_, name, p, gb) in enumerate(layers)]
    opt_s, io_s = g6(acc["optimizer"] / 1e6), g6(acc["io"] / 1e6)
    rest = step_s - opt_s - io_s - sum(l["forward_s"] + l["backward_s"] for l in out_layers)
    unattributed = g6(max(0.0, rest))
    if tr.clock == "gpu":
        dev = ((tr.meta.get("deviceProperties") or [{}])[0].get("name") or "GPU")
    else:
        dev = "CPU"
    parts = "; ".join(f"{k} {v / 1e3:.3f} ms" for k, v in acc.items() if k not in ("optimizer", "io"))
    prov = (f"imported by tools/import_torch_trace.py from {base} ({'Kineto' if tr.format == 'kineto' else 'legacy'} "
            f"trace): {step.name}, {tr.clock.upper()} clock, step {step_s * 1e3:.3f} ms "
            + (f"(first to last GPU activity launched by the step's operators; the step spans {(step.end - step.ts) / 1e3:.3f} ms "
               f"on the CPU" + (f", its gpu_user_annotation {float(tr.gpu_step.get('dur', 0)) / 1e3:.3f} ms" if tr.gpu_step else "")
               + "), " if tr.clock == "gpu" else "(the CPU span of the step), ") +
            f"{len(pieces)} {'GPU activities' if tr.clock == 'gpu' else 'outermost CPU operators'} busy "
            f"{busy / 1e3:.3f} ms; layers = {len(layers)} parameter-owning modules of "
            f"{len(order)} module instances; {mapping}; non-parametric work inside the model charged to the next "
            f"layer; idle time {'charged to the work that waited for it' if args.gaps == 'next' else 'unattributed'}; "
            f"optimizer_s = Optimizer.step; io_s = host-to-device copies outside the modules; unattributed_s: "
            f"{parts}; {how}; grad_bytes {'from the profile or ' if args.parameters_from_profile else ''}"
            f"{bpp} B per parameter; command: tools/import_torch_trace.py "
            + " ".join(args.argv))
    profile = {"model": args.model or re.sub(r"(\.trace)?\.json(\.gz)?$", "", base),
               "batch_size": args.batch_size, "device": args.device or dev, "dtype": args.dtype,
               "provenance": prov, "optimizer_s": opt_s, "io_s": io_s, "unattributed_s": unattributed,
               "layers": out_layers}
    return profile, step_s


def iteration_s(p):
    return p["unattributed_s"] + p["io_s"] + p["optimizer_s"] + sum(l["forward_s"] + l["backward_s"] for l in p["layers"])


def compare(profile, ref_path):
    """Per-layer comparison with a reference profile (same layer count): lines to print."""
    with open(ref_path, encoding="utf-8") as f:
        ref = json.load(f)
    a, b = profile["layers"], ref["layers"]
    if len(a) != len(b):
        return [f"compare: {len(a)} layers against {len(b)} in {ref_path}: not comparable layer by layer"]
    out = []
    for what in ("forward_s", "backward_s"):
        err = [abs(x[what] - y[what]) for x, y in zip(a, b)]
        rel = [abs(x[what] - y[what]) / y[what] for x, y in zip(a, b) if y[what] > 0]
        out.append(f"compare {what}: median |imported - reference| {statistics.median(err) * 1e6:.1f} us, "
                   f"median relative {100 * statistics.median(rel):.0f} %, sums {sum(x[what] for x in a) * 1e3:.3f} "
                   f"vs {sum(y[what] for y in b) * 1e3:.3f} ms")
    return out


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="Chrome trace from torch.profiler (.json or .json.gz)")
    ap.add_argument("--output", "-o", required=True, help="profile file to write")
    ap.add_argument("--batch-size", type=int, required=True, help="samples per iteration of the traced step")
    ap.add_argument("--step", type=int, default=None, help="ProfilerStep#N to import (default: the last with backward)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--parameters", default=None,
                     help="JSON {parameter name: numel} (named_parameters) or a list of per-layer counts")
    src.add_argument("--parameters-from-profile", default=None, help="ddlsim profile whose layers give the parameters")
    ap.add_argument("--model", default=None, help="model name (default: the trace's file name)")
    ap.add_argument("--device", default=None, help="device label (default: the trace's GPU name, or CPU)")
    ap.add_argument("--dtype", choices=["fp32", "fp16", "bf16"], default="fp32", help="precision label (default fp32)")
    ap.add_argument("--grad-bytes-per-parameter", type=int, default=4, help="gradient bytes per parameter (default 4)")
    ap.add_argument("--gaps", choices=["next", "unattributed"], default="next",
                    help="idle time on the step's clock: charged to the next work (default) or unattributed")
    ap.add_argument("--clock", choices=["auto", "gpu", "cpu"], default="auto",
                    help="step and work on the GPU (default when the trace has GPU activity) or the CPU")
    ap.add_argument("--compare", default=None, help="print a per-layer comparison with this reference profile")
    args = ap.parse_args(argv)
    args.argv = argv
    if args.batch_size < 1:
        ap.error("--batch-size must be >= 1")
    try:
        params_src = None
        if args.parameters:
            params_src = load_parameter_source(args.parameters, "--parameters")
        elif args.parameters_from_profile:
            params_src = load_parameter_source(args.parameters_from_profile, "--parameters-from-profile")
        tr = Trace(args.trace, args.step, args.clock)
        profile, step_s = build_profile(tr, args, params_src)
    except ImportError_ as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    out = args.output
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(dumps(profile))
    it = iteration_s(profile)
    fw = sum(l["forward_s"] for l in profile["layers"])
    bw = sum(l["backward_s"] for l in profile["layers"])
    print(f"{os.path.basename(args.trace)}: {tr.step.name} {step_s * 1e3:.3f} ms ({tr.clock.upper()} clock); imported "
          f"iteration {it * 1e3:.3f} ms ({100 * (it - step_s) / step_s:+.2f} %): forward {fw * 1e3:.3f}, backward "
          f"{bw * 1e3:.3f}, optimizer {profile['optimizer_s'] * 1e3:.3f}, io {profile['io_s'] * 1e3:.3f}, unattributed "
          f"{profile['unattributed_s'] * 1e3:.3f} ms; {len(profile['layers'])} layers, "
          f"{sum(l['parameters'] for l in profile['layers']):,} parameters")
    if args.compare:
        for line in compare(profile, args.compare):
            print(line)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
