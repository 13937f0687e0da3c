"""Issue 21: what a long-lived project keeps is bounded: the records of deleted entries and the
cached thumbnails of figures that are gone are pruned, said in one line; nothing else is touched."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli, write_demo

FIGURE = '''
    """plot: one figure, whose content the test changes."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # %% B-plot
    plt.plot([1, 2, 3])
'''
PLAIN = '''
    """plain: prints."""

    # %% B-print
    print("hello")
'''


def thumbnails(project: Path) -> list[str]:
    return sorted(p.name for p in (project / "_freeze" / ".cache" / "thumbnails").glob("*.png"))


def test_records_of_deleted_entries_and_unused_thumbnails_are_pruned(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    write_demo(tmp_path, "plot", FIGURE)
    write_demo(tmp_path, "old", PLAIN)
    write_demo(tmp_path, "basics/gone", PLAIN)
    assert run_cli("build", cwd=tmp_path).returncode == 0
    first_thumbnails = thumbnails(tmp_path)
    assert len(first_thumbnails) == 1
    (tmp_path / "_freeze" / "notes").mkdir()  # not a record: another tool's, or a person's
    (tmp_path / "_freeze" / "notes" / "x.txt").write_text("mine")
    (tmp_path / "_freeze" / "_inventories").mkdir()
    (tmp_path / "demos" / "old.py").unlink()
    (tmp_path / "demos" / "basics" / "gone.py").unlink()
    plot = tmp_path / "demos" / "plot.py"
    plot.write_text(plot.read_text().replace("[1, 2, 3]", "[3, 2, 1]"))

    done = run_cli("build", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert ("pruned the run records of 2 deleted entries (basics/gone, old) and 1 cached thumbnail "
            "no figure uses") in done.stderr
    assert not (tmp_path / "_freeze" / "old").exists() and not (tmp_path / "_freeze" / "basics").exists()
    assert (tmp_path / "_freeze" / "notes" / "x.txt").read_text() == "mine"
    assert (tmp_path / "_freeze" / "_inventories").is_dir()
    assert (tmp_path / "_freeze" / "plot" / "_site_builder" / "record.json").is_file()
    assert len(thumbnails(tmp_path)) == 1 and thumbnails(tmp_path) != first_thumbnails
    again = run_cli("build", cwd=tmp_path)
    assert "pruned" not in again.stderr


def test_another_demos_folder_prunes_no_record(tmp_path: Path) -> None:
    write_demo(tmp_path, "kept", PLAIN)
    assert run_cli("build", cwd=tmp_path).returncode == 0
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "elsewhere.py").write_text('"""elsewhere."""\nprint(1)\n')

    done = run_cli("build", "--demos", "other", "--out", "other-site", cwd=tmp_path)

    assert done.returncode == 0, done.stderr
    assert "pruned" not in done.stderr
    assert (tmp_path / "_freeze" / "kept" / "_site_builder" / "record.json").is_file()
