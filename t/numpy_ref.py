#!/usr/bin/python3
"""numpy_ref.py DIR: check hgc's reference interpreter against NumPy.

DIR/manifest.jsonl holds one case per line: a small graph (inputs, ops in
order, outputs) whose inputs and interpreter outputs the C test wrote as .npy
files in DIR.  For every case this script recomputes the graph with NumPy in
float64, rounding each op's result to its declared dtype (as a tensor of that
type would store it), checks every op's declared shape, compares the outputs
and prints one line per case: "ok N" or "not ok N reason".

The op definitions here follow the oneDNN Graph op specifications and are
written independently of the C code (sliding windows by slicing, GELU with
math.erf, pooling window by window).
"""
import json
import math
import os
import sys

import numpy as np

# ---------------------------------------------------------------- dtypes


def bf16_bits_to_f64(bits):
    """Raw bf16 bits (uint16) to float64."""
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def f32_to_bf16_f64(x):
    """Round float32 values to bf16 (nearest even; NaN stays NaN), as float64."""
    f = np.asarray(x, dtype=np.float32)
    u = f.view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint32)
    nan = np.isnan(f)
    rounded = np.where(nan, ((u >> 16) | 0x40).astype(np.uint32), rounded)
    return bf16_bits_to_f64(rounded.astype(np.uint16))


INT_RANGE = {"s32": (-2**31, 2**31 - 1), "s8": (-128, 127), "u8": (0, 255)}


def store(x, dt):
    """What a tensor of type dt holds after storing float64 values x, as float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(all="ignore"):
        if dt == "f32":
            return x.astype(np.float32).astype(np.float64)
        if dt == "bf16":
            return f32_to_bf16_f64(x.astype(np.float32))
        if dt in INT_RANGE:
            lo, hi = INT_RANGE[dt]
            r = np.rint(np.nan_to_num(x, nan=0.0, posinf=hi, neginf=lo))  # half to even
            return np.clip(r, lo, hi)
        if dt == "boolean":
            return (x != 0).astype(np.float64)
    raise ValueError("unknown dtype " + dt)


def load(path, dt):
    """Read an .npy file of hgc dtype dt as float64."""
    a = np.load(path)
    want = {"f32": np.float32, "bf16": np.uint16, "s32": np.int32, "s8": np.int8,
            "u8": np.uint8, "boolean": np.bool_}[dt]
    if a.dtype != want:
        raise ValueError("%s has dtype %s, expected %s" % (path, a.dtype, dt))
    if dt == "bf16":
        return bf16_bits_to_f64(a)
    return a.astype(np.float64)


# ---------------------------------------------------------------- helpers


def attr(op, name, default=None):
    return op["attrs"].get(name, default)


def norm_axis(axis, rank):
    if not -rank <= axis < rank:
        raise ValueError("axis %d out of range" % axis)
    return axis % rank if rank else 0


def to_nchw(x, fmt):
    return x if fmt == "NCX" else np.transpose(x, (0, 3, 1, 2))


def from_nchw(x, fmt):
    return x if fmt == "NCX" else np.transpose(x, (0, 2, 3, 1))


def window_geometry(size, kernel, stride, dil, pb, pe, auto_pad, ceil_mode):
    """oneDNN/PyTorch output size and padding of one spatial dim.

    Returns (out, pad_begin, pad_end_declared)."""
    ext = dil * (kernel - 1) + 1
    if auto_pad == "VALID":
        pb = pe = 0
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = -(-size // stride)
        total = max(0, (out - 1) * stride + ext - size)
        small, big = total // 2, total - total // 2
        pb, pe = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
        ceil_mode = False
    room = size + pb + pe - ext
    assert room >= 0, "window larger than the padded input"
    if ceil_mode:
        out = -(-room // stride) + 1
        if (out - 1) * stride >= size + pb:
            out -= 1
    else:
        out = room // stride + 1
    return out, pb, pe


def spatial(op, src_hw, kernel_hw, ceil_mode=False, has_dil=True):
    res = []
    strides = attr(op, "strides")
    dil = attr(op, "dilations", [1, 1]) if has_dil else [1, 1]
    for i in range(2):
        res.append(window_geometry(src_hw[i], kernel_hw[i], strides[i], dil[i],
                                   attr(op, "pads_begin")[i], attr(op, "pads_end")[i],
                                   attr(op, "auto_pad", "None"), ceil_mode))
    return res, strides, dil


# ---------------------------------------------------------------- tunable ops


def op_matmul(op, x):
    a, b = x[0], x[1]
    if attr(op, "transpose_a", False) and a.ndim >= 2:
        a = np.swapaxes(a, -1, -2)
    if attr(op, "transpose_b", False) and b.ndim >= 2:
        b = np.swapaxes(b, -1, -2)
    y = np.matmul(a, b)
    if len(x) > 2:
        y = y + x[2]
    return y


def op_conv(op, x):
    fmt = attr(op, "data_format", "NXC")
    src = to_nchw(x[0], fmt)
    w = x[1]
    if attr(op, "weights_format", "XIO") == "XIO":
        w = np.transpose(w, (3, 2, 0, 1))  # [KH, KW, I, O] -> [O, I, KH, KW]
    groups = attr(op, "groups", 1)
    n, c, h, wd = src.shape
    o, ipg, kh, kw = w.shape
    geo, strides, dil = spatial(op, (h, wd), (kh, kw))
    (oh, ph0, _), (ow, pw0, _) = geo
    # pad enough on both sides for every window
    ph1 = max(0, (oh - 1) * strides[0] + dil[0] * (kh - 1) + 1 - h - ph0)
    pw1 = max(0, (ow - 1) * strides[1] + dil[1] * (kw - 1) + 1 - wd - pw0)
    xp = np.pad(src, ((0, 0), (0, 0), (ph0, ph1), (pw0, pw1)))
    out = np.zeros((n, o, oh, ow))
    opg = o // groups
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dil[0], j * dil[1]
            patch = xp[:, :, r0:r0 + (oh - 1) * strides[0] + 1:strides[0],
                       c0:c0 + (ow - 1) * strides[1] + 1:strides[1]]
            for g in range(groups):
                out[:, g * opg:(g + 1) * opg] += np.einsum(
                    "nchw,oc->nohw", patch[:, g * ipg:(g + 1) * ipg],
                    w[g * opg:(g + 1) * opg, :, i, j])
    if len(x) > 2:
        out += x[2][None, :, None, None]
    return from_nchw(out, fmt)


# ---------------------------------------------------------------- elementwise

SQRT2 = math.sqrt(2.0)
erf = np.vectorize(math.erf, otypes=[np.float64])


def softplus(y):
    return np.logaddexp(0.0, y)


def gelu(op, v):
    if attr(op, "mode", "gelu_erf") == "gelu_tanh":
        return 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))
    return 0.5 * v * (1 + erf(v / SQRT2))


def round_away(v):
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


UNARY = {
    "ReLU": lambda op, v: np.where(v > 0, v, 0.0),
    "LeakyReLU": lambda op, v: np.where(v >= 0, v, attr(op, "alpha") * v),
    "GELU": gelu,
    "Sigmoid": lambda op, v: 1.0 / (1.0 + np.exp(-v)),
    "Tanh": lambda op, v: np.tanh(v),
    "Elu": lambda op, v: np.where(v > 0, v, attr(op, "alpha") * np.expm1(v)),
    "HardSwish": lambda op, v: v * np.clip(v + 3, 0, 6) / 6,
    "HardSigmoid": lambda op, v: np.clip(attr(op, "alpha") * v + attr(op, "beta"), 0, 1),
    "SoftPlus": lambda op, v: softplus(attr(op, "beta", 1.0) * v) / attr(op, "beta", 1.0),
    "Mish": lambda op, v: v * np.tanh(softplus(v)),
    "Exp": lambda op, v: np.exp(v),
    "Log": lambda op, v: np.log(v),
    "Sqrt": lambda op, v: np.sqrt(v),
    "Square": lambda op, v: v * v,
    "Abs": lambda op, v: np.abs(v),
    "Reciprocal": lambda op, v: 1.0 / v,
    "Pow": lambda op, v: np.power(v, attr(op, "beta")),
    "Clamp": lambda op, v: np.clip(v, attr(op, "min"), attr(op, "max")),
    "Round": lambda op, v: round_away(v),
}

BINARY = {
    "Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply,
    "Divide": np.divide, "Maximum": np.maximum, "Minimum": np.minimum,
}


def op_binary(op, x):
    a, b = x
    if attr(op, "auto_broadcast", "numpy") == "none" and a.shape != b.shape:
        raise ValueError("shapes differ without broadcasting")
    return BINARY[op["kind"]](a, b)


def channel_axis(op, rank):
    return 1 if attr(op, "data_format", "NXC") == "NCX" else rank - 1


def along(v, axis, rank):
    shape = [1] * rank
    shape[axis] = -1
    return v.reshape(shape)


def op_bias_add(op, x):
    return x[0] + along(x[1], channel_axis(op, x[0].ndim), x[0].ndim)


# ---------------------------------------------------------------- norms


def op_softmax(op, x, logs=False):
    axis = norm_axis(attr(op, "axis", -1 if logs else 1), x[0].ndim)
    z = x[0] - np.max(x[0], axis=axis, keepdims=True)
    s = np.sum(np.exp(z), axis=axis, keepdims=True)
    return z - np.log(s) if logs else np.exp(z) / s


def op_layer_norm(op, x):
    src = x[0]
    start = norm_axis(attr(op, "begin_norm_axis", -1), src.ndim)
    axes = tuple(range(start, src.ndim))
    mean = src.mean(axis=axes, keepdims=True)
    var = ((src - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (src - mean) / np.sqrt(var + attr(op, "epsilon", 1e-5))
    if attr(op, "use_affine", True):
        y = y * x[1] + x[2]
    return y


def op_batch_norm(op, x):
    src, gamma, beta, mean, var = x
    r = src.ndim
    ax = channel_axis(op, r)
    eps = attr(op, "epsilon")
    return ((src - along(mean, ax, r)) / np.sqrt(along(var, ax, r) + eps)
            * along(gamma, ax, r) + along(beta, ax, r))


# ---------------------------------------------------------------- reductions

REDUCE = {
    "ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max,
    "ReduceMin": np.min, "ReduceProd": np.prod,
    "ReduceL1": lambda v, axis, keepdims: np.sum(np.abs(v), axis=axis, keepdims=keepdims),
    "ReduceL2": lambda v, axis, keepdims: np.sqrt(np.sum(v * v, axis=axis, keepdims=keepdims)),
}


def op_reduce(op, x):
    axes = tuple(sorted(norm_axis(a, x[0].ndim) for a in attr(op, "axes")))
    return REDUCE[op["kind"]](x[0], axis=axes, keepdims=attr(op, "keep_dims", False))


# ---------------------------------------------------------------- pooling


def op_pool(op, x):
    fmt = attr(op, "data_format", "NXC")
    src = to_nchw(x[0], fmt)
    n, c, h, w = src.shape
    k = attr(op, "kernel")
    is_max = op["kind"] == "MaxPool"
    ceil_mode = attr(op, "rounding_type", "floor") == "ceil"
    geo, strides, dil = spatial(op, (h, w), k, ceil_mode, has_dil=is_max)
    (oh, ph, peh), (ow, pw, pew) = geo
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        rows = [i * strides[0] - ph + t * dil[0] for t in range(k[0])]
        vr = [r for r in rows if 0 <= r < h]
        nr = sum(1 for r in rows if r < h + peh)  # positions inside the declared padding
        for j in range(ow):
            cols = [j * strides[1] - pw + t * dil[1] for t in range(k[1])]
            vc = [q for q in cols if 0 <= q < w]
            nc = sum(1 for q in cols if q < w + pew)
            win = src[:, :, vr, :][:, :, :, vc]
            if is_max:
                out[:, :, i, j] = win.max(axis=(2, 3)) if win.size else -np.inf
            else:
                cnt = len(vr) * len(vc) if attr(op, "exclude_pad") else nr * nc
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt if cnt else 0.0
    return from_nchw(out, fmt)


# ---------------------------------------------------------------- data movement


def op_reshape(op, x):
    shape = list(attr(op, "shape"))
    if attr(op, "special_zero"):
        shape = [x[0].shape[i] if d == 0 else d for i, d in enumerate(shape)]
    return x[0].reshape(shape)


def op_transpose(op, x):
    return np.transpose(x[0], [norm_axis(a, x[0].ndim) for a in attr(op, "order")])


def op_concat(op, x):
    return np.concatenate(x, axis=norm_axis(attr(op, "axis"), x[0].ndim))


def op_select(op, x):
    return np.where(x[0] != 0, x[1], x[2])


# ---------------------------------------------------------------- quantization


def qparams(op, src):
    scales = np.asarray(attr(op, "scales"), dtype=np.float64)
    zps = np.asarray(attr(op, "zps", []) or [0] * len(scales), dtype=np.float64)
    if attr(op, "qtype", "per_tensor") == "per_channel":
        axis = norm_axis(attr(op, "axis", 1), src.ndim)
        return along(scales, axis, src.ndim), along(zps, axis, src.ndim)
    return scales[0], zps[0]


def op_quantize(op, x):
    s, z = qparams(op, x[0])
    return x[0] / s + z  # the store into u8/s8 rounds half to even and saturates


def op_dequantize(op, x):
    s, z = qparams(op, x[0])
    return (x[0] - z) * s


OPS = {
    "MatMul": op_matmul, "Convolution": op_conv, "BiasAdd": op_bias_add,
    "SoftMax": op_softmax, "LogSoftmax": lambda op, x: op_softmax(op, x, True),
    "LayerNorm": op_layer_norm, "BatchNormInference": op_batch_norm,
    "MaxPool": op_pool, "AvgPool": op_pool,
    "StaticTranspose": op_transpose, "StaticReshape": op_reshape,
    "Reorder": lambda op, x: x[0], "Concat": op_concat, "Select": op_select,
    "Quantize": op_quantize, "Dequantize": op_dequantize,
    "TypeCast": lambda op, x: x[0],
}
for _k in BINARY:
    OPS[_k] = op_binary
for _k in REDUCE:
    OPS[_k] = op_reduce
for _k in UNARY:
    OPS[_k] = (lambda k: lambda op, x: UNARY[k](op, x[0]))(_k)


# ---------------------------------------------------------------- checking

DEFAULT_TOL = {"f32": (1e-6, 1e-12), "bf16": (1.0 / 512, 1e-12), "boolean": (0, 0),
               "s32": (0, 0), "s8": (0, 0), "u8": (0, 0)}


def compare(got, want, dt, case):
    """None if got matches want within the case's tolerances, else a reason."""
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    rtol, atol = DEFAULT_TOL[dt]
    rtol = case.get("rtol", rtol)
    atol = case.get("atol", atol)
    both_nan = np.isnan(got) & np.isnan(want)
    same_inf = np.isinf(got) & (got == want)
    with np.errstate(all="ignore"):
        err = np.abs(got - want)
        bad = ~(both_nan | same_inf | (err <= atol + rtol * np.abs(want)))
    if not bad.any():
        return None
    i = np.argmax(np.where(bad, np.nan_to_num(err, nan=np.inf), -1))
    idx = np.unravel_index(i, got.shape) if got.ndim else ()
    return "%d of %d differ; at %s got %.9g, expected %.9g" % (
        bad.sum(), bad.size, list(map(int, idx)), got[idx], want[idx])


def run_case(d, case):
    env = {}
    for t in case["inputs"]:
        env[t["id"]] = load(os.path.join(d, t["file"]), t["dtype"])
    for op in case["ops"]:
        x = [env[i] for i in op["in"]]
        with np.errstate(all="ignore"):
            y = np.asarray(OPS[op["kind"]](op, x), dtype=np.float64)
        if list(y.shape) != op["shape"]:
            return "%s: numpy shape %s, hgc inferred %s" % (op["kind"], list(y.shape), op["shape"])
        env[op["out"]] = store(y, op["dtype"])
    for t in case["outputs"]:
        got = load(os.path.join(d, t["file"]), t["dtype"])
        why = compare(got, env[t["id"]], t["dtype"], case)
        if why:
            return "output %%%d: %s" % (t["id"], why)
    return None


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "manifest.jsonl")) as f:
        for n, line in enumerate(f):
            case = json.loads(line)
            try:
                why = run_case(d, case)
            except Exception as e:  # a reference that cannot run is a failure too
                why = "exception %s: %s" % (type(e).__name__, e)
            print("ok %d" % n if why is None else "not ok %d %s" % (n, why))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
