from pathlib import Path

from trainer.sandbox import copy_tree, remove_tree


def test_a_copy_keeps_links_and_is_private(tmp_path: Path) -> None:
    source = tmp_path / "source"
    (source / "pkg").mkdir(parents=True)
    (source / "pkg" / "a.py").write_text("x = 1\n")
    (source / "link").symlink_to("pkg/a.py")
    copy_tree(source, tmp_path / "copy")
    assert (tmp_path / "copy" / "link").readlink() == Path("pkg/a.py")
    (tmp_path / "copy" / "pkg" / "a.py").write_text("x = 2\n")
    assert (source / "pkg" / "a.py").read_text() == "x = 1\n"


def test_removing_a_rollout_clears_read_only_entries(tmp_path: Path) -> None:
    locked = tmp_path / "rollout" / "workspace" / ".git" / "objects"
    locked.mkdir(parents=True)
    (locked / "pack").write_text("x")
    (locked / "pack").chmod(0o444)
    locked.chmod(0o555)
    remove_tree(tmp_path / "rollout")
    assert not (tmp_path / "rollout").exists()
    remove_tree(tmp_path / "rollout")  # already gone: nothing to do
