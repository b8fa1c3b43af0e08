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
    IntSets             a dict[int, set[str] | str] under dedup.storage's loops
    multiples_of        dedup.containment.ContainmentDetector._posting_sampled

Built by ``pip install -e .`` (setup.py: Cython); needs no NumPy headers (typed
memoryviews; arrays are made through NumPy's Python API).
"""

from cpython cimport array
from cpython.mem cimport PyMem_Free, PyMem_Malloc, PyMem_Realloc
from libc.stdint cimport int32_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, qsort
from libc.string cimport memmove, memset

import array as _array

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


ctypedef fused _sorted_t:
    uint64_t
    int32_t


cdef inline Py_ssize_t _lower_bound(const _sorted_t *a, Py_ssize_t n, _sorted_t x) noexcept nogil:
    """The first index of ``a[:n]`` (sorted) whose value is not below ``x``."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef inline bint _in_sorted(const uint64_t[::1] a, uint64_t v) noexcept nogil:
    cdef Py_ssize_t n = a.shape[0], i
    if n == 0:
        return False
    i = _lower_bound(&a[0], n, v)
    return i < n and a[i] == v


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


def multiples_of(hashes, uint64_t m):
    """:meth:`dedup.containment.ContainmentDetector._posting_sampled`: the values of
    ``hashes`` (non-negative ints) ≡ 0 (mod ``m``), in their iteration order, as a list."""
    cdef list out = []
    cdef object h
    for h in hashes:
        if (<uint64_t> h) % m == 0:
            out.append(h)
    return out


# -- the memory backend's hashed sets in one flat table -------------------------------------
# A write into a dict of ~4 million int keys costs ~4 cache misses (the index, the entry,
# the key's int object, the member's str); at 100k documents those misses are the growth of
# a page's posting-set writes and reads. IntSets keeps the keys in one open-addressing array
# of 16-byte slots (linear probing, backward-shift deletion) and the members as numbers
# (Members), so a lookup touches one cache line. A slot under 0.7 load costs about what a
# dict entry and its index slot do; a set of two or more members is a sorted int32 array
# (shared sentences' posting sets: most members of a large index), not a set of int objects.

cdef array.array _U64 = _array.array("Q")
cdef array.array _I32 = _array.array("i")


cdef extern from *:
    """
    #define TOPICRAWL_PREFETCH(p) __builtin_prefetch((p), 0, 1)
    """
    void TOPICRAWL_PREFETCH(const void *p) noexcept nogil


cdef struct _Slot:
    uint64_t key
    int32_t val  # 0: empty; v > 0: the one member number v - 1; v < 0: the set vecs[-v - 1]
    int32_t pad


cdef struct _Vec:
    # a set of two or more member numbers, sorted ascending (0 members: a free entry)
    int32_t *data
    int32_t len
    int32_t cap


cdef inline uint64_t _mix(uint64_t x) noexcept nogil:
    # splitmix64's finaliser: the keys are hashes, but posting-sampled ones are multiples of
    # m·posting_factor (low bits 0), so the slot index must not be their low bits
    x ^= x >> 30
    x *= 0xBF58476D1CE4E5B9ULL
    x ^= x >> 27
    x *= 0x94D049BB133111EBULL
    x ^= x >> 31
    return x


cdef class Members:
    """The member strings of a storage's :class:`IntSets`, each kept once and named by a
    number (a page id is written into ~150 posting sets). Numbers are never reused: a
    member taken out of every set keeps its entry (a few dozen bytes a document id)."""

    cdef dict ids
    cdef list names

    def __cinit__(self):
        self.ids = {}
        self.names = []

    cdef inline int32_t number(self, str m) except -1:
        got = self.ids.get(m)
        if got is not None:
            return <int32_t> got
        n = len(self.names)
        if n >= 0x7FFFFFFE:
            raise OverflowError("more than 2**31 - 2 distinct set members")
        self.ids[m] = n
        self.names.append(m)
        return <int32_t> n

    def __len__(self):
        return len(self.names)


cdef class IntSets:
    """Sets of strings named by integers in [0, 2**64) — ``dict[int, set[str] | str]`` as
    :class:`dedup.storage.MemoryStorage` kept them (``dedup.storage``'s ``_add_each``,
    ``_discard``, ``_count`` and ``_copies`` over such a dict are the reference,
    ``tests/test_features_compiled.py``) — in one open-addressing table. Reads give what the
    dict gave: a set of one member as the member itself (a str), larger sets as new sets of
    str. A set of two or more members is a sorted array of their int32 numbers (4 bytes
    a member; a Python set of int objects took ≈ 60, and most members of a large index are
    in such sets: shared sentences' posting sets). Not thread-safe beyond the GIL (no
    method releases it)."""

    cdef _Slot *slots
    cdef Py_ssize_t cap  # a power of 2
    cdef Py_ssize_t used
    cdef Members numbers  # the member strings and their numbers (shared per storage)
    cdef _Vec *vecs  # the sets of two or more members
    cdef Py_ssize_t nvecs, vcap
    cdef list free  # indices of freed entries of vecs

    def __cinit__(self, Members members not None):
        self.numbers = members
        self.free = []
        self.cap = 0
        self.used = 0
        self.slots = NULL
        self.vecs = NULL
        self.nvecs = self.vcap = 0
        self._alloc(64)

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.slots != NULL:
            PyMem_Free(self.slots)
        if self.vecs != NULL:
            for i in range(self.nvecs):
                PyMem_Free(self.vecs[i].data)
            PyMem_Free(self.vecs)

    cdef int _alloc(self, Py_ssize_t cap) except -1:
        cdef _Slot *s = <_Slot *> PyMem_Malloc(cap * sizeof(_Slot))
        if s == NULL:
            raise MemoryError()
        memset(s, 0, cap * sizeof(_Slot))
        self.slots, self.cap = s, cap
        return 0

    cdef int _grow(self) except -1:
        cdef _Slot *old = self.slots
        cdef Py_ssize_t n = self.cap, i, j, mask
        self._alloc(n * 2)
        mask = self.cap - 1
        for i in range(n):
            if old[i].val != 0:
                j = <Py_ssize_t> (_mix(old[i].key) & <uint64_t> mask)
                while self.slots[j].val != 0:
                    j = (j + 1) & mask
                self.slots[j] = old[i]
        PyMem_Free(old)
        return 0

    cdef inline Py_ssize_t _find(self, uint64_t key) noexcept:
        """The slot of ``key``, or -1 - the empty slot where it would go."""
        cdef Py_ssize_t mask = self.cap - 1
        cdef Py_ssize_t j = <Py_ssize_t> (_mix(key) & <uint64_t> mask)
        while True:
            if self.slots[j].val == 0:
                return -1 - j
            if self.slots[j].key == key:
                return j
            j = (j + 1) & mask

    cdef array.array _keys(self, keys):
        """``keys`` as an array of uint64, each key's home slot prefetched as it is read: a
        page's ~250 lookups into tables of millions of slots are cache misses, and this
        lets them overlap instead of waiting one by one. A key outside [0, 2**64) raises
        OverflowError."""
        seq = keys if type(keys) is list or type(keys) is tuple else list(keys)
        cdef Py_ssize_t n = len(seq), i
        cdef uint64_t mask = <uint64_t> (self.cap - 1)
        cdef array.array out = array.clone(_U64, n, zero=False)
        cdef unsigned long long *ks = out.data.as_ulonglongs
        for i in range(n):
            ks[i] = seq[i]
            TOPICRAWL_PREFETCH(&self.slots[_mix(ks[i]) & mask])
        return out

    cdef array.array _values(self, keys):
        """The slot value of each of ``keys`` (0: absent) as an array of int32, the lookups
        prefetched (:meth:`_keys`)."""
        cdef array.array ks = self._keys(keys)
        cdef Py_ssize_t n = len(ks), i, j
        cdef array.array out = array.clone(_I32, n, zero=False)
        for i in range(n):
            j = self._find(ks.data.as_ulonglongs[i])
            out.data.as_ints[i] = 0 if j < 0 else self.slots[j].val
        return out

    cdef void _delete(self, Py_ssize_t j) noexcept:
        """Empty slot ``j``, shifting back the entries after it that probed past it."""
        cdef Py_ssize_t mask = self.cap - 1, k = j, home
        while True:
            k = (k + 1) & mask
            if self.slots[k].val == 0:
                break
            home = <Py_ssize_t> (_mix(self.slots[k].key) & <uint64_t> mask)
            # move k into the hole j unless its home lies cyclically in (j, k]
            if (j < k and (home <= j or home > k)) or (j > k and home <= j and home > k):
                self.slots[j] = self.slots[k]
                j = k
        self.slots[j].val = 0
        self.slots[j].key = 0
        self.used -= 1

    cdef int32_t _new_set(self, int32_t a, int32_t b) except 0:
        """A new set of the two distinct numbers ``a`` and ``b``, as a slot value."""
        cdef Py_ssize_t i
        cdef _Vec *grown
        cdef int32_t *data = <int32_t *> PyMem_Malloc(4 * sizeof(int32_t))
        if data == NULL:
            raise MemoryError()
        data[0], data[1] = (a, b) if a < b else (b, a)
        if self.free:
            i = self.free.pop()
        else:
            i = self.nvecs
            if i >= 0x7FFFFFFE:
                PyMem_Free(data)
                raise OverflowError("more than 2**31 - 2 sets of two or more members")
            if i == self.vcap:
                grown = <_Vec *> PyMem_Realloc(self.vecs, (2 * i + 16) * sizeof(_Vec))
                if grown == NULL:
                    PyMem_Free(data)
                    raise MemoryError()
                self.vecs, self.vcap = grown, 2 * i + 16
            self.nvecs += 1
        self.vecs[i].data, self.vecs[i].len, self.vecs[i].cap = data, 2, 4
        return <int32_t> (-i - 1)

    cdef int _free_set(self, int32_t val) except -1:
        cdef Py_ssize_t i = -val - 1
        PyMem_Free(self.vecs[i].data)
        self.vecs[i].data, self.vecs[i].len, self.vecs[i].cap = NULL, 0, 0
        self.free.append(i)
        return 0

    cdef int _vec_add(self, _Vec *v, int32_t n) except -1:
        """Put ``n`` into the sorted set ``v`` (a new page's number is the largest yet, so
        it is appended)."""
        cdef Py_ssize_t at = v.len
        cdef int32_t *data
        if v.data[v.len - 1] >= n:
            at = _lower_bound(v.data, v.len, n)
            if v.data[at] == n:
                return 0
        if v.len == v.cap:
            if v.cap >= 0x3FFFFFFF:
                raise OverflowError("a set of more than 2**30 members")
            data = <int32_t *> PyMem_Realloc(v.data, 2 * v.cap * sizeof(int32_t))
            if data == NULL:
                raise MemoryError()
            v.data, v.cap = data, 2 * v.cap
        if at < v.len:
            memmove(&v.data[at + 1], &v.data[at], (v.len - at) * sizeof(int32_t))
        v.data[at] = n
        v.len += 1
        return 0

    cdef int _insert(self, uint64_t key, Py_ssize_t j, int32_t val) except -1:
        """Put ``val`` under the absent ``key``, whose empty slot is ``j`` (``_find``)."""
        if (self.used + 1) * 10 > self.cap * 7:
            self._grow()
            j = -1 - self._find(key)
        self.slots[j].key = key
        self.slots[j].val = val
        self.used += 1
        return 0

    cdef int _add(self, uint64_t key, int32_t n) except -1:
        cdef Py_ssize_t j = self._find(key)
        cdef int32_t v
        if j < 0:
            return self._insert(key, -1 - j, n + 1)
        v = self.slots[j].val
        if v > 0:
            if v - 1 != n:
                self.slots[j].val = self._new_set(v - 1, n)
        else:
            self._vec_add(&self.vecs[-v - 1], n)
        return 0

    def add(self, keys, str m):
        """Add ``m`` to the set of each of ``keys`` (:func:`add_member`)."""
        cdef int32_t n = self.numbers.number(m)
        cdef array.array ks = self._keys(keys)
        cdef Py_ssize_t i
        for i in range(len(ks)):
            self._add(ks.data.as_ulonglongs[i], n)

    def discard_each(self, keys, members):
        """:meth:`discard` ``members`` from the set of each of ``keys``."""
        for k in keys:
            self.discard(k, members)

    def discard(self, k, members):
        """Take each of ``members`` (str) out of the set of ``k`` (``dedup.storage._discard``:
        a set left with one member becomes the member, an empty one is deleted)."""
        cdef uint64_t key = k
        cdef Py_ssize_t j = self._find(key), at
        cdef int32_t v, n
        cdef _Vec *s
        if j < 0:
            return
        ids = self.numbers.ids
        v = self.slots[j].val
        if v > 0:
            for m in members:
                if ids.get(m, -1) == v - 1:
                    self._delete(j)
                    return
            return
        s = &self.vecs[-v - 1]
        for m in members:
            got = ids.get(m)
            if got is None or s.len == 0:
                continue
            n = got
            at = _lower_bound(s.data, s.len, n)
            if at < s.len and s.data[at] == n:
                memmove(&s.data[at], &s.data[at + 1], (s.len - at - 1) * sizeof(int32_t))
                s.len -= 1
        if s.len == 1:
            n = s.data[0]
            self._free_set(v)
            self.slots[j].val = n + 1
        elif s.len == 0:
            self._free_set(v)
            self._delete(j)

    cdef object _value(self, int32_t v):
        names = self.numbers.names
        cdef _Vec *s
        cdef Py_ssize_t i
        if v > 0:
            return names[v - 1]
        s = &self.vecs[-v - 1]
        return {names[s.data[i]] for i in range(s.len)}

    def get(self, k, default=None):
        """The set of ``k`` as the dict kept it: its one member (a str), a new set of its
        members, or ``default``."""
        cdef Py_ssize_t j
        if k < 0 or k >= 2 ** 64:
            return default
        j = self._find(<uint64_t> k)
        return default if j < 0 else self._value(self.slots[j].val)

    def pop(self, k, default=None):
        """Delete the set of ``k`` and give it (as :meth:`get`), or ``default``."""
        cdef Py_ssize_t j
        cdef int32_t v
        if k < 0 or k >= 2 ** 64:
            return default
        j = self._find(<uint64_t> k)
        if j < 0:
            return default
        v = self.slots[j].val
        out = self._value(v)
        if v < 0:
            self._free_set(v)
        self._delete(j)
        return out

    def __setitem__(self, k, value):
        """Make the set of ``k`` hold exactly ``value``: a str, or a non-empty set of str."""
        self.pop(k)
        if isinstance(value, str):
            self.add((k,), value)
        else:
            for m in value:
                self.add((k,), m)

    def __contains__(self, k):
        if k < 0 or k >= 2 ** 64:
            return False
        return self._find(<uint64_t> k) >= 0

    def __len__(self):
        return self.used

    def __iter__(self):
        """The keys (ints), in slot order (a snapshot: changing the table while iterating
        is safe)."""
        cdef Py_ssize_t i
        return iter([self.slots[i].key for i in range(self.cap) if self.slots[i].val != 0])

    def count(self, keys, max_len):
        """:func:`count_members` over this table: how many of the sets of ``keys`` hold each
        member (sets of more than ``max_len`` members left out; None: no limit), the
        singletons first in ``keys``' order, then the larger sets', as a dict."""
        cdef Py_ssize_t cap = -1 if max_len is None else max_len
        cdef dict counts = {}
        cdef int v
        cdef array.array vals = self._values(keys)
        cdef Py_ssize_t i, x, nmany = 0
        cdef _Vec *s
        names = self.numbers.names
        for i in range(len(vals)):
            v = vals.data.as_ints[i]
            if v > 0:
                m = names[v - 1]
                counts[m] = counts.get(m, 0) + 1
            elif v < 0:
                if cap < 0 or self.vecs[-v - 1].len <= cap:
                    vals.data.as_ints[nmany] = v  # (nmany <= i: kept for the second pass)
                    nmany += 1
        for i in range(nmany):
            s = &self.vecs[-vals.data.as_ints[i] - 1]
            for x in range(s.len):
                m = names[s.data[x]]
                counts[m] = counts.get(m, 0) + 1
        return counts

    def union(self, keys):
        """The members of the sets of ``keys``, in one new set of str:
        ``set().union(*dedup.storage._copies(map(table.get, keys)))``."""
        cdef set nums = set()
        cdef int v
        cdef array.array vals = self._values(keys)
        cdef Py_ssize_t i, x
        cdef _Vec *s
        for i in range(len(vals)):
            v = vals.data.as_ints[i]
            if v > 0:
                nums.add(v - 1)
            elif v < 0:
                s = &self.vecs[-v - 1]
                for x in range(s.len):
                    nums.add(s.data[x])
        names = self.numbers.names
        return {names[x] for x in nums}

    def members(self, keys):
        """The set of each of ``keys`` as a new set of str (empty where absent):
        ``dedup.storage._copies(map(table.get, keys))``."""
        cdef list out = []
        cdef int v
        cdef array.array vals = self._values(keys)
        cdef Py_ssize_t i
        names = self.numbers.names
        for i in range(len(vals)):
            v = vals.data.as_ints[i]
            if v > 0:
                out.append({names[v - 1]})
            elif v < 0:
                out.append(self._value(v))
            else:
                out.append(set())
        return out

    def others(self, keys, str m):
        """For the set of each of ``keys``, whether it holds a member other than ``m``
        (``[bool(s - {m}) for s in self.members(keys)]``, without building the sets: a set
        kept as a set has two members or more)."""
        cdef list out = []
        cdef int v
        cdef long n = self.numbers.ids.get(m, -1)
        cdef array.array vals = self._values(keys)
        cdef Py_ssize_t i
        for i in range(len(vals)):
            v = vals.data.as_ints[i]
            out.append(v < 0 or (v > 0 and v - 1 != n))
        return out

    def nbytes(self):
        """The table's own bytes (its slot array; the sets and members not included)."""
        return self.cap * sizeof(_Slot)

    def set_bytes(self):
        """The bytes of the sets of two or more members: their arrays and their entries."""
        cdef Py_ssize_t i, n = self.vcap * sizeof(_Vec)
        for i in range(self.nvecs):
            n += self.vecs[i].cap * sizeof(int32_t)
        return n
