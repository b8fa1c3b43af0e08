"""topicrawl.files.write_atomic: whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from topicrawl.files import write_atomic


def test_write_atomic_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    path.write_text("old", encoding="utf-8")
    assert write_atomic(path, "新的") == path
    assert path.read_text(encoding="utf-8") == "新的"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.json"
    path.write_text("old", encoding="utf-8")

    def full_disk(self: Path, *args: object, **kwargs: object) -> None:
        Path.write_bytes(self, b"par")  # a part written, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(OSError):
        write_atomic(path, "new")
    assert path.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]
