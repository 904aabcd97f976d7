import os
import stat

import pytest

from hilbridge.files import write_atomic


def test_new_file_gets_the_umask_mode_not_mkstemp_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "out.bin", b"abc")
    finally:
        os.umask(old)
    assert (tmp_path / "out.bin").read_bytes() == b"abc"
    assert stat.S_IMODE((tmp_path / "out.bin").stat().st_mode) == 0o644


def test_existing_file_keeps_its_mode_and_no_temporary_is_left(tmp_path):
    target = tmp_path / "save.json"
    target.write_bytes(b"old")
    target.chmod(0o600)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["save.json"]


def test_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "save.json"
    target.write_bytes(b"good")

    def broken_replace(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(target, b"bad")
    assert target.read_bytes() == b"good"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["save.json"]
