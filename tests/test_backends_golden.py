"""Golden files of every backend's output for the hand-built coffee-like cards at 375 light and
414 dark. Each snapshot is the backend's exact text in its own file, so a change diffs cleanly."""

from __future__ import annotations

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from skillc.backends.registry import get_backend
from tests.test_backends_samples import all_documents


class _TextFile(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT


class _JsonFile(_TextFile):
    file_extension = "json"


class _HtmlFile(_TextFile):
    file_extension = "html"


_EXTENSIONS = {"json": _JsonFile, "cardspec": _JsonFile, "html": _HtmlFile}


@pytest.mark.parametrize("backend", ["json", "cardspec", "html"])
@pytest.mark.parametrize("document", sorted(all_documents()))
def test_backend_output(backend: str, document: str, snapshot: SnapshotAssertion) -> None:
    text = get_backend(backend).render(all_documents()[document])
    assert snapshot.use_extension(_EXTENSIONS[backend]) == text
