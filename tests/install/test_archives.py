"""What the wheel and the sdist hold: the package and its metadata, nothing of the
checkout's caches, tests or build output."""

from __future__ import annotations

import tarfile
import zipfile
from email.parser import Parser

from tests.install.conftest import VERSION, Packages

# What a file in a checkout may be that no archive ships.
NEVER_SHIPPED = ("__pycache__", ".pyc", "node_modules", ".venv", ".cache", "/target/", "/dist/")


def test_wheel_holds_only_the_package_and_its_metadata(packages: Packages) -> None:
    with zipfile.ZipFile(packages.wheel) as wheel:
        names = wheel.namelist()
    dist_info = f"claude_sidecar-{VERSION}.dist-info/"

    assert {name.split("/")[0] + "/" for name in names} == {"claude_sidecar/", dist_info}
    assert "claude_sidecar/scripted/demo.json" in names  # the demo's scenario, read at run time
    assert f"{dist_info}licenses/LICENSE" in names
    assert not [name for name in names if any(part in name for part in NEVER_SHIPPED)]


def test_wheel_metadata_names_the_license_authors_urls_and_platforms(packages: Packages) -> None:
    with zipfile.ZipFile(packages.wheel) as wheel:
        text = wheel.read(f"claude_sidecar-{VERSION}.dist-info/METADATA")
    metadata = Parser().parsestr(text.decode())

    assert metadata["Version"] == VERSION
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert metadata["Author"] == "the claude-sidecar authors"
    urls = dict(url.split(", ", 1) for url in metadata.get_all("Project-URL") or [])
    assert set(urls) == {"Homepage", "Repository", "Issues", "Changelog", "Documentation"}
    assert all(
        url.startswith("https://github.com/claude-sidecar/claude-sidecar") for url in urls.values()
    )
    classifiers = metadata.get_all("Classifier") or []
    for classifier in (
        "Operating System :: POSIX :: Linux",
        "Operating System :: MacOS",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.13",
        "Environment :: Console",
        "Topic :: Text Editors :: Integrated Development Environments (IDE)",
    ):
        assert classifier in classifiers
    assert metadata.get_all("Keywords")


def test_sdist_holds_the_package_docs_and_license_and_no_caches_or_build_output(
    packages: Packages,
) -> None:
    top = f"claude_sidecar-{VERSION}/"
    with tarfile.open(packages.sdist) as sdist:
        names = [name.removeprefix(top) for name in sdist.getnames()]

    for needed in ("pyproject.toml", "LICENSE", "README.md", "CHANGELOG.md", "PKG-INFO"):
        assert needed in names
    assert "claude_sidecar/__init__.py" in names
    assert "claude_sidecar/scripted/demo.json" in names
    assert "docs/protocol.md" in names
    assert not [name for name in names if any(part in name for part in NEVER_SHIPPED)]
    # The editors ship as their own artifacts; the tests need the whole checkout.
    assert not [name for name in names if name.startswith(("editors/", "tests/", "bench/"))]
