"""Patches in git's format: made from texts, split per file, applied by git itself."""

import subprocess

import pytest

from agentgym.envs.swe.patches import PatchError, apply_patch, make_patch, split_patch


def test_a_patch_round_trips_through_git_apply():
    old = {"pkg/a.py": "x = 1\ny = 2\n", "pkg/gone.py": "bye\n"}
    new = {"pkg/a.py": "x = 1\ny = 3\n", "pkg/new.py": "hello\n"}
    patch = make_patch(
        {p: (old.get(p), new.get(p)) for p in ("pkg/a.py", "pkg/gone.py", "pkg/new.py")}
    )
    assert apply_patch(old, patch) == {
        "pkg/a.py": new["pkg/a.py"],
        "pkg/gone.py": None,
        "pkg/new.py": "hello\n",
    }


def test_files_without_a_final_newline_are_marked_as_git_does(tmp_path):
    patch = make_patch({"f.txt": ("a\nb", "a\nc")})
    assert "\\ No newline at end of file" in patch
    (tmp_path / "f.txt").write_text("a\nb")
    subprocess.run(["git", "apply", "-"], input=patch.encode(), cwd=tmp_path, check=True)
    assert (tmp_path / "f.txt").read_text() == "a\nc"


def test_unchanged_files_are_left_out():
    assert make_patch({"same.py": ("x\n", "x\n")}) == ""


def test_a_patch_splits_into_its_files_with_what_happens_to_each():
    patch = make_patch({"a.py": ("1\n", "2\n"), "b.py": (None, "new\n"), "c.py": ("old\n", None)})
    parts = {part.path: part for part in split_patch(patch)}
    assert sorted(parts) == ["a.py", "b.py", "c.py"]
    assert parts["b.py"].added and parts["c.py"].deleted and not parts["a.py"].added


@pytest.mark.parametrize(
    "header",
    [
        "diff --git a/../etc/passwd b/../etc/passwd",
        "diff --git a//etc/x b//etc/x",
        "diff --git a/x.py b/y.py",
    ],
)
def test_paths_outside_the_repository_and_renames_are_refused(header):
    with pytest.raises(PatchError):
        split_patch(f"{header}\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")


def test_a_patch_that_does_not_apply_says_so():
    patch = make_patch({"a.py": ("x = 1\n", "x = 2\n")})
    with pytest.raises(PatchError, match="does not apply"):
        apply_patch({"a.py": "something else\n"}, patch)


def test_text_without_a_header_is_not_a_patch():
    with pytest.raises(PatchError, match="header"):
        split_patch("just some words\n")
    assert split_patch("") == []


def test_a_patch_that_makes_a_symbolic_link_is_refused():
    patch = (
        "diff --git a/pkg/link.py b/pkg/link.py\nnew file mode 120000\n--- /dev/null\n"
        "+++ b/pkg/link.py\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n"
    )
    with pytest.raises(PatchError, match="symbolic link"):
        apply_patch({}, patch)


@pytest.mark.parametrize(
    "path",
    [
        "pkg/with space.py",
        "pkg/new\nline.py",
        'pkg/a "quoted" name.py',
        "pkg/back\\slash.py",
        "pkg/tab\there.py",
        "pkg/é accent.py",
        "notes/  leading and trailing  ",
    ],
)
def test_names_git_quotes_round_trip_through_our_patches_and_git_apply(tmp_path, path):
    patch = make_patch({path: ("x = 1\n", "x = 2\n"), "pkg/plain.py": (None, "y = 1\n")})
    assert sorted(part.path for part in split_patch(patch)) == sorted(["pkg/plain.py", path])
    assert apply_patch({path: "x = 1\n"}, patch) == {path: "x = 2\n", "pkg/plain.py": "y = 1\n"}
    (tmp_path / "pkg").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / path).write_text("x = 1\n")
    subprocess.run(["git", "apply", "-"], input=patch.encode(), cwd=tmp_path, check=True)
    assert (tmp_path / path).read_text() == "x = 2\n"


def test_our_patches_quote_names_as_git_diff_does(tmp_path):
    """Byte for byte git's own output (no index line): quoted names, a tab after a name
    with a space on the ---/+++ lines."""
    names = ["with space.py", 'q"uote.py', "new\nline.py", "é.py"]
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    for name in names:
        (tmp_path / name).write_text("old\n")
    subprocess.run(["git", "add", "-A"], cwd=tmp_path, check=True)
    for name in names:
        (tmp_path / name).write_text("new\n")
    ours = make_patch({name: ("old\n", "new\n") for name in names})
    theirs = subprocess.run(
        ["git", "-c", "core.quotePath=true", "diff", "--no-color"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    theirs = "".join(line for line in theirs.splitlines(True) if not line.startswith("index "))
    assert sorted(split_patch(ours), key=lambda p: p.path) == sorted(
        split_patch(theirs), key=lambda p: p.path
    )


def test_a_form_feed_or_carriage_return_inside_a_line_is_part_of_the_line(tmp_path):
    old = "a = 1\n\x0c\nb = 2\r\nc = 'x\ry'\n"
    new = old.replace("b = 2", "b = 3")
    patch = make_patch({"m.py": (old, new)})
    assert "No newline" not in patch
    assert apply_patch({"m.py": old}, patch) == {"m.py": new}


def test_a_patch_that_is_not_utf8_text_is_a_patch_error():
    patch = make_patch({"a.py": ("x\n", "y\n")}).replace("+y", "+\ud800")
    with pytest.raises(PatchError, match="UTF-8"):
        apply_patch({"a.py": "x\n"}, patch)
    with pytest.raises(PatchError, match="UTF-8"):
        apply_patch({"a.py": "x\udcff\n"}, make_patch({"a.py": ("x\udcff\n", "y\n")}))
