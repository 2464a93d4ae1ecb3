#!/usr/bin/env python3
"""Measure the compression gain of top-k with error feedback on real gradients, and fit ddlsim's gain model.

Seed 002 (Tyagi & Swany, IEEE BigData 2023) measures the statistical efficiency of a compressor as its
compression gain

    gain = E[||g_c||^2] / E[||g_e||^2],   g_e = g + residual,  g_c = C(g_e),  residual = g_e - g_c,

and its adaptive compression picks the compression ratio (CR) by trading that gain against time. ddlsim's
adaptive compression (training.adaptive_compression) reads the gain from a gain model (models/gain_model.hpp)
that this tool makes from a real training run:

  * data: the handwritten digits that scikit-learn ships (sklearn.datasets.load_digits, 1797 8x8 images,
    10 classes; Debian: python3-sklearn), pixels scaled to [0, 1], a fixed 80/20 split by --seed;
  * model: --model cnn (default: two 3x3 convolutions 32 and 64 wide, 2x2 max pooling, a 96-unit hidden
    layer; 118,570 parameters) or mlp (64-256-128-10); cross entropy, SGD with the seed code's settings
    (lr 0.01, momentum 0.9, weight decay 1e-4), batch --batch (default 32);
  * training: --steps optimizer steps of dense SGD; every --every steps (a checkpoint, step 0 included) the
    model and optimizer are saved and, for every candidate CR, --explore-steps steps are run from the
    checkpoint with top-k compression and error feedback over the concatenated gradient of all parameters
    (k = ceil(CR n), a fresh residual, the compressed gradient applied) -- the seed code's exploration
    (updateMOOParameters in flexible_compression/adaptive_moo/run_MOOCompression.py) -- then the checkpoint
    is restored. The gain of a step is ||g_c||^2 / ||g_e||^2 (the slides' definition; the seed's code
    uses the ratio of the norms, its square root); a candidate's gain is the mean of its last five steps
    (the seed smooths with an EWMA over a window of five with alpha 0.01, which is that mean to 2 %);
  * fit: per checkpoint, gain(c) = min(1, a c^b) by least squares on log(gain) against log(c) (the
    measured gains are below 1); the largest relative error of the fit is reported.

Output: a JSON gain model, e.g. scenarios/compression_gain/digits_cnn_topk.json (schema in
docs/compression.md). Deterministic for a given --seed and torch build (one thread).

Example:
  python3 tools/measure_gain.py --out scenarios/compression_gain/digits_cnn_topk.json
  python3 tools/measure_gain.py --steps 40 --every 20 --explore-steps 5 --out /tmp/gain.json   # seconds

Requires torch and scikit-learn (Debian: python3-torch, python3-sklearn); without them prints one error
line and exits 2.
"""

import argparse
import copy
import json
import math
import platform
import sys

CANDIDATES = [0.1, 0.033, 0.011, 0.004, 0.001]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="where to write the gain model (JSON)")
    p.add_argument("--model", choices=["cnn", "mlp"], default="cnn")
    p.add_argument("--steps", type=int, default=600, help="optimizer steps of the run (default 600)")
    p.add_argument("--every", type=int, default=50, help="steps between checkpoints (default 50)")
    p.add_argument("--explore-steps", type=int, default=10,
                   help="compressed steps per candidate from each checkpoint (default 10, the seed's explore-itrs)")
    p.add_argument("--ratios", default=",".join(str(c) for c in CANDIDATES),
                   help="candidate CRs, comma separated (default: the seed's 0.1,0.033,0.011,0.004,0.001)")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    for name in ("steps", "every", "explore_steps", "batch"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    try:
        args.ratios = [float(r) for r in args.ratios.split(",")]
    except ValueError:
        p.error(f"--ratios: expected numbers separated by commas, got {args.ratios!r}")
    if any(not 0 < r <= 1 for r in args.ratios):
        p.error("--ratios: every CR must be in (0, 1]")
    return args


def build_model(torch, kind):
    nn = torch.nn
    if kind == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(),
                             nn.Linear(128, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 4 * 4, 96), nn.ReLU(), nn.Linear(96, 10))


def fit_power(points):
    """Least squares of log g = log a + b log c; returns a, b and the largest relative error of min(1, a c^b)."""
    xs = [math.log(c) for c, _ in points]
    ys = [math.log(max(g, 1e-12)) for _, g in points]
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    b = max(b, 0.0)  # the gain does not fall when more is kept
    a = math.exp(my - b * mx)
    err = max(abs(min(1.0, a * c ** b) - g) / g for c, g in points)
    return a, b, err


def main(argv):
    args = parse_args(argv)
    try:
        import torch
        from sklearn.datasets import load_digits
    except ImportError as e:
        print(f"measure_gain: needs torch and scikit-learn (Debian: python3-torch python3-sklearn): {e}",
              file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32).unsqueeze(1) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    gen = torch.Generator().manual_seed(args.seed)
    order = torch.randperm(len(y), generator=gen)
    train = order[: int(0.8 * len(y))]
    model = build_model(torch, args.model)
    n_params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    batches_per_epoch = len(train) // args.batch
    perm = {"epoch": -1, "order": None}

    def batch(step):
        epoch, i = divmod(step, batches_per_epoch)
        if perm["epoch"] != epoch:
            perm["epoch"] = epoch
            perm["order"] = train[torch.randperm(len(train), generator=torch.Generator().manual_seed(args.seed + epoch))]
        idx = perm["order"][i * args.batch:(i + 1) * args.batch]
        return x[idx], y[idx]

    def gradient(m, step):
        m.zero_grad()
        xb, yb = batch(step)
        loss = loss_fn(m(xb), yb)
        loss.backward()
        return torch.cat([p.grad.reshape(-1) for p in m.parameters()]), loss.item()

    def explore(step, ratio):
        m = copy.deepcopy(model)
        o = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
        o.load_state_dict(opt.state_dict())
        residual = torch.zeros(n_params)
        k = max(1, math.ceil(ratio * n_params - 1e-9))
        gains = []
        for j in range(args.explore_steps):
            g, _ = gradient(m, step + j)
            e = g + residual
            _, idx = torch.topk(e.abs(), k, sorted=False)
            c = torch.zeros_like(e)
            c[idx] = e[idx]
            residual = e - c
            gains.append(float(c.pow(2).sum() / e.pow(2).sum()))
            offset = 0
            for p in m.parameters():
                p.grad = c[offset:offset + p.numel()].view_as(p).clone()
                offset += p.numel()
            o.step()
        last = gains[-5:]
        return sum(last) / len(last)

    checkpoints = []
    loss = float("nan")
    for step in range(args.steps + 1):
        if step % args.every == 0:
            measured = [[r, explore(step, r)] for r in args.ratios]
            a, b, err = fit_power(measured)
            checkpoints.append({"step": step, "a": round(a, 6), "b": round(b, 6),
                                "max_fit_error": round(err, 4),
                                "measured": [[r, round(g, 6)] for r, g in measured]})
            print(f"step {step:5d} loss {loss:.4f} gains " +
                  " ".join(f"{r:g}:{g:.4f}" for r, g in measured) + f"  fit a={a:.4g} b={b:.4g} err={err:.3f}",
                  file=sys.stderr)
        if step == args.steps:
            break
        g, loss = gradient(model, step)
        opt.step()

    doc = {
        "source": "tools/measure_gain.py: top-k with error feedback on real gradients, one worker",
        "model": f"{args.model} on sklearn digits ({n_params} parameters), SGD lr 0.01 momentum 0.9 batch {args.batch}",
        "method": (f"every {args.every} of {args.steps} steps, {args.explore_steps} top-k steps per CR from the "
                   "checkpoint with a fresh residual; gain = ||g_c||^2 / ||g_e||^2, mean of the last 5"),
        "curve": "gain(c) = min(1, a * c^b), least squares in log-log per checkpoint",
        "measured_on": f"{platform.machine()} CPU, torch {torch.__version__}, seed {args.seed}",
        "checkpoints": checkpoints,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {args.out}: {len(checkpoints)} checkpoints", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
