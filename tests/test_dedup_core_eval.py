"""``topicrawl dedup eval`` and ``topicrawl dedup learn-antecedents`` on tiny hand-made sets."""

from __future__ import annotations

import json
import tomllib

import pytest

from dedup.base import Doc
from dedup.cascade import DEFAULT_METHODS
from dedup.evaluate import (
    AntecedentStats,
    Scores,
    load_document,
    load_pairs,
    select_antecedents,
)
from topicrawl.cli import main
from topicrawl.errors import ConfigError, ResourceMissingError

ZH = (
    "国家统计局今天发布的数据显示，十月份的经济运行是平稳的。在消费领域，社会消费品零售总额"
    "同比增长了百分之五。专家表示，这是政策效应持续显现的结果。在投资方面，制造业投资的增速"
    "是加快的，高技术产业的投资增长了百分之十一。就业形势总体是稳定的，城镇调查失业率为百分之五。"
)
ZH_OTHER = (
    "本赛季的联赛进入了最后阶段，主队在主场的比赛中以三比一战胜了对手。球队的主教练是在赛后"
    "接受采访的，他说球员的表现是出色的。下一轮的比赛将在周六进行，球迷的热情是高涨的。"
)
EN = (
    "The council is meeting on Monday to discuss the new transport plan for the region. There "
    "were protests at the station last week, and the minister is under pressure. A spokesman "
    "said the proposal was a compromise and the final vote is due in March, when the budget is "
    "set. The opposition has said the plan is a gift to the developers."
)
EN_OTHER = (
    "The team won the final on Sunday after a late goal. The coach said the players were tired "
    "but the result was a fair reward. There is a parade in the city on Tuesday, and the mayor "
    "is expected to attend with the captain."
)


def _html(title: str, body: str, nav: str = "") -> str:
    paras = "".join(f"<p>{s}。</p>" for s in body.split("。") if s)
    return (
        f"<html><head><title>{title}</title><meta name='description' content='{title}'></head>"
        f"<body><div class='nav'>{nav}</div><article><h1>{title}</h1>{paras}</article>"
        f"<div class='footer'>{nav}</div></body></html>"
    )


@pytest.fixture()
def pairs_file(tmp_path):
    (tmp_path / "docs").mkdir()
    files = {
        "a.txt": ZH,
        "b.txt": "来源：新华网\n" + ZH + "\n责任编辑：张三",
        "c.txt": ZH_OTHER,
        "half.txt": ZH[: len(ZH) // 2],
        "ea.txt": EN,
        "eb.txt": EN.replace("Monday", "Tuesday") + " Reporting by the desk.",
        "ec.txt": EN_OTHER,
    }
    for name, text in files.items():
        (tmp_path / "docs" / name).write_text(text, "utf-8")
    (tmp_path / "docs" / "p1.html").write_text(_html("经济运行平稳", ZH), "utf-8")
    (tmp_path / "docs" / "p2.html").write_text(
        _html("转载：经济运行平稳", ZH + "来源：人民网"), "utf-8"
    )
    rows = [
        ("a.txt", "b.txt", 1),
        ("a.txt", "c.txt", 0),
        ("a.txt", "half.txt", 0),
        ("ea.txt", "eb.txt", 1),
        ("ea.txt", "ec.txt", 0),
        ("p1.html", "p2.html", 1),
        ("p1.html", "c.txt", 0),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        "\n".join(json.dumps({"a": f"docs/{a}", "b": f"docs/{b}", "label": y}) for a, b, y in rows)
        + "\n",
        "utf-8",
    )
    return path


def test_eval_command_prints_scores_per_method_and_cascade(pairs_file, capsys):
    argv = ["dedup", "eval", "--pairs", str(pairs_file), "--json"]
    argv += ["--method", "exact", "--method", "spotsigs", "--method", "cascade"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    scores = {s["method"]: s for s in out["scores"]}
    assert out["pairs"] == 7
    assert scores["exact"]["tp"] == 0 and scores["exact"]["tn"] == 4
    spot = scores["spotsigs"]
    assert (spot["tp"], spot["fp"], spot["fn"], spot["tn"]) == (3, 0, 0, 4)
    assert spot["precision"] == 1.0 and spot["recall"] == 1.0 and spot["f1"] == 1.0
    assert scores[f"cascade({','.join(DEFAULT_METHODS)})"]["f1"] == 1.0


def test_eval_options_and_table(pairs_file, capsys):
    argv = ["dedup", "eval", "--pairs", str(pairs_file), "--method", "spotsigs"]
    assert main(argv + ["--option", "spotsigs.tau=0.3"]) == 0
    table = capsys.readouterr().out
    assert "7 pairs (3 near-duplicate, 4 different)" in table
    row = next(line for line in table.splitlines() if line.startswith("spotsigs"))
    assert row.split()[4:8] == ["3", "1", "0", "3"]  # the half article now matches
    assert main(argv + ["--option", "spotsigs.tau"]) == 1  # malformed option: an error


def test_load_pairs_errors(tmp_path):
    with pytest.raises(ResourceMissingError):
        load_pairs(tmp_path / "none.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": "x.txt", "b": "y.txt"}\n', "utf-8")
    with pytest.raises(ConfigError, match="bad.jsonl:1"):
        load_pairs(bad)
    bad.write_text('{"a": "x.txt", "b": "y.txt", "label": 2}\n', "utf-8")
    with pytest.raises(ConfigError, match="label"):
        load_pairs(bad)
    (tmp_path / "x.pdf").write_text("x")
    with pytest.raises(ConfigError, match="only .html and .txt"):
        load_document(tmp_path / "x.pdf")


def test_html_documents_use_the_crawl_extraction(pairs_file):
    doc = load_document(pairs_file.parent / "docs" / "p1.html")
    assert doc.title == "经济运行平稳" and doc.description == "经济运行平稳"
    assert "消费品零售总额" in doc.text and doc.lang == "zh"
    assert load_document(pairs_file.parent / "docs" / "ea.txt").lang == "en"


def test_scores_arithmetic():
    s = Scores("m")
    for pred, label in [(1, 1), (1, 1), (1, 0), (0, 1), (0, 0)]:
        s.add(bool(pred), label)
    assert (s.tp, s.fp, s.fn, s.tn) == (2, 1, 1, 1)
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 / 3)
    assert Scores("empty").f1 == 0.0


def test_select_antecedents_thresholds():
    st = AntecedentStats()
    st.main_tokens = 1000
    st.t1.update({"的": 50, "和": 40, "她": 30, "呢": 3})
    st.t2.update({"的": 70, "和": 100, "她": 31, "呢": 3})
    basic, optimized = select_antecedents(st, basic_rate=0.04, min_count=20)
    assert basic == ["的"]  # 0.71 > 0.6 and 5% of tokens; 和 is mostly boilerplate (0.4)
    assert optimized == ["她"]  # 0.97 > 0.9 and frequent enough; 呢 is too rare


def test_learn_antecedents_command(tmp_path, capsys):
    pages = tmp_path / "pages"
    pages.mkdir()
    nav = "首页和新闻和体育和财经和科技和娱乐与时尚与教育"
    for i, body in enumerate([ZH, ZH_OTHER, ZH + ZH_OTHER]):
        (pages / f"{i}.html").write_text(_html(f"标题{i}", body, nav), "utf-8")
    out = tmp_path / "antecedents.toml"
    argv = ["dedup", "learn-antecedents", "--pages", str(pages), "--out", str(out)]
    assert main(argv + ["--min-count", "2"]) == 0
    learned = tomllib.loads(out.read_text("utf-8"))["zh"]
    assert "的" in learned["basic"] and "是" in learned["basic"]
    assert "和" not in learned["basic"] + learned["optimized"]

    topic = tmp_path / "topic.toml"
    topic.write_text('name = "t"\n\n[dedup]\nmethods = ["exact", "spotsigs"]\n', "utf-8")
    argv = ["dedup", "learn-antecedents", "--pages", str(pages), "--out", str(topic)]
    assert main(argv + ["--section", "dedup.spotsigs", "--set", "basic"]) == 0
    conf = tomllib.loads(topic.read_text("utf-8"))
    assert conf["name"] == "t" and conf["dedup"]["methods"] == ["exact", "spotsigs"]
    assert conf["dedup"]["spotsigs"]["antecedents"] == learned["basic"]
    assert main(["dedup", "learn-antecedents", "--pages", str(tmp_path / "nope")]) == 1


def test_neardup_set_builder_smoke(tmp_path):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "bench" / "neardup_zh.py"
    spec = importlib.util.spec_from_file_location("neardup_zh", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    w = mod.build(tmp_path, per_category=1, seed=3, real_pages=False)
    kinds = [p["kind"] for p in w.pairs]
    assert sorted(set(kinds)) == ["commentary", "cut-half", "reprint", "same-category"]
    # positives: the reprints and, since issue 17 (item 3), the reprints with commentary
    assert kinds.count("reprint") == kinds.count("commentary") == 10
    assert {p["kind"] for p in w.pairs if p["label"]} == {"reprint", "commentary"}
    assert sum(p["label"] for p in w.pairs) == 20
    pairs = load_pairs(tmp_path / "pairs.jsonl")
    assert all(p.a.is_file() and p.b.is_file() for p in pairs)
    rep = next(p for p in pairs if p.label == 1)
    assert "<html" in rep.b.read_text("utf-8").lower()


def test_learn_antecedents_from_a_stored_run(tmp_path, capsys):
    from models.store import Store

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    store = Store.from_url(url)
    run = store.start_run("t", "", {})
    nav = "首页和新闻和体育和财经和科技和娱乐与时尚与教育"
    store.save_pages(
        run,
        [
            {"url": f"http://x/{i}", "html": _html(f"标题{i}", body, nav), "status": 200}
            for i, body in enumerate([ZH, ZH_OTHER, ZH + ZH_OTHER])
        ],
    )
    store.close()
    argv = ["dedup", "learn-antecedents", "--run", str(run), "--db", url, "--min-count", "2"]
    assert main(argv) == 0
    learned = tomllib.loads(capsys.readouterr().out)["zh"]
    assert "的" in learned["basic"] and "和" not in learned["basic"]


def test_compact_command(tmp_path, capsys):
    from dedup.spotsigs import SpotSigsDetector
    from dedup.storage import make_storage

    backend = {"type": "sqlite", "path": str(tmp_path / "d.sqlite"), "namespace": "c"}
    det = SpotSigsDetector(make_storage(backend), tau=0.6)
    det.add("a", Doc(ZH))
    det.add("b", Doc(ZH_OTHER))
    det.remove("a")
    det.storage.close()
    assert main(["dedup", "compact", "--backend", json.dumps(backend)]) == 0
    assert "3 entries -> 1 (1 documents)" in capsys.readouterr().out
    again = SpotSigsDetector(make_storage(backend), tau=0.6)
    assert sorted(again.index.docs) == [] and len(again) == 1
    letters = {"type": "sqlite", "path": str(tmp_path / "l.sqlite"), "namespace": "l"}
    lazy = SpotSigsDetector(make_storage(letters), candidates="letters")
    lazy.add("a", Doc(ZH))
    lazy.storage.close()
    assert main(["dedup", "compact", "--backend", json.dumps(letters)]) == 0
    assert "nothing to compact" in capsys.readouterr().out
    empty = {"type": "sqlite", "path": str(tmp_path / "e.sqlite")}
    assert main(["dedup", "compact", "--backend", json.dumps(empty)]) == 1
    assert main(["dedup", "compact", "--backend", "{nope"]) == 1
