"""Edit previews are the unified diff the tool would make, computed from disk."""

from __future__ import annotations

from pathlib import Path

from claude_sidecar.channel.files import preview_edit, tool_path
from claude_sidecar.feed.changes import MAX_TEXT_BYTES, unified_diff


def test_write_of_a_new_file_diffs_from_dev_null(tmp_path: Path) -> None:
    path = str(tmp_path / "new.txt")

    preview = preview_edit("Write", {"file_path": path, "content": "one\ntwo\n"})

    assert preview is not None
    assert preview.diff == f"--- /dev/null\n+++ {path}\n@@ -0,0 +1,2 @@\n+one\n+two\n"


def test_edit_replaces_the_first_unique_occurrence(tmp_path: Path) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\ny = 2\n")

    preview = preview_edit(
        "Edit", {"file_path": str(target), "old_string": "y = 2", "new_string": "y = 3"}
    )

    assert preview is not None and "-y = 2\n+y = 3\n" in (preview.diff or "")


def test_multi_edit_applies_edits_in_order(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("a a b\n")

    preview = preview_edit(
        "MultiEdit",
        {
            "file_path": str(target),
            "edits": [
                {"old_string": "a", "new_string": "c", "replace_all": True},
                {"old_string": "c c", "new_string": "d"},
            ],
        },
    )

    assert preview is not None and "+d b\n" in (preview.diff or "")


def test_an_edit_that_would_fail_says_why(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("same same\n")

    missing = preview_edit(
        "Edit", {"file_path": str(target), "old_string": "gone", "new_string": "x"}
    )
    ambiguous = preview_edit(
        "Edit", {"file_path": str(target), "old_string": "same", "new_string": "x"}
    )

    assert missing is not None and missing.diff is None
    assert missing.note is not None and "not in the file" in missing.note
    assert ambiguous is not None and "2 times" in (ambiguous.note or "")


def test_binary_and_huge_files_get_a_notice_instead_of_a_diff(tmp_path: Path) -> None:
    binary = tmp_path / "b.bin"
    binary.write_bytes(b"\x00\x01")
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"x" * (MAX_TEXT_BYTES + 1))

    for path in (binary, huge):
        preview = preview_edit("Write", {"file_path": str(path), "content": "y"})
        assert preview is not None and preview.diff is None and preview.note


def test_other_tools_have_no_preview() -> None:
    assert preview_edit("Bash", {"command": "ls"}) is None


def test_a_missing_final_newline_is_marked() -> None:
    assert unified_diff("f", "a", "b").endswith("+b\n\\ No newline at end of file\n")


def test_creating_an_empty_file_is_still_a_diff() -> None:
    assert unified_diff("/w/empty", None, "") == "--- /dev/null\n+++ /w/empty\n"


def test_a_small_edit_in_a_big_file_gets_the_same_diff_as_a_full_match() -> None:
    import difflib

    old = "".join(f"line {i}\n" for i in range(10_000))
    new = old.replace("line 5000\n", "changed\n").replace("line 9998\n", "")

    expected = "".join(
        difflib.unified_diff(
            old.splitlines(True), new.splitlines(True), fromfile="/w/big.txt", tofile="/w/big.txt"
        )
    )

    assert unified_diff("/w/big.txt", old, new) == expected
    assert "@@ -4998,7 +4998,7 @@" in expected


def test_a_path_with_a_nul_byte_gets_a_notice_not_an_exception() -> None:
    # The OS cannot open such a path: the preview says why instead of failing the ask.
    preview = preview_edit("Write", {"file_path": "/tmp/a\x00b.txt", "content": "x"})

    assert preview is not None and preview.diff is None
    assert "absolute path" in (preview.note or "")
    assert tool_path({"file_path": "/tmp/a\x00b.txt"}) is None
