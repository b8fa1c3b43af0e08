"""What a crawl learns, shared by the workers of a scale-out and kept across a JOBDIR resume.

* :class:`RedisURLReservoir` / :class:`SharedStructureSample`: Algorithm 3's sample of
  accepted URLs (:mod:`relevance.urls`) as one reservoir in Redis (Vitter's algorithm R with
  a shared counter, one Lua script per added URL, so every accepted URL of every worker is
  equally likely kept). A worker scores with a cached copy, refreshed every
  ``refresh_seconds`` or ``refresh_adds`` accepted URLs (no round trip per link); a Redis
  error falls back to the worker's own sample (counted in ``failures``).
* :class:`SharedLearningStream`: the training examples of the learned models of calibrated
  mode (:mod:`relevance.learning`): every worker appends its pseudo-labelled page summaries
  (the counts of its most frequent words) and its link outcomes to one capped Redis stream
  and applies the other workers' entries, so every worker trains on the pages of all
  (Nigam et al. 2000's self-training and ACHE's online link learning, over the whole crawl).
* :func:`save_learned` / :func:`load_learned`: the models' JSON state, the local URL
  sample and the worker's position in the shared stream in ``JOBDIR/topicrawl-learned.json``.

Every byte read from Redis or the JOBDIR file is data to validate: sizes are bounded before
they are read (Lua filters over-long values), values are checked and refused (counted in
``malformed``), nothing is ever unpickled.
"""

from __future__ import annotations

import json
import logging
import random
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from crawler.middlewares import redis_errors
from relevance.urls import PerHostStructureSample, StructureSample
from topicrawl.files import write_atomic

log = logging.getLogger(__name__)

#: longest URL taken from the shared sample (longer: malformed)
MAX_URL = 2048
#: longest host name (a field of the sample hash is ``host\nslot``)
MAX_HOST = 300
_WORKER = re.compile(r"[0-9a-zA-Z_-]{1,64}")
_STREAM_ID = re.compile(r"\d{1,20}-\d{1,20}")
#: JOBDIR file of the learned state
LEARNED_FILE = "topicrawl-learned.json"
#: the largest JOBDIR learned-state file read back
MAX_LEARNED_BYTES = 64 * 1024 * 1024

# KEYS: counts hash (host -> URLs seen), sample hash ("host\nslot" -> URL), version counter
# ARGV: host, URL, n, r in [0, 1), most hosts
_ADD_LUA = """
local n = tonumber(ARGV[3])
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0
   and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[5]) then
  return -1
end
local seen = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
local slot = seen - 1
if seen > n then
  slot = math.floor(tonumber(ARGV[4]) * seen)
  if slot >= n then return 0 end
end
redis.call('HSET', KEYS[2], ARGV[1] .. '\\n' .. slot, ARGV[2])
redis.call('INCR', KEYS[3])
return 1
"""

# KEYS: a hash; ARGV: most fields, longest field, longest value.
# Returns {-1} when the hash has too many fields, else {refused, field, value, ...}.
_READ_LUA = """
if redis.call('HLEN', KEYS[1]) > tonumber(ARGV[1]) then return {-1} end
local all = redis.call('HGETALL', KEYS[1])
local out = {0}
for i = 1, #all, 2 do
  if #all[i] <= tonumber(ARGV[2]) and #all[i + 1] <= tonumber(ARGV[3]) then
    out[#out + 1] = all[i]
    out[#out + 1] = all[i + 1]
  else
    out[1] = out[1] + 1
  end
end
return out
"""


class RedisURLReservoir:
    """Reservoir samples of accepted URLs, one per host (or one for ``host=""``), in Redis:
    ``{key}:seen`` (host -> URLs offered), ``{key}:sample`` (``host\\nslot`` -> URL) and
    ``{key}:version`` (bumped at every change). At most ``max_hosts`` hosts, ``n`` URLs each."""

    def __init__(self, client: Any, key: str, *, n: int = 20, max_hosts: int = 10_000,
                 rng: random.Random | None = None):  # fmt: skip
        self.client, self.key, self.n, self.max_hosts = client, key, n, max_hosts
        self.rng = rng or random.Random()
        self._add = client.register_script(_ADD_LUA)
        self._read = client.register_script(_READ_LUA)
        self.keys = [f"{key}:seen", f"{key}:sample", f"{key}:version"]

    def add_many(self, items: Iterable[tuple[str, str]]) -> None:
        """Offer ``(host, url)`` pairs to the shared reservoirs (one pipeline)."""
        pipe = self.client.pipeline(transaction=False)
        for host, url in items:
            self._add(keys=self.keys, args=[host, url, self.n, self.rng.random(),
                                            self.max_hosts], client=pipe)  # fmt: skip
        pipe.execute()

    def version(self) -> int | None:
        """The version counter (None before any URL; raises ValueError when not an integer)."""
        raw = self.client.get(self.keys[2])
        if raw is None:
            return None
        if len(raw) > 20:
            raise ValueError("version is not an integer")
        return int(raw)

    def snapshot(self) -> tuple[dict[str, list[str]], int]:
        """``({host: [url, ...]}, refused)``: the shared samples, validated. An entry whose
        field or value is too long, not UTF-8, whose slot is not below ``n`` or whose URL is not
        http(s) is refused (counted); a hash with more than ``max_hosts × n`` fields is
        refused whole (ValueError)."""
        reply = self._read(keys=[self.keys[1]],
                           args=[self.max_hosts * self.n, MAX_HOST + 8, MAX_URL])  # fmt: skip
        if not isinstance(reply, list) or not reply or not isinstance(reply[0], int):
            raise ValueError("unexpected reply")
        if reply[0] < 0:
            raise ValueError("the shared URL sample has too many entries")
        refused = int(reply[0])
        out: dict[str, dict[int, str]] = {}
        body = reply[1:]
        for field, value in zip(body[::2], body[1::2], strict=True):
            try:
                f = field.decode("utf-8") if isinstance(field, bytes) else str(field)
                url = value.decode("utf-8") if isinstance(value, bytes) else str(value)
                host, _, slot_text = f.rpartition("\n")
                slot = int(slot_text)
                if not 0 <= slot < self.n or not url.startswith(("http://", "https://")):
                    raise ValueError(f)
                if host and PerHostStructureSample.host(url) != host:
                    raise ValueError(url)
            except (UnicodeDecodeError, ValueError):
                refused += 1
                continue
            out.setdefault(host, {})[slot] = url
        return {h: [u for _, u in sorted(s.items())] for h, s in out.items()}, refused


class SharedStructureSample:
    """Algorithm 3's sample shared by the workers of a scale-out (same interface as
    :class:`relevance.urls.PerHostStructureSample` / :class:`~relevance.urls.StructureSample`).

    ``add`` updates the worker's own sample (``local``, the fallback) and queues the URL for
    the shared reservoir; ``struct`` / ``has_structure`` answer from the shared copy,
    refreshed (queued URLs sent, the copy read again if its version changed) at most every
    ``refresh_seconds`` or after ``refresh_adds`` accepted URLs. While Redis fails the local
    sample answers (``failures`` counts the failed refreshes)."""

    def __init__(self, local: StructureSample | PerHostStructureSample, reservoir: Any, *,
                 refresh_seconds: float = 2.0, refresh_adds: int = 20, max_pending: int = 1000,
                 clock: Callable[[], float] = time.monotonic):  # fmt: skip
        self.local = local
        self.reservoir = reservoir
        self.per_host = isinstance(local, PerHostStructureSample)
        self.refresh_seconds, self.refresh_adds = refresh_seconds, refresh_adds
        self.max_pending = max_pending
        self.clock = clock
        self.view: StructureSample | PerHostStructureSample | None = None
        self.pending: list[tuple[str, str]] = []
        self.failures = 0
        self.malformed = 0
        self.refreshes = 0
        self._version: int | None = None
        self._due = 0.0

    def __getattr__(self, name: str) -> Any:  # n, threshold, params, samples, ...
        return getattr(self.__dict__["local"], name)

    def add(self, url: str) -> None:
        self.local.add(url)
        self.pending.append((PerHostStructureSample.host(url) if self.per_host else "", url))
        if len(self.pending) > self.max_pending:  # Redis down for long: the oldest go
            del self.pending[: len(self.pending) - self.max_pending]
        if len(self.pending) >= self.refresh_adds:
            self.refresh()

    def add_local(self, url: str) -> None:
        """Add to the worker's own sample only (a resumed run's history: the shared reservoir
        has those URLs already)."""
        self.local.add(url)

    def current(self) -> StructureSample | PerHostStructureSample:
        """The sample to score with: the shared copy (refreshed when due) or the local one."""
        if self.clock() >= self._due:
            self.refresh()
        return self.view if self.view is not None else self.local

    def refresh(self) -> None:
        """Send the queued URLs and read the shared sample again if it changed."""
        self._due = self.clock() + self.refresh_seconds
        try:
            if self.pending:
                self.reservoir.add_many(self.pending)
                self.pending.clear()
            version = self.reservoir.version()
            if version is not None and version != self._version:
                samples, refused = self.reservoir.snapshot()
                self.malformed += refused
                self.view = self._build(samples)
                self._version = version
                self.refreshes += 1
        except (*redis_errors(self.reservoir.client), ValueError, TypeError) as exc:
            self.failures += 1
            self.view = None
            self._version = None
            if self.failures == 1 or self.failures % 100 == 0:
                log.warning("shared URL sample unavailable, the worker's own sample is used "
                            "(%d failures so far): %s", self.failures, exc)  # fmt: skip

    def _build(self, samples: dict[str, list[str]]) -> StructureSample | PerHostStructureSample:
        loc = self.local
        if isinstance(loc, PerHostStructureSample):
            view = PerHostStructureSample(loc.n, seed=loc.seed, threshold=loc.threshold,
                                          **loc.params)  # fmt: skip
            for host, urls in samples.items():
                s = view.samples[host] = view.make_sample(host)
                s.sample, s.seen = urls[: loc.n], len(urls)
            return view
        single = StructureSample(loc.n, threshold=loc.threshold, **loc.params)
        single.sample = samples.get("", [])[: loc.n]
        single.seen = len(single.sample)
        return single

    @property
    def seen(self) -> int:
        return self.local.seen

    def struct(self, url: str) -> float:
        return self.current().struct(url)

    def similar(self, u1: str, u2: str) -> bool:
        return self.local.similar(u1, u2)

    def has_structure(self, url: str = "") -> bool:
        return self.current().has_structure(url)


# -- the learned models of calibrated mode --------------------------------------------------

#: most distinct words of a page summary sent to the other workers
MAX_SUMMARY_WORDS = 300
#: longest word, feature and JSON entry accepted from the stream
MAX_WORD = 40
MAX_FEATURE = 200
MAX_ENTRY = 64 * 1024
#: longest section key a shared page may carry (relevance.learning.contrast.section_key)
MAX_SECTION = 1000
#: longest host name a shared page may carry (DNS: 253 characters)
MAX_HOST = 253
MAX_FEATURES = 200


def _valid_probability(x: Any) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float) or not 0.0 <= x <= 1.0:
        raise ValueError(f"not a probability: {x!r}")
    return float(x)


def page_summary(words: Iterable[str], evidence: float, label: bool | None,
                 section: str | None = None, host: str | None = None,
                 raw: float | None = None) -> dict[str, Any]:  # fmt: skip
    """The pseudo-labelled page a worker shares: its most frequent candidate words (counts),
    its literal evidence, the user's label, if any, and its section key, if known (``[learning]
    section_negatives``: every worker's page model vetoes the pages of its contrast
    sections, whichever worker fetched them); with ``host`` (and ``raw``, its literal
    evidence against the topic alone) the page also joins every worker's learned contrast
    (:class:`relevance.learning.contrast.LearnedContrast`), which finds the web's sections
    among all the crawl's pages."""
    counts = Counter(w for w in words if len(w) <= MAX_WORD)
    out = {"c": dict(counts.most_common(MAX_SUMMARY_WORDS)), "e": round(float(evidence), 4),
           "y": None if label is None else bool(label)}  # fmt: skip
    if section is not None and len(section) <= MAX_SECTION:
        out["s"] = section
    if host and len(host) <= MAX_HOST:
        out["h"] = host
        out["r"] = round(float(evidence if raw is None else raw), 4)
    return out


class SharedPage(NamedTuple):
    """A shared page summary, validated (:func:`parse_page`)."""

    counts: Counter
    evidence: float
    label: bool | None
    section: str | None
    #: the page's host and literal evidence against the topic alone (both None, or both set)
    host: str | None = None
    raw: float | None = None


def parse_page(data: Any) -> SharedPage:
    """Validate a shared page summary (ValueError when malformed)."""
    if not isinstance(data, dict) or not isinstance(data.get("c"), dict):
        raise ValueError("not a page summary")
    c = data["c"]
    if len(c) > MAX_SUMMARY_WORDS:
        raise ValueError("too many words")
    counts: Counter = Counter()
    for w, k in c.items():
        if not isinstance(w, str) or not w or len(w) > MAX_WORD:
            raise ValueError("bad word")
        if isinstance(k, bool) or not isinstance(k, int) or not 0 < k <= 100_000:
            raise ValueError("bad count")
        counts[w] = k
    y = data.get("y")
    if y is not None and not isinstance(y, bool):
        raise ValueError("bad label")
    section = data.get("s")
    if section is not None and (not isinstance(section, str) or not section
                                or len(section) > MAX_SECTION):  # fmt: skip
        raise ValueError("bad section")
    host, raw = data.get("h"), None
    if host is not None:
        if (not isinstance(host, str) or not host or len(host) > MAX_HOST
                or "/" in host or (section is not None and not section.startswith(host + "/"))):  # fmt: skip
            raise ValueError("bad host")
        raw = _valid_probability(data.get("r"))
    return SharedPage(counts, _valid_probability(data.get("e")), y, section, host, raw)


def parse_link(data: Any) -> tuple[float, list[str], float]:
    """Validate a shared link outcome ``{"p": prior, "f": features, "y": label}``."""
    if not isinstance(data, dict) or not isinstance(data.get("f"), list):
        raise ValueError("not a link outcome")
    feats = data["f"]
    if len(feats) > MAX_FEATURES or not all(
        isinstance(f, str) and 0 < len(f) <= MAX_FEATURE for f in feats
    ):
        raise ValueError("bad features")
    return _valid_probability(data.get("p")), feats, _valid_probability(data.get("y"))


class SharedLearningStream:
    """The training examples of the learned models, shared through one capped Redis stream
    ``key`` (``XADD … MAXLEN ~ maxlen``; fields ``w`` worker, ``k`` ``p``/``l``, ``d`` JSON).

    :meth:`publish_page` / :meth:`publish_link` queue this worker's examples; :meth:`sync`
    (every ``sync_seconds``, called by the scorer) sends them and applies the other workers'
    new entries to the page model (:meth:`SelfTrainingPageModel.observe_counts`) and the link
    model (:meth:`OnlineLinkModel.observe`). A Redis error keeps the examples queued (at most
    ``max_pending``) and the worker learns alone meanwhile (``failures``); a malformed entry
    is skipped (``malformed``)."""

    def __init__(self, client: Any, key: str, *, worker: str | None = None,
                 maxlen: int = 5000, sync_seconds: float = 2.0, batch: int = 500,
                 max_pending: int = 2000, clock: Callable[[], float] = time.monotonic):  # fmt: skip
        self.client, self.key = client, key
        self.worker = worker or uuid.uuid4().hex[:12]
        self.maxlen, self.sync_seconds, self.batch = maxlen, sync_seconds, batch
        self.max_pending = max_pending
        self.clock = clock
        self.last_id = "0-0"
        self.pending: list[dict[str, str]] = []
        self.failures = self.malformed = self.applied = 0
        self._due = 0.0

    def _queue(self, kind: str, data: dict[str, Any]) -> None:
        self.pending.append({"w": self.worker, "k": kind,
                             "d": json.dumps(data, ensure_ascii=False)})  # fmt: skip
        if len(self.pending) > self.max_pending:
            del self.pending[: len(self.pending) - self.max_pending]

    def publish_page(self, words: Iterable[str], evidence: float, label: bool | None,
                     section: str | None = None, host: str | None = None,
                     raw: float | None = None) -> None:  # fmt: skip
        self._queue("p", page_summary(words, evidence, label, section, host, raw))

    def publish_link(self, prior: float, features: list[str], label: float) -> None:
        self._queue("l", {"p": round(float(prior), 4), "f": list(features)[:MAX_FEATURES],
                          "y": round(float(label), 4)})  # fmt: skip

    def due(self) -> bool:
        return self.clock() >= self._due

    def sync(self, page_model: Any = None, link_model: Any = None, contrast: Any = None) -> int:
        """Send the queued examples, apply the others' new ones (pages to the page model and
        to the learned ``contrast``, link outcomes to the link model); returns how many
        applied."""
        self._due = self.clock() + self.sync_seconds
        applied = 0
        try:
            if self.pending:
                pipe = self.client.pipeline(transaction=False)
                for entry in self.pending:
                    pipe.xadd(self.key, entry, maxlen=self.maxlen, approximate=True)
                pipe.execute()
                self.pending.clear()
            for _ in range(20):  # at most 20 batches a sync
                reply = self.client.xread({self.key: self.last_id}, count=self.batch)
                entries = reply[0][1] if reply else []
                for entry_id, fields in entries:
                    self.last_id = (entry_id.decode() if isinstance(entry_id, bytes)
                                    else str(entry_id))  # fmt: skip
                    applied += self._apply(fields, page_model, link_model, contrast)
                if len(entries) < self.batch:
                    break
        except (*redis_errors(self.client), ValueError, TypeError, IndexError) as exc:
            self.failures += 1
            if self.failures == 1 or self.failures % 100 == 0:
                log.warning("shared learning stream unavailable, the worker learns alone "
                            "(%d failures so far): %s", self.failures, exc)  # fmt: skip
        self.applied += applied
        return applied

    def _apply(self, fields: Any, page_model: Any, link_model: Any, contrast: Any = None) -> int:
        try:
            if not isinstance(fields, dict):
                raise ValueError("not a hash")
            f = {(k.decode() if isinstance(k, bytes) else k): v for k, v in fields.items()}
            worker, kind, raw = f.get("w"), f.get("k"), f.get("d")
            worker = worker.decode() if isinstance(worker, bytes) else worker
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if worker == self.worker:
                return 0  # this worker's own example, learned from already
            if not isinstance(raw, bytes | str) or len(raw) > MAX_ENTRY:
                raise ValueError("bad entry")
            data = json.loads(raw)
            if kind == "p":
                page = parse_page(data)
                if page_model is not None:
                    page_model.observe_counts(page.counts, page.evidence, page.label,
                                              page.section)  # fmt: skip
                if contrast is not None and page.host is not None:  # (then raw is set)
                    contrast.observe_keyed(page.host, page.section, list(page.counts),
                                           page.raw)  # fmt: skip
            elif kind == "l":
                prior, feats, label = parse_link(data)
                if link_model is not None:
                    link_model.observe(prior, feats, label)
            else:
                raise ValueError(f"unknown kind {kind!r}")
        except (ValueError, TypeError, UnicodeDecodeError, RecursionError):
            self.malformed += 1
            return 0
        return 1


# -- JOBDIR ---------------------------------------------------------------------------------


def sample_state(sample: Any) -> dict[str, Any] | None:
    """The local Algorithm 3 sample as JSON (``{"hosts": {host: {"seen", "sample"}}}``)."""
    sample = getattr(sample, "local", sample)
    if isinstance(sample, PerHostStructureSample):
        return {"hosts": {h: {"seen": s.seen, "sample": list(s.sample)}
                          for h, s in sample.samples.items()}}  # fmt: skip
    if isinstance(sample, StructureSample):
        return {"hosts": {"": {"seen": sample.seen, "sample": list(sample.sample)}}}
    return None


def load_sample_state(sample: Any, state: Any) -> int:
    """Restore :func:`sample_state` output into ``sample`` (its local sample when shared);
    returns the URLs restored. ValueError when malformed (``sample`` is then unchanged)."""
    sample = getattr(sample, "local", sample)
    if not isinstance(state, dict) or not isinstance(state.get("hosts"), dict):
        raise ValueError("not a URL sample")
    per_host = isinstance(sample, PerHostStructureSample)
    if not per_host and set(state["hosts"]) - {""}:
        raise ValueError("a per-host sample for a single sample")
    restored: dict[str, tuple[list[str], int]] = {}
    for host, entry in state["hosts"].items():
        if not isinstance(host, str) or len(host) > MAX_HOST or not isinstance(entry, dict):
            raise ValueError("bad host")
        urls, seen = entry.get("sample"), entry.get("seen")
        if (
            not isinstance(urls, list)
            or len(urls) > sample.n
            or not all(
                isinstance(u, str) and u.startswith(("http://", "https://")) and len(u) <= MAX_URL
                for u in urls
            )
        ):
            raise ValueError("bad sample")
        if isinstance(seen, bool) or not isinstance(seen, int) or seen < len(urls):
            raise ValueError("bad count")
        restored[host] = (urls, seen)
    for host, (urls, seen) in restored.items():
        s = sample
        if per_host:
            s = sample.samples[host] = sample.make_sample(host)
        s.sample, s.seen = list(urls), seen
        s._memo.clear()
    return sum(len(u) for u, _ in restored.values())


def reset_sample(sample: Any) -> None:
    """Empty the local Algorithm 3 sample (its local sample when shared)."""
    sample = getattr(sample, "local", sample)
    if isinstance(sample, PerHostStructureSample):
        sample.samples.clear()
    elif isinstance(sample, StructureSample):
        sample.sample, sample.seen = [], 0
        sample._memo.clear()


def save_learned(jobdir: str | Path, scorer: Any) -> Path | None:
    """Write the scorer's learned models (JSON state, the page model with its training
    pages) and its local URL sample to ``JOBDIR/topicrawl-learned.json`` (atomically)."""
    state: dict[str, Any] = {"v": 1}
    page_model = getattr(scorer, "page_model", None)
    if page_model is not None:
        state["page_model"] = page_model.to_state(pool=True)
    link_model = getattr(scorer, "link_model", None)
    if link_model is not None:
        state["link_model"] = link_model.to_state()
    urls = sample_state(getattr(scorer, "structure", None))
    if urls is not None:
        state["url_sample"] = urls
    shared = getattr(scorer, "shared", None)
    if isinstance(shared, SharedLearningStream):  # where this worker was in the stream
        state["stream"] = {"worker": shared.worker, "last_id": shared.last_id}
    if len(state) == 1:
        return None
    return write_atomic(Path(jobdir) / LEARNED_FILE, json.dumps(state, ensure_ascii=False))


def load_learned(jobdir: str | Path, scorer: Any) -> dict[str, int]:
    """Read ``JOBDIR/topicrawl-learned.json`` back into the scorer; returns what was
    restored (``page_model``/``link_model`` 1, ``url_sample``: URLs). A missing file restores
    nothing; a file too large or malformed is refused whole (logged) — the crawl learns anew."""
    path = Path(jobdir) / LEARNED_FILE
    if not path.is_file():
        return {}
    try:
        if path.stat().st_size > MAX_LEARNED_BYTES:
            raise ValueError(f"larger than {MAX_LEARNED_BYTES} bytes")
        state = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(state, dict) or state.get("v") != 1:
            raise ValueError("not a learned-state file")
        out: dict[str, int] = {}
        page_model = getattr(scorer, "page_model", None)
        link_model = getattr(scorer, "link_model", None)
        structure = getattr(scorer, "structure", None)
        link_state = None
        if link_model is not None and "link_model" in state:  # validated before any change
            link_state = type(link_model).from_state(state["link_model"])
        page_state = None
        if page_model is not None and "page_model" in state:
            page_state = page_model.parse_state(state["page_model"])
        shared = getattr(scorer, "shared", None)
        stream = state.get("stream") if isinstance(shared, SharedLearningStream) else None
        if stream is not None:  # the examples applied before are not applied again
            worker, last_id = stream.get("worker"), stream.get("last_id")
            if not (isinstance(worker, str) and _WORKER.fullmatch(worker)
                    and isinstance(last_id, str) and _STREAM_ID.fullmatch(last_id)):  # fmt: skip
                raise ValueError("bad stream position")
        if structure is not None and "url_sample" in state:
            out["url_sample"] = load_sample_state(structure, state["url_sample"])
        if stream is not None:
            shared.worker, shared.last_id = stream["worker"], stream["last_id"]
            out["stream"] = 1
        if page_state is not None:
            page_model.apply_state(page_state)
            out["page_model"] = 1
        if link_state is not None:
            link_model.weights, link_model.updates = link_state.weights, link_state.updates
            link_model.observed = link_state.observed
            link_model.sums, link_model.label_sum = link_state.sums, link_state.label_sum
            out["link_model"] = 1
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        log.warning("%s not restored (%s): the crawl learns anew", path, exc)
        return {}
    return out
