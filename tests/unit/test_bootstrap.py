"""bootstrap.py's parts: which uv wheel a machine gets, the checks on it, the index pages."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import bootstrap


@pytest.mark.parametrize(
    ("system", "machine", "libc", "key"),
    [
        ("Linux", "x86_64", "glibc 2.36", "linux-x86_64"),
        ("Linux", "x86_64", "", "linux-x86_64-musl"),
        ("Linux", "aarch64", "glibc 2.36", "linux-aarch64"),
        ("Darwin", "arm64", None, "macos-arm64"),
        ("Darwin", "x86_64", None, "macos-x86_64"),
        ("Windows", "AMD64", None, None),
        ("Linux", "riscv64", "glibc 2.36", None),
    ],
)
def test_each_supported_platform_gets_its_own_pinned_uv_wheel(
    system: str, machine: str, libc: str | None, key: str | None
) -> None:
    assert bootstrap.platform_key(system, machine, libc) == key
    if key is not None:
        filename, sha256 = bootstrap.UV_WHEELS[key]
        assert filename.startswith(f"uv-{bootstrap.UV_VERSION}-") and len(sha256) == 64


def wheel_with_uv(binary: bytes) -> bytes:
    """A wheel laid out as uv's are: the binary under uv-<version>.data/scripts/."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr(f"uv-{bootstrap.UV_VERSION}.data/scripts/uv", binary)
        archive.writestr(f"uv-{bootstrap.UV_VERSION}.dist-info/METADATA", "Name: uv\n")
    return out.getvalue()


def test_a_wheel_with_the_pinned_hash_is_unpacked_as_an_executable_uv(tmp_path: Path) -> None:
    wheel = wheel_with_uv(b"#!/bin/sh\necho uv\n")

    uv = Path(bootstrap.unpack_uv(wheel, hashlib.sha256(wheel).hexdigest(), tmp_path / "bin"))

    assert uv == tmp_path / "bin" / "uv"
    assert uv.read_bytes() == b"#!/bin/sh\necho uv\n"
    assert uv.stat().st_mode & 0o111


def test_a_wheel_whose_hash_differs_from_the_pin_is_refused_and_nothing_written(
    tmp_path: Path,
) -> None:
    wheel = wheel_with_uv(b"tampered")

    with pytest.raises(bootstrap.BootstrapError, match="not the pinned"):
        bootstrap.unpack_uv(wheel, "0" * 64, tmp_path / "bin")

    assert not (tmp_path / "bin").exists()


class Index(http.server.BaseHTTPRequestHandler):
    """A package index serving /json/uv/ (PEP 691) and /html/uv/ (PEP 503)."""

    def do_GET(self) -> None:
        name = "uv-0.13.9-py3-none-any.whl"
        if self.path == "/json/uv/":
            kind = "application/vnd.pypi.simple.v1+json"
            body = json.dumps({"files": [{"filename": name, "url": f"../../files/{name}"}]})
        elif self.path == "/html/uv/":
            kind = "text/html"
            body = f'<html><body><a href="/files/{name}#sha256=ab">{name}</a></body></html>'
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def index() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join()


@pytest.mark.parametrize("kind", ["json", "html"])
def test_the_wheels_address_is_read_from_either_kind_of_index_page(index: str, kind: str) -> None:
    url = bootstrap.wheel_url(f"{index}/{kind}/", "uv-0.13.9-py3-none-any.whl")

    assert url == f"{index}/files/uv-0.13.9-py3-none-any.whl"


def test_a_wheel_missing_from_the_index_is_an_error_naming_it(index: str) -> None:
    with pytest.raises(bootstrap.BootstrapError, match=r"uv-9\.9\.9-x\.whl is not on the index"):
        bootstrap.wheel_url(f"{index}/json/", "uv-9.9.9-x.whl")
