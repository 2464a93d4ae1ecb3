#!/usr/bin/env python3
"""Measure the encode and decode times of gradient compressors on this machine's CPU and fit a cost table.

ddlsim charges a compressor's encode and decode on the compute stream with the model

    cost(n, k) = fixed_s + per_element_s * n + n_log_k_s * n * log2(k)

where n is the number of fp32 elements of the dense gradient and k = ceil(compression_ratio * n) the number
of elements a sparsifier keeps (docs/compression_costs.md). This tool times real PyTorch implementations of
the compressors below on a synthetic N(0, 1) float32 gradient of each size, takes the median of --repeat
timed runs after a warm-up, and fits the coefficients by least squares on the medians with relative
weights (each point's residual is divided by its median, so 1 KB counts as much as 256 MB). All
coefficients are constrained to be >= 0 (the best non-negative subset fit is kept). n_log_k_s is fitted
only for the compressors that run an exact torch.topk over the whole tensor (topk, artopk); elsewhere it
is 0. Because every size is measured at the same compression ratio, k grows with n and per_element_s of
the sparsifiers includes the work on the k kept elements: the table holds for its compression_ratio only.

Encode goes from the dense fp32 tensor to what goes on the wire (values, int32 indices, packed bits, low
precision values, factors); decode goes from that back to a dense fp32 tensor (sparse payloads are
scattered into zeros). Decode handles one payload: summing the payloads of several workers costs more.

  fp16, bf16   cast to half / bfloat16 and back.
  onebit       1-bit SGD with error feedback (Seide et al. 2014): e = g + residual, one per-tensor scale
               (mean |e|), signs packed 8 per byte, residual = e - decode(e) kept; decode unpacks the bits.
  qsgd         QSGD (Alistarh et al. 2017), --qsgd-levels s levels (default 127), one L2 norm per tensor,
               stochastic rounding, sign and level in one int8; decode = level * norm / s.
  terngrad     TernGrad (Wen et al. 2017): s = max |g|, b ~ Bernoulli(|g| / s), sign * b packed 4 per byte.
  threshold    Strom 2015: keep |g| > tau. tau is the (1 - ratio/2) quantile of |N(0, 1)|, so that about a
               fraction compression_ratio of the synthetic gradient is kept.
  topk         exact torch.topk on |g| (unsorted), values gathered, int32 indices.
  randomk      k indices from a generator seeded with a seed shared by all workers (torch.randint, with
               replacement), so only the values go on the wire; decode regenerates the indices and scatters.
  dgc          Deep Gradient Compression (Lin et al. 2018) selection: threshold = the smallest of the top
               ratio of a --dgc-sample (default 1 %) random sample of |g|, select |g| >= threshold, and if
               more than k are selected an exact top-k among the selected (as the DGC reference code does).
               Momentum correction and clipping are not part of the compressor and are not timed.
  lwtopk       layer-wise threshold estimation (seed 002 names LWTop-k only as "a threshold estimation
               mechanism"; we read it as Gaussian-k, Shi et al. 2019): threshold from the tensor's (= one
               layer's) mean and standard deviation assuming a normal distribution, select, and an exact
               top-k among the selected when more than k are selected.
  mstopk       multi-sampling threshold search (MSTop-k, Shi et al. 2021): --mstopk-iters (default 20)
               bisection steps of a threshold between mean |g| and max |g|, each a full pass counting
               |g| >= threshold; then all elements above the tight threshold plus enough from the band
               below it to make exactly k.
  powersgd     PowerSGD (Vogels et al. 2019), rank --powersgd-rank (default 4), tensor reshaped to a
               rows x cols matrix with cols = ceil(sqrt(n)) (zero padded), one power iteration with a warm
               started Q: P = M Q, P orthogonalised (torch.linalg.qr), Q = M^T P, error feedback
               (residual = M - P Q^T) as in the paper; decode = P Q^T.
  artopk       AR-Top-k (seed 002), the worker that selects: torch.topk on |g| and the values at those
               indices (the indices are broadcast, the values all-reduced); decode scatters the reduced
               values into zeros.
  artopk_gather  AR-Top-k on every other worker: gather of its values at the broadcast indices.

Timing: torch.set_num_threads(--threads) (default 1, and one inter-op thread), float32 on the CPU. With one
thread the clock is the CPU time of the calling thread (time.thread_time: user + system, page faults
included), so time the thread spends descheduled while other processes run is not counted; with more
threads (or --clock wall) it is time.perf_counter. A timed run repeats the call enough times to last about
1 ms (small sizes) and records the time per call; a point is the median of --repeat runs after one
warm-up call. By default (--malloc reuse) the tool restarts itself with MALLOC_MMAP_MAX_=0 and a huge
MALLOC_TRIM_THRESHOLD_, so glibc keeps freed memory and reuses it: PyTorch has no caching allocator on the
CPU, and without this every temporary above glibc's mmap threshold (up to 32 MiB) is fresh memory whose
pages fault on first touch. That fault cost depends on the kernel and the hypervisor far more than on the
compressor (on the Firecracker microVM this table was measured on, about 25 us per 4 KiB page: a 64 MB
fp16 cast took 171 ms instead of ~5 ms), and training loops reuse their buffers. Other work on a shared
machine still disturbs caches and memory bandwidth, which thread time
does not remove: rerun and compare before trusting a difference under ~20 %.

Example:
  python3 tools/measure_compressors.py --out scenarios/compressor_costs/cpu_this_machine.json
  python3 tools/measure_compressors.py --quick --out /tmp/costs.json        # smoke run, seconds

Requires torch (Debian: python3-torch); without it prints one error line and exits 2.
"""

import argparse
import json
import math
import os
import platform
import shlex
import statistics
import sys
import time

PROG = "measure_compressors.py"

COMPRESSORS = ["fp16", "bf16", "onebit", "qsgd", "terngrad", "threshold", "topk", "randomk", "dgc", "lwtopk",
               "mstopk", "powersgd", "artopk", "artopk_gather"]
TOPK_LIKE = {"topk", "artopk"}  # exact torch.topk over the whole tensor: n_log_k_s is fitted
KIB = 1024
MIB = 1024 * KIB


def die(message, status=1):
    """One error line on stderr, no traceback."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    raise SystemExit(status)


def import_torch():
    """torch, or exit 2 with one line naming the Debian package (as tools/profile_torch.py does)."""
    try:
        import torch
        return torch
    except ImportError as e:
        if isinstance(e, ModuleNotFoundError) and e.name == "torch":
            die("PyTorch is not installed (Debian: apt-get install python3-torch)", 2)
        die(f"PyTorch cannot be imported: {e} (Debian: apt-get install python3-torch)", 2)


def cpu_name():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_name(torch):
    """The BLAS torch uses: MKL or the library behind Debian's libblas.so.3 alternative (matters for powersgd)."""
    config = torch.__config__.show()
    if "BLAS_INFO=mkl" in config:
        return "MKL"
    for lib in ("/usr/lib/x86_64-linux-gnu/libblas.so.3", "/usr/lib/aarch64-linux-gnu/libblas.so.3"):
        if os.path.exists(lib):
            real = os.path.realpath(lib)
            for name in ("openblas", "blis", "atlas", "mkl"):
                if name in real:
                    return f"{name} ({real})"
            return f"reference BLAS ({real})" if "/blas/libblas.so" in real else real
    return "BLAS_INFO=" + (config.split("BLAS_INFO=", 1)[1].split(",", 1)[0] if "BLAS_INFO=" in config else "?")


def debian_version(package):
    """The installed Debian package version, or None."""
    try:
        import subprocess
        r = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
                           timeout=10, check=False)
        return r.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def parse_size(text):
    """'1KB', '256MB', '4096' (bytes; KB and MB are binary: 1 KB = 1024 B)."""
    t = text.strip().upper().removesuffix("B")
    mult = 1
    if t.endswith("K"):
        mult, t = KIB, t[:-1]
    elif t.endswith("M"):
        mult, t = MIB, t[:-1]
    elif t.endswith("G"):
        mult, t = 1024 * MIB, t[:-1]
    try:
        value = int(float(t) * mult)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 4096, 64KB, 256MB)") from None
    if value < 4:
        raise argparse.ArgumentTypeError(f"size too small: {text!r}")
    return value


def human(nbytes):
    if nbytes >= MIB:
        return f"{nbytes / MIB:g} MB"
    if nbytes >= KIB:
        return f"{nbytes / KIB:g} KB"
    return f"{nbytes} B"


# --------------------------------------------------------------------------------------------------
# Compressors. Each is a class with encode(g) -> payload and decode(payload) -> dense fp32 tensor of n
# elements. State that a real compressor keeps between iterations (residuals, warm-started factors,
# generators) is created in the constructor, outside the timed calls.
# --------------------------------------------------------------------------------------------------

def make_compressors(torch, opts):
    """Returns {name: class(n) -> object with encode, decode}, closing over torch and the options."""
    ratio = opts.ratio
    normal = statistics.NormalDist()

    def keep(n):
        return max(1, min(n, math.ceil(ratio * n)))

    def pack_bits(mask):
        """bool tensor -> uint8, 8 per byte (zero padded)."""
        n = mask.numel()
        pad = (-n) % 8
        m = mask.to(torch.uint8)
        if pad:
            m = torch.cat([m, m.new_zeros(pad)])
        return (m.view(-1, 8) * BIT_WEIGHTS).sum(dim=1, dtype=torch.uint8)

    def unpack_bits(packed, n):
        return ((packed.unsqueeze(1) >> BIT_SHIFTS) & 1).view(-1)[:n]

    def pack_2bit(codes):
        """uint8 codes in 0..3 -> uint8, 4 per byte (zero padded)."""
        n = codes.numel()
        pad = (-n) % 4
        if pad:
            codes = torch.cat([codes, codes.new_zeros(pad)])
        return (codes.view(-1, 4) * CRUMB_WEIGHTS).sum(dim=1, dtype=torch.uint8)

    def unpack_2bit(packed, n):
        return ((packed.unsqueeze(1) >> CRUMB_SHIFTS) & 3).view(-1)[:n]

    BIT_WEIGHTS = torch.tensor([1 << i for i in range(8)], dtype=torch.uint8)
    BIT_SHIFTS = torch.arange(8, dtype=torch.uint8)
    CRUMB_WEIGHTS = torch.tensor([1, 4, 16, 64], dtype=torch.uint8)
    CRUMB_SHIFTS = torch.tensor([0, 2, 4, 6], dtype=torch.uint8)

    def scatter(n, idx, vals):
        out = torch.zeros(n, dtype=torch.float32)
        out.index_put_((idx.long(),), vals)
        return out

    class Cast:
        dtype = None

        def __init__(self, n):
            self.n = n

        def encode(self, g):
            return g.to(self.dtype)

        def decode(self, p):
            return p.to(torch.float32)

    class FP16(Cast):
        dtype = torch.float16

    class BF16(Cast):
        dtype = torch.bfloat16

    class OneBit:
        def __init__(self, n):
            self.n = n
            self.residual = torch.zeros(n)

        def encode(self, g):
            e = g + self.residual
            scale = e.abs().mean()
            positive = e >= 0
            # residual = e - decoded, decoded = +scale where positive, -scale elsewhere. (Arithmetic on the
            # mask: torch.where with 0-dim operands is ~10x slower on the CPU in torch 1.13.)
            self.residual = e.sub_(positive.to(torch.float32).mul_(2 * scale).sub_(scale))
            return pack_bits(positive), scale

        def decode(self, p):
            packed, scale = p
            bits = unpack_bits(packed, self.n)
            return bits.to(torch.float32).mul_(2 * scale).sub_(scale)

    class QSGD:
        def __init__(self, n):
            self.n = n
            self.s = opts.qsgd_levels
            self.gen = torch.Generator().manual_seed(1)

        def encode(self, g):
            norm = torch.linalg.vector_norm(g)
            scaled = g.abs() * (self.s / norm)
            level = scaled.floor()
            level += torch.rand(self.n, generator=self.gen) < (scaled - level)
            q = (level * g.sign()).to(torch.int8)
            return q, norm

        def decode(self, p):
            q, norm = p
            return q.to(torch.float32) * (norm / self.s)

    class TernGrad:
        def __init__(self, n):
            self.n = n
            self.gen = torch.Generator().manual_seed(2)

        def encode(self, g):
            a = g.abs()
            s = a.max()
            b = torch.rand(self.n, generator=self.gen) * s < a
            codes = (g.sign() * b + 1).to(torch.uint8)  # -1, 0, +1 -> 0, 1, 2
            return pack_2bit(codes), s

        def decode(self, p):
            packed, s = p
            return (unpack_2bit(packed, self.n).to(torch.float32) - 1) * s

    class Sparse:
        """Decode shared by the sparsifiers that send (int32 indices, fp32 values)."""

        def __init__(self, n):
            self.n = n
            self.k = keep(n)

        def decode(self, p):
            idx, vals = p
            return scatter(self.n, idx, vals)

    class Threshold(Sparse):
        def __init__(self, n):
            super().__init__(n)
            self.tau = normal.inv_cdf(1 - ratio / 2)

        def encode(self, g):
            idx = (g.abs() > self.tau).nonzero().view(-1)
            return idx.to(torch.int32), g[idx]

    class TopK(Sparse):
        def encode(self, g):
            _, idx = torch.topk(g.abs(), self.k, sorted=False)
            return idx.to(torch.int32), g[idx]

    class RandomK(Sparse):
        def __init__(self, n):
            super().__init__(n)
            self.step = 0

        def indices(self, step):
            gen = torch.Generator().manual_seed(1000 + step)
            return torch.randint(0, self.n, (self.k,), generator=gen)

        def encode(self, g):
            self.step += 1
            return self.step, g[self.indices(self.step)]

        def decode(self, p):
            step, vals = p
            return scatter(self.n, self.indices(step), vals)

    def trim_to_k(importance, idx, k):
        """If more than k indices were selected, keep the k largest among them (exact top-k of the few)."""
        if idx.numel() > k:
            _, sub = torch.topk(importance[idx], k, sorted=False)
            idx = idx[sub]
        return idx

    class DGC(Sparse):
        def __init__(self, n):
            super().__init__(n)
            self.samples = max(1, min(n, math.ceil(opts.dgc_sample * n)))
            self.sample_k = max(1, math.ceil(ratio * self.samples))
            self.gen = torch.Generator().manual_seed(3)

        def encode(self, g):
            importance = g.abs()
            if self.samples < self.n:
                sample = importance[torch.randint(0, self.n, (self.samples,), generator=self.gen)]
            else:
                sample = importance
            threshold = torch.topk(sample, self.sample_k, sorted=False)[0].min()
            idx = (importance >= threshold).nonzero().view(-1)
            idx = trim_to_k(importance, idx, self.k)
            return idx.to(torch.int32), g[idx]

    class LWTopK(Sparse):
        def __init__(self, n):
            super().__init__(n)
            self.z = normal.inv_cdf(1 - ratio / 2)

        def encode(self, g):
            mean, std = g.mean(), g.std()  # (torch.std_mean is ~8x slower on the CPU in torch 1.13)
            centred = (g - mean).abs()
            idx = (centred >= self.z * std).nonzero().view(-1)
            idx = trim_to_k(centred, idx, self.k)
            return idx.to(torch.int32), g[idx]

    class MSTopK(Sparse):
        def encode(self, g):
            a = g.abs()
            k = self.k
            lo_val, hi_val = a.mean().item(), a.max().item()
            left, right = 0.0, 1.0
            tight = hi_val  # a threshold with count <= k
            loose = lo_val  # a threshold with count >= k
            for _ in range(opts.mstopk_iters):
                mid = (left + right) / 2
                thres = lo_val + mid * (hi_val - lo_val)
                nnz = int((a >= thres).sum())
                if nnz <= k:
                    right, tight = mid, thres
                    if nnz == k:
                        loose = thres
                        break
                else:
                    left, loose = mid, thres
            top = (a >= tight).nonzero().view(-1)
            missing = k - top.numel()
            if missing > 0:
                band = ((a >= loose) & (a < tight)).nonzero().view(-1)
                top = torch.cat([top, band[:missing]])
            return top.to(torch.int32), g[top]

    class PowerSGD:
        def __init__(self, n):
            self.n = n
            self.cols = math.ceil(math.sqrt(n))
            self.rows = math.ceil(n / self.cols)
            self.pad = self.rows * self.cols - n
            r = min(opts.powersgd_rank, self.rows, self.cols)
            gen = torch.Generator().manual_seed(4)
            self.q = torch.randn(self.cols, r, generator=gen)
            self.residual = torch.zeros(self.rows, self.cols)

        def encode(self, g):
            flat = g if not self.pad else torch.cat([g, g.new_zeros(self.pad)])
            m = flat.view(self.rows, self.cols) + self.residual
            p = m @ self.q
            p, _ = torch.linalg.qr(p)  # orthogonalisation (Gram-Schmidt in the paper)
            q = m.t() @ p
            self.q = q  # warm start for the next step
            self.residual = m - p @ q.t()
            return p, q

        def decode(self, payload):
            p, q = payload
            return (p @ q.t()).view(-1)[:self.n]

    class ARTopK(Sparse):
        def encode(self, g):
            _, idx = torch.topk(g.abs(), self.k, sorted=False)
            return idx.to(torch.int32), g[idx]

    class ARTopKGather(Sparse):
        def __init__(self, n):
            super().__init__(n)
            gen = torch.Generator().manual_seed(5)
            # indices as received from the broadcast (int32 on the wire, widened for indexing)
            self.received = torch.randperm(n, generator=gen)[:self.k].to(torch.int32)

        def encode(self, g):
            return self.received, g[self.received.long()]

    return {"fp16": FP16, "bf16": BF16, "onebit": OneBit, "qsgd": QSGD, "terngrad": TernGrad,
            "threshold": Threshold, "topk": TopK, "randomk": RandomK, "dgc": DGC, "lwtopk": LWTopK,
            "mstopk": MSTopK, "powersgd": PowerSGD, "artopk": ARTopK, "artopk_gather": ARTopKGather}


# --------------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------------

def time_call(fn, repeat, min_run_s, clock):
    """Median seconds per call of fn() over `repeat` timed runs after a warm-up call.

    A timed run loops `inner` calls, inner chosen from the warm-up so a run lasts about min_run_s."""
    t0 = clock()
    fn()
    first = clock() - t0
    inner = 1 if first >= min_run_s else min(1000, max(1, int(min_run_s / max(first, 1e-7))))
    samples = []
    for _ in range(repeat):
        t0 = clock()
        for _ in range(inner):
            fn()
        samples.append((clock() - t0) / inner)
    return statistics.median(samples)


def measure(torch, opts, names, sizes_bytes, log):
    """{name: {"encode": [(n, k, s)], "decode": [(n, k, s)]}}"""
    classes = make_compressors(torch, opts)
    clock = time.thread_time if opts.clock == "thread" else time.perf_counter
    results = {name: {"encode": [], "decode": []} for name in names}
    gen = torch.Generator().manual_seed(0)
    for nbytes in sizes_bytes:
        n = max(1, nbytes // 4)
        g = torch.randn(n, generator=gen, dtype=torch.float32)
        k = max(1, min(n, math.ceil(opts.ratio * n)))
        for name in names:
            c = classes[name](n)
            payload = c.encode(g)
            out = c.decode(payload)
            if out.shape != (n,) or out.dtype != torch.float32:
                die(f"{name}: decode gave {tuple(out.shape)} {out.dtype}, expected ({n},) float32")
            enc = time_call(lambda: c.encode(g), opts.repeat, opts.min_run_s, clock)
            payload = c.encode(g)
            dec = time_call(lambda: c.decode(payload), opts.repeat, opts.min_run_s, clock)
            results[name]["encode"].append((n, k, enc))
            results[name]["decode"].append((n, k, dec))
            log(f"{human(nbytes):>8} {name:<14} encode {enc * 1e3:10.4f} ms   decode {dec * 1e3:10.4f} ms")
            del c, payload, out
        del g
    return results


# --------------------------------------------------------------------------------------------------
# Fit
# --------------------------------------------------------------------------------------------------

def solve(a, b):
    """Solves the square system a x = b (Gaussian elimination with partial pivoting); None if singular."""
    m = len(a)
    aug = [list(map(float, row)) + [float(v)] for row, v in zip(a, b)]
    for col in range(m):
        piv = max(range(col, m), key=lambda r: abs(aug[r][col]))
        if abs(aug[piv][col]) < 1e-300:
            return None
        aug[col], aug[piv] = aug[piv], aug[col]
        for r in range(m):
            if r != col:
                f = aug[r][col] / aug[col][col]
                for c in range(col, m + 1):
                    aug[r][c] -= f * aug[col][c]
    return [aug[i][m] / aug[i][i] for i in range(m)]


def features(n, k, with_log):
    row = [1.0, float(n)]
    if with_log:
        row.append(float(n) * math.log2(k) if k > 1 else 0.0)
    return row


def fit(points, with_log):
    """Non-negative least squares of y ~ features with relative weights (residual / y).

    Tries every subset of the coefficients (2 or 3 of them), solves the weighted normal equations
    (columns scaled to unit norm for conditioning), keeps the feasible (all >= 0) solution with the
    smallest weighted residual. Returns (coefficients, max relative error)."""
    rows = [features(n, k, with_log) for n, k, _ in points]
    ys = [y for _, _, y in points]
    dim = len(rows[0])
    wrows = [[v / y for v in r] for r, y in zip(rows, ys)]  # weight 1/y: relative residuals
    wy = [1.0] * len(ys)
    best = None
    for mask in range(1, 1 << dim):
        cols = [j for j in range(dim) if mask >> j & 1]
        scale = [math.sqrt(sum(r[j] ** 2 for r in wrows)) or 1.0 for j in cols]
        x = [[r[j] / s for j, s in zip(cols, scale)] for r in wrows]
        ata = [[sum(xr[i] * xr[j] for xr in x) for j in range(len(cols))] for i in range(len(cols))]
        atb = [sum(xr[i] * v for xr, v in zip(x, wy)) for i in range(len(cols))]
        sol = solve(ata, atb)
        if sol is None:
            continue
        coef = [0.0] * dim
        for j, s, v in zip(cols, scale, sol):
            coef[j] = v / s
        if any(c < 0 for c in coef):
            continue
        sse = sum((sum(c * v for c, v in zip(coef, r)) / y - 1) ** 2 for r, y in zip(rows, ys))
        if best is None or sse < best[0]:
            best = (sse, coef)
    coef = best[1]
    max_err = max(abs(sum(c * v for c, v in zip(coef, r)) / y - 1) for r, y in zip(rows, ys))
    return coef, max_err


def predict(coef, n, k):
    return coef["fixed_s"] + coef["per_element_s"] * n + coef["n_log_k_s"] * n * (math.log2(k) if k > 1 else 0.0)


def table(results, names):
    out = {}
    for name in names:
        entry = {}
        errors = []
        for phase in ("encode", "decode"):
            with_log = phase == "encode" and name in TOPK_LIKE
            coef, err = fit(results[name][phase], with_log)
            entry[phase] = {"fixed_s": coef[0], "per_element_s": coef[1],
                            "n_log_k_s": coef[2] if with_log else 0.0}
            errors.append(err)
        entry["max_fit_error"] = max(errors)
        out[name] = entry
    return out


# --------------------------------------------------------------------------------------------------

def sizes_between(lo, hi, factor):
    sizes = []
    s = lo
    while s <= hi:
        sizes.append(s)
        s *= factor
    if sizes[-1] != hi and hi > lo:
        sizes.append(hi)
    return sizes


MALLOC_REUSE_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(1 << 50)}


def reexec_with_malloc_reuse(argv):
    """Restarts this process once with glibc malloc told to keep freed memory (see --malloc)."""
    if all(os.environ.get(k) == v for k, v in MALLOC_REUSE_ENV.items()):
        return
    env = dict(os.environ, **MALLOC_REUSE_ENV)
    args = [sys.executable, os.path.abspath(__file__)] + list(sys.argv[1:] if argv is None else argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, args, env)


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="See the module docstring (head of this file) and docs/compression_costs.md.")
    ap.add_argument("--out", required=True, help="path of the JSON cost table to write")
    ap.add_argument("--min-bytes", type=parse_size, default=KIB, help="smallest gradient (default 1KB)")
    ap.add_argument("--max-bytes", type=parse_size, default=256 * MIB, help="largest gradient (default 256MB)")
    ap.add_argument("--size-factor", type=int, default=4, help="ratio between successive sizes (default 4)")
    ap.add_argument("--ratio", type=float, default=0.01,
                    help="compression ratio k/n of the sparsifiers (default 0.01)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per point; the median is kept (default 5)")
    ap.add_argument("--min-run-s", type=float, default=1e-3,
                    help="a timed run loops short calls to last about this long (default 0.001)")
    ap.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1)")
    ap.add_argument("--clock", choices=["thread", "wall"], default=None,
                    help="thread: CPU time of the calling thread (time.thread_time), which leaves out time lost "
                         "to other processes; wall: time.perf_counter. Default thread with --threads 1, else "
                         "wall (thread time would miss the other threads' work)")
    ap.add_argument("--malloc", choices=["reuse", "default"], default="reuse",
                    help="reuse (default): restart with MALLOC_MMAP_MAX_=0 and a huge MALLOC_TRIM_THRESHOLD_ so "
                         "glibc reuses freed memory and large tensors do not page-fault on every call (as with a "
                         "caching allocator); default: glibc as configured, first-touch page faults included")
    ap.add_argument("--only", default=None,
                    help=f"comma separated subset of: {','.join(COMPRESSORS)} (default all)")
    ap.add_argument("--qsgd-levels", type=int, default=127, help="QSGD levels s, 1..127 (default 127)")
    ap.add_argument("--dgc-sample", type=float, default=0.01, help="DGC sample fraction (default 0.01)")
    ap.add_argument("--mstopk-iters", type=int, default=20, help="MSTop-k bisection steps (default 20)")
    ap.add_argument("--powersgd-rank", type=int, default=4, help="PowerSGD rank r (default 4)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run in seconds: 1KB..4MB, 3 repeats (overrides --max-bytes, --repeat)")
    ap.add_argument("--raw-out", default=None,
                    help="also write the measured medians (seconds per call, by size) to this JSON file")
    ap.add_argument("--quiet", action="store_true", help="no per-point lines on stderr")
    opts = ap.parse_args(argv)

    if not 0 < opts.ratio <= 1:
        die("--ratio must be in (0, 1]")
    if not 1 <= opts.qsgd_levels <= 127:
        die("--qsgd-levels must be in 1..127 (sign and level share one int8)")
    if not 0 < opts.dgc_sample <= 1:
        die("--dgc-sample must be in (0, 1]")
    if opts.repeat < 1 or opts.threads < 1 or opts.mstopk_iters < 1 or opts.powersgd_rank < 1:
        die("--repeat, --threads, --mstopk-iters and --powersgd-rank must be >= 1")
    if opts.size_factor < 2:
        die("--size-factor must be >= 2")
    if opts.clock is None:
        opts.clock = "thread" if opts.threads == 1 else "wall"
    if opts.clock == "thread" and opts.threads != 1:
        die("--clock thread needs --threads 1 (it counts the calling thread only)")
    if opts.quick:
        opts.max_bytes = min(opts.max_bytes, 4 * MIB)
        opts.repeat = min(opts.repeat, 3)
    if opts.max_bytes < opts.min_bytes:
        die("--max-bytes is smaller than --min-bytes")
    names = COMPRESSORS
    if opts.only:
        names = [s.strip() for s in opts.only.split(",") if s.strip()]
        unknown = [s for s in names if s not in COMPRESSORS]
        if unknown:
            die(f"unknown compressor(s) {', '.join(unknown)}; known: {', '.join(COMPRESSORS)}")
    sizes = sizes_between(opts.min_bytes, opts.max_bytes, opts.size_factor)
    if len(sizes) < 3:
        die(f"need at least 3 sizes to fit and check 2 or 3 coefficients; got {len(sizes)}")

    if opts.malloc == "reuse":
        reexec_with_malloc_reuse(argv)
    torch = import_torch()
    torch.set_num_threads(opts.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set (only possible before any parallel work)

    log = (lambda _m: None) if opts.quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    started = time.time()
    results = measure(torch, opts, names, sizes, log)
    elapsed = time.time() - started
    load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    compressors = table(results, names)

    sparsifiers = "threshold, topk, randomk, dgc, lwtopk, mstopk, artopk, artopk_gather"
    method = (
        f"PyTorch {torch.__version__} on the CPU, float32, {opts.threads} intra-op thread(s) "
        f"(torch.set_num_threads) and one inter-op thread; synthetic N(0,1) gradients of "
        f"{human(sizes[0])} to {human(sizes[-1])} (x{opts.size_factor} steps, {len(sizes)} sizes, n = bytes/4); "
        f"each point is the median of {opts.repeat} timed runs after one warm-up call (runs of sub-ms calls loop "
        f"them for about {opts.min_run_s * 1e3:g} ms and divide); clock: "
        + ("CPU time of the calling thread (time.thread_time), so time lost to other processes is not counted"
           if opts.clock == "thread" else "wall time (time.perf_counter)")
        + ("; glibc malloc kept freed memory (MALLOC_MMAP_MAX_=0, huge MALLOC_TRIM_THRESHOLD_), so large "
           "temporaries are reused without first-touch page faults, as with a caching allocator; "
           if opts.malloc == "reuse" else "; glibc malloc as configured: first-touch page faults of large "
           "temporaries included; ")
        + f"(1-min load average {load_before:.1f} before, {load_after:.1f} after: the machine may be shared, and "
        f"cache and memory-bandwidth contention remain in the medians). Encode = dense fp32 tensor to wire payload, decode = payload "
        f"of one worker back to a dense fp32 tensor (sparse payloads scattered into zeros). Sparsifiers "
        f"({sparsifiers}) keep k = ceil({opts.ratio:g} n), so their per_element_s holds at this ratio only. "
        f"qsgd s={opts.qsgd_levels} levels; dgc samples {opts.dgc_sample:g} of the elements; mstopk "
        f"{opts.mstopk_iters} bisection steps; powersgd rank {opts.powersgd_rank} on a ceil(sqrt(n))-column "
        f"matrix with error feedback; onebit with error feedback. Fit: least squares on the medians with "
        f"relative weights (residual/median), coefficients constrained >= 0 (best non-negative subset), "
        f"n_log_k_s fitted for topk and artopk encode only (exact torch.topk), else 0; max_fit_error = the "
        f"largest |fit/median - 1| over sizes and both phases. Measurement took {elapsed:.0f} s. "
        f"Implementations and caveats: tools/measure_compressors.py, docs/compression_costs.md.")
    command = "python3 tools/measure_compressors.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    deb = debian_version("python3-torch")
    torch_version = f"torch {torch.__version__}" + (f" (Debian python3-torch {deb})" if deb else "")
    doc = {
        "device": f"{cpu_name()} ({os.cpu_count()} logical CPUs, {opts.threads} thread(s) used), "
                  f"{torch_version}, BLAS: {blas_name(torch)}, Python {platform.python_version()}, "
                  f"{platform.system()} {platform.machine()}",
        "source": f"measured with: {command}",
        "method": method,
        "compression_ratio": opts.ratio,
        "compressors": compressors,
    }
    out_dir = os.path.dirname(os.path.abspath(opts.out))
    os.makedirs(out_dir, exist_ok=True)
    with open(opts.out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")

    if opts.raw_out:
        raw = {"sizes_bytes": sizes, "compression_ratio": opts.ratio,
               "medians_s": {name: {phase: [{"n": n, "k": k, "median_s": y} for n, k, y in results[name][phase]]
                                    for phase in ("encode", "decode")} for name in names}}
        with open(opts.raw_out, "w", encoding="utf-8") as f:
            json.dump(raw, f, indent=1)
            f.write("\n")

    # Summary on stdout: coefficients, fit error and the measured medians at the largest size.
    print(f"{'compressor':<14} {'enc fixed_s':>11} {'enc s/elem':>11} {'enc nlogk_s':>11} "
          f"{'dec fixed_s':>11} {'dec s/elem':>11} {'max err':>8}")
    for name, e in compressors.items():
        print(f"{name:<14} {e['encode']['fixed_s']:11.3e} {e['encode']['per_element_s']:11.3e} "
              f"{e['encode']['n_log_k_s']:11.3e} {e['decode']['fixed_s']:11.3e} "
              f"{e['decode']['per_element_s']:11.3e} {e['max_fit_error']:8.1%}")
    print(f"{PROG}: wrote {opts.out} ({len(names)} compressors, {len(sizes)} sizes, {elapsed:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
