#!/usr/bin/env python3
"""Record a training trace (docs/traces.md): train N data-parallel replicas in lockstep and log every decision.

ddlsim's sync models event_triggered, ordered_gradients and selective_sync replay when a real training run
communicated. This tool makes that run: it trains --workers replicas of a small CNN in one process, in
lockstep, each on its own shard of the handwritten digits that scikit-learn ships, with the algorithm's real
numerics, and writes per iteration, worker and parameter tensor the parameter norm, the gradient norm and
whether the algorithm sent, plus the loss and accuracy per epoch (format: docs/traces.md).

Data: sklearn.datasets.load_digits (1,797 8x8 images, nothing downloaded), pixels / 16, upsampled to
28x28 (torch.nn.functional.interpolate, bilinear) so the EventGraD paper's CNN applies unchanged, then
normalised with the training split's mean and standard deviation. A fixed 20 % (359 images, permutation
seed 0) is held out for testing whatever --seed is; the other 1,438 are shuffled by --seed and cut into
--workers equal contiguous shards (the remainder is unused). An epoch is one pass over each shard in
order, floor(shard / --batch-size) batches (a last partial batch is dropped, so every iteration has
--batch-size samples per worker).

Models (--model): eventgrad_cnn, the EventGraD paper's CNN-2 of dmnist/event/event.cpp (27,480
parameters, 8 tensors); mnist_cnn, the pytorch/examples mnist/main.py Net (1,199,882 parameters, 8 tensors;
scenarios/profiles/mnist_cnn.json). Loss: nll_loss of log_softmax, as the seed code. Optimizer: plain SGD
(--lr, default 0.05 as event.cpp). torch.manual_seed(--seed) before the model is built; every replica starts
from the same model, as the seed code's.

Algorithms (--algorithm):
  event_triggered    seed 000 (EventGraD): a ring (left = rank - 1, right = rank + 1 mod N). Per iteration
                     every replica does zero_grad, forward, backward; then, per parameter tensor i in
                     named_parameters() order, first every replica applies the rule of docs/traces.md to
                     torch.norm(param).item() in Python doubles and, on send, copies the tensor into its
                     left neighbour's "from right" slot and its right neighbour's "from left" slot (slots
                     start at zero, as the seed's MPI window); then every replica averages tensor i,
                     param = ((param + from_left) + from_right) / 3. Then every replica's optimizer.step()
                     with its gradient from before the averaging, as the seed does.
                     --threshold constant --value c, or adaptive --horizon h; --initial-comm-passes P.
  ordered_gradients  seed 003: one shared model; every worker computes its gradient on its own batch;
                     the --m workers with the largest G = sqrt(sum_i grad_norm_i^2) (ties: lower rank)
                     transmit and the model steps with the mean of their gradients.
  selective_sync     SelSync (Tyagi & Swany, CLUSTER 2023): every replica steps locally; worker w flags
                     iteration k when k = 0 or |G_k - G_(k-1)| / G_(k-1) >= --delta; when any worker
                     flags, all replicas are averaged after the local step.
  none               plain synchronous data-parallel SGD with the mean gradient (every tensor sent).

Before writing, the tool re-applies the rule to the norms as they read back from the JSON (check_trace) and
refuses to write a trace whose decisions it does not reproduce. Deterministic: one torch thread and
torch.use_deterministic_algorithms, so the same options give the same file apart from provenance.date and
provenance.host. One progress line per epoch goes to stderr.

Example:
  /usr/bin/python3 tools/record_training.py --model eventgrad_cnn --workers 4 --epochs 30 \\
      --algorithm event_triggered --threshold adaptive --horizon 1 \\
      --output scenarios/traces/eventgrad_cnn_event_adaptive_4w.json
  /usr/bin/python3 tools/record_training.py --workers 2 --iterations 5 --algorithm none --output /tmp/t.json

Requires torch and scikit-learn (Debian: python3-torch, python3-sklearn); without them it prints one error
line naming the package and exits 2. Bad options: one error line, exit 2.
"""

import argparse
import copy
import datetime
import json
import math
import os
import platform
import socket
import sys

PROG = "record_training.py"
FORMAT = "ddlsim-training-trace"
VERSION = 1
MODELS = ("eventgrad_cnn", "mnist_cnn")
ALGORITHMS = ("event_triggered", "ordered_gradients", "selective_sync", "none")
TEST_FRACTION_DENOMINATOR = 5  # 1,797 // 5 = 359 test images (20 %)
SPLIT_SEED = 0  # the train/test split does not depend on --seed


def die(message, status=1):
    """One error line on stderr, no traceback."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    raise SystemExit(status)


def import_optional(module, package, what):
    """Imports a module, or exits 2 with one line naming the Debian package to install."""
    try:
        return __import__(module)
    except ImportError as e:
        if isinstance(e, ModuleNotFoundError) and e.name == module:
            die(f"{what} is not installed (Debian: apt-get install {package})", 2)
        die(f"{what} cannot be imported: {e} (Debian: apt-get install {package})", 2)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line instead of usage + error
        die(message, 2)


def finite(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}")
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def parse_args(argv):
    p = Parser(prog=PROG, description=__doc__.split("\n\n")[0],
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--output", required=True, help="trace JSON to write")
    p.add_argument("--model", choices=MODELS, default="eventgrad_cnn", help="default eventgrad_cnn")
    p.add_argument("--algorithm", choices=ALGORITHMS, default="event_triggered", help="default event_triggered")
    p.add_argument("--workers", type=int, default=4, help="data-parallel replicas N (default 4)")
    p.add_argument("--batch-size", type=int, default=16, help="samples per worker per iteration (default 16)")
    p.add_argument("--epochs", type=int, default=1, help="passes over every shard (default 1)")
    p.add_argument("--iterations", type=int, default=None, help="stop after this many iterations (default: all)")
    p.add_argument("--lr", type=finite, default=0.05, help="SGD learning rate (default 0.05, event.cpp's)")
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed: model, dropout, shards (default 0)")
    g = p.add_argument_group("event_triggered")
    g.add_argument("--threshold", choices=["constant", "adaptive"], default=None, help="default adaptive")
    g.add_argument("--value", type=finite, default=None, help="constant threshold c (required with constant)")
    g.add_argument("--horizon", type=finite, default=None, help="adaptive horizon h (default 1)")
    g.add_argument("--initial-comm-passes", type=int, default=None,
                   help="passes p < P always send (default 30, the seed's)")
    g = p.add_argument_group("ordered_gradients")
    g.add_argument("--m", type=int, default=None, help="workers that transmit per iteration, 1..N (required)")
    g = p.add_argument_group("selective_sync")
    g.add_argument("--delta", type=finite, default=None, help="relative change of G that flags (required)")
    a = p.parse_args(argv)

    if a.workers < 1:
        p.error("--workers must be at least 1")
    if a.batch_size < 1:
        p.error("--batch-size must be at least 1")
    if a.epochs < 1:
        p.error("--epochs must be at least 1")
    if a.iterations is not None and a.iterations < 1:
        p.error("--iterations must be at least 1")
    if not a.lr > 0:
        p.error("--lr must be positive")
    if a.seed < 0:
        p.error("--seed must be >= 0")
    own = {"event_triggered": ("threshold", "value", "horizon", "initial_comm_passes"),
           "ordered_gradients": ("m",), "selective_sync": ("delta",), "none": ()}
    for alg, names in own.items():
        if alg == a.algorithm:
            continue
        for n in names:
            if getattr(a, n) is not None:
                p.error(f"--{n.replace('_', '-')} applies only to --algorithm {alg}")
    if a.algorithm == "event_triggered":
        if a.threshold is None:
            a.threshold = "adaptive"
        if a.threshold == "constant":
            if a.horizon is not None:
                p.error("--horizon applies only to --threshold adaptive")
            if a.value is None:
                p.error("--threshold constant needs --value")
            if a.value < 0:
                p.error("--value must be >= 0")
        else:
            if a.value is not None:
                p.error("--value applies only to --threshold constant")
            if a.horizon is None:
                a.horizon = 1.0
            if a.horizon < 0:
                p.error("--horizon must be >= 0")
        if a.initial_comm_passes is None:
            a.initial_comm_passes = 30
        if a.initial_comm_passes < 0:
            p.error("--initial-comm-passes must be >= 0")
    elif a.algorithm == "ordered_gradients":
        if a.m is None:
            p.error("--algorithm ordered_gradients needs --m")
        if not 1 <= a.m <= a.workers:
            p.error(f"--m must be between 1 and --workers ({a.workers})")
    elif a.algorithm == "selective_sync":
        if a.delta is None:
            p.error("--algorithm selective_sync needs --delta")
        if a.delta < 0:
            p.error("--delta must be >= 0")
    return a


def command_line(a):
    """The command with every effective option, as it is written into provenance.command."""
    parts = ["/usr/bin/python3", "tools/record_training.py", "--model", a.model, "--algorithm", a.algorithm,
             "--workers", str(a.workers), "--batch-size", str(a.batch_size), "--epochs", str(a.epochs)]
    if a.iterations is not None:
        parts += ["--iterations", str(a.iterations)]
    parts += ["--lr", repr(a.lr), "--seed", str(a.seed)]
    if a.algorithm == "event_triggered":
        parts += ["--threshold", a.threshold]
        parts += ["--value", repr(a.value)] if a.threshold == "constant" else ["--horizon", repr(a.horizon)]
        parts += ["--initial-comm-passes", str(a.initial_comm_passes)]
    elif a.algorithm == "ordered_gradients":
        parts += ["--m", str(a.m)]
    elif a.algorithm == "selective_sync":
        parts += ["--delta", repr(a.delta)]
    parts += ["--output", a.output]
    return " ".join(parts)


def algorithm_object(a):
    if a.algorithm == "event_triggered":
        obj = {"name": "event_triggered", "threshold": a.threshold}
        if a.threshold == "constant":
            obj["value"] = float(a.value)
        else:
            obj["horizon"] = float(a.horizon)
        obj["initial_comm_passes"] = a.initial_comm_passes
        return obj
    if a.algorithm == "ordered_gradients":
        return {"name": "ordered_gradients", "m": a.m}
    if a.algorithm == "selective_sync":
        return {"name": "selective_sync", "delta": float(a.delta)}
    return {"name": "none"}


# ----------------------------------------------------------------------------------------------------------
# The rules, as the recorder applies them while training (in Python doubles, in docs/traces.md's order).

class EventTrigger:
    """EventGraD's send rule for one worker and one tensor (event.cpp's parameter loop), in doubles."""

    def __init__(self, adaptive, value, horizon, initial_comm_passes):
        self.adaptive, self.value, self.horizon, self.passes = adaptive, value, horizon, initial_comm_passes
        self.thres = 0.0
        self.last_sent_norm = 0.0
        self.last_sent_pass = 0
        self.slopes = [0.0, 0.0]

    def decide(self, p, norm):
        """Pass p = k + 1; norm = torch.norm(param).item(). True when the tensor is sent."""
        if self.adaptive:
            self.thres = self.thres * self.horizon
        else:
            self.thres = self.value
        diff = abs(norm - self.last_sent_norm)
        if diff >= self.thres or p < self.passes:
            self.slopes = [self.slopes[1], diff / (p - self.last_sent_pass)]
            if self.adaptive:
                self.thres = (0.0 + self.slopes[0] + self.slopes[1]) / 2
            self.last_sent_norm = norm
            self.last_sent_pass = p
            return True
        return False


def total_norm(norms):
    """G = sqrt(sum_i g_i^2), summed in tensor order in double."""
    s = 0.0
    for g in norms:
        s += g * g
    return math.sqrt(s)


def ieee_div(x, y):
    """x / y with IEEE 754 semantics (C++'s double division) where Python would raise."""
    if y != 0.0:
        return x / y
    if x != x or x == 0.0:
        return math.nan
    return math.copysign(math.inf, x) * math.copysign(1.0, y)


def top_m(G, m):
    """Indices of the m largest G, ties to the lower rank."""
    return sorted(sorted(range(len(G)), key=lambda w: (-G[w], w))[:m])


# ----------------------------------------------------------------------------------------------------------
# Independent check: re-apply the rule to a trace as read back from JSON (what ddlsim's loader does).

def check_trace(doc):
    """Returns None when the trace's `sent` is what its algorithm's rule gives for its norms, else a message
    naming the first iteration, worker and tensor that differ (or the first structural problem).

    Written separately from the recorder's EventTrigger/top_m so that it cross-checks them."""
    K, N = doc["iterations"], doc["workers"]
    T = len(doc["tensors"])
    for key in ("param_norm", "grad_norm", "sent"):
        arr = doc[key]
        if len(arr) != K:
            return f"/{key}: {len(arr)} iterations, expected {K}"
        for k, row in enumerate(arr):
            if len(row) != N:
                return f"/{key}/{k}: {len(row)} workers, expected {N}"
            for w, cell in enumerate(row):
                if len(cell) != T:
                    return f"/{key}/{k}/{w}: {len(cell)} tensors, expected {T}"
    alg = doc["algorithm"]
    name = alg["name"]
    pn, gn, sent = doc["param_norm"], doc["grad_norm"], doc["sent"]

    def mismatch(k, w, i, expect):
        return (f"/sent/{k}/{w}/{i}: recorded {sent[k][w][i]}, the {name} rule gives {int(expect)} "
                f"(iteration {k}, worker {w}, tensor {doc['tensors'][i]['name']})")

    if name == "event_triggered":
        adaptive = alg["threshold"] == "adaptive"
        P = alg["initial_comm_passes"]
        for w in range(N):
            for i in range(T):
                thres, last_norm, last_pass, s0, s1 = 0.0, 0.0, 0, 0.0, 0.0
                for k in range(K):
                    p = k + 1
                    thres = thres * alg["horizon"] if adaptive else alg["value"]
                    x = pn[k][w][i]
                    diff = abs(x - last_norm)
                    send = diff >= thres or p < P
                    if send:
                        s0, s1 = s1, diff / float(p - last_pass)
                        if adaptive:
                            thres = ((0.0 + s0) + s1) / 2.0
                        last_norm, last_pass = x, p
                    if sent[k][w][i] != int(send):
                        return mismatch(k, w, i, send)
        return None
    if name in ("ordered_gradients", "selective_sync"):
        prev = [None] * N
        for k in range(K):
            G = []
            for w in range(N):
                s = 0.0
                for i in range(T):
                    s = s + gn[k][w][i] * gn[k][w][i]
                G.append(math.sqrt(s))
            if name == "ordered_gradients":
                order = sorted(range(N), key=lambda w: (-G[w], w))
                chosen = set(order[:alg["m"]])
                flags = [w in chosen for w in range(N)]
            else:
                flags = []
                for w in range(N):
                    if k == 0:
                        flags.append(True)
                    else:
                        flags.append(ieee_div(abs(G[w] - prev[w]), prev[w]) >= alg["delta"])
                prev = G
            for w in range(N):
                for i in range(T):
                    if sent[k][w][i] != int(flags[w]):
                        return mismatch(k, w, i, flags[w])
        return None
    if name == "none":
        for k in range(K):
            for w in range(N):
                for i in range(T):
                    if sent[k][w][i] != 1:
                        return mismatch(k, w, i, True)
        return None
    return f"/algorithm/name: unknown algorithm {name!r}"


def messages_saved(doc):
    """1 - sum(sent) / (K N T): the fraction of tensor messages the algorithm did not send."""
    total = doc["iterations"] * doc["workers"] * len(doc["tensors"])
    return 1.0 - sum(x for row in doc["sent"] for cell in row for x in cell) / total


# ----------------------------------------------------------------------------------------------------------
# Output

def dumps(doc):
    """JSON with the K x N x T arrays one iteration per line (floats as repr: exact round trip)."""
    def enc(v):
        return json.dumps(v, allow_nan=False, separators=(",", ":"))

    out = ["{"]
    keys = list(doc)
    for n, key in enumerate(keys):
        end = "," if n + 1 < len(keys) else ""
        v = doc[key]
        if key in ("param_norm", "grad_norm", "sent"):
            out.append(f"  {json.dumps(key)}: [")
            out += [f"    {enc(row)}" + ("," if k + 1 < len(v) else "") for k, row in enumerate(v)]
            out.append(f"  ]{end}")
        elif key in ("tensors", "epochs"):
            out.append(f"  {json.dumps(key)}: [")
            out += [f"    {json.dumps(e, allow_nan=False)}" + ("," if j + 1 < len(v) else "")
                    for j, e in enumerate(v)]
            out.append(f"  ]{end}")
        else:
            out.append(f"  {json.dumps(key)}: {json.dumps(v, allow_nan=False)}{end}")
    out.append("}")
    return "\n".join(out) + "\n"


def cpu_name():
    import profile_torch
    return profile_torch.cpu_name()


# ----------------------------------------------------------------------------------------------------------
# Training

def build_model(torch, name):
    """The model, as tools/profile_torch.py builds it (the same modules in the same order, so the same
    initial weights under the same seed and the same profile)."""
    import profile_torch
    return profile_torch.build_model(torch, name, 10)[0]


def load_data(torch, sklearn_version, workers, seed):
    from sklearn.datasets import load_digits
    d = load_digits()
    x = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    x = torch.nn.functional.interpolate(x, size=(28, 28), mode="bilinear", align_corners=False)
    y = torch.tensor(d.target, dtype=torch.long)
    n = len(y)
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(SPLIT_SEED))
    n_test = n // TEST_FRACTION_DENOMINATOR
    test_idx, train_idx = perm[:n_test], perm[n_test:]
    train_idx = train_idx[torch.randperm(len(train_idx), generator=torch.Generator().manual_seed(seed))]
    mean = x[train_idx].mean().item()
    std = x[train_idx].std().item()
    x = (x - mean) / std
    shard = len(train_idx) // workers
    shards = [(x[train_idx[w * shard:(w + 1) * shard]], y[train_idx[w * shard:(w + 1) * shard]])
              for w in range(workers)]
    desc = (f"sklearn.datasets.load_digits (scikit-learn {sklearn_version}): {n} 8x8 images / 16, bilinear to "
            f"28x28, normalised with the training split's mean {mean!r} and std {std!r}; test split {n_test} "
            f"images (1/{TEST_FRACTION_DENOMINATOR}, permutation seed {SPLIT_SEED}); the other {len(train_idx)} "
            f"shuffled by --seed into {workers} contiguous shards of {shard}"
            f"{f' ({len(train_idx) - workers * shard} unused)' if len(train_idx) % workers else ''}")
    return shards, (x[test_idx], y[test_idx]), shard, desc


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    torch = import_optional("torch", "python3-torch", "PyTorch")
    sklearn = import_optional("sklearn", "python3-sklearn", "scikit-learn")
    F = torch.nn.functional

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(args.seed)
    N, B = args.workers, args.batch_size
    shards, (test_x, test_y), shard_size, dataset_desc = load_data(torch, sklearn.__version__, N, args.seed)
    per_epoch = shard_size // B
    if per_epoch < 1:
        die(f"each worker's shard has {shard_size} samples, fewer than --batch-size {B}", 2)
    K = per_epoch * args.epochs if args.iterations is None else min(per_epoch * args.epochs, args.iterations)

    base = build_model(torch, args.model)
    names = [n for n, _ in base.named_parameters()]
    tensors = [{"name": n, "shape": list(p.shape), "numel": p.numel()} for n, p in base.named_parameters()]
    T = len(names)
    alg = args.algorithm
    replicated = alg in ("event_triggered", "selective_sync")
    models = [copy.deepcopy(base) for _ in range(N)] if replicated else [base]
    opts = [torch.optim.SGD(m.parameters(), lr=args.lr) for m in models]
    for m in models:
        m.train()

    if alg == "event_triggered":
        rules = [[EventTrigger(args.threshold == "adaptive", args.value, args.horizon, args.initial_comm_passes)
                  for _ in range(T)] for _ in range(N)]
        # from_left[w][i]: what w's left neighbour last put; from_right[w][i]: its right neighbour's.
        from_left = [[torch.zeros_like(p) for p in m.parameters()] for m in models]
        from_right = [[torch.zeros_like(p) for p in m.parameters()] for m in models]
    prev_G = [None] * N

    def loss_of(model, xb, yb):
        pred = model(xb)
        return F.nll_loss(F.log_softmax(pred, 1), yb), pred  # event.cpp: nll_loss(log_softmax(prediction))

    def averaged_model():
        if not replicated:
            return models[0]
        avg = copy.deepcopy(models[0])
        with torch.no_grad():
            for j, p in enumerate(avg.parameters()):
                for m in models[1:]:
                    p.add_(list(m.parameters())[j])
                p.div_(N)
        return avg

    def evaluate():
        m = averaged_model()
        m.eval()
        with torch.no_grad():
            pred = m(test_x)
            loss = F.nll_loss(F.log_softmax(pred, 1), test_y).item()
            correct = int((pred.argmax(1) == test_y).sum().item())
        m.train()
        return loss, correct / len(test_y)

    param_norm, grad_norm, sent, epochs = [], [], [], []
    ep_loss, ep_correct, ep_samples, ep_iters = 0.0, 0, 0, 0
    for k in range(K):
        b = k % per_epoch
        batches = [(sx[b * B:(b + 1) * B], sy[b * B:(b + 1) * B]) for sx, sy in shards]
        pn = [[0.0] * T for _ in range(N)]
        gn = [[0.0] * T for _ in range(N)]
        sk = [[0] * T for _ in range(N)]
        losses = []
        if replicated:
            for w in range(N):
                m = models[w]
                opts[w].zero_grad()
                loss, pred = loss_of(m, *batches[w])
                loss.backward()
                losses.append(loss.item())
                ep_correct += int((pred.argmax(1) == batches[w][1]).sum().item())
                for i, p in enumerate(m.parameters()):
                    pn[w][i] = torch.norm(p).item()
                    gn[w][i] = torch.norm(p.grad).item()
            if alg == "event_triggered":
                params = [list(m.parameters()) for m in models]
                for i in range(T):
                    for w in range(N):  # every replica decides and puts tensor i ...
                        if rules[w][i].decide(k + 1, pn[w][i]):
                            sk[w][i] = 1
                            left, right = (w - 1) % N, (w + 1) % N
                            from_right[left][i].copy_(params[w][i].detach())
                            from_left[right][i].copy_(params[w][i].detach())
                    with torch.no_grad():  # ... before any replica averages it
                        for w in range(N):
                            params[w][i].add_(from_left[w][i])
                            params[w][i].add_(from_right[w][i])
                            params[w][i].div_(3)
                for o in opts:
                    o.step()  # the gradient from before the averaging, as event.cpp
            else:  # selective_sync
                flags = []
                for w in range(N):
                    G = total_norm(gn[w])
                    flags.append(k == 0 or ieee_div(abs(G - prev_G[w]), prev_G[w]) >= args.delta)
                    prev_G[w] = G
                for o in opts:
                    o.step()
                if any(flags):
                    with torch.no_grad():
                        params = [list(m.parameters()) for m in models]
                        for i in range(T):
                            avg = params[0][i].detach().clone()
                            for w in range(1, N):
                                avg.add_(params[w][i])
                            avg.div_(N)
                            for w in range(N):
                                params[w][i].copy_(avg)
                for w in range(N):
                    sk[w] = [int(flags[w])] * T
        else:  # one shared model: ordered_gradients, none
            m = models[0]
            norms = [torch.norm(p).item() for p in m.parameters()]
            grads = []
            for w in range(N):
                opts[0].zero_grad()
                loss, pred = loss_of(m, *batches[w])
                loss.backward()
                losses.append(loss.item())
                ep_correct += int((pred.argmax(1) == batches[w][1]).sum().item())
                grads.append([p.grad.detach().clone() for p in m.parameters()])
                pn[w] = list(norms)
                gn[w] = [torch.norm(g).item() for g in grads[w]]
            chosen = top_m([total_norm(gn[w]) for w in range(N)], args.m) if alg == "ordered_gradients" \
                else list(range(N))
            for w in chosen:
                sk[w] = [1] * T
            for i, p in enumerate(m.parameters()):
                g = grads[chosen[0]][i].clone()
                for w in chosen[1:]:
                    g.add_(grads[w][i])
                p.grad = g.div_(len(chosen))
            opts[0].step()
        param_norm.append(pn)
        grad_norm.append(gn)
        sent.append(sk)
        ep_loss += sum(losses)
        ep_samples += N * B
        ep_iters += 1
        if b == per_epoch - 1 or k == K - 1:
            test_loss, test_acc = evaluate()
            e = {"epoch": k // per_epoch + 1, "last_iteration": k, "train_loss": ep_loss / (N * ep_iters),
                 "train_accuracy": ep_correct / ep_samples, "test_loss": test_loss, "test_accuracy": test_acc}
            epochs.append(e)
            frac = sum(x for it in sent for row in it for x in row) / (len(sent) * N * T)
            print(f"{PROG}: epoch {e['epoch']}{'' if b == per_epoch - 1 else ' (partial)'}: iterations {k + 1}/{K}, "
                  f"train loss {e['train_loss']:.4f}, train accuracy {100 * e['train_accuracy']:.1f} %, "
                  f"test loss {test_loss:.4f}, test accuracy {100 * test_acc:.1f} %, "
                  f"tensors sent so far {100 * frac:.1f} %", file=sys.stderr, flush=True)
            ep_loss, ep_correct, ep_samples, ep_iters = 0.0, 0, 0, 0

    doc = {
        "format": FORMAT,
        "version": VERSION,
        "model": args.model,
        "workers": N,
        "iterations": K,
        "batch_size": B,
        "dtype_bytes": 4,
        "algorithm": algorithm_object(args),
        "tensors": tensors,
        "param_norm": param_norm,
        "grad_norm": grad_norm,
        "sent": sent,
        "epochs": epochs,
        "provenance": {
            "tool": "tools/record_training.py",
            "command": command_line(args),
            "torch": torch.__version__,
            "python": platform.python_version(),
            "dataset": dataset_desc + f"; {per_epoch} batches of {B} per worker per epoch",
            "seed": args.seed,
            "host": f"{socket.gethostname()}: {cpu_name()}, {torch.get_num_threads()} torch thread(s)",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        },
    }
    text = dumps(doc)
    problem = check_trace(json.loads(text))  # what a reader of the file sees
    if problem is not None:
        die(f"internal error: the written trace fails its own rule check: {problem}")
    out = os.path.abspath(args.output)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"{PROG}: {args.model} ({sum(t['numel'] for t in tensors):,} parameters, {T} tensors), {alg}, "
          f"{N} workers, {K} iterations: final test accuracy {100 * epochs[-1]['test_accuracy']:.1f} %, "
          f"messages saved {messages_saved(doc):.4f}; wrote {args.output} ({len(text):,} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
