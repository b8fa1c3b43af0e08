"""The relevance CLI against real data: similarity, similarity eval, vectors train, topic
suggest and topic tune on a stored run."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from relevance.evaluate import (
    description_weight_table,
    precision_at_recall,
    precision_recall_f1,
    roc_auc,
    tune_priority,
)
from relevance.topic import load_topic
from topicrawl.cli import main
from topicrawl.data import data_path


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("TOPICRAWL_CACHE", str(tmp_path_factory.getbasetemp() / "tr-cache"))


def test_similarity_words_and_eval(tmp_path, capsys):
    assert main(["similarity", "男人", "女人"]) == 0
    out = capsys.readouterr().out
    assert "hownet" in out and "0.8611" in out
    pairs = tmp_path / "pairs.txt"
    pairs.write_text(
        "男人\t女人\t4.5\n苹果\t香蕉\t4.0\n中国\t国家\t3.5\n政治\t苹果\t0.5\n战争\t和平\t1.0\n"
        "不存在词甲\t苹果\t2.0\n",
        encoding="utf-8",
    )
    assert main(["similarity", "eval", str(pairs)]) == 0
    out = capsys.readouterr().out
    assert "6 pairs" in out and "5/6" in out  # coverage: one pair has an unknown word
    first, second = out.split("\n\n")
    rows = {line.split()[0]: line.split() for line in first.splitlines()[2:]}
    assert set(rows) == {"hownet", "cilin", "hybrid"}  # each source and the combination
    assert "pearson(covered)" in out and all(len(r) == 5 for r in rows.values())
    # the combination against each part on that part's pairs: (combination, part, pairs)
    compared = {tuple(line.split()[:3]) for line in second.splitlines()[2:]}
    assert compared == {("hybrid", "hownet", "5"), ("hybrid", "cilin", "5")}
    assert main(["similarity", "eval", str(pairs), "--half", "tune"]) == 0
    assert "3 pairs (tune)" in capsys.readouterr().out


def test_similarity_eval_with_vectors_rows(tmp_path, capsys):
    from relevance.vectors import save_vectors, train_vectors

    with data_path("corpus", "peoples_daily_199801.txt").open(encoding="utf-8") as fh:
        text = "".join(itertools.islice(fh, 300))
    vec = save_vectors(
        train_vectors(texts=[text], vector_size=8, min_count=2, epochs=1, progress=False),
        tmp_path / "v.kv",
    )
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("中国\t国家\t3.5\n政治\t经济\t2.0\n人民\t群众\t4.0\n", encoding="utf-8")
    assert main(["similarity", "eval", str(pairs), "--vectors", str(vec)]) == 0
    first, second = capsys.readouterr().out.split("\n\n")
    names = [line.split()[0] for line in first.splitlines()[2:]]
    compared = [tuple(line.split()[:2]) for line in second.splitlines()[2:]]
    assert compared == [
        ("hybrid", "hownet"),
        ("hybrid", "cilin"),
        ("algorithm1(hownet+word2vec)", "hownet"),
        ("algorithm1(hownet+word2vec)", "word2vec"),
        ("algorithm1(cilin+word2vec)", "cilin"),
        ("algorithm1(cilin+word2vec)", "word2vec"),
        ("algorithm1(hybrid+word2vec)", "hybrid"),
        ("algorithm1(hybrid+word2vec)", "word2vec"),
    ]
    assert names == [
        "hownet",
        "cilin",
        "word2vec",
        "hybrid",
        "algorithm1(hownet+word2vec)",
        "algorithm1(cilin+word2vec)",
        "algorithm1(hybrid+word2vec)",
    ]


def test_vectors_train_from_files_and_run(tmp_path, capsys):
    from models.store import Store

    src = data_path("corpus", "peoples_daily_199801.txt")
    corpus = tmp_path / "pd.txt"
    with src.open(encoding="utf-8") as fh:
        corpus.write_text("".join(itertools.islice(fh, 300)), encoding="utf-8")
    db = f"sqlite:///{tmp_path / 't.db'}"
    store = Store.from_url(db)
    run = store.start_run("t", "", {})
    store.save_pages(
        run,
        [
            {
                "url": f"http://a/{i}",
                "title": "标题",
                "text": "国务院总理主持召开常务会议。",
                "accepted": True,
            }
            for i in range(5)
        ],
    )
    out = tmp_path / "v.txt"
    args = [
        "vectors",
        "train",
        "--corpus",
        str(corpus),
        "--from-run",
        str(run),
        "--db",
        db,
        "--out",
        str(out),
        "--size",
        "8",
        "--epochs",
        "1",
        "--min-count",
        "2",
    ]
    assert main(args) == 0
    assert "wrote" in capsys.readouterr().out
    from relevance.vectors import VectorSimilarity

    v = VectorSimilarity.from_path(out)
    assert "国家" in v and "常务会议" in v  # the crawled text was trained on too
    assert main(["vectors", "train", "--out", str(out)]) == 1  # nothing to train on


def test_topic_suggest(tmp_path, capsys):
    f = tmp_path / "t.toml"
    main(["topic", "init", str(f), "--name", "水果"])
    main(["topic", "add", str(f), "苹果", "香蕉"])
    capsys.readouterr()
    assert main(["topic", "suggest", str(f), "--topn", "5"]) == 0
    lines = capsys.readouterr().out.splitlines()[1:]
    assert len(lines) == 5 and all(float(x.split()[0]) > 0 for x in lines)
    assert all(x.split()[1] not in ("苹果", "香蕉") for x in lines)


def test_tune_search_by_hand():
    recs = [
        ({"f_info": 0.1, "anchor": a, "struct": 0.0}, y)
        for a, y in [(0.9, True), (0.8, True), (0.5, False), (0.1, False), (0.05, False)]
    ]
    rows = tune_priority(recs, min_recall=1.0, thresholds=(0.1, 0.4, 0.6))
    best = rows[0]
    assert best.harvest == 1.0 and best.recall == 1.0 and best.followed == 2
    assert roc_auc([0.9, 0.8, 0.5, 0.1], [True, True, False, False]) == 1.0
    assert roc_auc([0.5, 0.5], [True, False]) == 0.5


def test_topic_tune_on_a_stored_run(tmp_path, capsys):
    from models.store import Store

    db = f"sqlite:///{tmp_path / 't.db'}"
    store = Store.from_url(db)
    run = store.start_run("t", "", {})
    rng = random.Random(3)
    items, labels = [], {}
    for i in range(60):
        on = i % 3 == 0
        b = {
            "f_info": rng.random() * 0.3,
            "anchor": (0.5 if on else 0.05) + rng.random() * 0.2,
            "struct": 0.0,
            "from_seed": False,
        }
        items.append({"url": f"http://a/{i}", "link_score": b})
        labels[f"http://a/{i}"] = on
    items.append({"url": "http://a/seed", "link_score": {"seed": True}})  # a seed itself
    store.save_pages(run, items)
    lab = tmp_path / "labels.json"
    lab.write_text(json.dumps(labels), encoding="utf-8")
    topic = tmp_path / "t.toml"
    main(["topic", "init", str(topic), "--name", "t"])
    main(["topic", "add", str(topic), "政治"])
    capsys.readouterr()
    assert (
        main(
            [
                "topic",
                "tune",
                str(topic),
                "--run",
                str(run),
                "--labels",
                str(lab),
                "--db",
                db,
                "--recall",
                "1.0",
                "--write",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "60 labelled links (20 on-topic" in out
    first = out.splitlines()[2].split()
    assert float(first[5]) == 1.0 and float(first[6]) == 1.0  # harvest and recall
    t = load_topic(topic)
    assert t.priority.alpha + t.priority.beta + t.priority.lam == pytest.approx(1.0)
    assert t.priority.beta > 0
    assert main(["topic", "tune", "--run", "999", "--labels", str(lab), "--db", db]) == 1


def test_tune_counts_links_from_seeds_as_followed():
    recs = [
        ({"f_info": 0.0, "anchor": 0.9, "struct": 0.0}, True),
        ({"f_info": 0.0, "anchor": 0.0, "struct": 0.0, "from_seed": True}, False),
        ({"f_info": 0.0, "anchor": 0.0, "struct": 0.0}, False),
    ]
    best = tune_priority(recs, min_recall=1.0, thresholds=(0.5,))[0]
    assert best.followed == 2 and best.harvest == 0.5  # the seed page's link is always followed


def test_precision_at_recall_and_description_weight_table():
    scores = [0.9, 0.8, 0.7, 0.6, 0.5]
    labels = [True, False, True, False, True]
    assert precision_at_recall(scores, labels, 2 / 3) == pytest.approx(2 / 3)  # top 3
    assert precision_at_recall(scores, labels, 1.0) == pytest.approx(3 / 5)
    # the description separates perfectly, the text in reverse
    info, text = [0.9, 0.1, 0.8, 0.2], [0.1, 0.9, 0.2, 0.8]
    rows = description_weight_table(info, text, [True, False, True, False], weights=(0, 0.5, 1))
    assert [r.weight for r in rows] == [0, 0.5, 1]
    assert rows[0].auc == 0.0 and rows[1].auc == 0.5 and rows[2].auc == 1.0
    assert rows[2].p_at_recall == 1.0


def test_precision_recall_f1():
    p, r, f = precision_recall_f1([True, True, False, False], [True, False, True, False])
    assert (p, r, f) == (0.5, 0.5, 0.5)
    assert precision_recall_f1([False, False], [True, False]) == (0.0, 0.0, 0.0)
    with pytest.raises(ValueError):
        precision_recall_f1([True], [True, False])


def test_compare_on_part_pairs_by_hand():
    from relevance.evaluate import compare_on_part_pairs

    pairs = [("a", "b", 3.0), ("a", "c", 2.0), ("b", "c", 1.0), ("a", "x", 0.5)]
    comb = {("a", "b"): 0.9, ("a", "c"): 0.8, ("b", "c"): 0.1, ("a", "x"): 0.95}
    part = {("a", "b"): 0.1, ("a", "c"): 0.5, ("b", "c"): 0.9}
    n, rc, rp = compare_on_part_pairs(
        pairs, lambda a, b: comb[a, b], lambda a, b: part.get((a, b), 0.0), lambda w: w != "x"
    )
    # the pair with the word the part does not know is left out of both
    assert (n, rc, rp) == (3, pytest.approx(1.0), pytest.approx(-1.0))
