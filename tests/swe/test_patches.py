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
