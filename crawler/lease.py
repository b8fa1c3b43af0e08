"""Scale-out: per-worker leases on the requests in flight, so a killed worker's share is
finished by the others.

A worker pops a request from the shared frontier and records it in its own in-flight hash
in the same Lua call (``<prefix>:topic:inflight:<worker>``: field = SHA-1 of the entry, value
= the frontier entry itself, JSON): a ``kill -9`` between the two cannot lose it. While it
lives, the worker refreshes a heartbeat key (``<prefix>:topic:alive:<worker>``, ``SET … PX
TOPICRAWL_LEASE_SECONDS``; the idle extension's beat does it, every second or faster). A page counted
against the budget marks its lease ``c:<id>`` (the ``INCR`` of the page counter and the mark
are one script); the lease ends when the page is written to the database (the store's
writer), when the callback produced no page, or when the request failed for good.

Any live worker looks for workers whose heartbeat expired (every
``TOPICRAWL_LEASE_CHECK_SECONDS`` and when it is idle): one Lua script moves a dead worker's
whole hash into the reclaimer's own (so two reclaimers never take one entry, and a reclaimer
killed meanwhile is reclaimed in turn); then each entry goes back to the frontier
(``topicrawl/frontier/recovered_from_dead_worker``), marked ``topicrawl_recovered`` so the
fetch-once set lets it pass once (this also works with the Bloom seen sets, where nothing can
be removed). A page the dead worker had counted is dropped if the database has it
(``topicrawl/frontier/recovered_stored``: it keeps its count, not fetched again); else its
count is not given back but handed on with the request queued again
(``topicrawl/frontier/recovered_count_handed_on``): a mark in ``<prefix>:topic:precounted``
(field the lease id the queued entry will get, the SHA-1 of the entry; value the entry), set
in the same script. Giving the count back let the budget overshoot by one: the slow worker
that had counted it stored its page anyway, while another counted a new page in the freed
place and the popper of the queued copy found the budget spent.

Whatever consumes the queued entry consumes its mark, in its script: the take of the worker
that popped it counts under the mark (no ``INCR``, no limit check: the page is counted
already; the ``c:<id>`` mark makes a take sent again count once); a lease of it that ends
without a page (released, or replaced by a retry or redirect) gives the count back
(``DECR``); a reclaim of a worker that popped it and had not counted it yet moves the mark to
the entry it queues again (``topicrawl/frontier/recovered_count_carried``). Once the counter
is at the budget, a pop still serves the marked entries that wait in the frontier, and an idle
worker does not end on the budget while one waits there (:meth:`WorkerLease.precounted`).

A worker that was only slow (heartbeat expired, process alive) finds its lease gone when it
counts the page: if the request still waits in the frontier it takes it back (``ZREM`` of the
exact entry, with its mark if it has one) and goes on; if another worker has popped it, the
slow worker drops its copy (``topicrawl/frontier/lease_lost``). A request it had not sent is
not sent (``topicrawl/frontier/lease_lost_unsent``): the copy queued again is the entry as it
was, so the slow worker may pop it itself, under the same lease id; each pop is numbered in
the request's meta (:data:`LEASE_POP`), and a copy from an earlier pop neither ends, sends nor
counts the lease. A page it had counted before
the reclaim is stored by it: when written, the queued copy is taken back from the frontier
with its mark, so nothing is counted again (``topicrawl/frontier/lease_taken_back``); if
another worker already popped it, that worker's copy is the same row (pages are an upsert
per run and URL) and holds the count through the mark; if that copy then fails for good or
breaks, its lease asks the database first (only for a lease with a handed-on count) and keeps
the count when the page is there.

The store-claim closes the window that check leaves (the slow worker's write landing after
it). Right before each database write the store's writer claims the batch's counted pages
(:meth:`WorkerLease.storing`, one script a batch: ``<prefix>:storing:<sha1 of the URL>``,
field the worker, a time to live of ``claim_seconds``). The script sees what became of a
reclaimed page's count, kept per stored URL in ``<prefix>:handed`` (``1`` out with a copy,
``p`` held for a claim, ``s`` stored; absent: given back): a copy still waiting is taken back;
a count out with a copy another worker holds stays there; a count given back is taken afresh
under the budget, or the page is not written (``topicrawl/frontier/store_recounted``,
``topicrawl/frontier/store_dropped``). Every give-back of a count (:data:`_GIVEBACK`) refuses
while another worker's claim on the page lives (the count is held for it, ``p``) or once the
page is stored (``s``); the write's end (:meth:`WorkerLease.stored`) marks it stored and drops
the claim. A worker that dies between its claim and its write leaves a held count that a
reclaim settles once the claim lapsed (:meth:`WorkerLease.settle`: kept if the database has the
page, else given back). Not covered: a write that commits after its claim lapsed (a stall of
more than ``claim_seconds`` inside the write) while the count went back; the end of its lease
counts it again (``topicrawl/frontier/stored_past_claim``, a WARNING), so the counter says what
is stored, but that can be one page over the budget.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from crawler import serialization

log = logging.getLogger(__name__)

#: request meta: the id of the request's lease (the SHA-1 of its frontier entry)
LEASE = "topicrawl_lease"
#: request meta: which of this worker's pops of that lease the request came from. A request
#: reclaimed before it was sent goes back to the frontier as it was, so this worker may pop
#: the same entry again (the same lease id) while its first copy is still on its way to be
#: dropped: that copy must not end, send or count the new lease (:meth:`WorkerLease.superseded`).
LEASE_POP = "topicrawl_lease_pop"
#: the meta keys that belong to one worker's pop of an entry, never to the entry itself: a
#: request queued again or sent back to the frontier goes without them
WORKER_META = (LEASE, LEASE_POP)
#: request meta: the callback keeps the request's lease and ends it itself later (a sitemap
#: whose entries are held until its host's other sitemaps are read: should the worker die
#: meanwhile, the lease is reclaimed and the sitemap fetched again, its entries with it)
LEASE_KEPT = "topicrawl_lease_kept"
#: statuses a requeued request hands to the spider (it follows them through the dupefilter)
_REDIRECTS = [301, 302, 303, 307, 308]

#: pop the best entry and lease it: KEYS frontier, inflight, pages, precounted; ARGV limit (-1:
#: none). Once the budget is spent, only an entry whose page is counted already (a reclaimed
#: page's count handed on, :data:`_REQUEUE`) is popped: the best of those waiting. Returns
#: (entry, lease id, 1 when it holds such a count).
_POP = """
local limit = tonumber(ARGV[1])
local e
if limit >= 0 and tonumber(redis.call('GET', KEYS[3]) or '0') >= limit then
  local best
  for _, m in ipairs(redis.call('HVALS', KEYS[4])) do
    local s = redis.call('ZSCORE', KEYS[1], m)
    if s and (best == nil or tonumber(s) < best) then e, best = m, tonumber(s) end
  end
  if not e then return false end
else
  local r = redis.call('ZRANGE', KEYS[1], 0, 0)
  if #r == 0 then return false end
  e = r[1]
end
redis.call('ZREM', KEYS[1], e)
local id = redis.sha1hex(e)
redis.call('HSET', KEYS[2], id, e)
return {e, id, redis.call('HEXISTS', KEYS[4], id)}
"""
#: A lease id missing from this worker's hash was taken by a reclaimer, which queued the request
#: again: ``recovered`` if this worker had sent it to download by then, else ``plain``. Whether
#: this worker may go on with it: it sent the request after the reclaim (an ``s:`` mark without
#: its entry: the plain copy is refused by the fetch-once set, and removed here), or the copy
#: still waits in the frontier (removed here); not when another worker popped it. ``back``
#: returns the copy it removed (true when none, false when the request is lost); ``unmark``
#: takes that copy's handed-on count (1 when it had one).
_BACK = """
local function back(hash, frontier, id, recovered, plain)
  if redis.call('HEXISTS', hash, 's:' .. id) == 1 then
    if redis.call('ZREM', frontier, plain) == 1 then return plain end
    return true
  end
  if redis.call('ZREM', frontier, recovered) == 1 then return recovered end
  if redis.call('ZREM', frontier, plain) == 1 then return plain end
  return false
end
local function unmark(precounted, copy)
  if type(copy) ~= 'string' then return 0 end
  return redis.call('HDEL', precounted, redis.sha1hex(copy))
end
"""
#: a handed-on count goes back (``DECR``) unless a worker is storing its page: KEYS pages, the
#: handed-on states (``<prefix>:handed``: field the stored URL; ``1`` out with a copy, ``p``
#: held by a store-claim, ``s`` stored), the URL's store-claim (``<prefix>:storing:<sha1>``:
#: field a worker). A page stored already (``s``) keeps it; a live claim of another worker
#: takes it (``p``: its write keeps it, :data:`_SETTLE` gives it back if the claim lapses
#: unwritten). 1 when given back.
_GIVEBACK = """
local function giveback(pages, handed, claim, url, me)
  if url ~= '' then
    if redis.call('HGET', handed, url) == 's' then return 0 end
    for _, w in ipairs(redis.call('HKEYS', claim)) do
      if w ~= me then
        redis.call('HSET', handed, url, 'p')
        return 0
      end
    end
    redis.call('HDEL', handed, url)
  end
  redis.call('DECR', pages)
  return 1
end
"""
#: count a page under its lease: KEYS inflight, pages, frontier, precounted; ARGV id, entry,
#: entry as requeued (sent), count (0/1), limit (-1: none), debt (pages counted while Redis
#: was down), entry as requeued (not sent). Returns the page number (1 when not counting), 0
#: over budget, -1 lease lost for good. The mark ``c:<id>`` holds the number: a call sent
#: again after a lost reply (a Redis outage) returns it and counts nothing twice. A page whose
#: count a reclaimer handed on (its ``precounted`` mark) takes the mark instead: no ``INCR``,
#: no limit check (it is counted already).
_TAKE = (
    _BACK
    + """
local taken = redis.call('HGET', KEYS[1], 'c:' .. ARGV[1])
if taken then return tonumber(taken) end
local pre
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  local copy = back(KEYS[1], KEYS[3], ARGV[1], ARGV[3], ARGV[7])
  if not copy then return -1 end
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], 's:' .. ARGV[1], 1)
  pre = unmark(KEYS[4], copy)
else
  pre = redis.call('HDEL', KEYS[4], ARGV[1])
end
local n = 1
if ARGV[4] == '1' and pre == 1 then
  n = math.max(1, redis.call('INCRBY', KEYS[2], tonumber(ARGV[6])))
elseif ARGV[4] == '1' then
  n = redis.call('INCRBY', KEYS[2], 1 + tonumber(ARGV[6]))
  local limit = tonumber(ARGV[5])
  if limit >= 0 and n > limit then
    redis.call('DECR', KEYS[2])
    return 0
  end
end
redis.call('HSET', KEYS[1], 'c:' .. ARGV[1], n)
return n
"""
)
#: a counted page will not be stored (it broke): KEYS inflight, pages, handed, the URL's
#: store-claim; ARGV id, count (0/1), URL, worker. The count goes back only if this worker
#: still holds it (a reclaimer handed it on to the request it queued again else: whoever
#: fetches that copy counts under it), and not while another worker stores the page.
_UNCOUNT = (
    _GIVEBACK
    + """
if redis.call('HDEL', KEYS[1], 'c:' .. ARGV[1]) == 1 and ARGV[2] == '1' then
  return giveback(KEYS[2], KEYS[3], KEYS[4], ARGV[3], ARGV[4])
end
return 0
"""
)
#: end a lease whose page was not counted (a counted one ends when stored): KEYS inflight,
#: pages, precounted, handed, the URL's store-claim; ARGV id, keep (0/1), URL, worker. A
#: handed-on count the lease held goes back (:data:`_GIVEBACK`) unless ``keep`` (the database
#: has the page: a slow worker stored its copy).
_RELEASE_UNCOUNTED = (
    _GIVEBACK
    + """
if redis.call('HEXISTS', KEYS[1], 'c:' .. ARGV[1]) == 0 then
  local held = redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[1], 's:' .. ARGV[1])
  if held == 1 and redis.call('HDEL', KEYS[3], ARGV[1]) == 1 and ARGV[2] ~= '1' then
    giveback(KEYS[2], KEYS[4], KEYS[5], ARGV[3], ARGV[4])
  end
  return held
end
return 0
"""
)
#: a leased request goes to download: KEYS the fetch-once set, inflight; ARGV fingerprint, id.
#: 1 when the URL was not sent before (then the lease is marked sent, ``s:<id>``); -1 when
#: the lease is not this worker's any more (a reclaimer queued the request again while this
#: worker was slow: sent now, the copy another worker pops would meet the fetch-once set and
#: be dropped, and this worker drops its own page as the lease's loser: the page is lost).
_SEND = """
if redis.call('HEXISTS', KEYS[2], ARGV[2]) == 0 then return -1 end
if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 's:' .. ARGV[2], 1)
return 1
"""
#: a leased request goes to download past the fetch-once set: KEYS inflight; ARGV id. 1 when
#: the lease is this worker's (marked sent, ``s:<id>``), else 0 (reclaimed: see _SEND).
_MARK_SENT = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 's:' .. ARGV[1], 1)
return 1
"""
#: a worker is about to write counted pages (its store-claim, :meth:`WorkerLease.storing`):
#: KEYS inflight, pages, frontier, precounted, handed, its writes (``<prefix>:writes:<worker>``:
#: the leases it claimed, ended by :data:`_STORED`), then each page's store-claim; ARGV
#: worker, claim ms, limit (-1: none), then (id, URL, entry, entry as requeued) per page.
#: Each page: 1 its count is this worker's; 2 its lease was reclaimed and the queued copy still
#: waited (taken back with its count); 3 the count is out with a copy another worker popped,
#: or held for this write (``p``), or that page is stored (``s``): the copy's give-back is
#: refused while the claim lives; 4 the count was given back: counted afresh under the limit;
#: 0 the same over budget: not to be written (no claim). A page 2 or 4 gets its lease and
#: ``c:`` mark back (a reclaim hands the count on again; a call sent again changes nothing).
_STORING = """
local me, ms, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local out = {}
for i = 4, #ARGV, 4 do
  local id, url, entry, copy = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local code = 1
  if redis.call('HEXISTS', KEYS[1], 'c:' .. id) == 0 then
    if copy ~= '' and redis.call('ZREM', KEYS[3], copy) == 1 then
      local n = 1
      if redis.call('HDEL', KEYS[4], redis.sha1hex(copy)) == 0 then
        n = redis.call('INCR', KEYS[2])
      end
      redis.call('HDEL', KEYS[5], url)
      redis.call('HSET', KEYS[1], id, entry, 'c:' .. id, n)
      code = 2
    elseif redis.call('HEXISTS', KEYS[5], url) == 1 then
      code = 3
    else
      local n = redis.call('INCR', KEYS[2])
      if limit >= 0 and n > limit then
        redis.call('DECR', KEYS[2])
        code = 0
      else
        redis.call('HSET', KEYS[1], id, entry, 'c:' .. id, n)
        code = 4
      end
    end
  end
  if code > 0 then
    local claim = KEYS[7 + (i - 4) / 4]
    redis.call('HSET', claim, me, 1)
    if redis.call('PTTL', claim) < ms then redis.call('PEXPIRE', claim, ms) end
    redis.call('HSET', KEYS[6], id, 1)
  end
  out[#out + 1] = code
end
redis.call('PEXPIRE', KEYS[6], 10 * ms)
return out
"""
#: counted pages written to the database: KEYS inflight, pages, frontier, precounted, handed,
#: its writes, then each page's store-claim; ARGV count (0/1), worker, then (id, entry as
#: requeued, URL) per page. A lease a reclaimer took meanwhile (its count handed on to the
#: request queued again) is taken back from the frontier with that count (counted again only
#: when the copy had none); a copy another worker popped carries the count to it, and its
#: give-back keeps it now (``s``). The store-claim ends. A page written after its claim lapsed
#: whose count went back meanwhile is counted again (``INCR``, even past the budget: the
#: counter says what is stored); returns (taken back, counted again).
_STORED = """
local back, late = 0, 0
for i = 3, #ARGV, 3 do
  local id, copy, url = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local held = redis.call('HDEL', KEYS[1], 'c:' .. id)
  redis.call('HDEL', KEYS[1], id, 's:' .. id)
  local claim = KEYS[7 + (i - 3) / 3]
  local claimed = redis.call('HDEL', claim, ARGV[2])
  local wrote = redis.call('HDEL', KEYS[6], id)
  if held == 0 and redis.call('ZREM', KEYS[3], copy) == 1 then
    local pre = redis.call('HDEL', KEYS[4], redis.sha1hex(copy))
    if pre == 0 and ARGV[1] == '1' then redis.call('INCR', KEYS[2]) end
    redis.call('HDEL', KEYS[5], url)
    back = back + 1
  elseif redis.call('HEXISTS', KEYS[5], url) == 1 then
    redis.call('HSET', KEYS[5], url, 's')
  elseif held == 0 and claimed == 0 and wrote == 1 and ARGV[1] == '1' then
    redis.call('INCR', KEYS[2])
    late = late + 1
  end
end
return {back, late}
"""
#: a handed-on count held for a store-claim (``p``) whose claim lapsed unwritten: KEYS
#: handed, the claim, pages; ARGV URL, stored (0/1: the database's word, asked after the
#: claim lapsed). Stored: it stays (``s``); else it goes back. 0 nothing to settle.
_SETTLE = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= 'p' or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
if ARGV[2] == '1' then
  redis.call('HSET', KEYS[1], ARGV[1], 's')
  return 1
end
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('DECR', KEYS[3])
return 2
"""
#: push a request that comes from a leased one (a retry, a redirect, a deferral): KEYS
#: inflight, frontier, pages, precounted, handed, the URL's store-claim; ARGV id, its entry as
#: requeued (sent, not sent), score, new entry, URL, worker. 0 when a reclaimer took the lease
#: and another worker has the request now (not pushed). A handed-on count the replaced request
#: held goes back (:data:`_GIVEBACK`).
_PUSH = (
    _BACK
    + _GIVEBACK
    + """
local pre
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  local copy = back(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
  if not copy then return 0 end
  pre = unmark(KEYS[4], copy)
else
  pre = redis.call('HDEL', KEYS[4], ARGV[1])
end
redis.call('HDEL', KEYS[1], 'c:' .. ARGV[1], 's:' .. ARGV[1])
if pre == 1 then giveback(KEYS[3], KEYS[5], KEYS[6], ARGV[6], ARGV[7]) end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
return 1
"""
)
#: the handed-on counts whose entries wait in the frontier, and those held for a store-claim
#: (``p``: given back if the claim lapses unwritten): KEYS precounted, frontier, handed
_WAITING = """
local n = 0
for _, m in ipairs(redis.call('HVALS', KEYS[1])) do
  if redis.call('ZSCORE', KEYS[2], m) then n = n + 1 end
end
for _, state in ipairs(redis.call('HVALS', KEYS[3])) do
  if state == 'p' then n = n + 1 end
end
return n
"""
#: take a dead worker's hash: KEYS its heartbeat, its inflight, mine, the registry; ARGV its id
_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {} end
local all = redis.call('HGETALL', KEYS[2])
for i = 1, #all, 2 do redis.call('HSET', KEYS[3], all[i], all[i + 1]) end
redis.call('DEL', KEYS[2])
if #all == 0 then redis.call('SREM', KEYS[4], ARGV[1]) end
return all
"""
#: one reclaimed entry back to the frontier: KEYS mine, pages, frontier, precounted, handed;
#: ARGV id, requeue (0/1), score, entry, stored URL. The page's count (a counted page's, or the
#: handed-on count of a requeued copy popped and not yet counted) goes on with the entry queued
#: again (its ``precounted`` mark: field its lease id to be, value the entry; the URL's
#: handed-on state ``1``, unless held or stored already); one not queued again keeps a counted
#: page's count (the database has the page: ``s``) and gives a handed-on one back. 0 when
#: another call moved it, 1 moved, 2 moved with a count.
_REQUEUE = """
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then return 0 end
local counted = redis.call('HDEL', KEYS[1], 'c:' .. ARGV[1])
redis.call('HDEL', KEYS[1], 's:' .. ARGV[1])
local pre = redis.call('HDEL', KEYS[4], ARGV[1])
if ARGV[2] == '1' then
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
  if counted + pre > 0 then
    redis.call('HSET', KEYS[4], redis.sha1hex(ARGV[4]), ARGV[4])
    redis.call('HSETNX', KEYS[5], ARGV[5], '1')
    return 2
  end
elseif counted == 1 and ARGV[5] ~= '' then
  redis.call('HSET', KEYS[5], ARGV[5], 's')
elseif pre == 1 then
  redis.call('DECR', KEYS[2])
end
return 1
"""


#: :meth:`WorkerLease.send`'s answer for a lease a reclaimer took before the request was sent
LOST = -1


def requeued_entry(entry: bytes, sent: bool = True) -> tuple[bytes, float]:
    """A leased frontier entry as it goes back to the frontier (and its score). One that was
    ``sent`` to download (its URL is in the fetch-once set) is marked ``topicrawl_recovered``:
    the fetch-once set lets it pass once (a redirect is followed by the spider, through the
    dupefilter); one not sent goes back as it was, checked as usual. Deterministic, so a slow
    worker finds the exact entry a reclaimer pushed."""
    from crawler.middlewares import RECOVERED

    obj = serialization.loads(entry)
    meta = {k: v for k, v in (obj.get("meta") or {}).items() if k not in WORKER_META}
    if not sent:
        obj["meta"] = meta
        return serialization.dumps(obj), -float(obj.get("priority") or 0)
    meta[RECOVERED] = obj["url"]
    if obj.get("callback") in (None, "parse"):  # the spider's parse follows a redirect
        meta["dont_redirect"] = True
        meta["handle_httpstatus_list"] = _REDIRECTS
    obj["meta"] = meta
    return serialization.dumps(obj), -float(obj.get("priority") or 0)


def stored_url(entry: bytes) -> str:
    """The URL a leased request's page is stored under (the first of its redirects)."""
    obj = serialization.loads(entry)
    redirects = (obj.get("meta") or {}).get("redirect_urls") or []
    return str(redirects[0] if redirects else obj["url"])


def _b(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode("utf-8")


def _s(value: Any) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


class WorkerLease:
    """This worker's leases in Redis (see the module docstring); plain arguments, so it is
    tested against Redis without a crawler."""

    def __init__(
        self,
        client: Any,
        prefix: str,
        *,
        frontier_key: str,
        pages_key: str,
        lease_seconds: float = 10.0,
        worker: str | None = None,
        stats: Any = None,
        claim_seconds: float | None = None,
    ):
        from redis import RedisError

        self.client = client
        self.errors: tuple[type[Exception], ...] = (RedisError, OSError)
        self.prefix = prefix
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.frontier_key, self.pages_key = frontier_key, pages_key
        self.registry = f"{prefix}:workers"
        #: counts handed on by reclaims: field the lease id of a request queued again, value
        #: its entry (:data:`_REQUEUE`)
        self.precounted_key = f"{prefix}:precounted"
        #: the handed-on counts' states by stored URL (:data:`_GIVEBACK`)
        self.handed_key = f"{prefix}:handed"
        self.inflight = self.inflight_key(self.worker)
        self.lease_ms = max(1000, int(lease_seconds * 1000))
        #: a store-claim's time to live (:meth:`storing`): a write must commit within it
        self.claim_ms = max(1000, int((claim_seconds or max(60.0, 6 * lease_seconds)) * 1000))
        self.stats = stats
        #: what the store recorded: a callable of URLs -> the URLs the database holds
        self.stored_check: Callable[[list[str]], set[str]] | None = None
        #: leases of counted pages by stored URL (ended when the store wrote the page)
        self._counted: dict[str, str] = {}
        self._counted_ids: set[str] = set()
        #: leases whose request went to download (their URL is in the fetch-once set)
        self._sent_ids: set[str] = set()
        #: leases popped with a count a reclaim handed on (:data:`_POP`)
        self._precounted_ids: set[str] = set()
        #: stored pages whose lease a reclaimer had taken (:meth:`stored`)
        self.taken_back = 0
        #: the leases whose page this worker claimed to write (:data:`_STORING`)
        self.writes_key = f"{prefix}:writes:{self.worker}"
        #: pages to store counted afresh, not stored, written past their claim (:meth:`storing`)
        self.recounted = self.dropped = self.late = 0
        #: the frontier entry of each lease held (to take it back after a reclaim)
        self._entries: dict[str, bytes] = {}
        #: the number of this worker's latest pop of each lease it holds (:data:`LEASE_POP`)
        self._pops: dict[str, int] = {}
        self._pop_count = 0
        self._lock = threading.Lock()
        #: a heartbeat that failed (Redis unreachable from here) since the last one that worked
        self._beat_failed = False
        #: no reclaim before this (monotonic): after an outage that this worker saw too, the
        #: others' heartbeats lapsed with its own; they get one lease period to refresh them
        self._reclaim_after = 0.0
        self._scripts = {
            name: client.register_script(src)
            for name, src in (
                ("pop", _POP),
                ("take", _TAKE),
                ("uncount", _UNCOUNT),
                ("release", _RELEASE_UNCOUNTED),
                ("claim", _CLAIM),
                ("requeue", _REQUEUE),
                ("stored", _STORED),
                ("send", _SEND),
                ("mark_sent", _MARK_SENT),
                ("push", _PUSH),
                ("waiting", _WAITING),
                ("storing", _STORING),
                ("settle", _SETTLE),
            )  # fmt: skip
        }

    def inflight_key(self, worker: str) -> str:
        return f"{self.prefix}:inflight:{worker}"

    def alive_key(self, worker: str) -> str:
        return f"{self.prefix}:alive:{worker}"

    def claim_key(self, url: str) -> str:
        """The store-claims on the page stored as ``url`` (field: the worker writing it)."""
        return f"{self.prefix}:storing:{hashlib.sha1(url.encode('utf-8')).hexdigest()}"

    def _url_of(self, lease_id: str) -> str:
        with self._lock:
            entry = self._entries.get(lease_id)
        try:
            return stored_url(entry) if entry else ""
        except (ValueError, KeyError):
            return ""

    def _inc(self, key: str, count: int = 1) -> None:
        if self.stats is not None and count:
            self.stats.inc_value(key, count)

    # -- this worker ---------------------------------------------------------------------------
    def beat(self) -> None:
        """Register and refresh the heartbeat (every second while the worker lives)."""
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.set(self.alive_key(self.worker), 1, px=self.lease_ms)
            pipe.sadd(self.registry, self.worker)
            pipe.execute()
        except self.errors:
            self._beat_failed = True
            raise
        if self._beat_failed:  # Redis is back: every worker's heartbeat may have lapsed
            self._beat_failed = False
            self._reclaim_after = time.monotonic() + self.lease_ms / 1000
            self._inc("topicrawl/frontier/reclaim_deferred")

    def close(self) -> None:
        """The worker ends: its heartbeat goes at once, so what it still holds (requests
        cancelled by the close) is reclaimed by the others, or by the next start."""
        self.client.delete(self.alive_key(self.worker))

    def pop(self, limit: int | None = None) -> tuple[bytes, str] | None:
        """The best frontier entry, leased to this worker: (entry, lease id); None when the
        frontier is empty or the page budget ``limit`` is spent."""
        found = self._scripts["pop"](
            keys=[self.frontier_key, self.inflight, self.pages_key, self.precounted_key],
            args=[-1 if limit is None else limit],
        )
        if not found:
            return None
        entry, lease_id = _b(found[0]), _s(found[1])
        with self._lock:
            self._entries[lease_id] = entry
            self._pop_count += 1
            self._pops[lease_id] = self._pop_count
            if len(found) > 2 and int(found[2]):
                self._precounted_ids.add(lease_id)
        return entry, lease_id

    def stamp(self, lease_id: str, meta: dict[str, Any]) -> None:
        """Give a popped request's ``meta`` its lease and the number of that pop."""
        meta[LEASE] = lease_id
        with self._lock:
            pop = self._pops.get(lease_id)
        if pop is not None:
            meta[LEASE_POP] = pop

    def held_id(self, meta: dict[str, Any] | None) -> str | None:
        """The lease of a request's ``meta`` when this copy may still end or give it back:
        ``None`` without a lease, or for a copy from an earlier pop (:meth:`superseded`)."""
        lease_id = (meta or {}).get(LEASE)
        return lease_id if lease_id and not self.superseded(meta) else None

    def superseded(self, meta: dict[str, Any] | None) -> bool:
        """Whether a request's lease was popped again since its own pop (a copy reclaimed
        before it was sent, then this worker popped the requeued entry): the old copy is
        dropped and leaves the lease alone."""
        if not meta or LEASE not in meta or LEASE_POP not in meta:
            return False
        with self._lock:
            current = self._pops.get(meta[LEASE])
        return current is not None and current != meta[LEASE_POP]

    def take(self, lease_id: str, url: str, *, count: bool, limit: int | None,
             debt: int = 0) -> int:  # fmt: skip
        """Count the page of ``lease_id`` (stored as ``url``): its number in the crawl (1
        when not counting), 0 when over budget, -1 when another worker owns the request now.
        A lease taken by a reclaimer while this worker was slow is taken back when the entry
        still waits in the frontier."""
        with self._lock:
            entry = self._entries.get(lease_id)
        recovered, plain = self._forms(entry)
        n = int(self._scripts["take"](
            keys=[self.inflight, self.pages_key, self.frontier_key, self.precounted_key],
            args=[lease_id, entry or b"", recovered, int(count), -1 if limit is None else limit,
                  debt, plain],
        ))  # fmt: skip
        log.debug("count of %s (lease %s): %d", url, lease_id[:10], n)
        if n == -1:
            self._inc("topicrawl/frontier/lease_lost")
        elif n > 0:
            with self._lock:
                self._counted[url] = lease_id
                self._counted_ids.add(lease_id)
        return n

    def forget(self, lease_id: str) -> None:
        with self._lock:
            self._drop(lease_id)

    def _drop(self, lease_id: str) -> tuple[bytes | None, bool]:
        """This worker's memory of a lease (its entry, sent and handed-on marks) forgotten;
        the caller holds the lock. Returns (its entry or None, whether it was sent)."""
        sent = lease_id in self._sent_ids
        self._sent_ids.discard(lease_id)
        self._precounted_ids.discard(lease_id)
        self._pops.pop(lease_id, None)
        return self._entries.pop(lease_id, None), sent

    def _stored_elsewhere(self, lease_id: str) -> bool:
        """Whether the database holds the page of a lease popped with a handed-on count (the
        slow worker that counted it first stored its own copy): that count is the stored
        page's, not to be given back when this lease ends without a page. Asked only for such
        leases (a database query); False when the store cannot say."""
        with self._lock:
            entry = self._entries.get(lease_id) if lease_id in self._precounted_ids else None
        if entry is None or self.stored_check is None:
            return False
        try:
            url = stored_url(entry)
            return url in self.stored_check([url])
        except Exception as exc:  # the database is down: the count goes back
            log.warning("lease end: the store could not say whether it holds a page (%s)", exc)
            return False

    def send(self, lease_id: str, fetched_key: str, fingerprint: str) -> int:
        """The request of ``lease_id`` goes to download: 1 when its URL was not sent before
        (added to the fetch-once set and the lease marked sent, in one script), 0 when it
        was, :data:`LOST` when the lease was reclaimed (not sent: the queued copy is
        another worker's to fetch)."""
        code = int(self._scripts["send"](keys=[fetched_key, self.inflight],
                                         args=[fingerprint, lease_id]))  # fmt: skip
        if code == 1:
            with self._lock:
                self._sent_ids.add(lease_id)
        return code

    def mark_sent(self, lease_id: str, *, held: bool = False) -> bool:
        """The request goes to download past the fetch-once set (a retry, a request sent
        again, the Bloom seen set): its lease is marked sent. ``held``: only while the lease
        is this worker's (False when reclaimed: the request is not to be sent)."""
        if held:
            if not int(self._scripts["mark_sent"](keys=[self.inflight], args=[lease_id])):
                return False
        else:
            self.client.hset(self.inflight, f"s:{lease_id}", 1)
        with self._lock:
            self._sent_ids.add(lease_id)
        return True

    def unmark_sent(self, lease_id: str) -> None:
        self.client.hdel(self.inflight, f"s:{lease_id}")
        with self._lock:
            self._sent_ids.discard(lease_id)

    def uncount(self, lease_id: str, *, count: bool) -> bool:
        """A counted page will not be stored: its count goes back (True) unless a reclaimer
        handed it on to the request it queued again, or it was handed on to this lease and
        the database has the page (:meth:`_stored_elsewhere`)."""
        keep = self._stored_elsewhere(lease_id)
        url = self._url_of(lease_id)
        with self._lock:
            self._counted_ids.discard(lease_id)
            self._precounted_ids.discard(lease_id)
            for page, held in list(self._counted.items()):
                if held == lease_id:
                    del self._counted[page]
        back = bool(self._scripts["uncount"](
            keys=[self.inflight, self.pages_key, self.handed_key, self.claim_key(url)],
            args=[lease_id, int(count and not keep), url, self.worker],
        ))  # fmt: skip
        log.debug("count of %s (lease %s) given back: %s", url, lease_id[:10], back)
        return back

    def release(self, lease_id: str) -> None:
        """The request is done and its page was not counted: the lease ends (a count a
        reclaim handed on to it goes back, unless the database has the page)."""
        with self._lock:
            counted = lease_id in self._counted_ids
        keep = not counted and self._stored_elsewhere(lease_id)
        url = self._url_of(lease_id)
        held = self._scripts["release"](
            keys=[self.inflight, self.pages_key, self.precounted_key, self.handed_key,
                  self.claim_key(url)],
            args=[lease_id, int(keep), url, self.worker],
        )  # fmt: skip
        log.debug("lease %s of %s ended uncounted (held %s)", lease_id[:10], url, held)
        with self._lock:
            if lease_id not in self._counted_ids:  # a counted one ends when stored
                self._drop(lease_id)

    @staticmethod
    def _forms(entry: bytes | None) -> tuple[bytes, bytes]:
        """A leased entry as a reclaimer queues it again: (sent, not sent)."""
        if not entry:
            return b"", b""
        return requeued_entry(entry, True)[0], requeued_entry(entry, False)[0]

    def push(self, data: bytes, score: float, lease_id: str | None = None) -> bool:
        """Push a frontier entry; a request sent back (a retry, a redirect, a deferral)
        ends the lease it came from in the same script. False when a reclaimer took that
        lease and another worker has the request now: not pushed (that worker fetches it)."""
        if not lease_id:
            self.client.zadd(self.frontier_key, {data: score})
            return True
        with self._lock:
            entry = self._entries.get(lease_id)
        recovered, plain = self._forms(entry)
        url = self._url_of(lease_id)
        pushed = bool(self._scripts["push"](
            keys=[self.inflight, self.frontier_key, self.pages_key, self.precounted_key,
                  self.handed_key, self.claim_key(url)],
            args=[lease_id, recovered, plain, score, data, url, self.worker],
        ))  # fmt: skip
        self.forget(lease_id)
        if not pushed:
            self._inc("topicrawl/frontier/lease_lost")
        return pushed

    def requeue_own(self, lease_id: str) -> bool:
        """Put a request this worker holds back into the frontier (its page came over
        budget: it waits there for a larger budget, marked to pass the fetch-once set)."""
        with self._lock:
            entry, sent = self._drop(lease_id)
        if entry is None:
            return False
        data, score = requeued_entry(entry, sent)
        return bool(self._scripts["requeue"](
            keys=[self.inflight, self.pages_key, self.frontier_key, self.precounted_key,
                  self.handed_key],
            args=[lease_id, 1, score, data, stored_url(entry)],
        ))  # fmt: skip

    def storing(self, urls: Iterable[str], *, limit: int | None) -> set[str]:
        """The writer is about to write these pages: each counted one is claimed for the
        write (:data:`_STORING`, one script for the batch; called by the store's writer thread
        right before the database write, so a copy of the page another worker holds keeps its
        count while this write may land). The URLs not to write: pages whose lease a
        reclaimer took, whose handed-on count went back meanwhile and that the budget
        ``limit`` no longer allows (``topicrawl/frontier/store_dropped``); one it allows is
        counted afresh (``topicrawl/frontier/store_recounted``)."""
        quads: list[Any] = []
        claims: list[str] = []
        with self._lock:
            for url in urls:
                lease_id = self._counted.get(url)
                if lease_id is None:
                    continue
                entry = self._entries.get(lease_id) or b""
                copy = requeued_entry(entry, lease_id in self._sent_ids)[0] if entry else b""
                quads += [lease_id, url, entry, copy]
                claims.append(self.claim_key(url))
        if not quads:
            return set()
        codes = self._scripts["storing"](
            keys=[self.inflight, self.pages_key, self.frontier_key, self.precounted_key,
                  self.handed_key, self.writes_key, *claims],
            args=[self.worker, self.claim_ms, -1 if limit is None else limit, *quads],
        )  # fmt: skip
        dropped: set[str] = set()
        recounted = 0
        with self._lock:
            for lease_id, url, code in zip(quads[::4], quads[1::4], codes, strict=True):
                code = int(code)
                log.debug("store-claim of %s (lease %s): %d", url, lease_id[:10], code)
                if code > 0:
                    self.taken_back += code == 2
                    recounted += code == 4
                    continue
                dropped.add(url)
                self._counted.pop(url, None)
                self._counted_ids.discard(lease_id)
                self._drop(lease_id)
        self.recounted += recounted
        if recounted:
            log.info("%d pages to store had lost their lease and its count while this worker "
                     "was slow: counted again under the budget", recounted)  # fmt: skip
        for url in sorted(dropped):
            log.info("%s not stored: this worker was slow, its lease was reclaimed and the "
                     "count given back, and the page budget is spent", url)  # fmt: skip
        self.dropped += len(dropped)
        return dropped

    def stored(self, urls: Iterable[str], *, count: bool = True) -> int:
        """The database holds these pages: their leases and store-claims end (called by the
        store's writer thread; redis-py's client is thread-safe). A lease a reclaimer took
        while this worker was slow is taken back from the frontier with the count the
        reclaimer handed on to it (the number of those, also in :attr:`taken_back`); a copy
        another worker popped keeps the count for this page. A page written after its claim
        lapsed whose count went back meanwhile is counted again (:attr:`late`)."""
        triples: list[Any] = []
        claims: list[str] = []
        with self._lock:
            for url in urls:
                lease_id = self._counted.pop(url, None)
                if lease_id is None:
                    continue
                self._counted_ids.discard(lease_id)
                entry, sent = self._drop(lease_id)
                triples += [lease_id, requeued_entry(entry, sent)[0] if entry else b"", url]
                claims.append(self.claim_key(url))
        if not triples:
            return 0
        back, late = (int(n) for n in self._scripts["stored"](
            keys=[self.inflight, self.pages_key, self.frontier_key, self.precounted_key,
                  self.handed_key, self.writes_key, *claims],
            args=[int(count), self.worker, *triples],
        ))  # fmt: skip
        if back:
            self.taken_back += back
            log.info("%d stored pages had been reclaimed while this worker was slow: taken "
                     "back from the frontier with their count", back)  # fmt: skip
        if late:
            self.late += late
            log.warning("%d pages were written after their store-claim lapsed (%.0f s) and "
                        "their count had gone back: counted again, the budget may be "
                        "exceeded by as many", late, self.claim_ms / 1000)  # fmt: skip
        return len(triples) // 3

    def settle(self) -> int:
        """Give back the handed-on counts held for a store-claim that lapsed unwritten (its
        worker died between its claim and its write): a page the database has keeps its
        count. The number given back (``topicrawl/frontier/claim_count_given_back``)."""
        # HSCAN: the record of handed-on counts grows with the reclaimed pages; read it in
        # bounded replies, never in one
        states = self.client.hscan_iter(self.handed_key, count=500)
        pending = sorted({_s(url) for url, state in states if _b(state) == b"p"})
        if not pending:
            return 0
        live = self.client.pipeline(transaction=False)
        for url in pending:
            live.exists(self.claim_key(url))
        pending = [url for url, n in zip(pending, live.execute(), strict=True) if not n]
        if not pending:
            return 0
        stored: set[str] = set()
        if self.stored_check is not None:
            try:
                stored = self.stored_check(pending)
            except Exception as exc:  # the database is down: settled later
                log.warning("settle: the store could not say which pages it holds (%s)", exc)
                return 0
        given = 0
        for url in pending:
            done = int(self._scripts["settle"](
                keys=[self.handed_key, self.claim_key(url), self.pages_key],
                args=[url, int(url in stored)],
            ))  # fmt: skip
            given += done == 2
        self._inc("topicrawl/frontier/claim_count_given_back", given)
        if given:
            log.info("%d counts held for a store-claim that lapsed unwritten went back", given)
        return given

    # -- the others ----------------------------------------------------------------------------
    def stale_workers(self, fresh_ms: int | None = None) -> list[str]:
        """Other workers holding leases whose heartbeat is late (not refreshed for
        ``fresh_ms``, default 3 s or half the lease) but not yet expired: probably dead,
        reclaimable soon."""
        if fresh_ms is None:
            fresh_ms = min(3000, self.lease_ms // 2)
        others = [_s(w) for w in self.client.smembers(self.registry) if _s(w) != self.worker]
        if not others:
            return []
        pipe = self.client.pipeline(transaction=False)
        for w in others:
            pipe.pttl(self.alive_key(w))
            pipe.hlen(self.inflight_key(w))
        answers = pipe.execute()
        return [w for w, ttl, held in zip(others, answers[::2], answers[1::2], strict=True)
                if held and 0 < ttl < self.lease_ms - fresh_ms]  # fmt: skip

    def reclaim(self) -> int:
        """Put back into the frontier what workers with an expired heartbeat held (and what
        this worker reclaimed before and could not finish); the number of entries. Nothing
        during a Redis outage this worker saw, nor for one lease period after it: the others'
        heartbeats lapsed because Redis was unreachable, not because they died (two live
        workers reclaiming each other fetched pages twice)."""
        if self._beat_failed or time.monotonic() < self._reclaim_after:
            return 0
        total = 0
        for worker in sorted(_s(w) for w in self.client.smembers(self.registry)):
            if worker == self.worker:
                continue
            flat = self._scripts["claim"](
                keys=[self.alive_key(worker), self.inflight_key(worker), self.inflight,
                      self.registry],
                args=[worker],
            )  # fmt: skip
            if flat:
                fields = {_s(k): _b(v) for k, v in zip(flat[::2], flat[1::2], strict=True)}
                total += self._requeue(worker, fields)
        self.settle()
        return total

    def _requeue(self, worker: str, fields: dict[str, bytes]) -> int:
        entries = {k: v for k, v in fields.items() if not k.startswith(("c:", "s:"))}
        counted = {k for k in entries if f"c:{k}" in fields}
        urls = {k: stored_url(v) for k, v in entries.items() if k in counted}
        stored: set[str] = set()
        if urls and self.stored_check is not None:
            try:
                stored = self.stored_check(sorted(set(urls.values())))
            except Exception as exc:  # the database is down: count back and fetch again
                log.warning("reclaim: the store could not say which pages it holds (%s)", exc)
        moved = already = handed_on = carried = 0
        for lease_id, entry in entries.items():
            keep = lease_id in urls and urls[lease_id] in stored
            try:
                data, score = requeued_entry(entry, sent=f"s:{lease_id}" in fields)
                url = stored_url(entry)
            except (ValueError, KeyError):  # not a request of ours: dropped
                data, score, keep, url = b"", 0.0, True, ""
            done = int(self._scripts["requeue"](
                keys=[self.inflight, self.pages_key, self.frontier_key, self.precounted_key,
                      self.handed_key],
                args=[lease_id, int(not keep), score, data, url],
            ))  # fmt: skip
            log.debug("reclaimed %s of %s (lease %s, counted %s, stored %s): %d", url, worker,
                      lease_id[:10], lease_id in counted, keep, done)  # fmt: skip
            if done:
                moved += not keep
                already += keep and lease_id in counted
                handed_on += lease_id in counted and not keep
                carried += done == 2 and lease_id not in counted
        self._inc("topicrawl/frontier/recovered_from_dead_worker", moved)
        self._inc("topicrawl/frontier/recovered_stored", already)
        self._inc("topicrawl/frontier/recovered_count_handed_on", handed_on)
        self._inc("topicrawl/frontier/recovered_count_carried", carried)
        if moved or already:
            log.info(
                "worker %s stopped answering: %d of its requests in flight are back in the "
                "frontier (%d pages it had counted hand their count on to them), %d already "
                "stored", worker, moved, handed_on, already,
            )  # fmt: skip
        return moved

    def precounted(self, *, waiting: bool = False) -> int:
        """Requests queued again by a reclaim that hold their page's count (popped and not
        yet counted, or ``waiting`` in the frontier only: a spent budget still has those to
        fetch, and a mark whose entry went astray never keeps a worker from ending)."""
        if waiting:
            keys = [self.precounted_key, self.frontier_key, self.handed_key]
            return int(self._scripts["waiting"](keys=keys, args=[]))
        return int(self.client.hlen(self.precounted_key))


_LEASES: weakref.WeakKeyDictionary[Any, WorkerLease | None] = weakref.WeakKeyDictionary()


def lease_of(crawler: Any) -> WorkerLease | None:
    """The crawl's one :class:`WorkerLease` (scheduler, spider, store and idle extension
    share it); None unless a scrapy-redis scale-out with ``TOPICRAWL_LEASE_SECONDS`` > 0."""
    if crawler is None:
        return None
    try:
        return _LEASES[crawler]
    except KeyError:
        pass
    from crawler.middlewares import scaleout_redis

    s = crawler.settings
    client = scaleout_redis(s)
    seconds = s.getfloat("TOPICRAWL_LEASE_SECONDS", 0.0)
    lease = None
    if client is not None and seconds > 0:
        name = crawler.spidercls.name
        lease = WorkerLease(
            client,
            s.get("TOPICRAWL_LEASE_PREFIX", "topicrawl:%(spider)s") % {"spider": name},
            frontier_key=s.get("SCHEDULER_QUEUE_KEY", "%(spider)s:requests") % {"spider": name},
            pages_key=s.get("TOPICRAWL_PAGES_KEY", "topicrawl:%(spider)s:pages") % {"spider": name},
            lease_seconds=seconds,
            claim_seconds=s.getfloat("TOPICRAWL_LEASE_CLAIM_SECONDS", 0.0) or None,
        )  # its stats are the crawler's once the crawl starts (SharedIdleClose.spider_opened)
    _LEASES[crawler] = lease
    return lease


class LeaseMiddleware:
    """Spider middleware: a response whose callback produced no counted page ends its lease
    once the callback's output is processed (a counted page's lease ends when stored)."""

    def __init__(self, lease: WorkerLease):
        self.lease = lease

    @classmethod
    def from_crawler(cls, crawler: Any) -> LeaseMiddleware:
        from scrapy import signals
        from scrapy.exceptions import NotConfigured

        lease = lease_of(crawler)
        if lease is None:
            raise NotConfigured("not a scale-out crawl, or TOPICRAWL_LEASE_SECONDS is 0")
        mw = cls(lease)
        # a redirect or retry the scheduler refused (its target seen before) ends the lease
        crawler.signals.connect(mw._done, signal=signals.request_dropped)
        return mw

    def _done(self, response: Any = None, request: Any = None, **_: Any) -> None:
        """``response`` (or a dropped ``request``) is done with: its uncounted lease ends."""
        done = response if response is not None else request
        if done is not None and done.meta.get(LEASE_KEPT):  # the callback ends it later
            return
        lease_id = self.lease.held_id(done.meta) if done is not None else None
        if lease_id:
            try:
                self.lease.release(lease_id)
            except self.lease.errors as exc:
                log.debug("lease of %s not released (%s)", done.url, exc)

    async def process_spider_output_async(self, response: Any, result: Any) -> Any:
        try:
            async for obj in result:
                yield obj
        finally:
            self._done(response)

    def process_spider_output(self, response: Any, result: Any) -> Any:
        try:
            yield from result
        finally:
            self._done(response)

    async def process_start(self, start: Any) -> Any:
        async for obj in start:
            yield obj
