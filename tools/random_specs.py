#!/usr/bin/env python3
"""random_specs.py: random graphs as hgc specs, for differential testing.

    tools/random_specs.py SEED COUNT > spec/random/graphs.hgc

Each spec chains 2 to 7 ops on random shapes (rank 2 to 4, dims 1 to 128):
elementwise ops, binary ops against an input or a constant that broadcasts,
MatMul on a constant weight (with a bias or not) or on a variable operand
(batched, broadcast batch dims, transpose_b), Concat, SoftMax, LayerNorm,
reductions over one axis, StaticTranspose and StaticReshape.  `hgc check`
compares every compiled result with the reference interpreter, so the
file exercises the fusion, the templates and the TIR passes on shapes no
one chose by hand.  Quantize is left out: the compiled code quantizes in
f32 and the interpreter in double, so an f32 value near a rounding
boundary may land one step apart, and a Dequantize turns that step into
an f32 difference no tolerance should hide.

The output depends only on SEED and COUNT (random.Random's choice,
randint and shuffle over integer seeds); the committed file is the output
of the command in its first line.
"""
import random
import sys

UNARY = ['ReLU', 'Tanh', 'Sigmoid', 'GELU', 'Abs', 'Exp', 'Square', 'Elu', 'HardSwish', 'Mish',
         'SoftPlus', 'Round', 'LeakyReLU', 'Clamp']
UNARY_ATTRS = {'LeakyReLU': ', alpha = 0.1', 'Elu': ', alpha = 1.0', 'Clamp': ', min = -1.0, max = 1.5'}
BINARY = ['Add', 'Multiply', 'Subtract', 'Maximum', 'Minimum']
REDUCE = ['ReduceSum', 'ReduceMax', 'ReduceMin', 'ReduceMean']
DIMS = [1, 2, 3, 5, 7, 8, 13, 16, 17, 24, 32, 33, 48, 64, 96, 128]


def shape(s):
    return ', '.join(map(str, s))


class Graph:
    def __init__(self, rnd):
        self.rnd, self.decls, self.ops, self.n = rnd, [], [], 0

    def name(self, prefix):
        self.n += 1
        return '%s%d' % (prefix, self.n)

    def tensor(self, kind, prefix, s, gen=None):
        t = self.name(prefix)
        gen = gen or 'uniform(lo = -1, hi = 1, seed = %d)' % self.rnd.randint(1, 999)
        self.decls.append('  %s %s : f32[%s] = %s;' % (kind, t, shape(s), gen))
        return t

    def op(self, text):
        t = self.name('t')
        self.ops.append('  %s = %s;' % (t, text))
        return t


def unary(g, v, s):
    op = g.rnd.choice(UNARY)
    return g.op('%s(%s%s)' % (op, v, UNARY_ATTRS.get(op, ''))), s


def binary(g, v, s):
    rnd = g.rnd
    bs = [d if rnd.random() < 0.6 else 1 for d in s]
    if len(bs) > 1 and rnd.random() < 0.3:
        bs = bs[rnd.randint(1, len(bs) - 1):]
    o = g.tensor(rnd.choice(['input', 'const']), 'c', bs)
    a, b = (v, o) if rnd.random() < 0.7 else (o, v)
    return g.op('%s(%s, %s)' % (rnd.choice(BINARY), a, b)), s


def matmul_const(g, v, s):
    rnd = g.rnd
    n = rnd.choice([1, 3, 8, 16, 17, 32, 48, 64])
    w = g.tensor('const', 'w', [s[-1], n], 'normal(mean = 0, std = 0.2, seed = %d)' % rnd.randint(1, 999))
    if rnd.random() < 0.3:
        return g.op('MatMul(%s, %s, %s)' % (v, w, g.tensor('const', 'b', [n]))), s[:-1] + [n]
    return g.op('MatMul(%s, %s)' % (v, w)), s[:-1] + [n]


def matmul_var(g, v, s):
    rnd = g.rnd
    n, tb = rnd.choice([1, 5, 16, 33, 64]), rnd.random() < 0.4
    bs = [d if rnd.random() < 0.7 else 1 for d in s[:-2]] + ([n, s[-1]] if tb else [s[-1], n])
    o = g.tensor('input', 'v', bs)
    return g.op('MatMul(%s, %s%s)' % (v, o, ', transpose_b = true' if tb else '')), s[:-1] + [n]


def concat(g, v, s):
    m = g.rnd.choice([1, 4, 9])
    o = g.tensor('input', 'cc', s[:-1] + [m])
    return g.op('Concat(%s, %s, axis = -1)' % (v, o)), s[:-1] + [s[-1] + m]


def softmax(g, v, s):
    return g.op('SoftMax(%s, axis = -1)' % v), s


def layernorm(g, v, s):
    return g.op('LayerNorm(%s, begin_norm_axis = -1, use_affine = false, keep_stats = false, '
                'epsilon = 0.00001)' % v), s


def reduce(g, v, s):
    rnd = g.rnd
    ax, keep = rnd.randrange(len(s)), rnd.random() < 0.6 or len(s) == 1
    a = ax - (len(s) if rnd.random() < 0.5 else 0)
    t = g.op('%s(%s, axes = [%d], keep_dims = %s)' % (rnd.choice(REDUCE), v, a,
                                                       'true' if keep else 'false'))
    ns = list(s)
    if keep:
        ns[ax] = 1
    else:
        ns.pop(ax)
    return t, ns


def transpose(g, v, s):
    perm = list(range(len(s)))
    g.rnd.shuffle(perm)
    return g.op('StaticTranspose(%s, order = [%s])' % (v, shape(perm))), [s[p] for p in perm]


def reshape(g, v, s):
    total = 1
    for d in s:
        total *= d
    f = [d for d in range(2, 65) if total % d == 0]
    if not f:
        return unary(g, v, s)
    d0 = g.rnd.choice(f)
    ns = [total // d0, d0]
    return g.op('StaticReshape(%s, shape = [%s], special_zero = false)' % (v, shape(ns))), ns


# (cumulative probability, builder, minimum rank)
STEPS = [(0.2, unary, 1), (0.4, binary, 1), (0.55, matmul_const, 1), (0.63, matmul_var, 2),
         (0.66, concat, 1), (0.73, softmax, 1), (0.80, layernorm, 1), (0.90, reduce, 1),
         (0.96, transpose, 2), (1.0, reshape, 1)]


def spec(seed, idx):
    rnd = random.Random(seed * 100000 + idx)
    g = Graph(rnd)
    s = [rnd.choice(DIMS) for _ in range(rnd.randint(2, 4))]
    vals = [(g.tensor('input', 'x', s, 'uniform(lo = -2, hi = 2, seed = %d)' % rnd.randint(1, 999)), s)]
    for _ in range(rnd.randint(2, 7)):
        v, s = rnd.choice(vals[-3:])
        c = rnd.random()
        for p, build, rank in STEPS:
            if c < p:
                vals.append(build(g, v, s) if len(s) >= rank else unary(g, v, s))
                break
    outs = [vals[-1][0]]
    if len(vals) > 2 and rnd.random() < 0.4:
        outs.append(vals[rnd.randrange(1, len(vals))][0])
    outs = list(dict.fromkeys(outs))
    return ('spec random_%d_%d {\n%s\n  output %s;\n  expect { rtol = 1e-4; atol = 1e-4; }\n}\n'
            % (seed, idx, '\n'.join(g.decls + g.ops), ', '.join(outs)))


def main():
    seed, count = int(sys.argv[1]), int(sys.argv[2])
    print('# tools/random_specs.py %d %d > spec/random/graphs.hgc' % (seed, count))
    print('# Random graphs for differential testing (see the script).\n')
    print('\n'.join(spec(seed, i) for i in range(count)), end='')


if __name__ == '__main__':
    main()
