# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The dedup feature pass compiled (issue 13, item 5): a page's letters, its shingle hashes,
their MOD-m sample, span keys, SpotSigs' letter stand-ins, their minhash and band keys.

Each function computes exactly what its numpy reference computes (the reference stays the
definition and is tested against this module, ``tests/test_features_compiled.py``):

    letter_codes        dedup.containment.letter_codes
    shingle_hashes      dedup.containment.shingle_hashes (CRC-32 of each UTF-32 shingle)
    multiples           the MOD-m sample: frozenset(h[h % m == 0])
    span_keys           dedup.containment.span_keys
    spot_letter_hashes  dedup.spotsigs.spot_letter_hashes
    minhash             dedup.spotsigs.minhash_values
    band_mix            dedup.spotsigs.band_values
    add_member          dedup.storage._add_each (the memory backend's posting sets)
    count_members       dedup.storage._count
    union_members       the union of dedup.storage._copies
    multiples_of        dedup.containment.ContainmentDetector._posting_sampled

Built by ``pip install -e .`` (setup.py: Cython); needs no NumPy headers (typed
memoryviews; arrays are made through NumPy's Python API).
"""

from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort

import numpy as np


cdef int _cmp_u64(const void *a, const void *b) noexcept nogil:
    cdef uint64_t x = (<const uint64_t *> a)[0]
    cdef uint64_t y = (<const uint64_t *> b)[0]
    return (x > y) - (x < y)


cdef int _cmp_u32(const void *a, const void *b) noexcept nogil:
    cdef uint32_t x = (<const uint32_t *> a)[0]
    cdef uint32_t y = (<const uint32_t *> b)[0]
    return (x > y) - (x < y)


cdef inline uint64_t _fmix_hi(uint64_t x) noexcept nogil:
    """MurmurHash3's 64-bit finaliser, first two rounds (x ^= x >> 33; x *= C; x ^= x >> 33)."""
    x ^= x >> 33
    x *= 0xFF51AFD7ED558CCDULL
    x ^= x >> 33
    return x


def letter_codes(str text not None):
    """The code points of ``text``'s letters and digits (``str.isalnum`` a character: what
    ``re.sub(r"[\\W_]+", "", text)`` keeps), as uint32; lone surrogates are no letters."""
    cdef Py_ssize_t n = len(text), j = 0
    out = np.empty(n, dtype=np.uint32)
    cdef uint32_t[::1] o = out
    cdef Py_UCS4 ch
    for ch in text:
        if ch.isalnum():
            o[j] = ch
            j += 1
    return out[:j].copy() if j < n // 2 else out[:j]


def shingle_hashes(const uint32_t[::1] cp, int k, uint32_t c0,
                   const uint32_t[:, ::1] lo, const uint32_t[:, ::1] hi):
    """The CRC-32 of every ``k``-letter UTF-32-LE shingle of the code points ``cp``, from the
    linear tables of :func:`dedup.containment._crc_tables` (``c0``, ``lo``, ``hi``): c0 xor,
    for each letter j of the shingle, ``lo[cp & 0xFFFF, j]`` and ``hi[cp >> 16, j]``."""
    cdef Py_ssize_t m = cp.shape[0], n = m - k + 1, i, j
    if n <= 0:
        return np.zeros(0, dtype=np.uint32)
    if lo.shape[0] != 0x10000 or lo.shape[1] != k or hi.shape[1] != k:
        raise ValueError("CRC tables do not match k")
    out = np.empty(n, dtype=np.uint32)
    cdef uint32_t[::1] o = out
    cdef uint32_t h, c
    cdef bint wide = False
    with nogil:
        for i in range(m):
            if cp[i] > 0xFFFF:
                wide = True
                break
    if wide:
        for i in range(m):
            if (cp[i] >> 16) >= <uint32_t> hi.shape[0]:
                raise ValueError("code point beyond the CRC tables")
    with nogil:
        for i in range(n):
            h = c0
            for j in range(k):
                c = cp[i + j]
                h ^= lo[c & 0xFFFF, j]
                if wide:
                    h ^= hi[c >> 16, j]
            o[i] = h
    return out


def multiples(const uint32_t[::1] h, uint32_t m):
    """frozenset of the values of ``h`` ≡ 0 (mod ``m``) (Broder's MOD-m sample)."""
    if m == 0:
        raise ValueError("m ≥ 1")
    cdef Py_ssize_t i, n = h.shape[0]
    out = []
    for i in range(n):
        if h[i] % m == 0:
            out.append(h[i])
    return frozenset(out)


def span_keys(const uint32_t[::1] hashes, uint32_t m, Py_ssize_t span, start=None):
    """:func:`dedup.containment.span_keys`: for each shingle with hash ≡ 0 (mod ``start``,
    default ``m``) among those ≡ 0 (mod ``m``), the MurmurHash3-finalised pair of its hash and
    the hash of the first such shingle at least ``span`` letters after it (high 32 bits);
    sorted, distinct, a list of ints."""
    cdef uint32_t st = m if start is None else <uint32_t> start
    if m == 0 or st == 0:
        raise ValueError("m and start ≥ 1")
    cdef Py_ssize_t n = hashes.shape[0], i, cnt = 0, f, e = 0, nk = 0
    if n < 2:
        return []
    cdef Py_ssize_t *pos = <Py_ssize_t *> malloc(n * sizeof(Py_ssize_t))
    cdef uint32_t *keys = <uint32_t *> malloc(n * sizeof(uint32_t))
    cdef uint64_t x
    if pos == NULL or keys == NULL:
        free(pos)
        free(keys)
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                if hashes[i] % m == 0:
                    pos[cnt] = i
                    cnt += 1
            if cnt >= 2:
                for f in range(cnt):
                    if hashes[pos[f]] % st:
                        continue
                    while e < cnt and pos[e] < pos[f] + span:
                        e += 1
                    if e >= cnt:
                        break
                    x = ((<uint64_t> hashes[pos[f]]) << 32) | hashes[pos[e]]
                    keys[nk] = <uint32_t> (_fmix_hi(x) >> 32)
                    nk += 1
                qsort(keys, nk, sizeof(uint32_t), _cmp_u32)
        out = []
        for i in range(nk):
            if i == 0 or keys[i] != keys[i - 1]:
                out.append(keys[i])
        return out
    finally:
        free(pos)
        free(keys)


cdef inline bint _in_sorted(const uint64_t[::1] a, uint64_t v) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = a.shape[0], mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo < a.shape[0] and a[lo] == v


cdef inline uint64_t _chain_value(const uint32_t[::1] cp, Py_ssize_t i, uint64_t base,
                                  const uint64_t[::1] coef) noexcept nogil:
    """base + Σ coef_j · p_{i+j} (mod 2⁶⁴), letters past the end counting 0."""
    cdef Py_ssize_t j, n = cp.shape[0]
    cdef uint64_t x = base
    for j in range(coef.shape[0]):
        if i + j < n:
            x += coef[j] * cp[i + j]
    return x


def spot_letter_hashes(const uint32_t[::1] cp, const uint8_t[::1] first,
                       const uint8_t[::1] one, const uint64_t[::1] two,
                       uint64_t base1, const uint64_t[::1] coef1,
                       uint64_t base2, const uint64_t[::1] coef2):
    """:func:`dedup.spotsigs.spot_letter_hashes` with the table's lookups (``first``, ``one``
    as uint8, ``two`` sorted) and the chains' coefficients for antecedents of one and two
    letters (:func:`dedup.spotsigs._chain_coefficients`): for every place where an antecedent
    starts, x = base + Σ coef_j · p_{i+j} (mod 2⁶⁴, letters past the end 0); the x sorted,
    equal ones numbered by occurrence (+ rank · 0xD6E8FEB86659FD93), mixed, high 32 bits."""
    cdef Py_ssize_t n = cp.shape[0], i, cnt = 0
    if n < 2:
        return np.zeros(0, dtype=np.uint32)
    if first.shape[0] < 0x110000 or one.shape[0] < 0x110000:
        raise ValueError("letter tables must cover every code point")
    for i in range(n):
        if cp[i] >= 0x110000:
            raise ValueError("code point beyond U+10FFFF")
    cdef uint64_t *xs = <uint64_t *> malloc(2 * n * sizeof(uint64_t))
    if xs == NULL:
        raise MemoryError()
    cdef uint64_t c
    try:
        with nogil:
            for i in range(n):
                c = cp[i]
                if not first[c]:
                    continue
                if one[c]:
                    xs[cnt] = _chain_value(cp, i, base1, coef1)
                    cnt += 1
                if i < n - 1 and two.shape[0] and _in_sorted(two, (c << 21) | cp[i + 1]):
                    xs[cnt] = _chain_value(cp, i, base2, coef2)
                    cnt += 1
            qsort(xs, cnt, sizeof(uint64_t), _cmp_u64)
        out = np.empty(cnt, dtype=np.uint32)
        _finish_stand_ins(xs, cnt, out)
        return out
    finally:
        free(xs)


cdef void _finish_stand_ins(uint64_t *xs, Py_ssize_t cnt, uint32_t[::1] o):
    cdef Py_ssize_t i, run = 0
    cdef uint64_t x
    for i in range(cnt):
        if i and xs[i] != xs[i - 1]:
            run = i
        x = xs[i] + <uint64_t> (i - run) * 0xD6E8FEB86659FD93ULL
        o[i] = <uint32_t> (_fmix_hi(x) >> 32)


def minhash(const uint32_t[::1] h, const uint32_t[::1] mul, const uint32_t[::1] add):
    """min over the values v of ``h`` of (v · mul_j + add_j) mod 2³² for each j (empty for an
    empty ``h``): :func:`dedup.spotsigs.minhash_values`."""
    cdef Py_ssize_t n = h.shape[0], r = mul.shape[0], i, j
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    if add.shape[0] != r:
        raise ValueError("mul and add differ in length")
    out = np.empty(r, dtype=np.uint32)
    cdef uint32_t[::1] o = out
    cdef uint32_t best, v, mj, aj
    with nogil:
        for j in range(r):
            mj, aj = mul[j], add[j]
            best = h[0] * mj + aj
            for i in range(1, n):
                v = h[i] * mj + aj
                if v < best:
                    best = v
            o[j] = best
    return out


def band_mix(const uint32_t[::1] mh, Py_ssize_t bands, Py_ssize_t rows):
    """:func:`dedup.spotsigs.band_values`: each band's ``rows`` values mixed into 48 bits,
    the band number in the top 16; a list of ints (empty for an empty minhash)."""
    if mh.shape[0] == 0:
        return []
    if mh.shape[0] != bands * rows or rows < 1:
        raise ValueError("minhash length is not bands × rows")
    cdef Py_ssize_t b, j
    cdef uint64_t x
    out = []
    for b in range(bands):
        x = mh[b * rows]
        for j in range(1, rows):
            x = (x * 0x9E3779B97F4A7C15ULL) ^ mh[b * rows + j]
        x ^= x >> 29
        x *= 0xBF58476D1CE4E5B9ULL
        x ^= x >> 32
        x &= 0xFFFFFFFFFFFFULL
        x |= (<uint64_t> b) << 48
        out.append(x)
    return out


# -- the memory backend's posting sets (dedup.storage.MemoryStorage) -----------------------
# A table maps a key to its set of members, a set of one member stored as the member itself
# (a str); these loops are dedup.storage._add_each and _count, run without the interpreter's
# dispatch per key (a page writes ~200 posting sets and reads ~90).

def add_member(dict table, keys, str m):
    """:func:`dedup.storage._add_each`: add ``m`` to the set of each of ``keys``."""
    cdef object s
    for key in keys:
        s = table.setdefault(key, m)
        if s is m:
            continue
        if type(s) is str:
            if <str> s != m:
                table[key] = {s, m}
        else:
            (<set> s).add(m)


def count_members(dict table, keys, max_len):
    """:func:`dedup.storage._count` over the sets of ``keys`` in ``table``: how many hold
    each member (sets of more than ``max_len`` members left out; None: no limit), counted in
    the reference's order (the singletons first, then the larger sets), as a dict."""
    cdef Py_ssize_t cap = -1 if max_len is None else max_len
    cdef dict counts = {}
    cdef list many = []
    cdef object s, x
    for key in keys:
        s = table.get(key)
        if s is None:
            continue
        if type(s) is str:
            counts[s] = counts.get(s, 0) + 1
        elif cap < 0 or len(<set> s) <= cap:
            many.append(s)
    for s in many:
        for x in <set> s:
            counts[x] = counts.get(x, 0) + 1
    return counts


def union_members(dict table, keys):
    """The members of the sets of ``keys`` in ``table`` (as ``add_member`` keeps them), in
    one new set: ``set().union(*dedup.storage._copies(map(table.get, keys)))``."""
    cdef set out = set()
    cdef object s
    for key in keys:
        s = table.get(key)
        if s is None:
            continue
        if type(s) is str:
            out.add(s)
        else:
            out.update(<set> s)
    return out


def multiples_of(hashes, uint64_t m):
    """:meth:`dedup.containment.ContainmentDetector._posting_sampled`: the values of
    ``hashes`` (non-negative ints) ≡ 0 (mod ``m``), in their iteration order, as a list."""
    cdef list out = []
    cdef object h
    for h in hashes:
        if (<uint64_t> h) % m == 0:
            out.append(h)
    return out
