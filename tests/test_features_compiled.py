"""The compiled feature pass (dedup/_features.pyx) computes what its numpy references define
(issue 13, item 5): letters, shingle hashes, samples, span keys, SpotSigs' stand-ins, their
minhash and band values, on random inputs and on real article text."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dedup.base import Doc
from dedup.compiled import features as fx
from dedup.containment import (
    ContainmentDetector,
    _crc_tables,
    _multiples,
    letter_codes,
    shingle_hashes,
    span_keys,
)
from dedup.spotsigs import (
    LetterCandidatesSpotSigs,
    _SpotTable,
    band_values,
    minhash_values,
    spot_letter_hashes,
    spot_letter_hashes_compiled,
)
from dedup.storage import MemoryStorage, _add_each, _copies, _count, _discard
from dedup.text import letters

ROOT = Path(__file__).resolve().parents[1]
#: letters the pages have: CJK, Latin, digits, full-width, beyond the BMP, and non-letters
POOLS = [(0x20, 0x7E), (0x4E00, 0x9FFF), (0x3000, 0x303F), (0xFF00, 0xFFEF), (0x00C0, 0x024F),
         (0x20000, 0x2A6DF), (0x10400, 0x1044F), (0xD800, 0xDFFF), (0x0600, 0x06FF)]
codepoint_text = st.lists(
    st.sampled_from(POOLS).flatmap(lambda p: st.integers(*p)), max_size=300
).map(lambda cps: "".join(map(chr, cps)))
CJK = "的是在了国家统计局今天发布上半年经济数据专家认为消费拉动增长主要力量我们一个有"


def _cjk_text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(CJK + "，。") for _ in range(n))


def _real_texts(n: int = 60) -> list[str]:
    """Article texts of the shared corpus (cnews), when it is there."""
    try:
        from sitegen.articles import load_articles

        return [a.text for a in load_articles()[:n]]
    except Exception:  # noqa: BLE001 - the shared data is optional for this test
        return []


def test_letter_codes_over_every_code_point():
    """The compiled filter keeps exactly the numpy table's letters, surrogates included."""
    everything = "".join(map(chr, range(0x110000)))
    assert np.array_equal(fx.letter_codes(everything), letter_codes(everything))


@settings(max_examples=300, deadline=None)
@given(codepoint_text, st.sampled_from([1, 2, 5, 8]))
def test_letters_and_shingles_equal_the_reference(text, k):
    got, want = fx.letter_codes(text), letter_codes(text)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    h = fx.shingle_hashes(want, k, *_crc_tables(k))
    assert h.dtype == np.uint32 and np.array_equal(h, shingle_hashes(want, k))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=200),
       st.sampled_from([(4, 64, 8), (8, 64, 16), (8, 64, 8), (3, 10, 6), (4, 1, 12), (2, 0, 2),
                        (5, 7, 7)]))  # fmt: skip
def test_span_keys_and_sample_equal_the_reference(values, params):
    m, span, start = params
    h = np.array(values, dtype=np.uint32)
    assert fx.span_keys(h, m, span, start) == span_keys(h, m, span, start)
    assert fx.span_keys(h, m, span) == span_keys(h, m, span)
    assert fx.multiples(h, m) == frozenset(h[_multiples(h, m)].tolist())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 2**32 - 1), max_size=120), st.integers(1, 6),
       st.integers(1, 40), st.integers(0, 2**32 - 1))  # fmt: skip
def test_minhash_and_band_values_equal_the_reference(values, rows, bands, seed):
    rng = np.random.default_rng(seed)
    n = rows * bands
    mul = rng.integers(1, 2**32, size=n, dtype=np.uint32) | np.uint32(1)
    add = rng.integers(0, 2**32, size=n, dtype=np.uint32)
    h = np.array(values, dtype=np.uint32)
    mh = fx.minhash(h, mul, add)
    assert np.array_equal(mh, minhash_values(h, mul, add))
    assert fx.band_mix(mh, bands, rows) == band_values(mh, bands, rows)


def test_stand_ins_equal_the_reference():
    """Repeated antecedents, one at the text's end, short texts and windows 1-3."""
    det = LetterCandidatesSpotSigs(MemoryStorage())
    table = _SpotTable(det._lang_config("zh").antecedents)
    rng = random.Random(7)
    texts = [_cjk_text(rng, rng.randint(0, 400)) for _ in range(200)]
    texts += ["", "的", "的的", "在是了的" * 30, "我们的", "ab的"] + _real_texts()
    for t in texts:
        cp = letters(t)
        for window in (1, 2, 3):
            got = spot_letter_hashes_compiled(cp, table, window)
            assert np.array_equal(got, spot_letter_hashes(cp, table, window))


def test_empty_antecedents_table():
    table = _SpotTable([])
    cp = letters("国家统计局今天发布了上半年的经济数据")
    assert np.array_equal(spot_letter_hashes_compiled(cp, table, 2),
                          spot_letter_hashes(cp, table, 2))  # fmt: skip


def _reference_features(det: ContainmentDetector, doc: Doc):
    """ContainmentDetector.features computed by the numpy references (what it computed
    before the compiled pass)."""
    from dedup.containment import cleaned, inline_cut

    body = cleaned(doc.text, doc.title or "") if det.clean else doc.text
    low = body.lower()
    cps = letter_codes(low)
    length = len(cps) if len(low) == len(body) else len(letter_codes(body))
    h = shingle_hashes(cps, det.k)
    spans = span_keys(h, det.posting_m, det.span, det.posting_m * det.span_factor)
    sample = frozenset(h[_multiples(h, det.m)].tolist())
    full = h
    if det.clean and len(sample) < det.full_under and (cut := inline_cut(body)):
        cps = letter_codes(cut.lower())
        full = shingle_hashes(cps, det.k)
    return sample, length, tuple(spans), full, cps


def test_containment_features_equal_the_reference():
    """A page's features (sample, length, span keys, whole hashes, letters) on real article
    text, small texts with editor lines, and mixed scripts."""
    rng = random.Random(3)
    texts = _real_texts() + [_cjk_text(rng, rng.randint(0, 900)) for _ in range(100)]
    texts += ["（编辑：王明）" + _cjk_text(rng, 150) + "\n来源：新华社", "Ünïcode İstanbul 𠀋𠀍 ½ ٣",
              "转自人民网\n" + _cjk_text(rng, 200)]
    det = ContainmentDetector(MemoryStorage())
    for t in texts:
        doc = Doc(t, title="标题")
        f = det.features(doc)
        sample, length, spans, full, cps = _reference_features(det, doc)
        assert (f.hashes, f.length, f.spans) == (sample, length, spans)
        assert np.array_equal(f.full, full) and np.array_equal(f.letters, cps)


def test_sketch_equals_the_reference():
    """SpotSigs' letter sketch (minhash and bands) as the numpy references compute it."""
    det = LetterCandidatesSpotSigs(MemoryStorage())
    table = _SpotTable(det._lang_config("zh").antecedents)
    rng = random.Random(5)
    for t in _real_texts(30) + [_cjk_text(rng, rng.randint(0, 800)) for _ in range(50)]:
        mh, bands, _ = det.sketch(Doc(t))
        want = minhash_values(spot_letter_hashes(letters(t), table, det.spot_window),
                              det._mul, det._add)  # fmt: skip
        assert np.array_equal(mh, want)
        assert bands == list(band_values(want, det.letter_bands, det.letter_rows))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.sampled_from("abcdef")), max_size=120),
       st.lists(st.integers(0, 35), max_size=40), st.none() | st.integers(0, 4))  # fmt: skip
def test_posting_set_loops_equal_the_reference(adds, query, max_len):
    """The memory backend's compiled posting-set loops (``add_member``, ``count_members``)
    leave the tables and count the members as dedup.storage's Python loops do, in the
    same order."""
    got: dict = {}
    want: dict = {}
    for key, m in adds:
        fx.add_member(got, [key, key + 100], m)
        _add_each(want, [key, key + 100], m)
    assert got == want
    assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
    counted = fx.count_members(got, query + [q + 100 for q in query], max_len)
    expected = _count(map(want.get, query + [q + 100 for q in query]), max_len)
    assert list(counted.items()) == list(expected.items())


_OPS = st.lists(st.tuples(st.sampled_from(["add", "add", "add", "discard", "pop", "set"]),
                          st.integers(0, 400), st.sampled_from("abcdefg"),
                          st.booleans()), max_size=400)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(_OPS, st.lists(st.integers(0, 420), max_size=60), st.none() | st.integers(0, 4),
       st.sampled_from([1, 64, 2**40]))  # fmt: skip
def test_intsets_equal_the_dict_reference(ops, query, max_len, scale):
    """``IntSets`` (the memory backend's flat table of hashed sets) holds, gives, counts,
    unites and tells apart (sets holding others than a member) what the dict of
    ``dedup.storage``'s loops holds, through adds, discards, pops and overwrites, across its
    growth (multiples of 64: keys whose low bits are all 0, as
    posting-sampled hashes are) and its backward-shift deletion."""
    got, want = fx.IntSets(fx.Members()), {}
    for op, k, m, two in ops:
        key, other = k * scale, (k + 7) * scale
        if op == "add":
            _add_each(got, [key, other] if two else [key], m)
            _add_each(want, [key, other] if two else [key], m)
        elif op == "discard" and two:
            got.discard_each([key, other], [m, "z"])
            for x in (key, other):
                _discard(want, x, [m, "z"])
        elif op == "discard":
            _discard(got, key, [m])
            _discard(want, key, [m])
        elif op == "pop":
            assert got.pop(key) == want.pop(key, None)
        else:
            got[key] = {m, "x"} if two else m
            want[key] = {m, "x"} if two else m
    assert len(got) == len(want)
    assert sorted(got) == sorted(want)
    for key in want:
        assert key in got
        assert got.get(key) == want[key]
        assert type(got.get(key)) is type(want[key])
    keys = [q * scale for q in query]
    assert all((k in got) == (k in want) for k in keys)
    assert got.count(keys, max_len) == dict(_count(map(want.get, keys), max_len))
    assert got.union(keys) == set().union(*_copies(map(want.get, keys)))
    assert got.members(keys) == _copies(map(want.get, keys))
    for m in "az":
        assert got.others(keys, m) == [bool(s - {m}) for s in _copies(map(want.get, keys))]


def test_intsets_find_every_key_after_deletions_in_long_probe_chains():
    """Thousands of keys (multiples of 64, so the slot comes from the mixed hash alone)
    through the table's growth, two in three deleted in random order, then added again:
    every key left is found with its members, none deleted is (backward-shift deletion keeps
    each probe chain unbroken)."""
    rng = random.Random(5)
    t, ref = fx.IntSets(fx.Members()), {}
    keys = [64 * rng.randrange(2**40) for _ in range(6000)]
    for i, k in enumerate(keys):
        t.add([k], f"d{i % 50}")
        _add_each(ref, [k], f"d{i % 50}")
    gone = keys[: 4000]
    rng.shuffle(gone)
    for k in gone:
        assert t.pop(k) == ref.pop(k, None)
    assert len(t) == len(ref) and sorted(t) == sorted(ref)
    assert all(t.get(k) == v for k, v in ref.items())
    assert not any(k in t for k in gone if k not in ref)
    for k in gone[::2]:
        t.add([k], "back")
        _add_each(ref, [k], "back")
    assert all(t.get(k) == v for k, v in ref.items()) and len(t) == len(ref)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 3), st.integers(0, 299)),
                max_size=1500), st.randoms(use_true_random=False))  # fmt: skip
def test_intsets_large_sets_in_any_order_equal_the_dict_reference(ops, rng):
    """Sets of hundreds of members (a set of two or more is a sorted array of member
    numbers) through adds in any order — members met before added again, in the middle of
    the array, and repeated — and discards until they shrink to one member or none: held,
    counted and given as the dict reference's."""
    names = [f"p{i}" for i in range(300)]
    rng.shuffle(names)  # numbers are given in order of first add: any order of them
    got, want = fx.IntSets(fx.Members()), {}
    for add, k, i in ops:
        key = 64 * k
        if add:
            _add_each(got, [key], names[i])
            _add_each(want, [key], names[i])
        else:
            got.discard(key, [names[i], names[(i + 1) % 300]])
            _discard(want, key, [names[i], names[(i + 1) % 300]])
    assert sorted(got) == sorted(want)
    assert all(got.get(k) == v and type(got.get(k)) is type(v) for k, v in want.items())
    keys = [0, 64, 128, 192, 64]
    assert got.count(keys, None) == dict(_count(map(want.get, keys), None))
    assert got.count(keys, 40) == dict(_count(map(want.get, keys), 40))
    assert got.union(keys) == set().union(*_copies(map(want.get, keys)))
    held = sum(len(v) for v in want.values() if not isinstance(v, str))
    assert got.set_bytes() >= 4 * held


def test_intsets_large_table_holds_every_key():
    """A table of 300,000 keys (past 4 MiB of slots, through a dozen doublings) finds, counts
    and deletes as a small one does."""
    t = fx.IntSets(fx.Members())
    keys = [64 * k for k in range(300_000)]
    t.add(keys, "a")
    t.add(keys[::3], "b")
    assert t.nbytes() >= 4 << 20 and len(t) == len(keys)
    assert t.get(keys[3]) == {"a", "b"} and t.get(keys[4]) == "a"
    assert t.count(keys[:30], None) == {"a": 30, "b": 10}
    for k in keys[::2]:
        t.pop(k)
    assert len(t) == len(keys) // 2 and keys[1] in t and keys[2] not in t


def test_intsets_refuse_keys_beyond_64_bits():
    """A key outside [0, 2**64) is refused on write and absent on read."""
    t = fx.IntSets(fx.Members())
    with pytest.raises(OverflowError):
        t.add([2**64], "a")
    with pytest.raises(OverflowError):
        t.add([-1], "a")
    assert t.get(2**64) is None and -1 not in t and t.pop(2**70, "none") == "none"


@settings(max_examples=200, deadline=None)
@given(st.frozensets(st.integers(0, 2**32 - 1), max_size=300), st.sampled_from([1, 2, 8, 16]))
def test_posting_sample_equals_the_reference(hashes, m):
    """Containment's posting-sampled hashes (compiled ``multiples_of``) are the reference's
    list, in the set's order."""
    assert fx.multiples_of(hashes, m) == [h for h in hashes if h % m == 0]


def test_missing_extension_fails_with_the_fix():
    """Without the built module, importing the dedup methods fails and names the fix."""
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'dedup._features':\n"
        "            raise ImportError('blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import dedup.containment\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode != 0
    assert "pip install -e ." in out.stderr


@pytest.mark.parametrize("bad", [np.array([0x200000] * 10, dtype=np.uint32)])
def test_code_points_beyond_the_tables_are_refused(bad):
    with pytest.raises(ValueError):
        fx.shingle_hashes(bad, 8, *_crc_tables(8))
