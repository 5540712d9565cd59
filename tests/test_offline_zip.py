"""The offline copy's zip unpacks into one folder holding the site and a short README that
says how to open it and what works from disk."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from tools.offline_zip import FOLDER, README, write_offline_zip


def test_the_zip_unpacks_into_one_folder_with_its_readme(tmp_path: Path) -> None:
    site = tmp_path / "offline"
    (site / "steps" / "roofline").mkdir(parents=True)
    (site / "index.html").write_text("<h1>home</h1>")
    (site / "steps" / "roofline.html").write_text("<h1>roofline</h1>")
    zip_path = tmp_path / "lesson.zip"
    assert write_offline_zip(site, zip_path) == 3
    with zipfile.ZipFile(zip_path) as archive:
        names = archive.namelist()
        assert {name.split("/")[0] for name in names} == {FOLDER}
        assert f"{FOLDER}/index.html" in names and f"{FOLDER}/steps/roofline.html" in names
        readme = archive.read(f"{FOLDER}/README.txt").decode()
    assert readme == README
    assert "Open index.html" in readme and "python3 -m http.server" in readme
    assert len(readme.split()) < 200  # short


def test_a_folder_without_the_built_site_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match=r"no index\.html"):
        write_offline_zip(tmp_path, tmp_path / "lesson.zip")
