"""Containment: a page that contains most of an accepted document is a duplicate of it.

Resemblance measures (Jaccard, SpotSigs, MinHash) miss a reprint that adds material of its
own — an editor's note, source lines, a sidebar spliced into the text: the longer the extra
material, the lower the resemblance, while the copied article is all there. Broder (1997),
"On the resemblance and containment of documents", defines the containment of A in B as

    c(A, B) = |S(A) ∩ S(B)| / |S(A)|

over the shingle sets S, and estimates it from the MOD-m sample of each set (the shingles
whose hash is 0 mod m), which keeps the ratio unbiased.

Here a new page B is a duplicate of a stored document A when c(A, B) ≥ ``threshold`` and B
is at least ``threshold`` of A's length in letters (so a page holding half of A's text twice
is no copy), **whatever B adds**: issue 17, item 3 ("a document that contains most of an
accepted document is a duplicate"). A reprint followed by a long commentary, sidebar or
spliced block of other articles is therefore a duplicate of its source (the dedup sets'
``commentary`` pairs are labelled so since then). ``max_extra`` (off by default) restores
the older bound: the material of B not in A is at most ``max_extra`` of B
(1 − |S(A) ∩ S(B)| / |S(B)|, on the samples and on the lengths).

**The best of several.** A page may contain more than one stored document: a commentary
page holds its source and, among the sentences it spliced in, maybe all of a short article
(test web a4 in reverse order: its source at c 0.98, a spliced article at 0.95). Its forward
matches are ranked by the share of the page each covers (|S(A) ∩ S(B)| / |S(B)|: the page is
a copy of what most of it is), then by c(A, B); the score reported stays c(A, B).

**Both directions** (issue 17, item 3, whichever order the crawl meets the two pages). The
rule above reads "the new page contains the stored one"; when the crawl fetched the reprint
with extras first, its source arrives second and is *contained in* an accepted document:
c(B, A) = |S(B) ∩ S(A)| / |S(B)| ≥ ``threshold`` (Broder's containment of the new page in the
stored one). That pair is a duplicate too, and the new page is the **original**: the match
says so (``Match.replaces``) and the cascade (keep "first", the default) keeps the new page
and replaces the stored one (its document leaves the corpus as a duplicate of the new one:
the ``document_replaced`` signal, ``StorePipeline.replaced``), so the corpus holds the source
in both orders (keep "longer" / "earlier" decide by length / date as for any match). Two
conditions guard the reverse direction (``reverse``, on by default):

* the new page is not trivially short: at least ``min_contained`` letters (100) and
  ``min_sample`` hashes, so a short boilerplate page contained in everything matches nothing;
* some of the stored page's material beyond the new page (``spliced`` ≥ 0.1 of its
  posting-sampled shingles) is held by *other* indexed documents: evidence that the stored
  page is the new one plus material spliced from elsewhere (the test web's ``commentary``
  pages: a reprint, a heading and sentences of other articles; the demo's jinghua-online
  page: a reprint and a block of other articles). Without it, half an article (the dedup sets' ``cut-half``
  hard negatives: the first half of a reprint, labelled *not* a duplicate) would be a
  duplicate of its full text **and would replace it**: a page and its first half are, by
  their texts alone, the same pair as a source and its reprint with a same-length
  commentary (``bench/containment.py`` measures ``spliced`` 0, the rule alone). The dedup
  sets cannot tell (their pairs are checked in a fresh index); the value was chosen on the
  small test webs, both orders. On webs a1–b2 the true reverse pairs had shares 0.27–0.86
  and every other reverse candidate 0.0 (0.2 was chosen there); on a1–b12 (24 webs, 2026-11-26)
  the candidates outside their duplicate group have 0.0 (41), 0.033 and 0.043 (and 0.41: two
  articles of different groups with the same text, which no value separates), and a
  commentary page's share when its source arrives can be lower than 0.2 while some of the
  articles it spliced are still to come (0.108, 0.176; b9: 0.176, missed at 0.2): 0.1, in
  the gap. The cost: a reprint whose extra material is its own
  writing (a commentary no other document holds) is caught only when its source came first,
  and a source met before the documents it was spliced with is not caught either.

The reverse direction also decides *which copy is the original* when an earlier method of
the cascade found the pair (:meth:`ContainmentDetector.reprints_of`, asked by
:meth:`dedup.cascade.Cascade.check_and_add` after any match): SpotSigs pairs a source with
its reprint with a short spliced block (resemblance ≥ 0.5) before containment is asked, and
the reprint, stored first, would stay. And a reprint with extras stored before the
documents it spliced in (the guard could not see them) leaves the index when a later page
shows it up: the cascade retires every stored reprint with extras of the new page
(``Decision.retired``), as a duplicate of the copy kept.

**The deferred re-check** (``recheck``, 256 pairs; 0 = off). A source met before the
articles its reprint spliced in is stored beside the reprint: the guard saw nothing spliced
(test webs b16 reversed, b21 URL order). The pair is remembered in the index's storage
(``containment:pending``, ``containment:w:<hash>``: the reprint's material no other document
held) and checked again when the cascade stores a document holding some of that material
(:meth:`ContainmentDetector.recheck_reprints`); once the guard holds, the reprint leaves as
the source's duplicate (``Decision.deferred``).

**Re-attribution of a dropped page** (``reattribute``, 256 pages; 0 = off). A commentary page
met before its source that holds most of a short article it spliced is that article's
duplicate (forward: it contains it), or is stored and then replaced by it (reverse: the
article is contained in it); either way it is out of the index when its source comes, so the
source is stored (the corpus is right) but nothing would move the page's duplicate record
from the spliced article to the source (test webs b29, b30, a24; b34, a39). The cascade
tells the detector which pages it records as duplicates (:meth:`ContainmentDetector.dropped`);
a page whose original holds under ``threshold`` of its sample is remembered in the index's
storage (``containment:dropped``, ``containment:dd``, ``containment:dp:<hash>``), and a
document stored later that the forward rule would have matched it to (had both been stored
when the page came) and that covers more of its sample than its original takes over its
record (:meth:`ContainmentDetector.reattributions`, ``Decision.reattributed``; the store
moves the record only while it still names that original).

**Revival of a dropped source** (``revive``, 64 sources; 0 = off). A source met after its
commentary page but before the articles the page spliced in is paired with the page by
SpotSigs and dropped as its duplicate while the guard sees nothing spliced (test webs b20,
a69, URL order). The source, its :class:`Doc` and the page's material no other document held
are remembered (``containment:rv``, ``containment:rw:<hash>``); when a document stored later
makes the guard hold, the cascade retires the page as the source's duplicate and indexes the
source (:meth:`ContainmentDetector.revivals`, ``Decision.revived``; the store takes the
source back into the corpus).

**Stand-ins** (with ``reattribute``). A remembered dropped page stands in for the document
it was dropped for (:meth:`ContainmentDetector._stand_ins`): a later page that contains it
as the forward rule would match it were it stored is its duplicate when that document was
too short for containment to index (test web b43, reversed: a source dropped as SpotSigs'
duplicate of a 49-letter copy, its commentary page holding 0.69 of that copy's letters and
0.98 of the source's); when containment indexes that document, is contained in the page and
the page is not it plus material other documents hold, the page only takes the record of a
query that has a stored match (test web b93, URL order: a source met after its own cut half
is the half's duplicate, and its commentary page, which holds both, is recorded as the
source's duplicate, not the half's). So a page is also remembered when its original is
unknown to containment, short (``min_short``) or not. And a forward pair the guard refused
for want of evidence (a small stored document found only by its posting sets, or a pair
only the letters accept) is kept for the deferred re-check as the reverse ones are (test
web b70, reversed: a small source stored first, its commentary page met before the articles
it spliced).

**Short texts** (``min_short``, 6 sampled hashes; 0 = off). A text under ``min_sample`` hashes
(a 71-letter article: test webs a11, b16) is indexed apart (``containment:short``,
``containment:q:<hash>``), so it is no candidate for the longer documents' rules,
and it pairs, in either direction, only under a stronger guard: the page's material beyond
it is held by other documents (share ≥ ``spliced``) *and* the part no document holds is no
larger than the short text's part of the page (the page is a copy of what most of it is).
An original met after its short first half (its second half held by none) and a commentary
page of another article that spliced the short text whole (that article's text, unheld, is
larger) do not pair. A short document *holds* material for every guard (since 2026-11-27:
a page that spliced a 102-letter article whole, test web a55), and storing one re-checks the
pairs waiting for its hashes; a short query's reverse candidates are the documents holding
half of its posting-sampled hashes (each verified on letters: edits in the page broke
two of a 51-letter source's four, test web b43); and a page refused against a short document
it holds stays remembered for the re-check when its own reverse query runs after (test web
a43).

**Short texts with edits** (since issue 17, session 37). Runs of ``k`` letters (the
letters' measure below, :func:`covered`) forgive an edit only where the text runs on for
``k`` letters around it: letters between two edits fewer than ``k`` apart, or between an
edit and the text's end, are lost with it. A long text seldom has that; a short one does:
test web b96's 49-letter source, whose page inserts two letters and drops one within its
first 17, keeps 0.65 of its letters in runs (no rule on 8-letter shingles reaches 0.8) but is
3 edits from a substring of the page. So for a short text A (:meth:`_short`: under
``min_sample`` hashes or ``min_contained`` letters) whose and the other text's letters are
known (a query's, and a stored small document's: ``containment:l``, its letters as UTF-8,
beside its hashes), a pair the letters refuse is measured once more as
c(A, B) = 1 − d / |A|, d the least edit distance between A's letters and a substring of B's
(Sellers 1980, :func:`edit_contained`), aligned around the letters where B holds one of A's
shingles (:meth:`_edit_score`); such a pair is a short document's, so it pairs only under
the short documents' guard, with B's letters aligned to A counted as A's. A short query's
reverse candidates also include the small documents holding any one of its posting-sampled
hashes (b96 reversed: its page kept one of four). Longer texts keep the letters' measure
(and the dedup sets' decisions stay as they were).

Both texts are compared **after cleaning**: the cleaner's static line rules
(:class:`postprocess.clean.Cleaner`, no host model, no HTML) remove editor, source, date and
navigation lines and table remnants first, so a copy's boilerplate neither hides it nor makes
two different articles of one site look alike; so do the cleaner's two other rules that need
no HTML: the page's own title (or a part of it: the headline, the site's name) among the first
three lines, given the document's title, and a trailing "related" box under its heading
("热点推荐"). A copy rewrites its headline and has its own site name: in a short table-layout
source those lines kept its reprint below the threshold (test webs a6, a10: c 0.79 with
them, 0.95 and 0.86 without). Shingles are ``k`` consecutive letters (CJK characters, Latin
letters, digits; punctuation and space dropped).

**Small documents** (``full_under``, 128 sampled hashes; 0 = off). A document whose MOD-m
sample has fewer hashes also keeps every shingle hash, in text order (``containment:f``), and
a pair with such a stored document is measured on the whole texts, not estimated on the
samples: c(A, B) becomes the share of A's *letters* that B holds in runs of at least ``k``
letters (:func:`covered`). Two reasons, both worst on short texts. The estimate's spread: a
129-letter source has 32 sampled hashes, and its copy with two inserted characters held 25
of them (0.78) where its shingles give 0.885 (test web b22). And the shingles' edit
penalty: one edited letter costs ``k`` shingles, so a copy with three edits holds 1 − 3·8/n
of an ``n``-letter source's shingles: under 0.8 for any source under ~120 letters (test web
b17: a 73-letter source, 0.77 of its shingles, 0.99 of its letters), while a passage cut
costs its letters in both measures, so a half page still holds half of its original. The
queried page's hashes are at hand (its features); the stored ones cost 4 bytes per letter,
for small documents only (a 128-hash sample is ~512 letters). A small document's letters
are those of its text with the cleaner's cuts *within* a line made (:func:`inline_cut`: a
reprint note at a paragraph's head, source and editor fields glued to it, as in a
table-layout cell holding the whole article; test web a2), its samples are not: the letters
decide a pair only under the guard below, the samples alone. A pair the samples accept
stays accepted; a forward pair that only the letters accept needs the reverse direction's
evidence (the page's material beyond the stored document held by other documents, share ≥
``spliced``): forgiving edits also lets an original met after its own edited first half
(the dedup sets' ``cut-half`` pairs) contain it, and such a page adds text nobody holds. So
a pair in a fresh index (the dedup sets) is decided as before. The letters are computed only
for a pair the samples refuse (the samples' estimate is reported where it accepts). The
short documents' guard is measured on letters too where both texts' hashes are known: the
page's material beyond the short text is the letters it does not cover (an edited letter of
the source stays the source's), and the share other documents hold is counted over the
posting-sampled shingles that start at those letters (test web a33: a 51-letter source edited
twice inside a table cell that also holds its reprint note and fields). And a small query's
reverse candidates are also read from its posting sets (the longer documents holding at least
half of its posting-sampled hashes, each verified): its few span keys (2–4 for 130 letters)
are broken by an edited letter in a key's start shingle, which the letters forgive (test web
b30, reversed: a 126-letter source sharing none of its 3 keys with its page); and, the other
way, a small *stored* document is found by a longer query holding half of its
posting-sampled hashes (``containment:sp:<hash>``, the posting sets of the small documents
alone, so a long query reads no long set; test web a78, URL order: a 118-letter source whose
2 span keys two inserted letters of its commentary page both broke), and a pair found only
so needs the guard's evidence (an original met after its own edited half is found so too).

Index: each document's MOD-``m`` sample (``containment:docs``), posting sets over its
MOD-``m·posting_factor`` sub-sample (``containment:p:<hash>``: the ``spliced`` guard reads
them) and its sizes (``containment:n``: sample size, posting keys, letters).

**Candidates by span keys** (``candidates="spans"``, the default). A stored document's
candidates used to be found by counting its posting hits (below); where documents share
sentences with many others (reprint sites, boilerplate-heavy sections, the throughput
benchmark's documents drawn from a pool of sentences) those posting sets grow with the index
and every document sharing a sentence was counted: the time per page grew 2.09× from 10k to
100k documents. A *span key* pairs a sub-sampled shingle with the first sub-sampled shingle
starting ``span`` (64) letters or more after it, in text order (:func:`span_keys`, a 32-bit
mix of the two hashes; ``containment:s:<key>``, and ``containment:sn``: key count, letters).
Keys start only at every ``span_factor``-th (2) sub-sampled shingle on average (hash ≡ 0 mod
m·posting_factor·span_factor), their ends at any: half the keys of every start, and a subset
of them, for half the memory and writes (a copy that keeps enough of its source's text keeps
about the same share of either; measured side by side in docs/benchmarks/dedup.md). The
factor is the index's: its ``containment:spans`` mark holds it ("1" in an index written
before the option), and a detector queries with the factor of the index it opens.
A copy keeps its source's span keys wherever the source's text runs on for ``span`` letters
without an insertion or cut (an edit in between changes the key only when it moves the end
shingle); two documents that merely share a sentence shorter than ``span`` share none. A
stored document is a candidate when it shares at least ``span_share`` (0.2) of its span keys
with the query (forward: it may be contained in the query) or of the query's (reverse: the
query may be contained in it), the span-key sets of more than ``span_cap`` (64) documents
left out of the count (a passage many *distinct* stored documents hold: a copy found is
not stored, so such a set is no copy's evidence), and passes the length conditions; then every
candidate is verified exactly as before. This is approximate where the bound below is
exact: a copy that keeps under ``span_share`` of its source's keys — a short text with
passages inserted every few sentences, or sentences reordered — or whose keys are all in
sets over ``span_cap`` is not found by containment (the earlier methods of the cascade may
still find it). Measured against the bound: docs/benchmarks/dedup.md ("Containment
candidates"). The shingle hashes (CRC-32 of each UTF-32 shingle, computed in numpy from
tables, :func:`shingle_hashes`) are the same as before, so stored samples keep their meaning.

**The posting-hit bound** (``candidates="postings"``, and any index of an earlier version:
one whose documents have no span keys, told by the absent ``containment:spans`` mark). A
stored A with c(A, B) ≥ θ lacks at most (1 − θ)·|S(A)| of its sample in B, so at least
|P(A)| − (1 − θ)·|S(A)| of its posting hashes P(A) are among B's: a candidate with fewer
posting hits is no match (the bound keeps every match, so the decisions are the same as
verifying every candidate). The least such count over the stored documents, rounded down
(``containment:need:<θ>``, a set that only grows), skips most documents that share a passage
or two before their sizes are read. An index started by this version writes both, so a
process of the earlier version can still read it.
"""

from __future__ import annotations

import base64
import functools
import json
import math
import zlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any

import edlib
import numpy as np

from dedup.base import Doc, Match, PostingIndexDetector, register
from dedup.compiled import features as _fx
from dedup.storage import IndexStorage, hex_keys
from topicrawl.errors import ConfigError


@functools.lru_cache(maxsize=4)
def _crc_tables(k: int) -> tuple[int, np.ndarray, np.ndarray]:
    """CRC-32 is linear over GF(2): for messages of one length, crc(x ⊕ y) = crc(x) ⊕ crc(y) ⊕
    crc(0…0). So the CRC-32 of a ``k``-letter UTF-32 shingle is crc(0…0) xor one table entry
    per letter and position: ``lo[cp & 0xFFFF][j]`` and ``hi[cp >> 16][j]`` for the letter of
    code point ``cp`` at position ``j`` (tables built from the CRCs of the single-bit
    messages; 2 MB for k = 8)."""
    width = 4 * k
    c0 = zlib.crc32(bytes(width))
    lo = np.zeros((k, 1 << 16), dtype=np.uint32)
    hi = np.zeros((k, 32), dtype=np.uint32)  # code points ≤ 0x10FFFF: 5 high bits
    low_vals, high_vals = np.arange(1 << 16, dtype=np.uint32), np.arange(32, dtype=np.uint32)
    for j in range(k):
        for bit in range(21):
            msg = bytearray(width)
            msg[4 * j : 4 * j + 4] = (1 << bit).to_bytes(4, "little")
            basis = np.uint32(zlib.crc32(bytes(msg)) ^ c0)
            table, vals, b = (lo[j], low_vals, bit) if bit < 16 else (hi[j], high_vals, bit - 16)
            table ^= np.where((vals >> b) & 1 == 1, basis, np.uint32(0))
    # stored a row per code point (its k positions' entries side by side): one gather
    return c0, np.ascontiguousarray(lo.T), np.ascontiguousarray(hi.T)


#: ``str.isalnum`` of every code point (1.1 MB, indexed by code point) and which blocks of
#: :data:`_BLOCK` code points are filled: the Basic Multilingual Plane at the first use
#: (65,536 ``isalnum`` calls, ≈ 10 ms), the other planes a block at a time when a text has
#: such characters. The whole table at once (1.1 million calls) took 0.2-0.6 s of the first
#: accepted page of a crawl (issue 16).
_BLOCK = 256
_BMP = 0x10000
_LETTERS = np.zeros(0x110000, dtype=bool)
_FILLED = np.zeros(0x110000 // _BLOCK, dtype=bool)
_BMP_FILLED = False


def _fill_blocks(blocks: Iterable[int]) -> None:
    """Fill :data:`_LETTERS` for the code-point blocks ``blocks`` (idempotent: a block filled
    twice, by two threads, gets the same values)."""
    for b in blocks:
        lo = b * _BLOCK
        _LETTERS[lo : lo + _BLOCK] = np.frombuffer(
            bytes(map(str.isalnum, map(chr, range(lo, lo + _BLOCK)))), dtype=bool
        )
        _FILLED[b] = True


def _fill_bmp() -> None:
    global _BMP_FILLED
    _fill_blocks(range(_BMP // _BLOCK))
    _BMP_FILLED = True


def _letter_table() -> np.ndarray:
    """Whether each code point is a letter or digit (``str.isalnum``: what ``[\\W_]+`` of
    :mod:`re` leaves of a text), indexed by code point (every block filled)."""
    _fill_blocks(np.flatnonzero(~_FILLED).tolist())
    return _LETTERS


def letter_codes(text: str) -> np.ndarray:
    """The code points of ``text``'s letters and digits (what ``re.sub(r"[\\W_]+", "", text)``
    keeps), as uint32, found in numpy (lone surrogates, which are no letters, are dropped).
    The reference of the compiled pass (:mod:`dedup.compiled`) that pages go through."""
    cp = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    if not _BMP_FILLED:
        _fill_bmp()
    if cp.size and cp.max() >= _BMP:  # outside the BMP: its blocks, the first time
        blocks = cp[cp >= _BMP] // _BLOCK
        missing = blocks[~_FILLED[blocks]]
        if missing.size:
            _fill_blocks(np.unique(missing).tolist())
    return cp[_LETTERS[cp]]


def shingle_hashes(letters: str | np.ndarray, k: int = 8) -> np.ndarray:
    """The 32-bit hash of every ``k``-letter shingle of ``letters`` (a string, or its code
    points: :func:`letter_codes`), in text order: the CRC-32 of the shingle's UTF-32-LE bytes
    (stable across processes), computed for all shingles at once from :func:`_crc_tables`
    (the same values as ``zlib.crc32`` shingle by shingle). The reference of the compiled
    pass (:mod:`dedup.compiled`) that pages go through."""
    cp = (np.frombuffer(letters.encode("utf-32-le"), dtype="<u4")
          if isinstance(letters, str) else letters)  # fmt: skip
    n = len(cp) - k + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint32)
    c0, lo, hi = _crc_tables(k)
    # one gather of every letter's k table entries (row = letter), then the shingle at i
    # xors row i + j's entry j: a skewed view of the rows, reduced in one call
    out = _skew_xor(np.take(lo, cp & 0xFFFF, axis=0), n, k)
    out ^= np.uint32(c0)
    if int(cp.max()) > 0xFFFF:  # letters beyond the Basic Multilingual Plane
        out ^= _skew_xor(np.take(hi, cp >> 16, axis=0), n, k)
    return out


def _skew_xor(rows: np.ndarray, n: int, k: int) -> np.ndarray:
    """``xor_j rows[i + j, j]`` for i < ``n`` (``rows``: C-contiguous, ``k`` columns)."""
    step, item = rows.strides
    view = np.ndarray((k, n), dtype=rows.dtype, buffer=rows, strides=(step + item, step))
    return np.bitwise_xor.reduce(view, axis=0)


def _multiples(values: np.ndarray, m: int) -> np.ndarray:
    """``values % m == 0`` (a mask; by a bit test when ``m`` is a power of two)."""
    if m & (m - 1) == 0:
        return (values & (m - 1)) == 0
    return values % m == 0


def shingle_sample(text: str, k: int = 8, m: int = 4) -> list[int]:
    """The sorted distinct 32-bit hashes (CRC-32 of the UTF-32 shingle: stable across
    processes, and cheap) ≡ 0 (mod ``m``) of the ``k``-letter shingles of ``text`` (Broder's
    MOD-m sample)."""
    h = shingle_hashes(letter_codes(text.lower()), k)
    return np.unique(h[h % m == 0]).tolist()


def span_keys(hashes: np.ndarray, m: int, span: int, start: int | None = None) -> list[int]:
    """The sorted distinct span keys of a document whose shingle hashes in text order are
    ``hashes``: for each shingle with hash ≡ 0 (mod ``start``, a multiple of ``m``; default
    ``m``), a 32-bit mix of its hash and the hash of the first shingle with hash ≡ 0 (mod
    ``m``) starting at least ``span`` letters after it (so the keys of a sparser ``start``
    are a subset of those of ``m``).

    Two documents share a key only where both hold the same two sampled shingles ``span``
    letters or more apart with no sampled shingle moved between them: a copy shares most of
    its source's keys, while a page that only shares a sentence shorter than ``span`` with
    it shares none. The reference of the compiled pass (:mod:`dedup.compiled`)."""
    pos = np.flatnonzero(_multiples(hashes, m))
    if len(pos) < 2:
        return []
    at = hashes[pos]
    if start is None or start == m:
        firsts = np.arange(len(pos))
    else:
        firsts = np.flatnonzero(_multiples(at, start))
    end = np.searchsorted(pos, pos[firsts] + span)
    ok = end < len(pos)
    x = at[firsts[ok]].astype(np.uint64)
    x <<= np.uint64(32)
    x |= at[end[ok]]  # then the 64-bit finaliser of MurmurHash3
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x >>= np.uint64(32)
    return sorted(set(x.tolist()))


def _has_full(s: Sample) -> bool:
    return s.full is not None and len(s.full) > 0


def _pack_letters(letters: np.ndarray) -> bytes:
    """The stored form of a text's letters (``containment:l``): their UTF-8 bytes (3 a CJK
    letter, where its shingle hashes take 4, 5⅓ in base64)."""
    return letters.astype("<u4").tobytes().decode("utf-32-le").encode("utf-8")


def _unpack_letters(raw: bytes | str) -> np.ndarray:
    """:func:`_pack_letters`' letters back as code points (uint32)."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    return np.frombuffer(text.encode("utf-32-le"), dtype="<u4")


def _with_stored(s: Sample, full: bytes | str, letters: bytes | str | None) -> Sample:
    """``s`` with a small document's stored shingle hashes (``containment:f`` or ``df``:
    base64 of little-endian uint32) and letters (``containment:l`` or ``dl``, when kept)."""
    return Sample(s.hashes, s.length, s.spans,
                  np.frombuffer(base64.b64decode(full), dtype="<u4"),
                  None if letters is None else _unpack_letters(letters))  # fmt: skip


def containment(a: set[int] | frozenset[int], b: set[int] | frozenset[int]) -> float:
    """Broder's c(A, B) = |A ∩ B| / |A| on two samples (0.0 for an empty A)."""
    return len(a & b) / len(a) if a else 0.0


def covered(a: np.ndarray, b: np.ndarray, k: int = 8) -> float:
    """The share of the letters of text A that text B holds in runs of at least ``k`` letters,
    from the hashes of their ``k``-letter shingles (``a`` in text order): a letter counts when
    a shingle of A covering it is one of B's. A one-letter edit of A in B costs one letter here
    and ``k`` shingles in Broder's c(A, B); a passage of A that B lacks costs its letters in
    both."""
    if not len(a):
        return 0.0
    return float(np.count_nonzero(cover_mask(a, b, k))) / (len(a) + k - 1)


def cover_mask(a: np.ndarray, b: np.ndarray, k: int = 8) -> np.ndarray:
    """For each letter of text A (``len(a) + k - 1`` letters), whether B holds it in a run of
    at least ``k`` letters (:func:`covered`)."""
    held = np.isin(a, b)
    # letter j is covered when a held shingle starts in [j - k + 1, j]
    return np.convolve(held.astype(np.int32), np.ones(k, dtype=np.int32)) > 0


#: edlib aligns bytes: at most 256 symbols, one of them for every letter of B not in A
EDIT_ALPHABET = 255


def _edit_symbols(a: np.ndarray, b: np.ndarray) -> tuple[bytes, bytes]:
    """``a`` and ``b`` as bytes for edlib: each distinct letter of ``a`` one byte, every
    letter of ``b`` that ``a`` lacks one more (it never matches, whichever it is), so a
    Chinese text of up to :data:`EDIT_ALPHABET` distinct letters fits edlib's alphabet."""
    alphabet = np.unique(a)
    if len(alphabet) > EDIT_ALPHABET:
        raise ValueError(f"{len(alphabet)} distinct letters (edlib: at most {EDIT_ALPHABET})")
    at = np.minimum(np.searchsorted(alphabet, b), len(alphabet) - 1)
    codes_a = np.searchsorted(alphabet, a).astype(np.uint8)
    codes_b = np.where(alphabet[at] == b, at, len(alphabet)).astype(np.uint8)
    return codes_a.tobytes(), codes_b.tobytes()


def edit_contained(a: np.ndarray, b: np.ndarray) -> tuple[int, int, int]:
    """Sellers' approximate string matching (Sellers 1980, "The theory and computation of
    evolutionary distances: pattern recognition"): the least edit distance between the
    letters ``a`` and any substring of the letters ``b``, and that substring's span
    ``(distance, start, end)`` in ``b`` (the shortest of the best ending first). An inserted,
    deleted or changed letter costs one; a passage of ``a`` that ``b`` lacks costs its
    letters, as in :func:`covered`. 1 − distance / len(a) is ``a``'s containment in ``b``
    with edits forgiven letter by letter (:meth:`ContainmentDetector._edit_score`).

    Computed by edlib (Šošić & Šikić 2017, Myers' 1999 bit-vector algorithm): its infix
    mode ("HW") is Sellers' matching and gives every best end; the start is the prefix
    alignment ("SHW") of the reversed ``a`` against ``b`` reversed from that end, its
    earliest best end (the shortest substring). ``a`` may hold at most
    :data:`EDIT_ALPHABET` distinct letters (ValueError beyond)."""
    if not len(a):
        return 0, 0, 0
    if not len(b):
        return len(a), 0, 0
    qa, qb = _edit_symbols(a, b)
    hw = edlib.align(qa, qb, mode="HW", task="distance")
    d = int(hw["editDistance"])
    if d >= len(a):  # no letter aligned: the empty substring at b's start
        return len(a), 0, 0
    end = min(e for _, e in hw["locations"]) + 1
    back = edlib.align(qa[::-1], qb[:end][::-1], mode="SHW", task="distance")
    return d, end - 1 - min(e for _, e in back["locations"]), end


@dataclass(frozen=True)
class Sample:
    """A document's shingle sample, its length in letters and its span keys (the stored
    features; an index of an earlier version has no span keys)."""

    hashes: frozenset[int]
    length: int = 0
    spans: tuple[int, ...] = ()
    #: every shingle hash in text order (not only the MOD-m sample): a query's, or a small
    #: stored document's (``full_under``; ``containment:f``), else None
    full: np.ndarray | None = _field(default=None, compare=False)
    #: the letters (lower-cased code points) those hashes were computed from, where they are
    #: known: a query's, a small stored document's (``containment:l``), else None
    letters: np.ndarray | None = _field(default=None, compare=False)

    def to_json(self) -> str:
        """The stored form: ``"<length>:<base64 of the sorted hashes as little-endian
        uint32>[:<base64 of the span keys, likewise>]"`` (a third of the JSON list's size,
        decoded in C)."""
        packed = np.sort(np.fromiter(self.hashes, dtype="<u4", count=len(self.hashes))).tobytes()
        out = f"{self.length}:{base64.b64encode(packed).decode('ascii')}"
        if self.spans:
            spans = np.array(self.spans, dtype="<u4").tobytes()
            out += ":" + base64.b64encode(spans).decode("ascii")
        return out

    @classmethod
    def from_json(cls, raw: bytes | str) -> Sample:
        """Read :meth:`to_json`'s form (with or without span keys), or the JSON object
        ``{"h": [...], "n": ...}`` that indexes before it stored."""
        if isinstance(raw, str):
            raw = raw.encode("ascii")
        if raw[:1] == b"{":
            data = json.loads(raw)
            return cls(frozenset(data["h"]), int(data["n"]))
        length, _, rest = raw.partition(b":")
        packed, _, spans = rest.partition(b":")
        hashes = np.frombuffer(base64.b64decode(packed), dtype="<u4").tolist()
        keys = tuple(np.frombuffer(base64.b64decode(spans), dtype="<u4").tolist()) if spans else ()
        return cls(frozenset(hashes), int(length), keys)


#: one in how many of a document's posting-sampled hashes look for the dropped pages it may be
#: the better original of (:meth:`ContainmentDetector.reattributions`; a small document's
#: all): 1/8 of its MOD-m sample, 16 or more hashes beyond ``full_under``
REATTRIBUTE_PROBE = 4


def _dropped_entry(seq: int, cover: int, original: str) -> str:
    """A remembered dropped page's entry (``containment:dropped``): ``"<seq>:<cover>:<original
    id>"`` (the id last: it may hold colons)."""
    return f"{seq}:{cover}:{original}"


def _read_dropped(raw: bytes | str) -> tuple[int, int, str]:
    """``(seq, cover, original id)`` of :func:`_dropped_entry`'s form."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    seq, cover, original = text.split(":", 2)
    return int(seq), int(cover), original


_CLEANER: Any = None


def cleaned(text: str, title: str = "") -> str:
    """``text`` after the cleaner's table split and static line rules, and the two rules of
    :meth:`postprocess.clean.Cleaner.clean` that need no HTML either (no host model, no page
    drop): a line among the first three kept that is the page's ``title`` or a part of it
    (the headline, the site's name: ``_is_title``, given the document's title in place of the
    page's <title>/<h1>), and a trailing "related" box under its heading ("热点推荐", "相关新闻")
    with a comment link at the text's end (``_related_block``); see the module docstring."""
    global _CLEANER
    if _CLEANER is None:
        from postprocess.clean import Cleaner

        _CLEANER = Cleaner(host_lines=False, link_lines=False, min_chars=0, reextract=False,
                           fallback=False)  # fmt: skip
    from collections import Counter

    from postprocess.clean import _is_title, _related_block
    from postprocess.clean import _letters as title_letters  # (no lower-casing, no digits)

    heads = title_letters(title) if title else ""
    removed: Counter[str] = Counter()
    kept: list[str] = []
    for line in _CLEANER._expand([ln.strip() for ln in text.splitlines()], removed):
        if not line or _CLEANER.line_rule(line) is not None:
            continue
        # (a headline has at most 60 letters: a longer line is not looked at)
        if heads and len(kept) < 3 and len(line) <= 200 and _is_title(line, heads):
            continue
        kept.append(line)
    return "\n".join(_related_block(kept, removed))


#: what the cleaner's in-line cuts look for (a quick test before their patterns)
_CUT_MARKS = ("编者按", "转自", "来源", "來源", "稿源", "编辑", "編輯", "责编", "返回")


def inline_cut(body: str) -> str | None:
    """``body`` (a :func:`cleaned` text) with the cleaner's cuts *within* a line, as
    :meth:`postprocess.clean.Cleaner.clean` makes them: a "back to the front page" tail, a
    reprint note at a paragraph's head, and source and editor fields at its tail or inside a
    merged table cell (``Cleaner._trim_editor``); None when nothing is cut. The letters of
    a small document are measured on it (see :meth:`ContainmentDetector.features`)."""
    if not any(mark in body for mark in _CUT_MARKS):
        return None
    from collections import Counter

    from postprocess.clean import _NAV_TAIL

    removed: Counter[str] = Counter()
    out, changed = [], False
    for line in body.split("\n"):
        cut = line
        if len(cut) > 20 and _NAV_TAIL.search(cut):
            cut = _NAV_TAIL.sub("", cut)
        if len(cut) > 40:
            cut = _CLEANER._trim_editor(cut, removed)
        changed = changed or cut != line
        out.append(cut)
    return "\n".join(out) if changed else None


def _letters_of(s: Sample, k: int) -> int:
    """The letters the text of ``s`` is measured on: its whole hashes' (the in-line cuts
    made, for a small document), else its length."""
    return len(s.full) + k - 1 if _has_full(s) else s.length


@register("containment")
class ContainmentDetector(PostingIndexDetector[Sample]):
    """Stored documents contained in the query (see the module docstring); the match score is
    the containment c(stored, query).

    Options: ``threshold`` (0.8), ``max_extra`` (None: no limit on added material; a share
    in [0, 1) bounds it), ``k`` (8 letters), ``m`` (4),
    ``posting_factor`` (2: posting keys are the hashes ≡ 0 mod m·posting_factor; with
    4, half as many, the bound on posting hits hardly filters at θ = 0.8),
    ``min_sample`` (20: shorter documents are not indexed), ``clean`` (true);
    the reverse direction (the new page contained in a stored one, ``Match.replaces``):
    ``reverse`` (true), ``min_contained`` (100 letters), ``spliced`` (0.1; 0 = no guard);
    the candidate stage: ``candidates`` ("spans", or "postings": the exact posting-hit
    bound), ``span`` (64 letters), ``span_share`` (0.2), ``span_cap`` (64 documents),
    ``span_factor`` (2: span keys start at the hashes ≡ 0 mod m·posting_factor·span_factor;
    an index keeps the factor it was started with, see :meth:`spans_on`);
    ``recheck`` (256 pairs remembered for the deferred re-check; 0 = off), ``reattribute``
    (256 dropped pages remembered for re-attribution; 0 = off), ``revive`` (64 dropped
    sources remembered for revival, with their text; 0 = off), ``min_short`` (6
    hashes: shorter texts down to it are indexed apart, under a stronger guard; 0 = off),
    ``full_under`` (128 hashes: a document with a smaller sample keeps every shingle hash and
    its pairs are measured on letters, :func:`covered`; 0 = off).

    Reverse matches are returned only when no stored document is contained in the query.
    Every read is a plain read of the index (posting sets, the ``docs`` hash), so under the
    cascade's lock (SQLite ``BEGIN IMMEDIATE``, Redis ``SET NX`` lock) the query, the removal
    of the replaced document and the insertion of the new one are one atomic step on every
    backend: the reverse direction needs no new storage command.
    """

    feature_type = Sample

    def __init__(
        self,
        storage: IndexStorage,
        *,
        threshold: float = 0.8,
        max_extra: float | None = None,
        k: int = 8,
        m: int = 4,
        posting_factor: int = 2,
        min_sample: int = 20,
        clean: bool = True,
        reverse: bool = True,
        min_contained: int = 100,
        spliced: float = 0.1,
        candidates: str = "spans",
        span: int = 64,
        span_share: float = 0.2,
        span_cap: int = 64,
        span_factor: int = 2,
        recheck: int = 256,
        reattribute: int = 256,
        revive: int = 64,
        min_short: int = 6,
        full_under: int = 128,
        **params: Any,
    ):
        super().__init__(storage, **params)
        if not 0 < threshold <= 1 or (max_extra is not None and not 0 <= max_extra < 1):
            raise ConfigError(
                "containment threshold must be in (0, 1], max_extra in [0, 1) or null (no limit)"
            )
        if k < 2 or m < 1 or posting_factor < 1 or min_sample < 1:
            raise ConfigError("containment k ≥ 2, m ≥ 1, posting_factor ≥ 1, min_sample ≥ 1")
        if min_contained < 0 or not 0 <= spliced <= 1:
            raise ConfigError("containment min_contained ≥ 0 (letters), spliced in [0, 1]")
        if candidates not in ("spans", "postings") or span < 1 or not 0 <= span_share <= 1:
            raise ConfigError(
                'containment candidates is "spans" or "postings", span ≥ 1, span_share in [0, 1]'
            )
        if span_cap < 1 or span_factor < 1:
            raise ConfigError("containment span_cap ≥ 1 (documents), span_factor ≥ 1")
        self.span_factor = int(span_factor)
        if recheck < 0 or reattribute < 0 or revive < 0:
            raise ConfigError("containment recheck ≥ 0 (pairs remembered; 0: off), reattribute "
                              "≥ 0 (dropped pages remembered; 0: off), revive ≥ 0 (dropped "
                              "sources remembered; 0: off)")  # fmt: skip
        if min_short < 0:
            raise ConfigError("containment min_short ≥ 0 (hashes; 0: short documents off)")
        if full_under < 0:
            raise ConfigError("containment full_under ≥ 0 (hashes; 0: samples only)")
        #: a stored document whose sample has fewer hashes keeps every shingle hash too, and
        #: its pairs are measured on them (0: samples only)
        self.full_under = int(full_under)
        #: documents of ``min_short`` to ``min_sample`` hashes are indexed apart (0: not at all)
        self.min_short = int(min_short)
        #: the most reverse pairs the ``spliced`` guard alone refused that the index remembers
        self.recheck = int(recheck)
        #: the most dropped pages remembered for re-attribution (:meth:`reattributions`)
        self.reattribute = int(reattribute)
        #: the most dropped sources remembered for revival (:meth:`revivals`)
        self.revive = int(revive)
        #: the last query's pairs the guard alone refused: (its features, [(stored id, the
        #: stored document's posting-sampled hashes beyond the query)])
        self._refused: tuple[Sample, list[tuple[str | None, str | None, list[int]]]] | None = None
        self.candidate_mode, self.span = candidates, int(span)
        self.span_share, self.span_cap = float(span_share), int(span_cap)
        #: whether this index finds candidates by span keys (None: not read yet)
        self._spans: bool | None = None if candidates == "spans" else False
        self.reverse, self.min_contained = bool(reverse), int(min_contained)
        self.spliced = float(spliced)
        self.threshold = float(threshold)
        self.max_extra = None if max_extra is None else float(max_extra)
        self.k, self.m, self.posting_m = int(k), int(m), int(m) * int(posting_factor)
        self.min_sample, self.clean = int(min_sample), bool(clean)
        self._last: tuple[str, str, Sample] | None = None
        self._post_memo: tuple[Sample, list[int]] | None = None
        #: (the ``rv`` entries' stamp, the hashes they wait for): :meth:`_waited_for`
        self._waited: tuple[tuple[bytes | None, int], set[int]] | None = None
        #: (the ``dropped`` entries' stamp, each posting-sampled hash of their pages → the
        #: pages holding it, per page: (its sequence number, its hashes)):
        #: :meth:`_dropped_hashes`
        self._dropped_copy: tuple[tuple[bytes | None, int], dict[int, set[str]],
                                  dict[str, tuple[bytes, frozenset[int]]]] | None = None  # fmt: skip
        #: the prefixes of the posting sets named by a hash (:func:`~dedup.storage.hex_keys`)
        self._kp, self._ks, self._ksp = self.key("p", ""), self.key("s", ""), self.key("sp", "")
        self._kq, self._kdp = self.key("q", ""), self.key("dp", "")
        self._kw, self._krw = self.key("w", ""), self.key("rw", "")
        #: (entries read, the last one, the hashes they hold): :meth:`_small_hashes`
        self._small_copy: tuple[int, bytes, set[int]] | None = None
        #: (A, B, :meth:`_edit_score`'s answer): the last pair asked (asked again by the guard)
        self._edit_memo: tuple[Sample, Sample, tuple[float, int, int]] | None = None
        #: the query's candidates that only the small documents' posting sets found
        self._guarded: tuple[Sample | None, set[str]] = (None, set())
        #: a set of the posting hits each stored document needs, rounded down (never
        #: shrunk on removal, so its minimum is a floor for every stored document)
        self._need_key = self.key("need", self.threshold)
        self._need_checked = False

    def features(self, doc: Doc) -> Sample:
        text, title = doc.text or "", doc.title or ""
        last = self._last  # the cascade queries, then adds, the same document
        if last is not None and last[0] is text and last[1] == title:
            return last[2]
        body = cleaned(text, title) if self.clean else text
        low = body.lower()
        # the compiled feature pass (dedup/_features.pyx): the same values as letter_codes,
        # shingle_hashes, span_keys and the MOD-m sample here
        letters = _fx.letter_codes(low)
        # the length in letters of the text as written (lower-casing keeps the count unless
        # it changed the text's length: "İ" → "i̇")
        length = len(letters) if len(low) == len(body) else len(_fx.letter_codes(body))
        h = _fx.shingle_hashes(letters, self.k, *_crc_tables(self.k))
        spans = []
        if self.candidate_mode == "spans" and self.spans_on():
            pm = self.posting_m
            spans = _fx.span_keys(h, pm, self.span, pm * self.span_factor)
        sample = _fx.multiples(h, self.m)
        full = h
        if self.clean and len(sample) < self.full_under and (cut := inline_cut(body)):
            # a small document's letters without a reprint note or source and editor
            # fields glued to a paragraph (a table cell): the letters decide a pair only
            # under the guard, so the samples, which decide alone, keep them
            letters = _fx.letter_codes(cut.lower())
            full = _fx.shingle_hashes(letters, self.k, *_crc_tables(self.k))
        feats = Sample(sample, length, tuple(spans), full, letters)
        self._last = (text, title, feats)
        return feats

    def spans_on(self) -> bool:
        """Whether the index finds candidates by span keys: with ``candidates="spans"``, on an
        index that this version started (``containment:spans`` is set, or no document is
        stored yet); an index of an earlier version, whose documents have no span keys,
        keeps the posting-hit bound (read once per detector).

        The mark holds the index's ``span_factor`` ("1" in indexes written before the option:
        every posting-sampled shingle starts a key), and this detector adopts it, whatever
        its own option says: a query's keys must be sampled as the stored ones were."""
        if self._spans is None:
            mark = self.storage.get(self.key("spans"))
            if mark is not None:
                self.span_factor = int(mark)
            self._spans = bool(mark is not None or not self.storage.hlen(self.key("docs")))
        return self._spans

    def _posting(self, feats: Sample) -> list[int]:
        """The posting-sampled hashes of ``feats`` (≡ 0 mod ``m·posting_factor``, in the
        sample's order), computed once for the document the cascade is checking (query, add
        and the after-steps ask for them under several prefixes)."""
        memo = self._post_memo
        if memo is not None and memo[0] is feats:
            return memo[1]
        post = self._posting_sampled(feats.hashes)
        self._post_memo = (feats, post)
        return post

    def _posting_sampled(self, hashes: Iterable[int]) -> list[int]:
        """The hashes of ``hashes`` ≡ 0 (mod ``m·posting_factor``), in their order
        (``[h for h in hashes if h % pm == 0]``, compiled: ``multiples_of``)."""
        return _fx.multiples_of(hashes, self.posting_m)

    def _posting_hashes(self, feats: Sample) -> list[int]:
        """The posting-sampled hashes of a document long enough to be indexed
        (``min_sample`` hashes), else none: the hashes of its posting sets
        (``containment:p:<hash>``)."""
        if len(feats.hashes) < self.min_sample:
            return []
        return self._posting(feats)

    def _span_hashes(self, feats: Sample) -> tuple[int, ...]:
        """The span keys of ``feats`` (its sets ``containment:s:<key>``; none for a document
        too short to be indexed)."""
        return feats.spans if len(feats.hashes) >= self.min_sample else ()

    def posting_hashes(self, feats: Sample) -> list[tuple[str, list[int]]]:
        """The hash posting sets (``containment:p:<hash>``), and on an index that has span
        keys the span-key sets (``containment:s:<key>``) and, for a small document
        (``full_under``), the small documents' posting sets (``containment:sp:<hash>``,
        :meth:`_small_stored_candidates`)."""
        post = self._posting_hashes(feats)
        if not post:
            return []
        groups = [(self._kp, post)]
        if self.spans_on():
            groups.append((self._ks, list(feats.spans)))
            if len(feats.hashes) < self.full_under:
                groups.append((self._ksp, post))
        return groups

    def posting_keys(self, feats: Sample) -> list[str]:
        """The keys of :meth:`posting_hashes`' sets."""
        return [k for prefix, hashes in self.posting_hashes(feats)
                for k in hex_keys(prefix, hashes)]  # fmt: skip

    def indexed(self, feats: Sample) -> bool:
        return bool(self._posting_hashes(feats))

    def candidates(self, feats: Sample) -> set[str]:
        """On an index with span keys (:meth:`spans_on`): the stored documents that share at
        least ``span_share`` of their span keys with the query (forward: the stored one
        contained in the query) or of the query's (reverse), counted over the span-key sets
        of at most ``span_cap`` documents, and whose length the query can reach (forward) or
        that are longer than the query (reverse). On an index without span keys:
        :meth:`bound_candidates`."""
        if self._short(feats):
            # measured on letters too (its whole hashes known): the loose bound, as below
            loose = 0.5 if _has_full(feats) else None
            return self._short_query_candidates(feats, loose) | self._long_candidates(feats)
        if self._small(feats) and self.spans_on():
            # a small text's few span keys are broken by a few edits (a 126-letter source
            # has 3): its reverse candidates are also read from its posting sets, loosely
            found = self._short_query_candidates(feats, 0.5) | self._long_candidates(feats)
        else:
            found = self._long_candidates(feats)
        small = self._small_stored_candidates(feats)
        # the small stored documents only their posting sets found: paired under the guard
        self._guarded = (feats, small - found)
        return found | small

    def _small(self, feats: Sample) -> bool:
        """Whether ``feats`` is an indexed document measured on letters (``full_under``)."""
        return self.min_sample <= len(feats.hashes) < self.full_under

    def _long_candidates(self, feats: Sample) -> set[str]:
        if not self.spans_on():
            return self.bound_candidates(feats)
        spans = self._span_hashes(feats)
        if not spans or not self._posting_hashes(feats):
            return set()
        hits = self.storage.smembers_count_hashed(self._ks, spans, max_len=self.span_cap)
        if not hits:
            return set()
        share, n_q = self.span_share, feats.length
        rev_need = share * len(spans) - 1e-9 if self.reverse and n_q >= self.min_contained else None

        def keep(h: int, n_spans: int, length: int) -> bool:
            return (h >= share * n_spans - 1e-9 and n_q + 1e-9 >= self.threshold * length) or (
                rev_need is not None and h >= rev_need and n_q < length
            )

        return self._sized(hits, list(hits), "sn", keep)

    def _small_stored_candidates(self, feats: Sample) -> set[str]:
        """The forward candidates among the small stored documents (:attr:`full_under`) on
        an index with span keys: those holding at least half of their posting-sampled hashes
        in the query's (``containment:sp:<hash>``, small documents only), whose length the
        query can reach. A small document's few span keys are broken by a few edits of its
        copy (test web a78: a 118-letter source's 2 keys both broken by two inserted letters
        in its commentary page), its posting-sampled shingles only one by one; every
        candidate is verified on letters (:meth:`_contained`), and one that no other stage
        found pairs only under the guard (:meth:`query_features`): an original met after its
        own edited half is found here as well (test webs a17, a48 reversed)."""
        if not (self.full_under and self.spans_on()) or not self.storage.hlen(self.key("sp")):
            return set()
        held = self._small_hashes()
        if held is None:  # (an index of an earlier version: every set read)
            post = self._posting_hashes(feats)
        elif len(feats.hashes) >= self.min_sample:  # only the sets that may hold a document
            post = [h for h in self._posting(feats) if h in held]
        else:
            post = []
        hits = self.storage.smembers_count_hashed(self._ksp, post)
        if not hits:
            return set()
        n_q = feats.length
        return self._sized(hits, list(hits), "n", lambda h, size, posting, length: (
            h >= 0.5 * posting - 1e-9 and n_q + 1e-9 >= self.threshold * length))

    def _small_hashes(self) -> set[int] | None:
        """Every posting-sampled hash that a small document was indexed under (the members of
        the ``containment:sp:<hash>`` sets), or more: this process's copy of the log
        ``containment:spl`` (one entry per small document stored, its hashes as uint32),
        extended by the entries appended since it was read (one read a page: the log from the
        last entry this process read, which must be unchanged, else the copy is read again).
        A document removed leaves its entry (the copy stays a superset), so a query's small
        documents' posting sets outside it are empty and need not be read (one dictionary
        miss each in the memory backend, ~116 a page). None when the log does not cover every
        small document: an index of an earlier version (its first entry is not ``+``)."""
        key = self.key("spl")
        copy = self._small_copy
        if copy is not None:
            n, last, held = copy
            tail = self.storage.lrange(key, n - 1, -1)
            if tail and tail[0] == last:
                if len(tail) > 1:
                    for raw in tail[1:]:
                        held.update(np.frombuffer(raw, dtype="<u4").tolist())
                    self._small_copy = (n + len(tail) - 1, tail[-1], held)
                return held
        log = self.storage.lrange(key, 0, -1)
        if not log or log[0] != b"+":
            self._small_copy = None
            return None
        held = set()
        for raw in log[1:]:
            held.update(np.frombuffer(raw, dtype="<u4").tolist())
        self._small_copy = (len(log), log[-1], held)
        return held

    def _short_query_candidates(self, feats: Sample, share: float | None = None) -> set[str]:
        """A short query's reverse candidates: the indexed documents holding at least
        ``threshold`` of its sampled hashes (its hashes' posting sets, read whole: a short
        document has few) and longer than it; with ``share``, those holding at least that
        share of its posting-sampled hashes (a small document, measured on letters: one
        edited letter breaks ``k`` shingles, so the samples' bound does not hold; every
        candidate is verified). A short query whose letters are known also takes the small
        documents holding any one of them: with edits forgiven (:meth:`_edit_score`), the
        pair may hold at θ = 0.8 a fifth of the short text's letters edited, ``k``
        shingles each, so no share of its few hashes is a bound (test web b96, reversed:
        a 49-letter source whose page kept 1 of its 4); their letters are at hand."""
        if not self.reverse or (share is not None and feats.length < self.min_contained
                                and not self._short(feats)):  # fmt: skip
            return set()
        hits = self.storage.smembers_count_hashed(self._kp, self._posting(feats))
        posting = len(self._posting(feats))
        need = (posting - (1.0 - self.threshold) * len(feats.hashes) if share is None
                else share * posting) - 1e-9  # fmt: skip
        n_q = feats.length
        if share is not None and self._short(feats) and feats.letters is not None:
            return self._sized(hits, list(hits), "n", lambda h, size, post, length: n_q < length
                               and (h >= need or size < self.full_under))  # fmt: skip
        return self._sized(hits, [d for d, h in hits.items() if h >= need], "n",
                           lambda h, size, post, length: n_q < length)

    def _sized(self, hits: Mapping[str, int], ids: list[str], sizes: str,
               keep: Callable[..., bool]) -> set[str]:  # fmt: skip
        """The documents of ``ids`` that ``keep(hits, *their sizes)`` takes, their sizes read
        from the hash ``sizes`` (``n``: sample, posting keys, letters; ``sn``: span keys,
        letters); a document without sizes (an index of an earlier version) is always
        taken."""
        out = set()
        for doc_id, raw in zip(ids, self.storage.hmget(self.key(sizes), ids), strict=True):
            if raw is None or keep(hits[doc_id], *map(int, raw.split(b","))):
                out.add(doc_id)
        return out

    def bound_candidates(self, feats: Sample) -> set[str]:
        """The stored documents whose posting hits can still make c(stored, query) ≥
        ``threshold`` and whose length the query can reach, and, for the reverse direction,
        those whose hits can still make c(query, stored) ≥ ``threshold`` (at least
        |P(Q)| − (1 − θ)·|S(Q)|) and that are longer than the query (see the module
        docstring); a document indexed without its sizes (an index of an earlier version) is
        always a candidate."""
        post = self._posting_hashes(feats)
        if not post:
            return set()
        hits = self.storage.smembers_count_hashed(self._kp, post)
        if not hits:
            return set()
        slack, n_q = 1.0 - self.threshold, feats.length
        # the least hits any stored document needs (0 while entries without sizes exist)
        floor = min(map(int, self.storage.smembers(self._need_key)), default=0)
        rev_need = None
        if (self.reverse and len(feats.hashes) >= self.min_sample
                and n_q >= self.min_contained):  # fmt: skip
            rev_need = len(post) - slack * len(feats.hashes) - 1e-9
            floor = min(floor, math.floor(rev_need))
        ids = [d for d, h in hits.items() if h >= floor] if floor > 0 else list(hits)

        def keep(h: int, size: int, posting: int, length: int) -> bool:
            forward = h + slack * size + 1e-9 >= posting
            return (forward and n_q + 1e-9 >= self.threshold * length) or (
                rev_need is not None and h >= rev_need and n_q < length
            )

        return self._sized(hits, ids, "n", keep)

    def add_features(self, doc_id: str, feats: Sample) -> None:
        spans = self.spans_on()  # read before this document is stored
        with self.storage.batch():
            if not self._need_checked:  # an index of an earlier version: no floor
                if self.storage.hlen(self.key("docs")) > self.storage.hlen(self.key("n")):
                    self.storage.sadd(self._need_key, "0")
                self._need_checked = True
            if spans and self.min_sample <= len(feats.hashes) < self.full_under:
                # in the small documents' posting sets (posting_keys): logged for the
                # queries' copies (:meth:`_small_hashes`); a new log covers every small
                # document only when none is stored yet (else "-": not used)
                log = self.key("spl")
                if not self.storage.llen(log):
                    self.storage.rpush(log, "-" if self.storage.hlen(self.key("sp")) else "+")
                self.storage.rpush(log, np.asarray(self._posting(feats), "<u4").tobytes())
            super().add_features(doc_id, feats)
            if self.indexed(feats):
                if spans:
                    # this index has span keys, started at this factor
                    self.storage.set(self.key("spans"), str(self.span_factor))
                    self.storage.hset(self.key("sn"), doc_id,
                                      f"{len(feats.spans)},{feats.length}")  # fmt: skip
                size, posting = len(feats.hashes), len(self._posting_hashes(feats))
                self.storage.hset(self.key("n"), doc_id, f"{size},{posting},{feats.length}")
                need = math.floor(posting - (1.0 - self.threshold) * size - 1e-9)
                self.storage.sadd(self._need_key, str(max(0, need)))
            elif self._stored_short_doc(feats):
                self.storage.hset(self.key("short"), doc_id, feats.to_json())
                self.storage.sadd_hashed(self._kq, feats.hashes, doc_id)
            else:
                return
            if len(feats.hashes) < self.full_under and feats.full is not None:
                packed = feats.full.astype("<u4").tobytes()
                self.storage.hset(self.key("f"), doc_id, base64.b64encode(packed))
                if feats.letters is not None:  # (a short document's edits: _edit_score)
                    self.storage.hset(self.key("l"), doc_id, _pack_letters(feats.letters))
                if spans and self.indexed(feats):
                    # in the small documents' posting sets (posting_keys): listed
                    self.storage.hset(self.key("sp"), doc_id, "1")

    def remove(self, doc_id: str) -> None:
        with self.storage.batch():
            super().remove(doc_id)
            self.storage.hdel(self.key("sp"), doc_id)
            self.storage.hdel(self.key("n"), doc_id)
            self.storage.hdel(self.key("sn"), doc_id)
            self.storage.hdel(self.key("f"), doc_id)
            self.storage.hdel(self.key("l"), doc_id)
            raw = self.storage.hget(self.key("short"), doc_id)
            if raw is not None:
                feats = Sample.from_json(raw)
                self.storage.srem_hashed(self._kq, feats.hashes, doc_id)
                self.storage.hdel(self.key("short"), doc_id)

    def score(self, query: Sample, stored: Sample) -> float:
        common = len(query.hashes & stored.hashes)
        if not common or len(stored.hashes) < self.min_sample:
            return 0.0
        c = self._either(stored, query, common)
        # a copy is at least ``threshold`` of the stored text long (on the lengths, which
        # repeated passages do not inflate)
        n_q, n_s = query.length, stored.length
        if c < self.threshold or n_q < self.threshold * n_s:
            return 0.0
        if self.max_extra is not None:  # the optional bound on added material
            extra = 1.0 - common / len(query.hashes)
            if extra > self.max_extra or n_q * (1.0 - self.max_extra) > n_s:
                return 0.0
        return c

    def contained_score(self, query: Sample, stored: Sample) -> float:
        """The reverse direction: c(query, stored) = |Q ∩ S| / |Q| when the query is not
        trivially short (``min_contained`` letters, ``min_sample`` hashes), shorter than the
        stored document and at least ``threshold`` contained in it; else 0.0."""
        if not self.reverse or query.length >= stored.length or not (
                self._short(query) or (len(query.hashes) >= self.min_sample
                                       and query.length >= self.min_contained)):  # fmt: skip
            return 0.0
        c = self._either(query, stored)
        return c if c >= self.threshold else 0.0

    def _either(self, a: Sample, b: Sample, common: int | None = None) -> float:
        """Broder's estimate on the samples when it reaches ``threshold``, else c(A, B) on the
        letters (:meth:`_contained`) when that does: a pair the samples accept stays
        accepted, and the letters are computed only for the pairs the samples refuse."""
        if common is None:
            common = len(a.hashes & b.hashes)
        est = common / len(a.hashes) if a.hashes else 0.0
        if est >= self.threshold:
            return est
        c = self._contained(a, b, common)
        if c >= self.threshold:
            return c
        edits = self._edit_score(a, b)
        return edits[0] if edits is not None and edits[0] >= self.threshold else est

    def _edit_score(self, a: Sample, b: Sample) -> tuple[float, int, int] | None:
        """For a short ``a`` (:meth:`_short`) with both texts' letters known: c(A, B) with
        edits forgiven letter by letter, 1 − d / |A| where d is the least edit distance
        between A's letters and a substring of B's (:func:`edit_contained`), and that
        substring's span in B's letters; else None.

        The letters' measure (:func:`covered`) forgives an edit where A's text runs on for
        ``k`` letters around it, but not a run shorter than ``k`` between two edits or an
        edit and the text's end: three edits in the first 17 letters of a 49-letter source
        leave it 0.65 of its letters (test web b96), and a source under ~100 letters has
        too few for that to be rare. Searched around the letters where B holds one of A's
        shingles (an alignment sharing no ``k``-letter run with A is no candidate anyway):
        from ``|A| + (1 − threshold)·|A|`` letters before the first such shingle of B to as
        many after the last. A text of more than :data:`EDIT_ALPHABET` distinct letters
        (edlib's alphabet; a short text has seldom 255 letters at all) is not measured so."""
        if not (self._short(a) and a.letters is not None and b.letters is not None
                and _has_full(a) and _has_full(b)):  # fmt: skip
            return None
        if len(a.letters) > EDIT_ALPHABET and len(np.unique(a.letters)) > EDIT_ALPHABET:
            return None
        memo = self._edit_memo
        if memo is not None and memo[0] is a and memo[1] is b:
            return memo[2]
        at = np.flatnonzero(np.isin(b.full, a.full))
        out = (0.0, 0, 0)
        n = len(a.letters)
        reach = n + math.floor((1.0 - self.threshold) * n)
        # one window per group of held shingles closer than two reaches (a passage B
        # repeats far apart is aligned twice, not across everything between)
        cuts = np.flatnonzero(np.diff(at) > 2 * reach) + 1
        for group in np.split(at, cuts) if len(at) else ():
            lo = max(0, int(group[0]) - reach)
            hi = min(len(b.letters), int(group[-1]) + self.k + reach)
            d, start, end = edit_contained(a.letters, b.letters[lo:hi])
            if 1.0 - d / n > out[0]:
                out = (1.0 - d / n, lo + start, lo + end)
        self._edit_memo = (a, b, out)
        return out

    def _letters_only(self, a: Sample, b: Sample) -> bool:
        """Whether only the letters make c(A, B) reach ``threshold`` (not the samples)."""
        return bool(a.hashes) and len(a.hashes & b.hashes) < self.threshold * len(a.hashes)

    def _contained(self, a: Sample, b: Sample, common: int | None = None) -> float:
        """c(A, B): the share of A's letters B holds (:func:`covered`) when both texts'
        hashes are known (``a`` or ``b`` a small stored document: :attr:`full_under`), else
        Broder's estimate on the MOD-m samples (``common``: the samples' intersection size,
        when counted already)."""
        if a.full is not None and b.full is not None and len(a.full):
            return covered(a.full, b.full, self.k)
        if common is None:
            common = len(a.hashes & b.hashes)
        return common / len(a.hashes) if a.hashes else 0.0

    def stored_features(self, ids: list[str]) -> list[tuple[str, Sample]]:
        """The stored samples of ``ids``, a small document's with every shingle hash."""
        return self._with_full(super().stored_features(ids))

    def _stored_short(self, ids: list[str]) -> list[tuple[str, Sample]]:
        """The stored samples of the short documents among ``ids`` (``containment:short``),
        a small one's with every shingle hash."""
        raws = self.storage.hmget(self.key("short"), ids) if ids else []
        return self._with_full([(d, Sample.from_json(raw))
                                for d, raw in zip(ids, raws, strict=True) if raw is not None])  # fmt: skip

    def _with_full(self, got: list[tuple[str, Sample]]) -> list[tuple[str, Sample]]:
        """``got`` with every shingle hash (``containment:f``) and the letters
        (``containment:l``) of its small documents."""
        small = [d for d, s in got if len(s.hashes) < self.full_under]
        if not small:
            return got
        raws = dict(zip(small, self.storage.hmget(self.key("f"), small), strict=True))
        texts = dict(zip(small, self.storage.hmget(self.key("l"), small), strict=True))
        out = []
        for d, s in got:
            raw = raws.get(d)
            if raw is not None:
                s = _with_stored(s, raw, texts.get(d))
            out.append((d, s))
        return out

    def _beyond(self, doc_id: str, query: Sample, stored: Sample,
                among: np.ndarray | None = None) -> tuple[list[int], list[bool]]:  # fmt: skip
        """The stored document's posting-sampled hashes *not* in the query (with ``among``:
        those of the stored document's shingles ``among`` that start at a letter the query
        does not cover), and for each whether some other indexed document holds it."""
        pool = stored.hashes if among is None else set(among[among % self.m == 0].tolist())
        rest = sorted(h for h in pool - query.hashes if h % self.posting_m == 0)
        held = self.storage.sothers_hashed(self._kp, rest, doc_id)
        if not all(held) and self.min_short and self.storage.hlen(self.key("short")):
            # a short document holds material too (an article of 70 letters spliced whole)
            more = [h for h, x in zip(rest, held, strict=True) if not x]
            shorts = self.storage.sothers_hashed(self._kq, more, doc_id)
            by = dict(zip(more, shorts, strict=True))
            held = [x or by[h] for h, x in zip(rest, held, strict=True)]
        return rest, held

    def spliced_share(self, doc_id: str, query: Sample, stored: Sample) -> float:
        """The share of the stored document's posting-sampled shingles *not* in the query that
        some other indexed document holds (0.0 when it has none: no evidence of splicing)."""
        rest, held = self._beyond(doc_id, query, stored)
        return sum(held) / len(rest) if rest else 0.0

    def _reverse_matches(self, feats: Sample, stored: list[tuple[str, Sample]]) -> list[Match]:
        """Stored documents that contain the query with spliced material (``replaces``,
        score c(query, stored)): the reverse direction and its guard. The pairs the guard
        alone refused are kept for :meth:`recheck_reprints` (with the hashes of the stored
        document's material beyond the query that no other document holds yet)."""
        matches: list[Match] = []
        refused: list[tuple[str | None, str | None, list[int]]] = []
        for d, s in stored if self.reverse else ():
            if (sc := self.contained_score(feats, s)) <= 0:
                continue
            if not self.spliced:
                matches.append(Match(d, sc, self.name, replaces=True))
                continue
            ok, unheld = self._spliced_pair(feats, d, s)
            if ok:
                matches.append(Match(d, sc, self.name, replaces=True))
            elif unheld:
                refused.append((d, None, unheld))
        self._note_refused(feats, refused)
        return matches

    def _note_refused(self, feats: Sample, refused: list) -> None:
        """Keep the pairs the guard refused for the query ``feats`` until the cascade stores
        it (:meth:`recheck_reprints`), with those already noted for it: a query can be refused
        both ways (a short stored text it holds, then a stored page that holds it)."""
        if self._refused is not None and self._refused[0] is feats:
            refused = [*self._refused[1], *(r for r in refused if r not in self._refused[1])]
        self._refused = (feats, refused)

    def _spliced_pair(self, short: Sample, page_id: str | None, page: Sample
                      ) -> tuple[bool, list[int]]:  # fmt: skip
        """The guard on a pair where ``page`` holds ``short`` (c ≥ ``threshold``): whether at
        least ``spliced`` of the page's posting-sampled material beyond it is held by other
        indexed documents, and, when ``short`` is a short document (:meth:`_short`), whether
        the page's material beyond it that no other document holds is no larger than the
        part ``short`` covers (the page is a copy of what most of it is; estimated on the
        samples). Also the hashes of that unheld material (for :meth:`recheck_reprints`)."""
        letters = self._short(short) and _has_full(short) and _has_full(page)
        edits = None
        if letters:  # the page's material beyond the short text: the letters it does not cover
            mask = cover_mask(page.full, short.full, self.k)
            held_short = covered(short.full, page.full, self.k)
            if held_short < self.threshold:
                # a pair only the edits forgiven make (:meth:`_edit_score`): the page's
                # letters aligned with the short text are its, edited or not
                edits = self._edit_score(short, page)
                if edits is not None and edits[0] >= self.threshold:
                    mask[edits[1] : edits[2]] = True
                else:
                    edits = None
            rest, held = self._beyond(page_id or "", short, page,
                                      page.full[~mask[: len(page.full)]])  # fmt: skip
        else:
            rest, held = self._beyond(page_id or "", short, page)
        if not rest:
            return False, []
        share = sum(held) / len(rest)
        ok = share >= self.spliced
        if ok and self._short(short):
            if edits is not None:  # on letters, edits forgiven
                part = edits[0] * _letters_of(short, self.k)
                beyond = float(np.count_nonzero(~mask))
            elif letters:  # on letters (both texts' hashes known)
                part = held_short * _letters_of(short, self.k)
                beyond = (1.0 - covered(page.full, short.full, self.k)) * _letters_of(page, self.k)
            else:  # its part of the page: c(short, page) of its sample
                part = self._contained(short, page) * len(short.hashes)
                beyond = len(page.hashes - short.hashes)
            ok = (1.0 - share) * beyond <= part + 1e-9
        return ok, [h for h, x in zip(rest, held, strict=True) if not x]

    def query_features(self, feats: Sample) -> list[Match]:
        """Stored documents contained in the query (score c(stored, query)), the one that
        covers the largest share of the query first (|S ∩ Q| / |Q|: a commentary page holds
        its source and, among the sentences it spliced in, maybe all of a short article;
        its source covers the most of it), then by score; when there are none, stored
        documents that contain the query with spliced material (``replaces``, score
        c(query, stored)), best first. Ties by doc id."""
        stored = self.stored_features(sorted(self.candidates(feats)))
        # a pair only the letters accept (an edited copy of a small document, or an
        # original met after its edited first half) needs the reverse direction's evidence:
        # the page's material beyond the stored document held by other documents
        # and so does a small stored document only its posting sets found (its span keys
        # broken by edits: a copy's, or those of an original met after its edited half);
        # a pair the guard refuses for want of evidence is kept for the deferred re-check
        # (:meth:`recheck_reprints`: once documents holding that material are stored, the
        # page leaves as the small document's duplicate; test web b70, reversed)
        guarded = self._guarded[1] if self._guarded[0] is feats else set()
        ranked, refused = [], []
        for d, s in stored:
            if (sc := self.score(feats, s)) <= 0:
                continue
            if d in guarded or self._letters_only(s, feats):
                ok, unheld = self._spliced_pair(s, None, feats)
                if not ok:
                    if unheld:  # for want of evidence: kept for the deferred re-check
                        refused.append((None, d, unheld))
                    continue
            ranked.append((-len(feats.hashes & s.hashes), -sc, d))
        self._note_refused(feats, refused)
        # and the remembered dropped pages standing in for their originals: on their own
        # for an original containment never indexed, else only in place of a stored match
        # (the page is a duplicate anyway: the stand-in changes which page its record names)
        ranked = sorted([*ranked, *(r for r, alone in self._stand_ins(feats)
                                    if alone or ranked)])  # fmt: skip
        matches = [Match(d, -neg, self.name) for _, neg, d in ranked]
        if not matches:
            matches = self._short_matches(feats)
        if not matches:
            matches = self._reverse_matches(feats, stored)
            matches.sort(key=lambda m: (-m.score, m.doc_id))
        return matches

    def _short(self, feats: Sample) -> bool:
        """Whether ``feats`` is a short document's (``min_short`` hashes or more, but under
        ``min_sample`` hashes or ``min_contained`` letters), matched only with the guard."""
        n = len(feats.hashes)
        return bool(self.min_short and self.spliced) and self.min_short <= n and (
            n < self.min_sample or feats.length < self.min_contained)

    def _stored_short_doc(self, feats: Sample) -> bool:
        """Whether :meth:`add_features` stores ``feats`` among the short documents."""
        return self._short(feats) and len(feats.hashes) < self.min_sample

    def _short_matches(self, feats: Sample) -> list[Match]:
        """Short stored documents contained in the query (score c(stored, query)) whose
        material beyond them in the query is held by other indexed documents (share ≥
        ``spliced``, the reverse direction's guard seen from the page): the query is the
        short document plus material spliced from elsewhere, not an original met after its
        short first half. Best share of the query first, as the forward rule ranks."""
        if not (self.min_short and self.spliced) or not self.storage.hlen(self.key("short")):
            return []
        hits = self.storage.smembers_count_hashed(self._kq, feats.hashes)
        ids = sorted(d for d, h in hits.items())
        out, refused = [], []
        for d, s in self._stored_short(ids):
            c = self._either(s, feats, hits[d])
            if c < self.threshold or feats.length <= s.length:
                continue
            ok, unheld = self._spliced_pair(s, None, feats)
            if ok:
                out.append((-hits[d], -c, d))
            elif unheld:
                refused.append((None, d, unheld))
        self._note_refused(feats, refused)
        return [Match(d, -neg, self.name) for _, neg, d in sorted(out)]

    def recheck_reprints(self, doc_id: str, doc: Doc) -> list[tuple[Match, str]]:
        """After ``doc`` was stored as ``doc_id`` (by the cascade): the stored reprints with
        extras that the ``spliced`` guard refused before and accepts now, each with the stored
        original it holds (``Match.replaces``, score c(original, reprint)), best first; the
        cascade retires them. Then the pairs the guard alone refused for ``doc`` itself are
        remembered.

        A source met before the articles its reprint spliced in (test web b20, URL order:
        share 0.0 when it came) is stored beside the reprint; the pair is remembered
        (``containment:pending``, at most ``recheck`` pairs, the oldest forgotten first) with
        the reprint's hashes beyond the source that no other document held
        (``containment:w:<hash>``: the pairs waiting for it). A later document holding one
        of them makes the pair be checked again, with the guard as the reverse query
        applies it. The memory is in the index's storage, so every backend keeps it and
        another process reattached to the index sees it."""
        if not (self.recheck and self.reverse and self.spliced):
            return []
        feats = self.features(doc)
        pend = self.key("pending")
        out: dict[str, tuple[Match, str]] = {}
        drop: dict[str, bytes] = {}
        narrowed: dict[str, tuple[bytes, list[int]]] = {}
        fields: list[str] = []
        if self.indexed(feats) and self.storage.hlen(pend):
            fields = sorted(self.storage.smembers_count_hashed(self._kw, self._posting(feats)))
        elif self._stored_short_doc(feats) and self.storage.hlen(pend):
            # a short document holds material too (:meth:`_beyond`)
            fields = sorted(self.storage.smembers_count_hashed(self._kw, self._posting(feats)))
        for field, raw in zip(fields, self.storage.hmget(pend, fields) if fields else [],
                              strict=True):  # fmt: skip
            if raw is None:  # forgotten (its waiting sets are cleaned with it)
                continue
            c, s = json.loads(field)
            got = self._stored_any([c, s])
            if doc_id in (c, s) or len(got) < 2 or c in out:
                drop[field] = raw  # one of the two left the index or changed
                continue
            sc = self._either(got[s], got[c])
            if sc < self.threshold or got[s].length >= got[c].length:
                drop[field] = raw
                continue
            ok, unheld = self._spliced_pair(got[s], c, got[c])
            if ok:
                out[c] = (Match(c, sc, self.name, replaces=True), s)
                drop[field] = raw
            elif unheld:  # wait only for material still held by no other document
                narrowed[field] = (raw, unheld)
            else:
                drop[field] = raw
        refused = self._refused
        new: list[tuple[str, str, list[int]]] = []
        if refused is not None and refused[0] is feats and (
                self.indexed(feats) or self._short(feats)):  # fmt: skip
            new = [(c or doc_id, s or doc_id, unheld) for c, s, unheld in refused[1]
                   if c not in out and unheld]  # fmt: skip
        self._refused = None
        if new or drop or narrowed:
            self._remember(new, drop, narrowed)
        return sorted(out.values(), key=lambda x: (-x[0].score, x[0].doc_id))

    def _remember(self, new: list[tuple[str, str, list[int]]], drop: dict[str, bytes],
                  narrowed: dict[str, tuple[bytes, list[int]]]) -> None:  # fmt: skip
        """Forget the pairs ``drop`` (field → stored value), remember ``new`` (reprint,
        original, the reprint's hashes no other document held), let the pairs ``narrowed``
        wait for the hashes still unheld only, and forget the oldest pairs past
        ``recheck``."""
        pend = self.key("pending")
        with self.storage.batch():
            for field, raw in drop.items():
                self._forget(field, raw)
            for field, (raw, unheld) in narrowed.items():
                seq, _, packed = raw.partition(b":")
                keep = set(unheld)
                gone = [h for h in np.frombuffer(base64.b64decode(packed), dtype="<u4").tolist()
                        if h not in keep]  # fmt: skip
                self.storage.srem_hashed(self._kw, gone, field)
                packed = np.array(sorted(keep), dtype="<u4").tobytes()
                self.storage.hset(pend, field, seq + b":" + base64.b64encode(packed))
            if new:
                seq = self.storage.incr(self.key("pending", "seq"))
                for c, s, unheld in new:
                    field = json.dumps([c, s], ensure_ascii=False)
                    packed = np.array(sorted(unheld), dtype="<u4").tobytes()
                    self.storage.hset(pend, field, f"{seq}:{base64.b64encode(packed).decode()}")
                    self.storage.sadd_hashed(self._kw, unheld, field)
                if self.storage.hlen(pend) > self.recheck:
                    entries = self.storage.hgetall(pend)
                    old = sorted(entries, key=lambda f: (int(entries[f].split(b":", 1)[0]), f))
                    for field in old[: len(entries) - self.recheck]:
                        self._forget(field, entries[field])

    def _stored_any(self, ids: list[str]) -> dict[str, Sample]:
        """The stored features of ``ids``, indexed documents' or short documents'."""
        got = dict(self.stored_features(ids))
        rest = [d for d in ids if d not in got]
        got.update(self._stored_short(rest))
        return got

    def _forget(self, field: str, raw: bytes) -> None:
        """Drop one remembered pair and its waiting sets."""
        packed = raw.split(b":", 1)[1]
        unheld = np.frombuffer(base64.b64decode(packed), dtype="<u4").tolist()
        self.storage.srem_hashed(self._kw, unheld, field)
        self.storage.hdel(self.key("pending"), field)

    def reprints_of(self, doc: Doc) -> list[Match]:
        """The reverse direction alone, whatever else ``doc`` matches: stored documents that
        hold ``doc`` plus material spliced from other indexed documents (``replaces``), best
        first. The cascade asks after another method's match (see
        :meth:`dedup.cascade.Cascade.check_and_add`)."""
        feats = self.features(doc)
        matches = self._reverse_matches(feats, self.stored_features(sorted(self.candidates(feats))))
        matches.sort(key=lambda m: (-m.score, m.doc_id))
        return matches

    # -- re-attribution of dropped pages ------------------------------------------------------

    def dropped(self, doc_id: str, original: str, doc: Doc | None = None,
                original_doc: Doc | None = None) -> None:  # fmt: skip
        """Remember a page the cascade records as a duplicate of ``original`` when ``original``
        holds less than ``threshold`` of the page's sample (a commentary page matched to an
        article it spliced, or replaced by one): a later document that covers more of it is
        its better original (:meth:`reattributions`). At most ``reattribute`` pages (the
        oldest forgotten first, a quarter at a time), in the index's storage:
        ``containment:dropped`` (a sequence number, the original's share of the page's
        sample |S(O) ∩ S(P)| and the original), ``containment:dd`` / ``containment:df`` (the
        page's sample, and every shingle hash of a small page) and the posting sets
        ``containment:dp:<hash>`` (its posting-sampled hashes) by which a later document
        finds it. A page dropped again is remembered with its new original.

        The remembered pages also *stand in* for their originals: a later page that contains
        one is its duplicate (:meth:`_stand_ins`). So a page is also remembered, short
        (``min_short`` hashes) or not, when its original is unknown to containment (a copy
        too short to index, matched by SpotSigs or the exact hash), with the cover of its
        whole sample (re-attribution then never moves it).

        A page dropped as it came (``doc``) whose original holds it with material the
        ``spliced`` guard alone refused is also remembered for revival (:meth:`revivals`)."""
        if doc is not None:
            self._remember_revival(doc_id, original, doc)
        if not (self.reattribute and self.reverse):
            return
        page = self.features(doc) if doc is not None else self._stored_any([doc_id]).get(doc_id)
        if page is None or not (len(page.hashes) >= self.min_sample or self._short(page)):
            self._forget_dropped([doc_id])  # (a page remembered before: no longer known)
            return
        page_hashes = page.hashes  # (features() memoises one document: read before the next)
        full, letters = page.full, page.letters
        orig = (self.features(original_doc) if original_doc is not None
                else self._stored_any([original]).get(original))  # fmt: skip
        if orig is None:  # a remembered dropped page (a stand-in's match: :meth:`_stand_ins`)
            orig = self._dropped_samples([original]).get(original)
        if orig is None:
            # the original unknown to containment (shorter than it indexes: test web b43,
            # reversed, a 49-letter copy): taken to hold all of the page, so no later document
            # is its better original, but the page stands in for it (:meth:`_stand_ins`)
            cover = len(page_hashes)
        elif (cover := len(page_hashes & orig.hashes)) >= self.threshold * len(page_hashes):
            # it holds most of the page: no other document can be a clearly better original,
            # and a page containing this one contains most of it
            self._forget_dropped([doc_id])
            return
        old = self.storage.hget(self.key("dropped"), doc_id)
        with self.storage.batch():
            if old is not None:
                self._forget_dropped([doc_id])
            seq = self.storage.incr(self.key("dropped", "seq"))
            self.storage.hset(self.key("dropped"), doc_id, _dropped_entry(seq, cover, original))
            self.storage.hset(self.key("dd"), doc_id, Sample(page_hashes, page.length).to_json())
            if full is not None and len(page_hashes) < self.full_under:
                self.storage.hset(self.key("df"), doc_id,
                                  base64.b64encode(full.astype("<u4").tobytes()))  # fmt: skip
                if letters is not None:
                    self.storage.hset(self.key("dl"), doc_id, _pack_letters(letters))
            posting = self._posting_sampled(page_hashes)
            self.storage.sadd_hashed(self._kdp, posting, doc_id)
            if self.storage.hlen(self.key("dropped")) > self.reattribute:
                # the oldest forgotten, down to 3/4 of the bound (one read of the entries per
                # quarter of it, not per page)
                entries = self.storage.hgetall(self.key("dropped"))
                oldest = sorted(entries, key=lambda d: (int(entries[d].split(b":", 1)[0]), d))
                keep = max(1, self.reattribute * 3 // 4)
                self._forget_dropped(oldest[: len(entries) - keep])

    def _dropped_samples(self, ids: list[str]) -> dict[str, Sample]:
        """The remembered samples of the dropped pages of ``ids`` (``containment:dd``), a
        small page's with every shingle hash and its letters (``containment:df``,
        ``containment:dl``)."""
        if not ids:
            return {}
        out = {}
        for d, raw, full, text in zip(ids, self.storage.hmget(self.key("dd"), ids),
                                      self.storage.hmget(self.key("df"), ids),
                                      self.storage.hmget(self.key("dl"), ids), strict=True):  # fmt: skip
            if raw is None:
                continue
            s = Sample.from_json(raw)
            out[d] = s if full is None else _with_stored(s, full, text)
        return out

    def _stand_ins(self, feats: Sample) -> list[tuple[tuple[int, float, str], bool]]:
        """The remembered dropped pages (:meth:`dropped`) that the query contains as the forward
        rule would match them were they stored (:meth:`_original_score`: a pair only the
        letters accept, and a short page, under the ``spliced`` guard), ranked as
        :meth:`query_features` ranks the stored ones: ``(-|S(page) ∩ S(query)|, -c(page,
        query), page id)``.

        A dropped page stands in for the document it was dropped for, whose text may hold
        less of it: a source met after its own cut half (test web b93, URL order) is that
        half's duplicate, and its commentary page, met after both, holds the half too; the
        source covers more of the page, so the page is the source's duplicate (its record
        names the source, whose record names the half: the corpus is the same). And a source
        dropped as SpotSigs' duplicate of a copy too short for containment to index (test web
        b43, reversed: 49 letters) is found by its commentary page, which holds only 0.69 of
        that copy's letters. Candidates: the pages holding at least half of their
        posting-sampled hashes in the query's (this process's copy of the ``dp`` sets,
        :meth:`_dropped_hashes`), not stored again since (a revived page is matched as
        stored)."""
        if not (self.reattribute and self.reverse) or not (self.indexed(feats)
                                                           or self._short(feats)):  # fmt: skip
            return []
        # how many of the query's posting-sampled hashes each dropped page holds (counted in
        # C: ``{d: |{h ∈ posting : d ∈ inv[h]}|}``)
        hits: dict[str, int] = _fx.count_members(self._dropped_hashes(), self._posting(feats), None)
        if not hits:
            return []
        live = self._dropped_copy[2] if self._dropped_copy is not None else {}
        ids = sorted(d for d, n in hits.items() if d in live and n >= 0.5 * len(live[d][1]))
        if not ids:
            return []
        samples = self._dropped_samples(ids)
        stored = self._stored_any(list(samples))
        out = []
        for d, s in samples.items():
            if d in stored or (sc := self._original_score(s, None, feats)) <= 0:
                continue
            if (alone := self._stands_in(d, s)) is None:
                continue
            out.append(((-len(feats.hashes & s.hashes), -sc, d), alone))
        return out

    def _stands_in(self, page_id: str, page: Sample) -> bool | None:
        """Whether the remembered dropped page ``page_id`` stands in for the document it was
        dropped for: True when that document was unknown to containment when the page was
        dropped (too short to index: the cover of the page's whole sample was remembered;
        test web b43) — a page containing it is its duplicate; False when that document is
        contained in the page (c ≥ ``threshold``) and the page is not it plus material other
        indexed documents hold (the ``spliced`` guard) — the page only takes the record of
        a query that has a stored match (:meth:`query_features`): a source met after its own
        cut half and dropped as the half's duplicate is what its commentary page copies
        (test web b93), but a copy of it that the half alone does not match stays kept, as
        before (b26: the half holds 0.78 of that copy's sample); None otherwise — a reprint
        with extras, whose original, not the page, is what a copy of it copies (a commentary
        page replaced by its source and met again names the source), or a page dropped for a
        document it does not contain."""
        raw = self.storage.hget(self.key("dropped"), page_id)
        if raw is None:
            return None
        _, cover, original = _read_dropped(raw)
        if cover >= self.threshold * len(page.hashes):  # unknown when the page was dropped
            return True
        orig = self._stored_any([original]).get(original)
        if orig is None:
            orig = self._dropped_samples([original]).get(original)
        if orig is None or self._either(orig, page) < self.threshold:
            return None
        return None if self._spliced_pair(orig, None, page)[0] else False

    def _forget_dropped(self, ids: list[str]) -> None:
        """Forget remembered dropped pages (no error for one not remembered)."""
        for doc_id in ids:
            raw = self.storage.hget(self.key("dd"), doc_id)
            if raw is None:
                continue
            page = Sample.from_json(raw)
            posting = self._posting_sampled(page.hashes)
            with self.storage.batch():
                self.storage.srem_hashed(self._kdp, posting, doc_id)
                for name in ("dropped", "dd", "df", "dl"):
                    self.storage.hdel(self.key(name), doc_id)

    def reattributions(self, doc_id: str, doc: Doc) -> list[tuple[Match, str]]:
        """After ``doc`` was stored as ``doc_id``: the remembered dropped pages (:meth:`dropped`)
        whose best original it now is: ``doc`` is contained in the page as the forward rule
        would match them had ``doc`` been stored when the page came (:meth:`score`, or the
        short documents' rule; a pair only the letters accept, and a short ``doc``, under
        the ``spliced`` guard), and it covers more of the page's sample than the original the
        page is recorded under (the forward rule's ranking: the page is a copy of what most
        of it is). Each as ``(Match(page, c(doc, page)), the page's original until now)``,
        best first; the page is remembered with ``doc_id`` as its original from now on.

        A commentary page met before its source that holds most of a short article it
        spliced (test webs b29, b30, a24: dropped as that article's duplicate; b34, a39:
        stored, then replaced by it) is out of the index when its source comes: the corpus
        is right (the source is kept), and this gives the page's duplicate record the
        source. Candidates: the pages holding at least half of a probe of ``doc``'s
        posting-sampled hashes (the ``dp`` posting sets of those ≡ 0 mod
        ``m·posting_factor·``:data:`REATTRIBUTE_PROBE`, a uniform subsample of 16 or more
        hashes for a document that is not small: a page holding θ = 0.8 of them misses half
        of 16 with a chance under 10⁻³; every posting-sampled hash of a small ``doc``,
        measured on letters, whose edited copy may hold fewer), each verified exactly."""
        if not (self.reattribute and self.reverse) or not self.storage.hlen(self.key("dropped")):
            return []
        feats = self.features(doc)
        if not feats.hashes or not (self.indexed(feats) or self._short(feats)):
            return []
        small = self._short(feats) or self._small(feats)
        # a probe: the posting-sampled hashes ≡ 0 mod posting_m·REATTRIBUTE_PROBE (a uniform
        # subsample), every one for a small document
        probe_m = self.posting_m * (1 if small else REATTRIBUTE_PROBE)
        probe = [h for h in self._posting(feats) if h % probe_m == 0]
        held = self._dropped_hashes()
        if held.keys().isdisjoint(probe):
            return []  # no remembered page holds any of the probe's hashes
        # the sets of the other hashes are empty (the copy is a superset): not read
        hits = self.storage.smembers_count_hashed(self._kdp, [h for h in probe if h in held])
        need = max(1.0, 0.5 * len(probe)) - 1e-9
        ids = sorted(d for d, h in hits.items() if h >= need and d != doc_id)
        if not ids:
            return []
        entries = dict(zip(ids, self.storage.hmget(self.key("dropped"), ids), strict=True))
        # (a dropped page is out of the index: a small one's hashes are under ``df``)
        samples = self._dropped_samples(ids)
        live = set(self._stored_any(ids))  # stored again since (a recrawl kept it)
        out: list[tuple[Match, str]] = []
        stale: list[str] = []
        for d in ids:
            raw, page = entries.get(d), samples.get(d)
            if raw is None or page is None or d in live:
                stale.append(d)
                continue
            seq, was_cover, was = _read_dropped(raw)
            if was == doc_id:
                continue
            cover = len(feats.hashes & page.hashes)
            if cover <= was_cover:
                continue
            sc = self._original_score(feats, d, page)
            if sc <= 0:
                continue
            out.append((Match(d, sc, self.name), was))
            self.storage.hset(self.key("dropped"), d, _dropped_entry(seq, cover, doc_id))
        if stale:
            self._forget_dropped(stale)
        out.sort(key=lambda x: (-x[0].score, x[0].doc_id))
        return out

    def _dropped_hashes(self) -> dict[int, set[str]]:
        """Every posting-sampled hash of the remembered dropped pages (the members of the
        ``containment:dp:<hash>`` sets), each with the pages holding it: this process's copy,
        brought up to date when the entries' sequence number or count changed (a page
        remembered takes a new sequence number; one forgotten lowers the count; a page's
        sample never changes under its entry), reading only the pages it does not hold yet."""
        entries_key = self.key("dropped")
        stamp = (self.storage.get(self.key("dropped", "seq")), self.storage.hlen(entries_key))
        got = self._dropped_copy
        if got is not None and got[0] == stamp:
            return got[1]
        inv, pages = (got[1], got[2]) if got is not None else ({}, {})
        live: dict[str, tuple[bytes, frozenset[int]]] = {}
        missing: list[tuple[str, bytes]] = []
        for d, raw in self.storage.hgetall(entries_key).items():
            seq = raw.split(b":", 1)[0]
            old = pages.get(d)
            if old is not None and old[0] == seq:
                live[d] = old
            else:
                missing.append((d, seq))
        for d, (seq, hashes) in pages.items():  # forgotten or remembered anew: out
            if live.get(d, (None,))[0] != seq:
                for h in hashes:
                    holders = inv[h]
                    holders.discard(d)
                    if not holders:
                        del inv[h]
        if missing:
            raws = self.storage.hmget(self.key("dd"), [d for d, _ in missing])
            for (d, seq), raw in zip(missing, raws, strict=True):
                if raw is not None:
                    hashes = frozenset(self._posting_sampled(Sample.from_json(raw).hashes))
                    live[d] = (seq, hashes)
                    for h in hashes:
                        inv.setdefault(h, set()).add(d)
        self._dropped_copy = (stamp, inv, live)
        return inv

    # -- revival of a dropped source ----------------------------------------------------------

    def _remember_revival(self, doc_id: str, original: str, doc: Doc) -> None:
        """Remember a page dropped as it came as the duplicate of ``original`` (another
        method's match, e.g. SpotSigs) when ``original`` holds it (c ≥ ``threshold``) and the
        ``spliced`` guard alone refused the pair for want of evidence (:meth:`_reverse_matches`
        noted it for this query): the page may be the source of ``original``, a reprint with
        material spliced from documents not indexed yet (test webs b20 and a69, URL order).
        In the index's storage: ``containment:rv`` (the page → a JSON entry: a sequence
        number, ``original``, the hashes of ``original``'s material beyond the page that no
        other document held, and the page's :class:`Doc`, which the cascade needs to index it
        when it is revived) and ``containment:rw:<hash>`` (the pages waiting for a hash). At
        most ``revive`` pages, the oldest forgotten first (down to 3/4 of the bound)."""
        if not (self.revive and self.reverse and self.spliced):
            return
        feats = self.features(doc)
        refused = self._refused
        if refused is None or refused[0] is not feats:
            return
        unheld = next((u for c, s, u in refused[1] if c == original and s is None and u), None)
        if unheld is None:
            return
        if self.storage.hget(self.key("rv"), doc_id) is not None:
            self._forget_revivals([doc_id])
        with self.storage.batch():
            seq = self.storage.incr(self.key("rv", "seq"))
            entry = {"seq": seq, "of": original, "unheld": sorted(int(h) for h in unheld),
                     "doc": {"text": doc.text, "title": doc.title,
                             "description": doc.description, "url": doc.url,
                             "published": doc.published, "lang": doc.lang}}  # fmt: skip
            self.storage.hset(self.key("rv"), doc_id, json.dumps(entry, ensure_ascii=False))
            self.storage.sadd_hashed(self._krw, unheld, doc_id)
            if self.storage.hlen(self.key("rv")) > self.revive:
                entries = self.storage.hgetall(self.key("rv"))
                seqs = {d: json.loads(raw)["seq"] for d, raw in entries.items()}
                oldest = sorted(seqs, key=lambda d: (seqs[d], d))
                keep = max(1, self.revive * 3 // 4)
                self._forget_revivals(oldest[: len(entries) - keep], entries)

    def _forget_revivals(self, ids: list[str], entries: Mapping[str, Any] | None = None) -> None:
        """Forget remembered dropped sources and their waiting sets."""
        for doc_id in ids:
            raw = (entries or {}).get(doc_id) or self.storage.hget(self.key("rv"), doc_id)
            if raw is None:
                continue
            unheld = json.loads(raw)["unheld"]
            with self.storage.batch():
                self.storage.srem_hashed(self._krw, unheld, doc_id)
                self.storage.hdel(self.key("rv"), doc_id)

    def revivals(self, doc_id: str, doc: Doc) -> list[tuple[Match, str, Doc]]:
        """After ``doc`` was stored as ``doc_id``: the remembered dropped sources
        (:meth:`_remember_revival`) whose stored original the ``spliced`` guard now shows to be
        their reprint with extras, each as ``(Match(original, c(source, original),
        replaces=True), source id, source Doc)``, best first; the cascade retires the
        original and indexes the source (``Decision.revived``). A source stored since (a
        recrawl), an original out of the index, or a pair no longer contained is forgotten;
        a pair checked in vain waits for the material still unheld."""
        rv = self.key("rv")
        if not (self.revive and self.reverse and self.spliced) or not self.storage.hlen(rv):
            return []
        feats = self.features(doc)
        if not (self.indexed(feats) or self._stored_short_doc(feats)):
            return []
        waited = self._waited_for()
        post = self._posting(feats)
        if waited.isdisjoint(post):
            return []  # no remembered source waits for any of its hashes
        # (the other hashes' sets are empty: not read)
        ids = sorted(
            self.storage.smembers_count_hashed(self._krw, [h for h in post if h in waited])
        )
        if not ids:
            return []
        out: list[tuple[Match, str, Doc]] = []
        forget: list[str] = []
        narrowed: dict[str, tuple[dict, list[int]]] = {}
        for s, raw in zip(ids, self.storage.hmget(rv, ids), strict=True):
            if raw is None:
                continue
            entry = json.loads(raw)
            c = entry["of"]
            got = self._stored_any([c, s])
            if s in got or c not in got or doc_id in (c, s):
                forget.append(s)
                continue
            sdoc = Doc(**entry["doc"])
            source = self.features(sdoc)
            sc = self._either(source, got[c])
            if sc < self.threshold or source.length >= got[c].length:
                forget.append(s)
                continue
            ok, unheld = self._spliced_pair(source, c, got[c])
            if ok:
                out.append((Match(c, sc, self.name, replaces=True), s, sdoc))
                forget.append(s)
            elif unheld:
                narrowed[s] = (entry, unheld)
            else:
                forget.append(s)
        if forget:
            self._forget_revivals(forget)
        for s, (entry, unheld) in narrowed.items():
            keep = set(unheld)
            gone = [h for h in entry["unheld"] if h not in keep]
            with self.storage.batch():
                self.storage.srem_hashed(self._krw, gone, s)
                entry["unheld"] = sorted(keep)
                self.storage.hset(rv, s, json.dumps(entry, ensure_ascii=False))
        self._refused = None
        out.sort(key=lambda x: (-x[0].score, x[0].doc_id))
        return out

    def _waited_for(self) -> set[int]:
        """Every hash some remembered dropped source waits for (``containment:rw:<hash>``), or
        more: read from the entries (``containment:rv``) when their sequence number or count
        changed since the last read, else this process's copy. Every new entry takes a new
        sequence number; an entry forgotten or narrowed only shrinks the sets, so a copy
        kept across those is a superset, and a document none of whose posting-sampled hashes
        is in it has no waiting source (:meth:`revivals` skips its set lookups)."""
        rv = self.key("rv")
        stamp = (self.storage.get(self.key("rv", "seq")), self.storage.hlen(rv))
        got = self._waited
        if got is not None and got[0] == stamp:
            return got[1]
        hashes: set[int] = set()
        for raw in self.storage.hgetall(rv).values():
            hashes.update(json.loads(raw)["unheld"])
        self._waited = (stamp, hashes)
        return hashes

    def _original_score(self, source: Sample, page_id: str | None, page: Sample) -> float:
        """c(source, page) when the forward rule would match ``page`` (queried) to ``source``
        (stored): :meth:`score`, a pair only the letters accept under the ``spliced`` guard;
        a short ``source`` under the short documents' rule (:meth:`_short_matches`); else
        0.0."""
        if len(source.hashes) >= self.min_sample:
            sc = self.score(page, source)
            if sc > 0 and self._letters_only(source, page) and not self._spliced_pair(
                    source, page_id, page)[0]:  # fmt: skip
                return 0.0
            return sc
        if not self._short(source):
            return 0.0
        c = self._either(source, page)
        if c < self.threshold or page.length <= source.length:
            return 0.0
        return c if self._spliced_pair(source, page_id, page)[0] else 0.0
