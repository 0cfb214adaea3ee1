"""Peak RSS while loading MTEB results archives: a small one, one under the caps, and ones over them.

Why: issue 14 item 7 — archive members were read whole into memory (a 550 KB zip grew the server by 580 MB).
They are now streamed in 64 KiB chunks to a temporary file and parsed one at a time, so refusing a member over
the cap costs a chunk, not the member. Each case runs in a fresh process (ru_maxrss is a high-water mark) and
prints the growth of its peak RSS over the process's baseline; "whole read" replays the old way (each member
read in one call, up to the cap) on the same archive for comparison.

Run: .venv/bin/python bench/bench_archive_import.py
"""
from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOOD = json.dumps({"dataset_revision": "abc", "task_name": "T", "mteb_version": "1.34.7",
                   "scores": {"test": [{"main_score": 0.5, "hf_subset": "default", "languages": ["eng-Latn"]}]}})
MiB = 2 ** 20
CASES = {  # name: (member sizes in bytes, None = a small valid TaskResult)
    "small archive (3 valid members)": [None, None, None],
    "one 12 MiB member, under the cap": [12 * MiB],
    "one 50 MiB member, over the 16 MiB cap": [50 * MiB],
    "six 15 MiB members, over the 64 MiB total": [15 * MiB] * 6,
}


def build(path: Path, sizes: list[int | None]) -> None:
    """A .tar.gz of valid TaskResults, padded with JSON whitespace to the given sizes, written as it streams."""
    with tarfile.open(path, mode="w:gz", compresslevel=1) as archive:
        for i, size in enumerate(sizes):
            body = GOOD.replace('"T"', f'"T{i}"').encode()
            pad = 0 if size is None else max(size - len(body), 0)
            info = tarfile.TarInfo(f"org__m/r1/T{i}.json")
            info.size = len(body) + pad
            archive.addfile(info, io.BufferedReader(_Padded(body, pad)))


class _Padded(io.RawIOBase):
    def __init__(self, head: bytes, pad: int) -> None:
        self.head, self.pad = head, pad

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n], self.head = self.head[:n], self.head[n:]
            return n
        n = min(len(buffer), self.pad)
        buffer[:n] = b" " * n
        self.pad -= n
        return n


def child(path: str, mode: str) -> None:
    """Load one archive and print 'peak-growth-MiB seconds outcome' (runs in its own process)."""
    from agreement.results.mteb_loading import MAX_ARCHIVE_BYTES, MAX_FILE_BYTES, load_results_archive
    from measures.results.mteb_files import ResultsImportError

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    try:
        if mode == "streamed":
            outcome = f"{len(load_results_archive(path))} row(s)"
        else:
            outcome = whole_read(path, MAX_FILE_BYTES, MAX_ARCHIVE_BYTES)
    except ResultsImportError as exc:
        outcome = "refused: " + str(exc)[:70]
    seconds = time.perf_counter() - start
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
    print(f"{grown:.1f} {seconds:.2f} {outcome}")


def whole_read(path: str, max_file: int, max_total: int) -> str:
    """The code before streaming: header check, each member read in one call and held until all are parsed."""
    held: list[bytes] = []
    with tarfile.open(path) as archive:
        for member in archive:
            if member.size > max_file:
                return "refused from the header"
            held.append(archive.extractfile(member).read(max_file + 1))  # type: ignore[union-attr]
            if sum(map(len, held)) > max_total:
                return f"refused after holding {sum(map(len, held)) / MiB:.0f} MiB"
    return f"{len([json.loads(raw) for raw in held])} row(s)"


def main() -> None:
    print(f"{'case':44} {'mode':11} {'peak RSS +MiB':>13} {'s':>6}  outcome")
    with tempfile.TemporaryDirectory() as folder:
        for name, sizes in CASES.items():
            path = Path(folder) / "results.tar.gz"
            build(path, sizes)
            for mode in ("streamed", "whole read"):
                out = subprocess.run([sys.executable, __file__, "--child", str(path), mode], cwd=ROOT,
                                     capture_output=True, text=True, check=True).stdout.split(" ", 2)
                print(f"{name:44} {mode:11} {float(out[0]):13.1f} {float(out[1]):6.2f}  {out[2].strip()}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3])
    else:
        main()
