import os
import stat
import subprocess
import sys
import warnings

import pytest

from hilbridge.files import FollowedSymlink, write_atomic


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


# -- the one overwrite rule for every output (check_outputs) --------------------------------------


def test_an_existing_output_is_refused_unless_forced(tmp_path):
    from hilbridge.errors import HilbridgeError
    from hilbridge.files import check_outputs

    out = tmp_path / "out.bin"
    check_outputs({"-o": out})
    out.write_bytes(b"finished work")
    with pytest.raises(HilbridgeError, match="exists; use --force to replace it"):
        check_outputs({"-o": out})
    check_outputs({"-o": out}, force=True)


def test_an_output_that_is_an_input_is_refused_even_with_force(tmp_path):
    from hilbridge.errors import HilbridgeError
    from hilbridge.files import check_outputs

    source = tmp_path / "x.asm"
    source.write_text("nop\n")
    with pytest.raises(HilbridgeError, match="input"):
        check_outputs({"-o": tmp_path / "." / "x.asm"}, inputs=[source], force=True)
    link = tmp_path / "link.asm"
    link.symlink_to(source)
    with pytest.raises(HilbridgeError, match="input"):
        check_outputs({"-o": link}, inputs=[source], force=True)


def test_two_outputs_naming_one_file_are_refused(tmp_path):
    from hilbridge.errors import HilbridgeError
    from hilbridge.files import check_outputs

    with pytest.raises(HilbridgeError, match="--png and --gif"):
        check_outputs({"--png": tmp_path / "a.png", "--gif": tmp_path / "a.png"})


def test_a_missing_output_folder_is_refused_before_any_work(tmp_path):
    from hilbridge.errors import HilbridgeError
    from hilbridge.files import check_outputs

    with pytest.raises(HilbridgeError, match="no such folder"):
        check_outputs({"-o": tmp_path / "nodir" / "x.bin"})
    with pytest.raises(HilbridgeError, match="folder"):
        check_outputs({"-o": tmp_path})


def test_writing_through_a_symlink_replaces_the_file_it_points_to_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_bytes(b"old")
    link = tmp_path / "save.json"
    link.symlink_to(real)
    with pytest.warns(FollowedSymlink) as notices:
        write_atomic(link, b"new")
    assert link.is_symlink() and real.read_bytes() == b"new"
    assert [str(notice.message) for notice in notices] == [
        f"{link}: a symlink; wrote the file it points to, {real}"
    ]


def test_writing_a_plain_file_gives_no_symlink_notice(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_atomic(tmp_path / "save.json", b"new")


def test_the_cli_names_the_file_a_symlinked_save_points_to(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real = elsewhere / "real.json"
    real.write_bytes(b"{}")
    link = tmp_path / "game.json"
    link.symlink_to(real)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "hilbridge",
            "game",
            "new",
            "supremacy",
            str(link),
            "--players",
            "ann,bob",
            "--force",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert f"{link}: warning: a symlink; wrote the file it points to, {real}" in run.stderr.splitlines()
    assert link.is_symlink() and real.read_bytes() != b"{}"


def test_a_temporary_left_by_a_killed_save_is_removed_by_the_next_save(tmp_path):
    target = tmp_path / "save.json"
    stale = tmp_path / ".save.json.k3j_9xq2.tmp"
    stale.write_bytes(b"half")
    other = tmp_path / ".other.json.abcdefgh.tmp"
    other.write_bytes(b"not ours")
    write_atomic(target, b"whole")
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, "save.json"]
