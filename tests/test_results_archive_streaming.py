"""Results archives are streamed (issue 14 item 7): a member over the cap is refused while it streams, naming
the member, with nothing stored and memory that does not grow with the member; a member under the cap imports.
bench/bench_archive_import.py prints the peak RSS of both paths."""
from __future__ import annotations

import io
import json
import tarfile
import tracemalloc
import zipfile

import pytest
from rest_framework.test import APIClient

from agreement.results.models import ResultModel, ResultScore
from agreement.results.mteb_loading import MAX_FILE_BYTES, ArchiveLimits, ArchiveMembers
from measures.results.mteb_files import ResultsImportError

pytestmark = pytest.mark.django_db
GOOD = json.dumps({"dataset_revision": "abc", "task_name": "HUMESTS12", "mteb_version": "1.34.7",
                   "scores": {"test": [{"main_score": 0.61, "hf_subset": "default", "languages": ["eng-Latn"]}]}})
BIG = 50 * 2 ** 20


class Zeros(io.RawIOBase):
    """`size` zero bytes, produced as they are read, so building the test archive takes no memory."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def tar_gz(big_member: str, size: int) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        good = tarfile.TarInfo("org__good/r1/HUMESTS12.json")
        good.size = len(GOOD)
        archive.addfile(good, io.BytesIO(GOOD.encode()))
        big = tarfile.TarInfo(big_member)
        big.size = size
        archive.addfile(big, io.BufferedReader(Zeros(size)))
    buffer.seek(0)
    buffer.name = "results.tar.gz"
    return buffer


def post(carol, upload: io.BytesIO):
    client = APIClient()
    client.force_authenticate(carol)
    return client.post("/api/v1/results/import/", {"file": upload}, format="multipart")


def test_an_archive_whose_member_is_over_the_cap_is_refused_naming_it_with_nothing_stored(carol) -> None:
    upload = tar_gz("org__big/r1/Huge.json", BIG)
    assert len(upload.getvalue()) < 1_000_000
    post(carol, tar_gz("org__w/r1/Warm.json", 10))  # imports warmed up (and one row stored, removed below)
    ResultModel.objects.all().delete()
    tracemalloc.start()
    try:
        response = post(carol, upload)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 400
    text = json.dumps(response.json())
    assert "results.tar.gz!org__big/r1/Huge.json" in text
    assert f"member is {BIG} bytes, over the {MAX_FILE_BYTES}-byte limit" in text
    assert not ResultModel.objects.exists() and not ResultScore.objects.exists()
    assert peak < 4 * 2 ** 20, f"peak {peak / 2 ** 20:.1f} MB"


def test_a_member_that_outgrows_its_cap_while_streaming_is_refused_by_name() -> None:
    limits = ArchiveLimits("upload.zip", max_file_bytes=100_000, max_total_bytes=10 ** 9, max_members=10)
    with ArchiveMembers() as members, pytest.raises(ResultsImportError) as refused:
        members.add("org__m/r1/T.json", io.BufferedReader(Zeros(BIG)), limits)
    assert str(refused.value).startswith("upload.zip!org__m/r1/T.json")
    assert "member is over the 100000-byte limit" in str(refused.value)
    assert limits.total <= 100_000 + 64 * 1024  # stopped within one chunk of the cap, not at the member's end


def test_an_archive_with_a_member_under_the_cap_imports(carol) -> None:
    padded = GOOD.encode() + b" " * (12 * 2 ** 20)  # 12 MiB of JSON whitespace: a large but valid member
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("org__padded/r7/HUMESTS12.json", padded)
        archive.writestr("org__padded/r7/model_meta.json", json.dumps({"name": "org/padded", "revision": "r7"}))
    buffer.seek(0)
    buffer.name = "padded.zip"
    response = post(carol, buffer)
    assert response.status_code == 201, response.content
    assert response.json()["models"] == ["org/padded"]
    score = ResultScore.objects.get()
    assert (score.revision.model.name, score.revision.revision, score.main_score) == ("org/padded", "r7", 0.61)
