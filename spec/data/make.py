#!/usr/bin/python3
"""Make the .npy inputs and golden outputs of spec/ops/numpy.hgc.

Each golden output is computed here with numpy in float64, from textbook
definitions written independently of hgc, then stored as float32: the specs
check the reference interpreter against numpy, not against itself.

Run from anywhere: /usr/bin/python3 spec/data/make.py (rewrites the files).
"""
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240601)


def save(name, a, dtype=np.float32):
    np.save(os.path.join(HERE, name + ".npy"), np.asarray(a).astype(dtype))


def f32(shape, lo=-1.0, hi=1.0):
    """Random float32 data, returned as float64 holding the float32 values."""
    return rng.uniform(lo, hi, shape).astype(np.float32).astype(np.float64)


def mlp_layer():
    x, w, b = f32((7, 13)), f32((13, 5)), f32((5,))
    save("mlp_x", x), save("mlp_w", w), save("mlp_b", b)
    save("mlp_y", np.maximum(x @ w + b, 0))


def conv2d_nchw(x, w, stride, pad, dil):
    """Direct convolution: x [N, C, H, W], w [O, C, KH, KW], symmetric pads."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.zeros((n, c, h + 2 * pad, wd + 2 * pad))
    xp[:, :, pad:pad + h, pad:pad + wd] = x
    oh = (h + 2 * pad - (kh - 1) * dil - 1) // stride + 1
    ow = (wd + 2 * pad - (kw - 1) * dil - 1) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            for a in range(kh):
                for b in range(kw):
                    patch = xp[:, :, i * stride + a * dil, j * stride + b * dil]
                    y[:, :, i, j] += patch @ w[:, :, a, b].T
    return y


def conv():
    x, w = f32((2, 3, 9, 9)), f32((4, 3, 3, 3))
    save("conv_x", x), save("conv_w", w)
    save("conv_y", conv2d_nchw(x, w, stride=2, pad=1, dil=1))
    save("conv_yd", conv2d_nchw(x, w, stride=1, pad=2, dil=2))


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def norms():
    x = f32((4, 13), -5, 5)
    g, b = f32((13,), 0.5, 1.5), f32((13,))
    save("norm_x", x), save("norm_g", g), save("norm_b", b)
    save("norm_softmax", softmax(x, 1))
    save("norm_softmax0", softmax(x, 0))
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    save("norm_layernorm", (x - mean) / np.sqrt(var + 1e-5) * g + b)


def gelu():
    x = f32((97,), -5, 5)
    erf = np.vectorize(math.erf)
    save("gelu_x", x)
    save("gelu_y", 0.5 * x * (1 + erf(x / math.sqrt(2))))


def pools():
    x = f32((1, 2, 7, 7), -3, 3)
    save("pool_x", x)
    # AvgPool 3x3 stride 2 pad 1, exclude_pad: mean over the in-bounds part.
    avg = np.zeros((1, 2, 4, 4))
    for i in range(4):
        for j in range(4):
            r0, c0 = max(2 * i - 1, 0), max(2 * j - 1, 0)
            r1, c1 = min(2 * i + 2, 7), min(2 * j + 2, 7)
            avg[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    save("pool_avg", avg)
    # MaxPool 2x2 stride 2, ceil: 4x4 windows, the last one row/column wide.
    mx = np.zeros((1, 2, 4, 4))
    for i in range(4):
        for j in range(4):
            mx[:, :, i, j] = x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max(axis=(2, 3))
    save("pool_max", mx)


def attention():
    q, k, v = f32((2, 5, 8)), f32((2, 5, 8)), f32((2, 5, 8))
    save("att_q", q), save("att_k", k), save("att_v", v)
    s = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(8), -1)
    save("att_y", s @ v)


def int8():
    xq = rng.integers(0, 256, (5, 16))
    wq = rng.integers(-127, 128, (16, 3))
    scales = np.array([0.01, 0.02, 0.005])
    save("int8_xq", xq, np.uint8), save("int8_wq", wq, np.int8)
    x = (xq - 128) * np.float64(np.float32(0.05))
    w = wq * scales.astype(np.float32).astype(np.float64)
    save("int8_y", x @ w)


for make in (mlp_layer, conv, norms, gelu, pools, attention, int8):
    make()
