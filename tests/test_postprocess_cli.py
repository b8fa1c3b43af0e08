"""``topicrawl clean --run``: two passes over a stored run, idempotent."""

from __future__ import annotations

import pytest

from topicrawl.cli import main

store_mod = pytest.importorskip("models.store")

ARTICLE = (
    "<html><head><title>{title}</title></head><body>"
    "<div class='nav'><a href='/'>首页</a> <a href='/n'>新闻</a></div>"
    "<article><h1>{title}</h1><p>{body}</p><p>{body2}</p><p>责任编辑：王明</p></article>"
    "<div class='foot'><p>Copyright © 2019 某某网 版权所有</p></div></body></html>"
)
NAMES = "赵钱孙李周吴郑王冯陈"
FOOTER = "本站声明与联系方式见网站地图页面"


def _text(i: int) -> str:
    n = NAMES[i]
    lines = [
        f"{n}姓村民今年种植的{n}家果园迎来丰收，合作社统一收购，每户平均增收两万多元。",
        f"当地农业部门介绍，{n}家果园采用滴灌技术，产量比去年提高三成，品质也明显改善。",
        "责任编辑：王明",
    ]
    if i < 8:
        lines.append(FOOTER)
    return "\n".join(lines)


@pytest.fixture()
def run(tmp_path):
    url = f"sqlite:///{tmp_path / 'clean.db'}"
    store = store_mod.Store.from_url(url)
    run_id = store.start_run("test", 'name = "test"\n[clean]\nhost_min_pages = 5\n', {})
    items = []
    for i in range(10):
        items.append(
            {
                "url": f"http://news.example.cn/{i}.html",
                "host": "news.example.cn",
                "title": f"新闻{i}",
                "html": ARTICLE.format(title=f"新闻{i}", body=_text(i), body2=""),
                "text": _text(i),
                "accepted": True,
            }
        )
    items.append(
        {
            "url": "http://news.example.cn/copyright.html",
            "host": "news.example.cn",
            "html": "<html><body><p>Copyright © 2019 某某网 版权所有 京ICP备05012345号</p></body></html>",
            "text": "Copyright © 2019 某某网 版权所有 京ICP备05012345号",
            "accepted": True,
        }
    )
    items.append(
        {
            "url": "http://news.example.cn/off.html",
            "host": "news.example.cn",
            "html": ARTICLE.format(title="x", body="与主题无关的文字" * 10, body2=""),
            "text": "与主题无关的文字" * 10,
            "accepted": False,
        }
    )
    ids = store.save_pages(run_id, items)
    # a stale document of the copyright-only page (e.g. from an inline crawl without cleaning)
    store.save_documents(
        run_id, [{"page_id": ids["http://news.example.cn/copyright.html"], "text": "x", "meta": {}}]
    )
    yield store, url, run_id, ids
    store.close()


def test_clean_run_end_to_end_and_idempotent(run, capsys):
    store, url, run_id, ids = run
    assert main(["clean", "--run", str(run_id), "--db", url, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "dropped: too_short" in out and "lines removed: host_lines" in out
    docs = {d.page_id: d for d in store.iter_documents(run_id)}
    assert len(docs) == 10  # 10 articles; the copyright page's stale document was deleted
    assert ids["http://news.example.cn/copyright.html"] not in docs
    assert ids["http://news.example.cn/off.html"] not in docs
    for i in range(10):
        d = docs[ids[f"http://news.example.cn/{i}.html"]]
        assert FOOTER not in d.text and "责任编辑" not in d.text
        assert f"{NAMES[i]}家果园" in d.text
        assert d.meta["removed"]["editor"] == 1
        assert d.meta["removed"].get("host_lines", 0) == (1 if i < 8 else 0)
        assert d.meta["title"] == f"新闻{i}"
    texts = {d.page_id: d.text for d in docs.values()}

    assert main(["clean", "--run", str(run_id), "--db", url, "--no-progress"]) == 0
    again = {d.page_id: d.text for d in store.iter_documents(run_id)}
    assert again == texts
    assert store.count_documents(run_id) == 10


def test_clean_run_reads_clean_table_of_a_topic_file(run, tmp_path, capsys):
    store, url, run_id, ids = run
    topic = tmp_path / "t.toml"
    topic.write_text('name = "t"\n[clean]\nhost_lines = false\neditor = false\n', encoding="utf-8")
    assert (
        main(["clean", "--run", str(run_id), "--db", url, "--topic", str(topic), "--no-progress"])
        == 0
    )
    docs = {d.page_id: d for d in store.iter_documents(run_id)}
    assert len(docs) == 10
    for i in range(10):
        d = docs[ids[f"http://news.example.cn/{i}.html"]]
        assert (FOOTER in d.text) == (i < 8)
        assert "责任编辑" in d.text and not d.meta["removed"]

    topic.write_text('name = "t"\n[clean]\ncopyrite = false\n', encoding="utf-8")
    assert main(["clean", "--run", str(run_id), "--db", url, "--topic", str(topic)]) == 1
    assert "copyrite" in capsys.readouterr().err


def test_clean_unknown_run_is_an_error(run, capsys):
    store, url, run_id, ids = run
    assert main(["clean", "--run", "999", "--db", url, "--no-progress"]) == 1
    assert "no crawl run 999" in capsys.readouterr().err
