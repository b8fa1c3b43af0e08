"""Property-based tests (hypothesis): hostile input never crashes decoding, the frontier
serializer, the address policy or topic parsing, and valid input round-trips."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crawler import serialization
from crawler.addresspolicy import AddressPolicy
from relevance.topic import parse_topic
from topicrawl.errors import TopicFileError
from topicrawl.extract import decode_html

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text() | st.binary()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=5) | st.binary(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@FAST
@given(st.dictionaries(st.text(max_size=8), json_values, max_size=6))
def test_serializer_round_trips_data(obj):
    back = serialization.loads(serialization.dumps(obj))

    def norm(v):  # JSON has no tuples: lists stay lists
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [norm(x) for x in v]
        return v

    assert norm(back) == norm(obj)


@FAST
@given(st.binary(max_size=2000))
def test_serializer_loads_refuses_or_returns_a_dict(data):
    try:
        assert isinstance(serialization.loads(data), dict)
    except ValueError:
        pass


@FAST
@given(st.binary(max_size=3000), st.sampled_from([None, "utf-8", "gbk", "big5", "bogus"]))
def test_decode_never_raises(body, header):
    text, codec = decode_html(body, header)
    assert isinstance(text, str) and codec


@FAST
@given(st.text(min_size=50, max_size=800), st.integers(0, 10_000), st.binary(min_size=1, max_size=1))
def test_valid_utf8_with_one_stray_byte_stays_utf8(text, where, stray):
    body = text.encode("utf-8")
    cut = where % (len(body) + 1)
    while cut < len(body) and (body[cut] & 0xC0) == 0x80:  # between characters
        cut += 1
    damaged = body[:cut] + stray + body[cut:]
    decoded, codec = decode_html(damaged, "utf-8")
    assert codec == "utf-8"
    if stray[0] < 0x80:
        assert decoded == damaged.decode("utf-8")


@FAST
@given(st.text(max_size=200))
def test_address_policy_never_raises_on_any_url(url):
    policy = AddressPolicy(["http://a.example/"], ["*.gov.cn"], resolver=lambda h: [])
    reason, host = policy.check_url(url)
    assert reason in (None, "scheme", "host", "port", "address")
    if url.lower().startswith(("file:", "ftp:", "data:")):
        assert reason == "scheme"


@FAST
@given(st.text(max_size=300))
def test_topic_parsing_fails_only_with_a_topic_error(text):
    try:
        parse_topic(text, path="t.toml")
    except TopicFileError:
        pass


@pytest.mark.parametrize("host", ["169.254.169.254", "[::1]", "[fe80::1]", "10.0.0.1", "0x7f.1"])
def test_internal_literals_as_allowed_hosts_are_still_refused(host):
    policy = AddressPolicy(["http://a.example/"], [host.strip("[]")])
    reason, name = policy.check_url(f"http://{host}/")
    if reason is None and name:  # not an IP literal to Python ("0x7f.1"): the resolver's
        reason = policy.resolve_reason(name)
    assert reason in ("address", "host", "dns")
