"""Zip plumbing for bundles: a deterministic writer and a reader that trusts nothing in the archive.

Writer: entries sorted by name, every timestamp 1980-01-01 00:00:00, permissions ``-rw-r--r--``, made on
"Unix", deflate level 9, no directory entries, no extra fields. The same entries give the same bytes.

Reader (``SafeZip``): before a byte is decompressed, the central directory is checked entry by entry:
entry count, spelling of every name (no absolute, drive-letter, backslash, ``..`` or empty parts),
duplicates (also case-insensitive ones), symlinks and other non-regular files (Unix mode in the external
attributes), encryption and compression methods. Entries are then decompressed straight from their raw
deflate stream with a byte cap, so a header that lies about the size (a zip bomb) cannot make the reader
write more than the limit; the CRC and the declared size are checked after.
"""
from __future__ import annotations

import hashlib
import re
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable

from ..errors import Eval752Error

FIXED_DATE = (1980, 1, 1, 0, 0, 0)
FILE_MODE = 0o100644
_CHUNK = 1 << 16


class BundleError(Eval752Error):
    """A bundle is malformed or hostile; nothing was written outside the target folder."""


@dataclass(frozen=True)
class Limits:
    max_entries: int = 10_000
    max_entry_bytes: int = 512 * 1024 * 1024
    max_total_bytes: int = 2 * 1024 * 1024 * 1024


def write_zip(out: BinaryIO | Path, entries: dict[str, bytes]) -> None:
    """Write ``entries`` (name -> bytes) as a byte-for-byte reproducible zip."""
    with zipfile.ZipFile(out, "w") as zf:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = FILE_MODE << 16
            zf.writestr(info, entries[name], compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)


def name_problem(name: str) -> str | None:
    """Why an entry name may not be extracted, if it may not."""
    if "\\" in name:
        return f"entry {name!r} has a backslash in its path"
    if re.match(r"^[A-Za-z]:", name):
        return f"entry {name!r} has a drive letter"
    if name.startswith("/"):
        return f"entry {name!r} has an absolute path"
    if "\x00" in name:
        return f"entry {name!r} has a NUL byte in its path"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return f"entry {name!r} climbs out of the bundle with '..'"
    if any(p in ("", ".") for p in parts):
        return f"entry {name!r} has an empty or '.' path part"
    return None


def _unix_mode(info: zipfile.ZipInfo) -> int:
    return (info.external_attr >> 16) & 0xFFFF if info.create_system == 3 else 0


class SafeZip:
    """A zip archive opened for checked reading. ``names`` lists its regular files in archive order."""

    def __init__(self, path: Path, limits: Limits) -> None:
        self.path = Path(path)
        self.limits = limits
        try:
            self._zf = zipfile.ZipFile(self.path)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError) as e:
            raise BundleError(f"{path}: not a zip archive ({e})") from None
        infos = self._zf.infolist()
        if len(infos) > limits.max_entries:
            raise BundleError(f"bundle has {len(infos)} entries; the limit is {limits.max_entries} (--max-entries)")
        self.infos: dict[str, zipfile.ZipInfo] = {}
        folded: dict[str, str] = {}
        declared = 0
        for info in infos:
            name = info.filename
            problem = name_problem(name)
            if problem:
                raise BundleError(problem)
            if name in self.infos or name.rstrip("/") in self.infos:
                raise BundleError(f"entry {name!r} appears twice in the bundle")
            if name.casefold() in folded:
                raise BundleError(f"entries {folded[name.casefold()]!r} and {name!r} differ only in case")
            folded[name.casefold()] = name
            mode = _unix_mode(info)
            if stat.S_ISLNK(mode):
                raise BundleError(f"entry {name!r} is a symbolic link")
            if info.is_dir():
                if mode and not stat.S_ISDIR(mode):
                    raise BundleError(f"entry {name!r} is not a regular file")
                continue
            if mode and stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                raise BundleError(f"entry {name!r} is not a regular file (mode {oct(stat.S_IFMT(mode))})")
            if info.flag_bits & 0x1:
                raise BundleError(f"entry {name!r} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise BundleError(f"entry {name!r} uses compression method {info.compress_type}; "
                                  "bundles use stored or deflate")
            if info.file_size > limits.max_entry_bytes:
                raise BundleError(f"entry {name!r} declares {info.file_size} bytes; the limit is "
                                  f"{limits.max_entry_bytes} (--max-entry-bytes)")
            declared += info.file_size
            self.infos[name] = info
        if declared > limits.max_total_bytes:
            raise BundleError(f"bundle declares {declared} bytes in all; the limit is {limits.max_total_bytes} "
                              "(--max-total-bytes)")
        self.names = list(self.infos)
        self._total = 0
        self._counted: set[str] = set()  # entries already counted in the total (read twice, counted once)

    def close(self) -> None:
        self._zf.close()

    def __enter__(self) -> "SafeZip":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _raw_chunks(self, info: zipfile.ZipInfo) -> Iterable[bytes]:
        fp = self._zf.fp
        assert fp is not None
        fp.seek(info.header_offset)
        header = fp.read(30)
        if len(header) != 30 or header[:4] != b"PK\x03\x04":
            raise BundleError(f"entry {info.filename!r}: bad local header")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        fp.seek(info.header_offset + 30 + name_len + extra_len)
        left = info.compress_size
        while left > 0:
            chunk = fp.read(min(_CHUNK, left))
            if not chunk:
                raise BundleError(f"entry {info.filename!r}: the archive ends inside its data")
            left -= len(chunk)
            yield chunk

    def stream(self, name: str) -> Iterable[bytes]:
        """The decompressed bytes of one entry, in chunks, capped by the entry and total limits."""
        info = self.infos[name]
        cap = self.limits.max_entry_bytes
        out = 0
        crc = 0
        add_to_total = name not in self._counted
        self._counted.add(name)

        def count(data: bytes) -> bytes:
            nonlocal out, crc
            out += len(data)
            if add_to_total:
                self._total += len(data)
            if out > cap:
                raise BundleError(f"entry {name!r} decompresses to more than {cap} bytes (--max-entry-bytes); "
                                  "its header claimed " + str(info.file_size))
            if self._total > self.limits.max_total_bytes:
                raise BundleError(f"bundle decompresses to more than {self.limits.max_total_bytes} bytes in all "
                                  "(--max-total-bytes)")
            crc = zlib.crc32(data, crc)
            return data

        if info.compress_type == zipfile.ZIP_STORED:
            for chunk in self._raw_chunks(info):
                yield count(chunk)
        else:
            d = zlib.decompressobj(-15)
            try:
                for chunk in self._raw_chunks(info):
                    while chunk:
                        data = d.decompress(chunk, _CHUNK)
                        chunk = d.unconsumed_tail
                        yield count(data)
                while not d.eof:
                    data = d.decompress(b"", _CHUNK)
                    if not data:
                        break
                    yield count(data)
            except zlib.error as e:
                raise BundleError(f"entry {name!r}: corrupt deflate data ({e})") from None
        if out != info.file_size:
            raise BundleError(f"entry {name!r} holds {out} bytes but its header claims {info.file_size}")
        if crc != info.CRC:
            raise BundleError(f"entry {name!r} fails its CRC check (corrupt or altered)")

    def extract(self, name: str, dest: Path) -> tuple[str, int]:
        """Write one entry to ``dest`` (a new file); return its sha256 and size."""
        digest = hashlib.sha256()
        size = 0
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "xb") as f:
            for data in self.stream(name):
                digest.update(data)
                size += len(data)
                f.write(data)
        return digest.hexdigest(), size

    def read(self, name: str) -> bytes:
        return b"".join(self.stream(name))
