"""`skillc check` remembers which JavaScript texts QuickJS compiled clean (skillc/user_cache.py):
an unchanged file is not compiled again, a changed one is; a cache file that is corrupted or not
ours is never trusted and is rewritten; a cache that cannot be written costs time, never a check.

The spy below wraps the real compile step to count it; nothing is replaced."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

import skillc.runtime.sandbox.syntax as syntax
from skillc.check import _checker_fingerprint, _text_digest, check_skill
from skillc.user_cache import DigestSet, cache_dir

from .conftest import COFFEE

BROKEN = "module.exports = { oops: ( };\n"


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    return Path(shutil.copytree(COFFEE, tmp_path / "coffee-skill"))


@pytest.fixture
def compiled(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths QuickJS compiles, in order (the real compile runs)."""
    seen: list[str] = []
    real = syntax.syntax_errors

    def counting(path: str, text: str) -> list:  # type: ignore[type-arg]
        seen.append(path)
        return real(path, text)

    monkeypatch.setattr(syntax, "syntax_errors", counting)
    return seen


def js007(skill: Path) -> list[str]:
    return [str(d.file) for d in check_skill(skill).diagnostics if d.code == "JS007"]


def cache_file(home: Path) -> Path:
    return home / "skillc" / "js-clean.json"


def scripts(skill: Path) -> int:
    return sum(1 for _ in skill.rglob("*.js"))


def test_unchanged_scripts_are_compiled_once_and_a_changed_one_again(
    skill: Path, cache_home: Path, compiled: list[str]
) -> None:
    assert js007(skill) == []
    assert len(compiled) == scripts(skill)
    folder = cache_home / "skillc"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(cache_file(cache_home).stat().st_mode) == 0o600
    compiled.clear()
    assert js007(skill) == []
    assert compiled == []  # every verdict came from the cache
    # A changed file is compiled again and its error reported, the others are not.
    (skill / "apis" / "searchDrinks.js").write_text(BROKEN, encoding="utf-8")
    assert js007(skill) == ["apis/searchDrinks.js"]
    assert compiled == ["apis/searchDrinks.js"]
    # An error is never remembered: the same broken text is compiled (and reported) every time.
    compiled.clear()
    assert js007(skill) == ["apis/searchDrinks.js"]
    assert compiled == ["apis/searchDrinks.js"]


def test_output_is_the_same_with_a_warm_cache(skill: Path, cache_home: Path) -> None:
    (skill / "components" / "drink-list" / "index.js").write_text(BROKEN, encoding="utf-8")
    cold = check_skill(skill).diagnostics
    warm = check_skill(skill).diagnostics
    assert [d.model_dump() for d in warm] == [d.model_dump() for d in cold]
    assert any(d.code == "JS007" for d in warm)


def test_a_corrupted_cache_file_is_ignored_and_rewritten(skill: Path, cache_home: Path, compiled: list[str]) -> None:
    path = cache_file(cache_home)
    path.parent.mkdir(parents=True, mode=0o700)
    path.write_bytes(b"\x80\x04\x95 not json at all")
    os.chmod(path, 0o600)
    assert js007(skill) == []
    assert len(compiled) == scripts(skill)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert len(data["digests"]) == len({p.read_bytes() for p in skill.rglob("*.js")})


def planted(skill: Path, home: Path, mode: int) -> Path:
    """A cache file that calls the broken script clean, for this checker, with ``mode``."""
    (skill / "index.js").write_text(BROKEN, encoding="utf-8")
    fingerprint = _checker_fingerprint()
    path = cache_file(home)
    path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    body = {"format": 1, "fingerprint": fingerprint, "digests": [_text_digest(BROKEN)]}
    path.write_text(json.dumps(body), encoding="utf-8")
    os.chmod(path, mode)
    return path


def test_a_cache_file_others_may_write_is_never_trusted(skill: Path, cache_home: Path) -> None:
    path = planted(skill, cache_home, 0o666)
    assert js007(skill) == ["index.js"]  # the planted verdict was not read
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # rewritten as ours
    assert json.loads(path.read_text(encoding="utf-8"))["digests"]  # with the real verdicts


def test_a_cache_file_of_another_user_is_never_trusted(skill: Path, cache_home: Path) -> None:
    path = planted(skill, cache_home, 0o600)
    if os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")
    os.chown(path, os.getuid() + 4242, -1)
    assert js007(skill) == ["index.js"]
    assert path.stat().st_uid == os.getuid()  # replaced by a file of ours


def test_a_symlinked_cache_file_is_never_trusted(skill: Path, cache_home: Path, tmp_path: Path) -> None:
    path = planted(skill, cache_home, 0o600)
    elsewhere = tmp_path / "elsewhere.json"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)
    assert js007(skill) == ["index.js"]
    assert not path.is_symlink()


def test_our_own_cache_file_is_trusted(skill: Path, cache_home: Path) -> None:
    # The counterpart of the tests above: the same planted file, ours and private, is believed
    # (which is why a file that is not ours must never be read).
    planted(skill, cache_home, 0o600)
    assert js007(skill) == []


def test_a_cache_directory_of_another_user_is_not_used(skill: Path, cache_home: Path) -> None:
    if os.getuid() != 0:
        pytest.skip("giving a directory to another user needs root")
    folder = cache_home / "skillc"
    folder.mkdir(parents=True, mode=0o700)
    os.chown(folder, os.getuid() + 4242, -1)
    assert cache_dir() is None
    assert js007(skill) == []
    assert list(folder.iterdir()) == []


def test_an_open_cache_directory_of_ours_is_closed(cache_home: Path) -> None:
    folder = cache_home / "skillc"
    folder.mkdir(parents=True, mode=0o755)
    os.chmod(folder, 0o777)
    assert cache_dir() == folder
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_cache_that_cannot_be_written_does_not_fail_check(
    skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, compiled: list[str]
) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # $XDG_CACHE_HOME/skillc cannot be made
    baseline = check_skill(skill).diagnostics
    assert len(compiled) == scripts(skill)
    compiled.clear()
    assert check_skill(skill).diagnostics == baseline
    assert len(compiled) == scripts(skill)  # nothing remembered, nothing failed


def test_a_cache_file_that_cannot_be_replaced_does_not_fail_check(skill: Path, cache_home: Path) -> None:
    path = cache_file(cache_home)
    path.mkdir(parents=True)  # a directory where the file goes: the rename fails
    assert js007(skill) == []
    assert path.is_dir() and list(path.parent.glob(".js-clean.json.*")) == []  # no temporary left


def test_a_cache_of_another_checker_version_starts_afresh(skill: Path, cache_home: Path, compiled: list[str]) -> None:
    path = planted(skill, cache_home, 0o600)
    body = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**body, "fingerprint": "skillc 0.0.1"}), encoding="utf-8")
    assert js007(skill) == ["index.js"]


def test_the_digest_set_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    digests = DigestSet(path, "v1", limit=3)
    for d in "abcde":
        digests.add(d)
    digests.save()
    assert json.loads(path.read_text(encoding="utf-8"))["digests"] == ["c", "d", "e"]  # the oldest dropped
    again = DigestSet(path, "v1", limit=3)
    assert [d in again for d in "abcde"] == [False, False, True, True, True]
    assert DigestSet(path, "v2", limit=3).fingerprint == "v2" and "e" not in DigestSet(path, "v2", limit=3)
