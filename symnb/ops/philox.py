"""Philox4x32-10 (Salmon et al., SC'11), the counter-based generator behind sn.RandomStream.

A counter-based generator maps (key, counter) to random bits with no sequential state, so
element i of a draw is ``philox(key, counter + i)`` wherever it is computed: any backend and
any order of elements give the same numbers. Each block is four 32-bit words; ten rounds of
two 32x32->64 multiplications mixed with the key (Random123's constants). This is the
NumPy reference, vectorised over blocks with uint64 arithmetic; docs/random.md says how the
words become uniforms, normals and integers, and what was tested.
"""

from __future__ import annotations

import itertools

import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)  # the round multipliers
W0, W1 = 0x9E3779B9, 0xBB67AE85  # the key increments (golden ratio, sqrt(3) - 1)
MASK32 = np.uint64(0xFFFFFFFF)
ROUNDS = 10


def philox4x32(counters: tuple, key: tuple) -> tuple:
    """Four uint32 arrays from four uint32 counter arrays (c0..c3) and a key (k0, k1)."""
    c0, c1, c2, c3 = (np.asarray(c, np.uint64) for c in counters)
    k0, k1 = (np.asarray(k, np.uint64) for k in key)  # ints, or arrays broadcasting
    for r in range(ROUNDS):
        if r:
            k0, k1 = (k0 + np.uint64(W0)) & MASK32, (k1 + np.uint64(W1)) & MASK32
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = (
            (p1 >> np.uint64(32)) ^ c1 ^ k0,
            p1 & MASK32,
            (p0 >> np.uint64(32)) ^ c3 ^ k1,
            p0 & MASK32,
        )
    return tuple(c.astype(np.uint32) for c in (c0, c1, c2, c3))


class Blocks:
    """Hands out the Philox blocks of one draw: ``take(n)`` gives the next n blocks after
    ``counter`` (a uint64), under the draw's 64-bit ``key``."""

    def __init__(self, key, counter):
        self.key = split_key(key)
        self.counter = np.uint64(counter)

    def take(self, n: int) -> tuple:
        """Four uint32 arrays of length n: blocks counter .. counter + n - 1."""
        words = words_at(np.arange(n, dtype=np.uint64), self.key, self.counter)
        with np.errstate(over="ignore"):
            self.counter = self.counter + np.uint64(n)
        return words

    def below(self, n: int, span) -> np.ndarray:
        """n uint64 integers uniform on [0, span) (``span`` from 1 to 2**64 - 1, or 0 for
        all 2**64 values; one or n of them), from the next n blocks: :func:`below`."""
        start = self.counter
        with np.errstate(over="ignore"):
            self.counter = self.counter + np.uint64(n)
        return below(np.arange(n, dtype=np.uint64), span, self.key, start)


def below(positions, span, key: tuple, counter) -> np.ndarray:
    """Integers uniform on [0, span), unbiased, for blocks ``counter + positions``: Lemire's
    multiply-shift, ``x * span >> 64`` of 64 random bits x, rejecting x where the low half
    of the product is below ``2**64 mod span`` (x modulo span would favour the low values
    by up to span / 2**64: 3:2 for a span of 3 * 2**61). Each element tries words 0-1 of its
    block, then words 2-3, then the same block under keys derived from the draw's (rounds 1,
    2, ...), so a draw still uses one block of its counter an element and every element's
    number depends only on key, counter and position. A try fails with probability below
    span / 2**64, at most 1/2. A span of 0 stands for 2**64 (``integers`` over a whole
    64-bit range): the 64 bits as they are, never rejected."""
    positions = np.asarray(positions, np.uint64)
    shape, positions = positions.shape, positions.ravel()
    span = np.asarray(span, np.uint64).ravel() if np.ndim(span) else np.uint64(span)
    whole = span == 0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        threshold = np.where(whole, 0, (np.uint64(0) - span) % np.maximum(span, 1))
    threshold = threshold.astype(np.uint64)  # 2**64 mod span (0 for 2**64)
    words = words_at(positions, key, counter)
    x = bits64(words[0], words[1])
    out, low = _mul128(x, span)
    if np.any(whole):
        out = np.where(whole, x, out)
    todo = np.flatnonzero(low < threshold)  # few: the rest take other tries
    words = [w[todo] for w in words]
    span, threshold = (np.broadcast_to(v, positions.shape) for v in (span, threshold))
    joined = int(key[0]) | int(key[1]) << 32
    for attempt in itertools.count(1):
        if not todo.size:
            return out.reshape(shape)
        round_, second = divmod(attempt, 2)
        if not second:
            words = words_at(positions[todo], split_key(seed_key(joined, round_)), counter)
        pair = (words[2], words[3]) if second else (words[0], words[1])
        high, low = _mul128(bits64(*pair), span[todo])
        taken = low >= threshold[todo]
        out[todo[taken]] = high[taken]
        todo, words = todo[~taken], [w[~taken] for w in words]
    return out  # not reached: the loop returns once every element has its number


def _mul128(x, y) -> tuple:
    """The high and low 64-bit halves of the 128-bit products x * y (uint64 arrays)."""
    x0, x1, y0, y1 = x & MASK32, x >> np.uint64(32), y & MASK32, y >> np.uint64(32)
    shift = np.uint64(32)
    with np.errstate(over="ignore"):
        p00, p01, p10 = x0 * y0, x0 * y1, x1 * y0
        middle = (p00 >> shift) + (p01 & MASK32) + (p10 & MASK32)
        high = x1 * y1 + (p01 >> shift) + (p10 >> shift) + (middle >> shift)
        return high, x * y


def words_at(positions, key: tuple, counter) -> tuple:
    """The four words of block ``counter + position`` for each position (uint64 arrays that
    broadcast, as an elementwise op's operands do)."""
    with np.errstate(over="ignore"):
        index = np.asarray(positions, np.uint64) + np.asarray(counter, np.uint64)
    index, *key = np.broadcast_arrays(index, *key)
    low, high = index & MASK32, index >> np.uint64(32)
    zeros = np.zeros(index.shape, np.uint64)
    return philox4x32((low, high, zeros, zeros), tuple(key))


def split_key(key) -> tuple:
    """The two 32-bit halves of 64-bit keys (uint64 scalars or arrays)."""
    key = np.asarray(key, np.uint64)
    return key & MASK32, key >> np.uint64(32)


# -- the same generator in the kernel description -----------------------------------------------
def kernel_words(k, position, key, counter) -> list:
    """The four words of block ``counter + position`` as kernel values: ``k`` is the kernel
    description's builder (named scalar ops on uint64, no text of any language), so every
    dialect renders the same rounds as :func:`philox4x32` computes."""

    def u64(value):
        return k.literal(value, "uint64")

    low32, two32 = u64(0xFFFFFFFF), u64(2**32)
    index = k.add(k.convert(counter, "uint64"), k.convert(position, "uint64"))
    words = [k.bit_and(index, low32), k.floor_div(index, two32), u64(0), u64(0)]
    key = k.convert(key, "uint64")
    k0, k1 = k.bit_and(key, low32), k.floor_div(key, two32)
    for r in range(ROUNDS):
        if r:
            k0 = k.bit_and(k.add(k0, u64(W0)), low32)
            k1 = k.bit_and(k.add(k1, u64(W1)), low32)
        p0, p1 = k.mul(words[0], u64(int(M0))), k.mul(words[2], u64(int(M1)))
        words = [
            k.bit_xor(k.bit_xor(k.floor_div(p1, two32), words[1]), k0),
            k.bit_and(p1, low32),
            k.bit_xor(k.bit_xor(k.floor_div(p0, two32), words[3]), k1),
            k.bit_and(p0, low32),
        ]
    return words


def kernel_uniform53(k, hi_word, lo_word):
    """:func:`uniform53` as kernel values (float64)."""
    a = k.convert(k.floor_div(hi_word, k.literal(32, "uint64")), "float64")
    b = k.convert(k.floor_div(lo_word, k.literal(64, "uint64")), "float64")
    scaled = k.add(k.mul(a, k.literal(67108864.0, "float64")), b)
    return k.mul(scaled, k.literal(1.0 / 9007199254740992.0, "float64"))


def kernel_uniform_bits(k, word, bits: int):
    """:func:`uniform_bits` as kernel values (float64)."""
    top = k.convert(k.floor_div(word, k.literal(2 ** (32 - bits), "uint64")), "float64")
    return k.mul(top, k.literal(2.0**-bits, "float64"))


def kernel_unit_uniform(k, words, dtype):
    """:func:`unit_uniform` as kernel values (float64)."""
    bits = precision(dtype)
    if bits > 32:
        return kernel_uniform53(k, words[0], words[1])
    return kernel_uniform_bits(k, words[0], bits)


def uniform53(hi_word, lo_word) -> np.ndarray:
    """Float64 uniforms in [0, 1) from 53 random bits (27 of one word, 26 of another)."""
    a = (hi_word >> np.uint32(5)).astype(np.float64)
    b = (lo_word >> np.uint32(6)).astype(np.float64)
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)


def uniform_bits(word, bits: int) -> np.ndarray:
    """Float64 uniforms in [0, 1) on the grid of step 2**-bits, from the top ``bits`` (at
    most 32) of one word: every step a float of ``bits`` significant bits has below 1."""
    return (word >> np.uint32(32 - bits)).astype(np.float64) * 2.0**-bits


def precision(dtype) -> int:
    """Significant bits of a float dtype (24 for float32, 11 for float16)."""
    return int(np.finfo(dtype).nmant) + 1


def unit_uniform(words, dtype) -> np.ndarray:
    """Uniforms in [0, 1), as float64, for a draw of ``dtype``: 53 bits of two words for
    float64, else as many bits of word 0 as the dtype holds, so that rounding to it is exact
    (a 53-bit value rounded to float16 would be 1.0 once in 4096 draws)."""
    bits = precision(dtype)
    return uniform53(words[0], words[1]) if bits > 32 else uniform_bits(words[0], bits)


def bits64(hi_word, lo_word) -> np.ndarray:
    """64 random bits as uint64."""
    return (hi_word.astype(np.uint64) << np.uint64(32)) | lo_word.astype(np.uint64)


def seed_key(seed: int, index: int) -> int:
    """The 64-bit key of the ``index``-th state of a stream seeded with ``seed``
    (splitmix64 of both, so nearby seeds and indices give unrelated keys)."""
    z = (_seed64(int(seed)) * 0x9E3779B97F4A7C15 + int(index) * 0xBF58476D1CE4E5B9 + 1) % 2**64
    return _mix64(z)


def _mix64(z: int) -> int:
    """splitmix64's finaliser: a bijection of 64-bit ints that scatters nearby inputs."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) % 2**64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % 2**64
    return z ^ (z >> 31)


def _seed64(seed: int) -> int:
    """A seed below 2**64 as it is; a wider one (NumPy's default_rng takes any size) folded
    64 bits at a time through the finaliser, so ``2**64`` is not the stream of ``0``."""
    if seed < 2**64:
        return seed
    folded = 0
    while seed:
        folded, seed = _mix64(folded ^ (seed % 2**64) ^ 0x9E3779B97F4A7C15), seed >> 64
    return folded
