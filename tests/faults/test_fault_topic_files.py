"""Topic files that are too big, not UTF-8, or without [words] get one line naming it."""

from __future__ import annotations

import pytest

from relevance import topic as topic_mod
from relevance.topic import load_topic
from topicrawl.errors import TopicFileError


def test_overrides_without_words_is_refused(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\n\n[overrides]\n"政治" = 1.0\n', encoding="utf-8")
    with pytest.raises(TopicFileError, match=r"t.toml:3: \[overrides\] without \[words\]"):
        load_topic(path)


def test_no_words_names_a_line(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\nlanguage = "zh"\n', encoding="utf-8")
    with pytest.raises(TopicFileError, match=r"t.toml:2: no topic words"):
        load_topic(path)


def test_non_utf8_names_the_line(tmp_path):
    path = tmp_path / "t.toml"
    path.write_bytes('name = "t"\n[words]\n"政治" = 1.0\n'.encode("gbk"))
    with pytest.raises(TopicFileError, match=r"t.toml:3: not UTF-8"):
        load_topic(path)


def test_a_huge_topic_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(topic_mod, "MAX_TOPIC_BYTES", 1000)
    path = tmp_path / "t.toml"
    path.write_text('name = "t"\n[words]\n' + "".join(f'"w{i}" = 1.0\n' for i in range(200)))
    with pytest.raises(TopicFileError, match="over the"):
        load_topic(path)
