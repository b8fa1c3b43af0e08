"""Algorithms 2 and 3: URL-structure similarity and the reservoir sample."""

from __future__ import annotations

from collections import Counter

import pytest

from relevance.urls import (
    PerHostStructureSample,
    StructureSample,
    char_jaccard,
    host_similarity,
    jaccard,
    paper_host_similarity,
    paper_path_similarity,
    path_similarity,
    same_path,
    url_similarity,
    urls_similar,
)

U1 = "http://news.sina.com.cn/china/2024/a.html"
U2 = "http://news.sina.com.cn/world/2024/b.html"


def test_jaccard():
    assert jaccard("a.html", "b.html") == pytest.approx(4 / 6)  # {.h ht tm ml} of 6 bigrams
    assert jaccard("a", "a") == 1.0 and jaccard("ab", "a") == 0.0
    assert jaccard("china", "world") == 0.0
    assert jaccard("", "") == 1.0


def test_same_host_paper_vs_path_mode():
    assert url_similarity(U1, U2, mode="paper") == float("inf")  # step (2): similar, stop
    path_sim = (1 * 0.0 + 0.5 * 1.0 + 0.25 * 4 / 6) / 1.75
    assert path_similarity(["china", "2024", "a.html"], ["world", "2024", "b.html"]) == (
        pytest.approx(path_sim)
    )
    assert url_similarity(U1, U2) == pytest.approx(0.5 * 1.0 + 0.5 * path_sim)
    assert urls_similar(U1, U2, mode="paper")
    assert not urls_similar(U1, U2, threshold=0.75)  # path mode decides on the path
    assert urls_similar(U1, "http://news.sina.com.cn/china/2024/c.html", threshold=0.75)
    # a subdomain is contained in its parent host
    assert urls_similar("http://sina.com.cn/x", "http://news.sina.com.cn/y", mode="paper")


def test_paper_mode_is_algorithm2_as_published():
    """Steps (3)-(4) by hand: sums over n = min parts, character Jaccard, host weights
    0.6, 0.4, 0.2, 0 right to left, path weights 1, 1/2, 1/4."""
    u3 = "http://www.people.com.cn/politics/2024/b.html"
    # hosts cn|cn 1, com|com 1, sina|people 0, news|www: weight 0 (0.6 - 3 * 0.2)
    assert paper_host_similarity(
        ["news", "sina", "com", "cn"], ["www", "people", "com", "cn"]
    ) == pytest.approx(0.6 + 0.4)
    # china|politics {c, i} of 10 characters, 2024|2024, a.html|b.html 5 of 7
    path = 1 * 2 / 10 + 0.5 * 1 + 0.25 * 5 / 7
    assert paper_path_similarity(
        ["china", "2024", "a.html"], ["politics", "2024", "b.html"]
    ) == pytest.approx(path)
    assert url_similarity(U1, u3, mode="paper") == pytest.approx(0.5 * 1.0 + 0.5 * path)
    # n = min: a section URL and an article under it agree on every part compared
    sec, art = "http://a.org/politics/", "http://b.net/politics/2024/x.html"
    assert url_similarity(sec, art, mode="paper") == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    # the 'www' rule when both parts are 'www' only
    assert paper_host_similarity(["www", "a", "com"], ["www", "b", "com"]) == pytest.approx(
        0.6 + 0.0 + 0.2 / 2
    )
    assert paper_host_similarity(["www", "a", "com"], ["news", "b", "com"]) == pytest.approx(
        0.6 + 0.2 * 1 / 4
    )
    # the paper's threshold (Table 6: 0.05-0.10)
    assert not urls_similar("http://a.org/x", "http://b.net/y", mode="paper", threshold=0.1)
    assert urls_similar(sec, art, mode="paper", threshold=0.1)
    assert char_jaccard("a.html", "b.html") == pytest.approx(5 / 7)


def test_path_mode_deviations():
    """The default mode on the same URLs: aligned over the longer path (missing parts 0),
    weighted means, bigram Jaccard."""
    sec, art = "http://a.org/politics/", "http://b.net/politics/2024/x.html"
    assert url_similarity(sec, art) == pytest.approx(0.5 * 0.0 + 0.5 * 1 / 1.75)
    with pytest.raises(ValueError):
        url_similarity(sec, art, mode="nope")


def test_host_weights_and_www():
    # right to left: com (w=.6, J=1), a (w=.4, J=1), www|news (w=.2/d=.1, J=0)
    expected = (0.6 + 0.4 + 0.1 * 0.0) / (0.6 + 0.4 + 0.1)
    assert host_similarity(["www", "ab", "com"], ["news", "ab", "com"], d=1.0) == pytest.approx(
        1.0 / 1.2
    )
    assert host_similarity(["www", "a", "com"], ["news", "a", "com"]) == pytest.approx(expected)
    assert url_similarity("http://www.a.com/", "http://news.a.com/") == pytest.approx(
        0.5 * expected + 0.5 * 1.0
    )


def test_reservoir_is_uniform():
    counts: Counter[int] = Counter()
    runs = 2000
    for seed in range(runs):
        s = StructureSample(5, seed=seed)
        for i in range(20):
            s.add(f"http://h/{i}")
        assert len(s.sample) == 5 and s.seen == 20
        counts.update(int(u.rsplit("/", 1)[1]) for u in s.sample)
    for i in range(20):
        assert counts[i] / runs == pytest.approx(5 / 20, abs=0.04)


def test_struct_majority():
    s = StructureSample(4, seed=1)
    assert s.struct("http://a.com/politics/1.html") == 0.0  # empty sample
    for i in range(3):
        s.add(f"http://news.a.com/politics/2024/{i}.html")
    s.add("http://news.a.com/sports/2024/9.html")
    assert s.struct("http://news.a.com/politics/2024/77.html") == 1.0
    assert s.struct("http://other.org/ent/star/77.php") == 0.0


def test_per_host_struct_fires_where_one_mixed_sample_does_not():
    # 4 sites file the topic under different paths: no path holds the majority of one
    # mixed sample, but each holds the majority of its own host's sample
    accepted = [
        f"http://{host}/{path}/2024/{i}.html"
        for host, path in (
            ("news.a.com", "politics"),
            ("www.b.cn", "shizheng"),
            ("c.com.cn", "china"),
            ("d.cn", "gov"),
        )
        for i in range(3)
    ]
    single, per_host = StructureSample(20, seed=0), PerHostStructureSample(20, seed=0)
    for u in accepted:
        single.add(u)
        per_host.add(u)
    for new in ("http://news.a.com/politics/2024/99.html", "http://www.b.cn/shizheng/2024/9.html"):
        assert single.struct(new) == 0.0
        assert per_host.struct(new) == 1.0
    assert per_host.struct("http://news.a.com/sports/2024/99.html") == 0.0  # other section
    assert per_host.struct("http://e.com/politics/2024/1.html") == 0.0  # host never accepted
    assert per_host.seen == 12 and set(per_host.samples) == {
        "news.a.com",
        "www.b.cn",
        "c.com.cn",
        "d.cn",
    }


def test_per_host_reservoirs_bounded_and_reproducible():
    a, b = PerHostStructureSample(3, seed=7), PerHostStructureSample(3, seed=7)
    for i in range(50):
        for s in (a, b):
            s.add(f"http://x.com/p/{i}.html")
            s.add(f"http://y.com/q/{i}.html")
    assert all(len(s.sample) == 3 and s.seen == 50 for s in a.samples.values())
    assert {h: s.sample for h, s in a.samples.items()} == {
        h: s.sample for h, s in b.samples.items()
    }
    assert a.samples["x.com"].sample != [f"http://x.com/p/{i}.html" for i in range(3)]


def test_has_structure_needs_a_majority_and_half_a_sample():
    s = StructureSample(4, seed=0)
    s.add("http://a.com/politics/2024/1.html")
    assert not s.has_structure()  # fewer than n/2 URLs: no evidence yet
    s.add("http://a.com/politics/2024/2.html")
    assert s.has_structure()
    split = StructureSample(4, seed=0)  # four sections, no majority
    for sec in ("guonei", "guoji", "yaowen", "pinglun"):
        split.add(f"http://b.cn/{sec}/201906/t1.htm")
    assert not split.has_structure()
    per_host = PerHostStructureSample(4, seed=0)
    for i in range(3):
        per_host.add(f"http://a.com/politics/2024/{i}.html")
    assert per_host.has_structure("http://a.com/sports/x.html")
    assert not per_host.has_structure("http://c.com/politics/2024/1.html")


def test_same_path_ignores_query_only():
    assert same_path("http://a.cn/calendar/?d=1", "http://a.cn/calendar/?d=2")
    assert not same_path("http://a.cn/politics/", "http://a.cn/politics/index_2.html")
    assert not same_path("http://a.cn/x/", "http://b.cn/x/")
