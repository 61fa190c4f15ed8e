"""A row's source_hash is over the code git tracks or would track: build outputs (ignored)
never make a row stale, prose never does, and a rung measured before its first commit
hashes the same once committed (its rows were once marked stale the moment it landed)."""
import subprocess

from core.results import source_hash


def _git(d, *args):
    subprocess.run(["git", *args], cwd=d, check=True, capture_output=True)


def test_hash_covers_the_code_git_would_track_and_nothing_else(tmp_path):
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "config", "user.email", "t@t")
    _git(tmp_path, "config", "user.name", "t")
    (tmp_path / ".gitignore").write_text("build/\n")
    rung = tmp_path / "algorithms" / "a9_new"
    rung.mkdir(parents=True)
    (rung / "recipe.py").write_text("X = 1\n")
    (rung / "NOTES.md").write_text("prose\n")
    before = source_hash(["algorithms/a9_new"], tmp_path)          # untracked, not ignored
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "rung")
    assert source_hash(["algorithms/a9_new"], tmp_path) == before   # the same once committed
    (rung / "build").mkdir()
    (rung / "build" / "CMakeCache.txt").write_text("generated\n")
    (rung / "NOTES.md").write_text("more prose\n")
    assert source_hash(["algorithms/a9_new"], tmp_path) == before   # build outputs, prose
    (rung / "helper.py").write_text("Y = 2\n")
    changed = source_hash(["algorithms/a9_new"], tmp_path)
    assert changed != before                                         # new code counts at once
    (rung / "recipe.py").write_text("X = 3\n")
    assert source_hash(["algorithms/a9_new"], tmp_path) not in (before, changed)


def test_a_path_is_a_folder_or_a_file_never_a_name_prefix(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "v9").mkdir()
    (tmp_path / "v9" / "a.py").write_text("A = 1\n")
    (tmp_path / "v9b").mkdir()
    (tmp_path / "v9b" / "b.py").write_text("B = 1\n")
    before = source_hash(["v9"], tmp_path)
    (tmp_path / "v9b" / "b.py").write_text("B = 2\n")                 # a neighbour's code
    assert source_hash(["v9"], tmp_path) == before
    assert source_hash(["v9/a.py"], tmp_path) != source_hash(["v9b/b.py"], tmp_path)


def test_the_memo_holds_within_a_render_and_only_there(tmp_path):
    from core.results import hash_memo
    _git(tmp_path, "init", "-q")
    (tmp_path / "r.py").write_text("R = 1\n")
    with hash_memo():
        first = source_hash(["r.py"], tmp_path)
        (tmp_path / "r.py").write_text("R = 2\n")
        assert source_hash(["r.py"], tmp_path) == first               # remembered
    assert source_hash(["r.py"], tmp_path) != first                   # outside: read again
