#!/usr/bin/env python3
"""Generate the bundled training profiles in scenarios/profiles/ (see docs/profiles.md).

Standard library only: every architecture is written out layer by layer in plain Python, with
exact parameter counts (weights + biases + normalisation affine parameters) and forward FLOPs
for the stated input size. Each model's total parameter count is checked against the reference
implementation (torchvision / HuggingFace transformers / pytorch/examples); any mismatch makes
the script exit non-zero without writing anything.

Granularity: one profile layer per parametric layer (conv, linear, embedding) or transformer
sub-block, in forward execution order. A batch-norm's gamma/beta are counted in the entry of
the conv it follows ("conv+bn"); the non-parametric work that follows a parametric layer (ReLU,
pooling, residual add, dropout) is folded into that entry (pooling that precedes a layer, such
as the global average pool before a classifier, is folded into the layer it feeds).

FLOPs: 2 x multiply-accumulates of every conv / linear / attention matmul, plus element-wise
work at fixed per-output-element costs (EW below); dropout and the loss are not counted.

Times: a stated per-iteration forward+backward time T (a published measurement, see SOURCES)
is split over the layers by their share of forward FLOPs, with backward = 2 x forward per
layer:  forward_s(l) = share(l) * T / 3,  backward_s(l) = 2 * forward_s(l),  so the profile's
forward + backward is exactly T. optimizer_s and io_s are small streaming estimates (see
optimizer_s() and io_s()).

Usage:  tools/make_profiles.py [--out DIR] [--check] [--only NAME ...]
"""

import argparse
import json
import os
import sys

# Element-wise FLOPs per output element.
EW = {
    "bn": 4,  # batch statistics, normalise, scale, shift (training mode)
    "relu": 1,
    "add": 1,  # residual / embedding sums
    "layernorm": 5,
    "gelu": 8,
    "tanh": 1,
    "softmax": 5,  # exp, sum, divide, max, subtract
    "scale": 1,  # attention scaling by 1/sqrt(d)
    "mask": 1,  # additive attention mask
}

GB = 1e9


# --------------------------------------------------------------------------- model builders


class Model:
    """An ordered list of layers: name, parameters, forward FLOPs per sample."""

    def __init__(self, name):
        self.name = name
        self.layers = []

    def add(self, name, params, flops):
        if any(l["name"] == name for l in self.layers):
            raise ValueError(f"{self.name}: duplicate layer name {name}")
        self.layers.append({"name": name, "parameters": int(params), "flops": float(flops)})

    def tail(self, flops):
        """Fold extra element-wise work into the last layer added."""
        self.layers[-1]["flops"] += flops

    def parameters(self):
        return sum(l["parameters"] for l in self.layers)

    def flops(self):
        return sum(l["flops"] for l in self.layers)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv_out(size, k, s, p):
    return (size + 2 * p - k) // s + 1


def pool(shape, k, s, p=0):
    """Max / average pooling: output shape and FLOPs (k*k per output element)."""
    c, h, w = shape
    ho, wo = conv_out(h, k, s, p), conv_out(w, k, s, p)
    return (c, ho, wo), k * k * c * ho * wo


def conv(m, name, shape, cout, k, s=1, p=0, bias=False, bn=True, relu=True, extra=0.0):
    """Adds a conv(+bn)(+relu) entry; returns the output shape (C, H, W)."""
    cin, h, w = shape
    kh, kw = _pair(k)
    ph, pw = _pair(p)
    ho, wo = conv_out(h, kh, s, ph), conv_out(w, kw, s, pw)
    out = cout * ho * wo
    params = cout * cin * kh * kw + (cout if bias else 0) + (2 * cout if bn else 0)
    flops = 2 * cin * kh * kw * out + (out if bias else 0)
    flops += EW["bn"] * out if bn else 0
    flops += EW["relu"] * out if relu else 0
    m.add(name, params, flops + extra)
    return (cout, ho, wo)


def linear(m, name, fin, fout, bias=True, tokens=1, extra=0.0):
    params = fin * fout + (fout if bias else 0)
    flops = tokens * (2 * fin * fout + (fout if bias else 0))
    m.add(name, params, flops + extra)


# ResNet (torchvision.models.resnet: v1.5, stride on the 3x3 conv of a bottleneck).
def resnet(name, block, layers):
    m = Model(name)
    shape = conv(m, "conv1+bn1", (3, 224, 224), 64, 7, s=2, p=3)
    shape, f = pool(shape, 3, 2, 1)  # maxpool
    m.tail(f)
    inplanes = 64
    expansion = 1 if block == "basic" else 4
    for stage, (planes, blocks) in enumerate(zip((64, 128, 256, 512), layers), start=1):
        for b in range(blocks):
            stride = 2 if (stage > 1 and b == 0) else 1
            prefix = f"layer{stage}.{b}"
            x = shape
            if block == "basic":
                y = conv(m, f"{prefix}.conv1+bn1", x, planes, 3, s=stride, p=1)
                y = conv(m, f"{prefix}.conv2+bn2", y, planes, 3, p=1, relu=False)
            else:
                y = conv(m, f"{prefix}.conv1+bn1", x, planes, 1)
                y = conv(m, f"{prefix}.conv2+bn2", y, planes, 3, s=stride, p=1)
                y = conv(m, f"{prefix}.conv3+bn3", y, planes * 4, 1, relu=False)
            if stride != 1 or inplanes != planes * expansion:
                conv(m, f"{prefix}.downsample", x, planes * expansion, 1, s=stride, relu=False)
            c, h, w = y
            m.tail((EW["add"] + EW["relu"]) * c * h * w)  # residual add + relu
            shape = y
            inplanes = planes * expansion
    c, h, w = shape
    linear(m, "fc", c, 1000, extra=c * h * w)  # global average pool folded in
    return m


def vgg16():
    m = Model("vgg16")
    shape = (3, 224, 224)
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    i = 0
    for v in cfg:
        if v == "M":
            shape, f = pool(shape, 2, 2)
            m.tail(f)
        else:
            shape = conv(m, f"features.{i}", shape, v, 3, p=1, bias=True, bn=False)
            i += 1
    c, h, w = shape  # 512x7x7; the adaptive average pool to 7x7 is the identity here
    linear(m, "classifier.0", c * h * w, 4096, extra=4096)  # + relu
    linear(m, "classifier.3", 4096, 4096, extra=4096)
    linear(m, "classifier.6", 4096, 1000)
    return m


def alexnet():
    m = Model("alexnet")  # torchvision AlexNet ("one weird trick" variant, no groups)
    s = conv(m, "features.0", (3, 224, 224), 64, 11, s=4, p=2, bias=True, bn=False)
    s, f = pool(s, 3, 2)
    m.tail(f)
    s = conv(m, "features.3", s, 192, 5, p=2, bias=True, bn=False)
    s, f = pool(s, 3, 2)
    m.tail(f)
    s = conv(m, "features.6", s, 384, 3, p=1, bias=True, bn=False)
    s = conv(m, "features.8", s, 256, 3, p=1, bias=True, bn=False)
    s = conv(m, "features.10", s, 256, 3, p=1, bias=True, bn=False)
    s, f = pool(s, 3, 2)  # 256x6x6
    m.tail(f)
    c, h, w = s
    linear(m, "classifier.1", c * h * w, 4096, extra=4096)
    linear(m, "classifier.4", 4096, 4096, extra=4096)
    linear(m, "classifier.6", 4096, 1000)
    return m


def inception_v3():
    """torchvision inception_v3(aux_logits=True), 299x299 input, training-mode forward (the
    auxiliary classifier runs after Mixed_6e). BasicConv2d = conv (no bias) + BN + ReLU."""
    m = Model("inception_v3")

    def bc(name, shape, cout, k, s=1, p=0, extra=0.0):
        return conv(m, name, shape, cout, k, s=s, p=p, extra=extra)

    def avgpool_flops(shape):  # 3x3, stride 1, padding 1
        c, h, w = shape
        return 9 * c * h * w

    def inception_a(n, x, pool_features):
        b1 = bc(f"{n}.branch1x1", x, 64, 1)
        b5 = bc(f"{n}.branch5x5_1", x, 48, 1)
        b5 = bc(f"{n}.branch5x5_2", b5, 64, 5, p=2)
        bd = bc(f"{n}.branch3x3dbl_1", x, 64, 1)
        bd = bc(f"{n}.branch3x3dbl_2", bd, 96, 3, p=1)
        bd = bc(f"{n}.branch3x3dbl_3", bd, 96, 3, p=1)
        bp = bc(f"{n}.branch_pool", x, pool_features, 1, extra=avgpool_flops(x))
        return (b1[0] + b5[0] + bd[0] + bp[0], b1[1], b1[2])

    def inception_b(n, x):
        b3 = bc(f"{n}.branch3x3", x, 384, 3, s=2)
        bd = bc(f"{n}.branch3x3dbl_1", x, 64, 1)
        bd = bc(f"{n}.branch3x3dbl_2", bd, 96, 3, p=1)
        bd = bc(f"{n}.branch3x3dbl_3", bd, 96, 3, s=2)
        bp, f = pool(x, 3, 2)
        m.tail(f)
        return (b3[0] + bd[0] + bp[0], b3[1], b3[2])

    def inception_c(n, x, c7):
        b1 = bc(f"{n}.branch1x1", x, 192, 1)
        b7 = bc(f"{n}.branch7x7_1", x, c7, 1)
        b7 = bc(f"{n}.branch7x7_2", b7, c7, (1, 7), p=(0, 3))
        b7 = bc(f"{n}.branch7x7_3", b7, 192, (7, 1), p=(3, 0))
        bd = bc(f"{n}.branch7x7dbl_1", x, c7, 1)
        bd = bc(f"{n}.branch7x7dbl_2", bd, c7, (7, 1), p=(3, 0))
        bd = bc(f"{n}.branch7x7dbl_3", bd, c7, (1, 7), p=(0, 3))
        bd = bc(f"{n}.branch7x7dbl_4", bd, c7, (7, 1), p=(3, 0))
        bd = bc(f"{n}.branch7x7dbl_5", bd, 192, (1, 7), p=(0, 3))
        bp = bc(f"{n}.branch_pool", x, 192, 1, extra=avgpool_flops(x))
        return (b1[0] + b7[0] + bd[0] + bp[0], b1[1], b1[2])

    def inception_d(n, x):
        b3 = bc(f"{n}.branch3x3_1", x, 192, 1)
        b3 = bc(f"{n}.branch3x3_2", b3, 320, 3, s=2)
        b7 = bc(f"{n}.branch7x7x3_1", x, 192, 1)
        b7 = bc(f"{n}.branch7x7x3_2", b7, 192, (1, 7), p=(0, 3))
        b7 = bc(f"{n}.branch7x7x3_3", b7, 192, (7, 1), p=(3, 0))
        b7 = bc(f"{n}.branch7x7x3_4", b7, 192, 3, s=2)
        bp, f = pool(x, 3, 2)
        m.tail(f)
        return (b3[0] + b7[0] + bp[0], b3[1], b3[2])

    def inception_e(n, x):
        b1 = bc(f"{n}.branch1x1", x, 320, 1)
        b3 = bc(f"{n}.branch3x3_1", x, 384, 1)
        b3a = bc(f"{n}.branch3x3_2a", b3, 384, (1, 3), p=(0, 1))
        b3b = bc(f"{n}.branch3x3_2b", b3, 384, (3, 1), p=(1, 0))
        bd = bc(f"{n}.branch3x3dbl_1", x, 448, 1)
        bd = bc(f"{n}.branch3x3dbl_2", bd, 384, 3, p=1)
        bda = bc(f"{n}.branch3x3dbl_3a", bd, 384, (1, 3), p=(0, 1))
        bdb = bc(f"{n}.branch3x3dbl_3b", bd, 384, (3, 1), p=(1, 0))
        bp = bc(f"{n}.branch_pool", x, 192, 1, extra=avgpool_flops(x))
        return (b1[0] + b3a[0] + b3b[0] + bda[0] + bdb[0] + bp[0], b1[1], b1[2])

    x = bc("Conv2d_1a_3x3", (3, 299, 299), 32, 3, s=2)
    x = bc("Conv2d_2a_3x3", x, 32, 3)
    x = bc("Conv2d_2b_3x3", x, 64, 3, p=1)
    x, f = pool(x, 3, 2)
    m.tail(f)
    x = bc("Conv2d_3b_1x1", x, 80, 1)
    x = bc("Conv2d_4a_3x3", x, 192, 3)
    x, f = pool(x, 3, 2)
    m.tail(f)
    x = inception_a("Mixed_5b", x, 32)
    x = inception_a("Mixed_5c", x, 64)
    x = inception_a("Mixed_5d", x, 64)
    x = inception_b("Mixed_6a", x)
    x = inception_c("Mixed_6b", x, 128)
    x = inception_c("Mixed_6c", x, 160)
    x = inception_c("Mixed_6d", x, 160)
    x = inception_c("Mixed_6e", x, 192)
    # AuxLogits: avg_pool 5x5 stride 3, conv0 1x1 -> 128, conv1 5x5 -> 768, adaptive avg pool, fc.
    a, f = pool(x, 5, 3)
    a = bc("AuxLogits.conv0", a, 128, 1, extra=f)
    a = bc("AuxLogits.conv1", a, 768, 5)
    linear(m, "AuxLogits.fc", a[0], 1000, extra=a[0] * a[1] * a[2])
    x = inception_d("Mixed_7a", x)
    x = inception_e("Mixed_7b", x)
    x = inception_e("Mixed_7c", x)
    c, h, w = x
    linear(m, "fc", c, 1000, extra=c * h * w)
    return m


def bert(name, hidden, layers, heads, intermediate, seq, vocab=30522, max_pos=512, type_vocab=2):
    """HuggingFace BertModel (with pooler), one sequence of `seq` tokens per sample. Per encoder
    layer four entries: attention.self (Q, K, V projections, scores, softmax, context),
    attention.output (dense + residual + LayerNorm), intermediate (dense + GELU) and output
    (dense + residual + LayerNorm)."""
    m = Model(name)
    h, s, i, n = hidden, seq, intermediate, heads
    emb_params = (vocab + max_pos + type_vocab) * h + 2 * h
    m.add("embeddings", emb_params, 2 * EW["add"] * s * h + EW["layernorm"] * s * h)
    attn_core = 2 * s * s * h * 2 + (EW["scale"] + EW["mask"] + EW["softmax"]) * n * s * s
    for l in range(layers):
        p = f"encoder.layer.{l}"
        linear(m, f"{p}.attention.self", h, 3 * h, tokens=s, extra=attn_core)  # Q, K, V fused count
        linear(m, f"{p}.attention.output", h, h, tokens=s,
               extra=(EW["add"] + EW["layernorm"]) * s * h)
        m.layers[-1]["parameters"] += 2 * h  # LayerNorm
        linear(m, f"{p}.intermediate", h, i, tokens=s, extra=EW["gelu"] * s * i)
        linear(m, f"{p}.output", i, h, tokens=s, extra=(EW["add"] + EW["layernorm"]) * s * h)
        m.layers[-1]["parameters"] += 2 * h
    linear(m, "pooler", h, h, tokens=1, extra=EW["tanh"] * h)  # [CLS] token only
    return m


def gpt2_small(seq=1024):
    """HuggingFace GPT2Model (124M): 12 pre-LN blocks, hidden 768, 12 heads, context 1024. Per
    block four entries (ln_1 + attn.c_attn, attention core + attn.c_proj + residual, ln_2 +
    mlp.c_fc + GELU, mlp.c_proj + residual). The language-model head used in training is tied to
    wte, so it adds FLOPs (last entry, with ln_f) but no parameters."""
    m = Model("gpt2_small")
    h, s, n, i, vocab, n_pos = 768, seq, 12, 3072, 50257, 1024
    m.add("wte+wpe", vocab * h + n_pos * h, EW["add"] * s * h)
    attn_core = 2 * s * s * h * 2 + (EW["scale"] + EW["mask"] + EW["softmax"]) * n * s * s
    for l in range(12):
        p = f"h.{l}"
        linear(m, f"{p}.ln_1+attn.c_attn", h, 3 * h, tokens=s, extra=EW["layernorm"] * s * h)
        m.layers[-1]["parameters"] += 2 * h
        linear(m, f"{p}.attn.c_proj", h, h, tokens=s, extra=attn_core + EW["add"] * s * h)
        linear(m, f"{p}.ln_2+mlp.c_fc", h, i, tokens=s,
               extra=EW["layernorm"] * s * h + EW["gelu"] * s * i)
        m.layers[-1]["parameters"] += 2 * h
        linear(m, f"{p}.mlp.c_proj", i, h, tokens=s, extra=EW["add"] * s * h)
    m.add("ln_f+lm_head(tied)", 2 * h, EW["layernorm"] * s * h + 2 * s * h * vocab)
    return m


def mnist_cnn():
    """pytorch/examples mnist/main.py Net: conv1 1->32 3x3, relu, conv2 32->64 3x3, relu,
    max_pool 2, dropout, fc1 9216->128, relu, dropout, fc2 128->10, log_softmax."""
    m = Model("mnist_cnn")
    s = conv(m, "conv1", (1, 28, 28), 32, 3, bias=True, bn=False)
    s = conv(m, "conv2", s, 64, 3, bias=True, bn=False)
    s, f = pool(s, 2, 2)
    m.tail(f)
    c, hh, ww = s
    linear(m, "fc1", c * hh * ww, 128, extra=128)
    linear(m, "fc2", 128, 10)
    return m


# --------------------------------------------------------------------------- sources

CNN_BENCH = ("J. Johnson, cnn-benchmarks, https://github.com/jcjohnson/cnn-benchmarks (README tables, "
             "Torch7, CUDA 8.0, cuDNN 5.1.05, Pascal Titan X, minibatch 16, 224x224, fp32)")
TF_BENCH = ("TensorFlow performance benchmarks (tensorflow.org/performance/benchmarks, "
            "tensorflow/docs_src/performance/benchmarks.md, May 2017, tf_cnn_benchmarks, "
            "NVIDIA DGX-1, 1x Tesla P100, CUDA 8.0 / cuDNN 5.1, synthetic data)")
NV_BERT = ("NVIDIA DeepLearningExamples, TensorFlow/LanguageModeling/BERT/README.md, 'Pre-training "
           "training performance: single-node on DGX-1 32GB' (TensorFlow 20.06-py3 NGC container, "
           "run_pretraining_lamb.sh, phase 1, sequence length 128)")
NANOGPT = ("karpathy/nanoGPT README.md 'efficiency notes' (Dec 2022): bench.py GPT-2 124M training "
           "iteration ~250 ms eager, 135 ms with torch.compile, on an A100 (nanoGPT runs on Lambda "
           "Labs A100 40GB); bench.py defaults: batch 12 x 1024 tokens, bf16 autocast, AdamW")

# GPU memory bandwidth (bytes/s) for the optimizer estimate; host-to-device bandwidth for io.
GPU = {
    "titanxp": ("NVIDIA Titan X (Pascal) 12GB", 480 * GB, 12 * GB, "PCIe 3.0 x16"),
    "p100": ("NVIDIA Tesla P100 SXM2 16GB (DGX-1)", 732 * GB, 12 * GB, "PCIe 3.0 x16"),
    "v100": ("NVIDIA Tesla V100 SXM2 32GB (DGX-1)", 900 * GB, 12 * GB, "PCIe 3.0 x16"),
    "a100": ("NVIDIA A100 SXM4 40GB", 1555 * GB, 24 * GB, "PCIe 4.0 x16"),
}

# Optimizer state traffic per parameter (fp32): bytes read + written by one update step.
OPT_BYTES = {
    "SGD with momentum": 20,  # read w, g, v; write w, v
    "LAMB": 28,  # read w, g, m, v; write w, m, v
    "AdamW": 28,
    "Adadelta": 28,  # read w, g, square_avg, acc_delta; write w, square_avg, acc_delta
}


def spec(builder, batch, gpu, dtype, iteration_s, source, optimizer, input_bytes, input_desc,
         timing_note, approximate=None):
    return dict(builder=builder, batch=batch, gpu=gpu, dtype=dtype, iteration_s=iteration_s,
                source=source, optimizer=optimizer, input_bytes=input_bytes, input_desc=input_desc,
                timing_note=timing_note, approximate=approximate)


IMG224 = 3 * 224 * 224 * 4 + 8  # fp32 image + int64 label
IMG299 = 3 * 299 * 299 * 4 + 8

# name -> (expected exact parameter total, reference implementation)
EXPECTED = {
    "resnet18": (11_689_512, "torchvision.models.resnet18"),
    "resnet50": (25_557_032, "torchvision.models.resnet50"),
    "resnet101": (44_549_160, "torchvision.models.resnet101"),
    "vgg16": (138_357_544, "torchvision.models.vgg16"),
    "alexnet": (61_100_840, "torchvision.models.alexnet"),
    "inception_v3": (27_161_264, "torchvision.models.inception_v3(aux_logits=True)"),
    "bert_base": (109_482_240, "transformers BertModel (bert-base-uncased, with pooler)"),
    "bert_large": (335_141_888, "transformers BertModel (bert-large-uncased, with pooler)"),
    "gpt2_small": (124_439_808, "transformers GPT2Model (gpt2, 124M; LM head tied to wte)"),
    "mnist_cnn": (1_199_882, "pytorch/examples mnist/main.py Net"),
}


def specs():
    out = {
        "resnet18": spec(lambda: resnet("resnet18", "basic", [2, 2, 2, 2]), 16, "titanxp", "fp32",
                         0.03154, CNN_BENCH, "SGD with momentum", IMG224, "3x224x224",
                         "ResNet-18 (fb.resnet.torch, same architecture as torchvision) forward+backward "
                         "31.54 ms (forward 10.14 + backward 21.40)"),
        "resnet50": spec(lambda: resnet("resnet50", "bottleneck", [3, 4, 6, 3]), 16, "titanxp", "fp32",
                         0.10358, CNN_BENCH, "SGD with momentum", IMG224, "3x224x224",
                         "ResNet-50 (fb.resnet.torch: stride on the 3x3 conv, as torchvision) "
                         "forward+backward 103.58 ms (forward 35.03 + backward 68.54)"),
        "resnet101": spec(lambda: resnet("resnet101", "bottleneck", [3, 4, 23, 3]), 16, "titanxp", "fp32",
                          0.15644, CNN_BENCH, "SGD with momentum", IMG224, "3x224x224",
                          "ResNet-101 (fb.resnet.torch) forward+backward 156.44 ms "
                          "(forward 53.38 + backward 103.06)"),
        "vgg16": spec(vgg16, 16, "titanxp", "fp32", 0.12862, CNN_BENCH, "SGD with momentum", IMG224,
                      "3x224x224", "VGG-16 (model D, Caffe weights converted) forward+backward 128.62 ms "
                      "(forward 41.59 + backward 87.03)"),
        "alexnet": spec(alexnet, 16, "titanxp", "fp32", 0.01456, CNN_BENCH, "SGD with momentum", IMG224,
                        "3x224x224", "AlexNet forward+backward 14.56 ms (forward 5.04 + backward 9.52)",
                        approximate="the measured network is BVLC Caffe AlexNet (grouped convolutions, "
                        "60,965,224 parameters), not torchvision's AlexNet whose layers this profile "
                        "lists; their forward FLOPs differ by about 1%"),
        "inception_v3": spec(inception_v3, 64, "p100", "fp32", 64 / 142, TF_BENCH, "SGD with momentum",
                             IMG299, "3x299x299",
                             "InceptionV3 training 142 images/s at batch 64 per GPU, so 64/142 s = "
                             "450.70 ms per iteration",
                             approximate="the figure is a whole TensorFlow training step (it includes "
                             "the SGD update and parameter-server variable handling) of tf_cnn_benchmarks' "
                             "InceptionV3, taken here as forward+backward; the layers are torchvision's "
                             "inception_v3 with aux_logits=True (27,161,264 parameters; 23,834,568 without "
                             "the auxiliary classifier)"),
        "bert_large": spec(lambda: bert("bert_large", 1024, 24, 16, 4096, 128), 32, "v100", "fp32",
                           32 / 46.78, NV_BERT, "LAMB", 3 * 128 * 8, "128 tokens",
                           "BERT-large FP32 46.78 sequences/s on 1 GPU at batch 32 per GPU, so 32/46.78 s "
                           "= 684.05 ms per iteration (gradient accumulation over 2048 micro-batches makes "
                           "the optimizer's share negligible)",
                           approximate="the measured model also runs the pre-training heads (masked-LM "
                           "transform and NSP classifier), which are not in BertModel's parameters; their "
                           "time is spread over the listed layers"),
        "gpt2_small": spec(gpt2_small, 12, "a100", "bf16", 0.135, NANOGPT, "AdamW", 2 * 1024 * 8,
                           "1024 tokens",
                           "GPT-2 124M 135 ms per training iteration (torch.compile) at batch 12 x 1024 "
                           "tokens, bf16 autocast (parameters and gradients stay fp32, so grad_bytes is "
                           "4 B per parameter)",
                           approximate="the README gives the figure without pinning the GPU variant or "
                           "the bench.py settings of that date, and it includes the AdamW step; nanoGPT's "
                           "GPT has a 50304-token padded vocabulary while this profile lists HuggingFace "
                           "GPT2Model (50257)"),
        "mnist_cnn": spec(mnist_cnn, 64, "v100", "fp32", 0.001, "estimate (no published per-iteration "
                          "figure for this network)", "Adadelta", 28 * 28 * 4 + 8, "1x28x28",
                          "1.0 ms forward+backward per batch of 64: about 4.6 GFLOP per iteration "
                          "(0.3 ms at 14 TFLOPS) plus ~30 kernel launches at 10-30 us each",
                          approximate="an order-of-magnitude estimate for a V100-class GPU, not a "
                          "measurement; profile it with tools/profile_torch.py --model mnist_cnn for a "
                          "measured profile"),
    }
    # BERT-base: the BERT-large measurement scaled by the forward-FLOPs ratio (same GPU, batch, length).
    large = bert("bert_large", 1024, 24, 16, 4096, 128)
    base = bert("bert_base", 768, 12, 12, 3072, 128)
    ratio = base.flops() / large.flops()
    t_base = round(32 / 46.78 * ratio, 4)  # rounded to 0.1 ms
    out["bert_base"] = spec(lambda: bert("bert_base", 768, 12, 12, 3072, 128), 32, "v100", "fp32", t_base,
                            NV_BERT, "LAMB", 3 * 128 * 8, "128 tokens",
                            f"derived: the BERT-large figure (32/46.78 s = 684.05 ms) times the forward-FLOPs "
                            f"ratio BERT-base/BERT-large = {ratio:.4f}, rounded: {t_base * 1e3:.1f} ms per "
                            f"iteration",
                            approximate="not measured for BERT-base: scaled from the BERT-large measurement "
                            "on the same GPU, batch and sequence length by FLOPs")
    return out


# --------------------------------------------------------------------------- profile assembly


def optimizer_seconds(params, opt, bandwidth):
    return params * OPT_BYTES[opt] / bandwidth


def build(name, s):
    m = s["builder"]()
    expected, ref = EXPECTED[name]
    total = m.parameters()
    if total != expected:
        raise SystemExit(f"make_profiles: {name}: layer parameters sum to {total:,}, expected {expected:,} "
                         f"({ref})")
    gpu_name, mem_bw, h2d_bw, link = GPU[s["gpu"]]
    t = s["iteration_s"]
    total_flops = m.flops()
    layers = []
    for l in m.layers:
        fwd = float(f"{l['flops'] / total_flops * t / 3:.12g}")
        layers.append({"name": l["name"], "forward_s": fwd, "backward_s": 2 * fwd,
                       "parameters": l["parameters"], "grad_bytes": 4 * l["parameters"]})
    opt_s = float(f"{optimizer_seconds(total, s['optimizer'], mem_bw):.6g}")
    io_s = float(f"{s['batch'] * s['input_bytes'] / h2d_bw:.6g}")
    batch = s["batch"]
    prov = (
        f"{name}: layers and exact parameters of {ref} ({total:,} parameters, {len(layers)} entries), "
        f"input {s['input_desc']}, {total_flops / 1e9:.3f} forward GFLOP per sample. "
        f"Timing source: {s['source']}: {s['timing_note']}; {gpu_name}, batch {batch}, {s['dtype']}. "
        f"Rule: forward+backward per iteration = {t * 1e3:.2f} ms, split over layers by forward-FLOPs share "
        f"with backward = 2 x forward per layer. optimizer_s = {total:,} parameters x "
        f"{OPT_BYTES[s['optimizer']]} B ({s['optimizer']} state traffic) / {mem_bw / GB:.0f} GB/s memory "
        f"bandwidth; io_s = batch input ({s['batch']} x {s['input_bytes']:,} B) / {h2d_bw / GB:.0f} GB/s "
        f"host-to-device ({link}). Generated by tools/make_profiles.py."
    )
    if s["approximate"]:
        prov += f" Approximate: {s['approximate']}."
    return {
        "model": name,
        "batch_size": batch,
        "device": gpu_name,
        "dtype": s["dtype"],
        "provenance": prov,
        "optimizer_s": opt_s,
        "io_s": io_s,
        "layers": layers,
    }, m


def dumps(profile):
    """JSON with one layer object per line."""
    head = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in profile.items() if k != "layers"]
    rows = [f"    {json.dumps(l, separators=(', ', ': '))}" for l in profile["layers"]]
    return "{\n" + ",\n".join(head) + ',\n  "layers": [\n' + ",\n".join(rows) + "\n  ]\n}\n"


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "scenarios", "profiles"),
                    help="output directory (default: scenarios/profiles)")
    ap.add_argument("--check", action="store_true", help="only verify the totals; write nothing")
    ap.add_argument("--only", nargs="*", choices=sorted(EXPECTED), help="generate only these models")
    args = ap.parse_args(argv)
    all_specs = specs()
    names = args.only or sorted(EXPECTED)
    built = {n: build(n, all_specs[n]) for n in names}  # exits non-zero on any mismatch
    print(f"{'model':14} {'parameters':>13} {'layers':>6} {'GFLOP/sample':>12} {'batch':>5} {'fwd+bwd ms':>10}")
    for n in names:
        p, m = built[n]
        print(f"{n:14} {m.parameters():>13,} {len(m.layers):>6} {m.flops() / 1e9:>12.3f} {p['batch_size']:>5} "
              f"{all_specs[n]['iteration_s'] * 1e3:>10.2f}")
    if args.check:
        return 0
    os.makedirs(args.out, exist_ok=True)
    for n in names:
        path = os.path.join(args.out, f"{n}.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(dumps(built[n][0]))
    print(f"wrote {len(names)} profiles to {os.path.normpath(args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
