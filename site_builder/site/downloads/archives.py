"""The index's "Download all" archives: every script, every notebook, as reproducible zips.

The same scripts and notebooks give the same bytes: entries in name order, one fixed
timestamp (``SOURCE_DATE_EPOCH`` when set, else 1980-01-01, the earliest a zip can hold),
fixed permissions (0644) and compression level, no extra fields.
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
import time
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from site_builder.site.sitefiles import EntryBuild, SiteFile, notebook_path, script_download

ARCHIVE_DIR = "_downloads"  # in the site; never an entry name (names start with a letter or digit)
SCRIPTS_ZIP = f"{ARCHIVE_DIR}/scripts.zip"
NOTEBOOKS_ZIP = f"{ARCHIVE_DIR}/notebooks.zip"
_EARLIEST = 315532800  # 1980-01-01 00:00:00 UTC: zip timestamps start there
_LATEST = 4354819198  # 2107-12-31 23:59:58 UTC: and end there
_LEVEL = 9
_VERSION = 20  # "made by" and "needed": deflate, as zipfile writes it
_UNIX = 3
_UTF8 = 0x800  # the name is UTF-8
_REGULAR_0644 = 0o100644 << 16  # a regular file, rw-r--r--
_ZIP64_LIMIT = (1 << 31) - 1  # zipfile's: from there on it writes zip64 records
# a central record's flags, method, CRC, sizes, name/extra/comment sizes and local record's offset
_CENTRAL = struct.Struct("<8xHH4xIIIHHH8xI")
_OFFSET, _NAME_SIZE = struct.Struct("<I"), struct.Struct("<H")


def _timestamp() -> tuple[int, int, int, int, int, int]:
    try:
        epoch = min(max(int(os.environ.get("SOURCE_DATE_EPOCH", "")), _EARLIEST), _LATEST)
    except ValueError:
        epoch = _EARLIEST
    return time.gmtime(epoch)[:6]


@dataclass(frozen=True)
class Deflated:
    """One member's bytes as the archive stores them: raw deflate at the archive's level, and the CRC."""

    data: bytes
    deflated: bytes
    crc: int


@dataclass(slots=True, eq=False)  # not frozen: an archive lends 10,000, and a frozen one takes 3 times as long to make
class Stored:
    """A published archive's member taken as stored, not inflated: the archive is the one the last
    build wrote (its digest) and the member's source is unchanged since (see published_members)."""

    size: int
    crc: int
    origin: bytes  # the published archive's bytes: its deflated bytes are ``origin[start:end]``
    start: int
    end: int
    # where its local and central records lie in ``origin`` (-1: not checked): both are as
    # reproducible_zip writes them with this build's timestamp (but the local record's offset), and
    # are copied as they are, runs of them as one slice (the local record ends where the member does):
    # such a member goes under its own name only
    local: int = -1
    central: int = -1
    central_end: int = -1

    @property
    def deflated(self) -> bytes:
        """The member's bytes as the archive stores them (raw deflate)."""
        return self.origin[self.start:self.end]


@dataclass(frozen=True)
class PublishedArchive:
    """A published archive the new one may take members from: its file, the digest of the archive
    the last build wrote (its saved state, which is data: "" when unknown), and the members whose
    source the caller knows unchanged since, with its size (taken as stored when the digest holds)."""

    path: Path | str
    digest: str = ""
    unchanged: Mapping[str, int] = field(default_factory=dict)


def archive_digest(data: bytes) -> str:
    """What the state keeps of an archive it published, for the next build to know it (see Stored)."""
    return hashlib.sha256(data).hexdigest()


def deflate(data: bytes) -> Deflated:
    """``data`` deflated as zipfile deflates a member (raw stream, level 9)."""
    compressor = zlib.compressobj(_LEVEL, zlib.DEFLATED, -15)
    return Deflated(data, compressor.compress(data) + compressor.flush(), zlib.crc32(data))


def reproducible_zip(members: Mapping[str, bytes | Stored], ahead: Mapping[str, Deflated | Stored] | None = None) -> bytes:
    """A zip of ``members`` (archive path -> bytes, or a published member taken as stored) that
    depends on nothing else; ``ahead``: members already deflated (taken when they hold the same bytes).

    The bytes are those zipfile writes for the same members (tests compare them), written here
    because zipfile takes no member deflated beforehand, and deflating the notebooks (megabytes
    of base64 figures) at the end was half of what a build did after its last demo.
    """
    dos_time, dos_date = _dos_stamp()
    chunks: list[bytes | memoryview] = []  # a run is a view of the published archive: joined, not copied twice
    directory: list[bytes] = []
    position = 0  # where the next local record goes
    run: _Run | None = None  # published records copied as one slice
    for name in sorted(members):
        data, known = members[name], (ahead or {}).get(name)
        if isinstance(data, Stored) and data.central >= 0:
            if max(data.size, data.end - data.start, position) >= _ZIP64_LIMIT:
                return zipfile_zip(members)
            if (run is not None and run.origin is data.origin and run.local_end == data.local
                    and run.central_end == data.central):
                run.local_end, run.central_end = data.end, data.central_end  # the next records, in both lists
            else:
                _copy_run(run, chunks, directory)
                run = _Run(data.origin, data.local, data.end, data.central, data.central_end, position - data.local)
            position += data.end - data.local
            continue
        _copy_run(run, chunks, directory)
        run = None
        if isinstance(data, Stored):
            member: Deflated | Stored = data
        else:
            member = known if isinstance(known, Deflated) and known.data == data else deflate(data)
        size = member.size if isinstance(member, Stored) else len(member.data)
        if max(size, len(member.deflated), position) >= _ZIP64_LIMIT:
            return zipfile_zip(members)  # zip64 records: left to zipfile
        encoded, flags = (name.encode("ascii"), 0) if name.isascii() else (name.encode("utf-8"), _UTF8)
        sizes = (member.crc, len(member.deflated), size, len(encoded))
        directory.append(struct.pack("<IBBHHHHHIIIHHHHHII", 0x02014B50, _VERSION, _UNIX, _VERSION, flags,
                                     zipfile.ZIP_DEFLATED, dos_time, dos_date, *sizes, 0, 0, 0, 0,
                                     _REGULAR_0644, position) + encoded)
        local_record = struct.pack("<IHHHHHIIIHH", 0x04034B50, _VERSION, flags, zipfile.ZIP_DEFLATED,
                                   dos_time, dos_date, *sizes, 0) + encoded
        chunks += (local_record, member.deflated)
        position += len(local_record) + len(member.deflated)
    _copy_run(run, chunks, directory)
    listing = b"".join(directory)
    if len(members) >= 0xFFFF or position + len(listing) >= _ZIP64_LIMIT:
        return zipfile_zip(members)
    chunks += (listing, struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                                    len(listing), position, 0))
    return b"".join(chunks)


@dataclass(slots=True)
class _Run:
    """Published members next to each other in their archive, copied as one slice: their local
    records ``origin[local:local_end]``, their central ones, and how far the local ones move."""

    origin: bytes
    local: int
    local_end: int
    central: int
    central_end: int
    shift: int


def _copy_run(run: _Run | None, chunks: list[bytes | memoryview], directory: list[bytes]) -> None:
    """Copy a run of published records (see reproducible_zip): the local ones as they are, the
    central ones with their local record's offset moved by the run's shift."""
    if run is None:
        return
    chunks.append(memoryview(run.origin)[run.local:run.local_end])
    records = run.origin[run.central:run.central_end]
    if run.shift:
        moved = bytearray(records)
        at = 0
        while at < len(moved):  # checked by published_members: no extra field, no comment
            _OFFSET.pack_into(moved, at + 42, _OFFSET.unpack_from(moved, at + 42)[0] + run.shift)
            at += 46 + _NAME_SIZE.unpack_from(moved, at + 28)[0]
        records = bytes(moved)
    directory.append(records)


def _dos_stamp() -> tuple[int, int]:
    """The members' timestamp (see _timestamp) as a zip holds it: DOS time, DOS date."""
    stamp = _timestamp()
    return stamp[3] << 11 | stamp[4] << 5 | stamp[5] // 2, (stamp[0] - 1980) << 9 | stamp[1] << 5 | stamp[2]


def zipfile_zip(members: Mapping[str, bytes | Stored]) -> bytes:
    """The same archive, by zipfile: the reference the tests hold ``reproducible_zip`` to, and the
    writer of archives too large for plain zip records (zip64)."""
    stamp = _timestamp()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in sorted(members):
            data = members[name]
            info = zipfile.ZipInfo(name, date_time=stamp)
            info.create_system = 3  # Unix, whatever builds it
            info.external_attr = _REGULAR_0644
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, zlib.decompress(data.deflated, -15) if isinstance(data, Stored) else data,
                             compresslevel=_LEVEL)
    return out.getvalue()


def published_members(archive: PublishedArchive | Path | str) -> dict[str, Deflated | Stored]:
    """The members of an archive reproducible_zip wrote (the published one, reused with the
    site-wide pages: the same builder and zlib), as it takes them ``ahead``; none when the file
    is not such an archive.  A member is taken only where it holds the very bytes asked for:
    inflated and checked, or (Stored) one of ``archive.unchanged`` when the archive is the one
    the last build wrote (its digest): a one-entry change inflates one member, not thousands,
    and copies the records of the others (checked as reproducible_zip writes them, see Stored)."""
    if not isinstance(archive, PublishedArchive):
        archive = PublishedArchive(archive)
    try:
        raw = Path(archive.path).read_bytes()
        trusted = archive.unchanged if archive.digest and archive_digest(raw) == archive.digest else {}
        end = raw.rindex(b"PK\x05\x06")
        _, _, _, _, count, size, start, _ = struct.unpack_from("<IHHHHIIH", raw, end)
        members: dict[str, Deflated | Stored] = {}
        dos_time, dos_date = _dos_stamp()
        heads = {flags: struct.pack("<IBBHHHHH", 0x02014B50, _VERSION, _UNIX, _VERSION, flags, zipfile.ZIP_DEFLATED,
                                    dos_time, dos_date) for flags in (0, _UTF8)}  # as reproducible_zip writes them
        tail = struct.pack("<HHHHI", 0, 0, 0, 0, _REGULAR_0644)
        at = start
        for _ in range(count):
            flags, method, crc, packed, length, name_size, extra, comment, offset = _CENTRAL.unpack_from(raw, at)
            name = raw[at + 46:at + 46 + name_size].decode("utf-8" if flags & _UTF8 else "ascii")
            central, at = at, at + 46 + name_size + extra + comment
            if trusted.get(name) == length:
                begin = offset + 30 + name_size
                # both records byte for byte those reproducible_zip writes for it now (but the offset)
                if (begin + packed <= start and extra == comment == 0 and flags == (0 if name.isascii() else _UTF8)
                        and raw[central:central + 16] == heads[flags] and raw[central + 30:central + 42] == tail
                        and raw[offset:begin] == b"PK\x03\x04" + raw[central + 6:central + 30] + b"\0\0"
                        + raw[central + 46:at]):
                    members[name] = Stored(length, crc, raw, begin, begin + packed, offset, central, at)
                    continue
            local = struct.unpack_from("<IHHHHHIIIHH", raw, offset)
            begin = offset + 30 + local[9] + local[10]
            deflated = raw[begin:begin + packed]
            if trusted.get(name) == length and method == zipfile.ZIP_DEFLATED and len(deflated) == packed:
                members[name] = Stored(length, crc, raw, begin, begin + packed)
                continue
            inflater = zlib.decompressobj(-15)
            data = inflater.decompress(deflated, length + 1)  # a crafted member never inflates past it
            if method != zipfile.ZIP_DEFLATED or not inflater.eof or len(data) != length or zlib.crc32(data) != crc:
                return {}
            members[name] = Deflated(data, deflated, crc)
        return members if at == start + size else {}
    except (OSError, ValueError, struct.error, zlib.error):  # UnicodeDecodeError is a ValueError
        return {}


def _data(file: SiteFile) -> bytes:
    return file.data if file.data is not None else Path(file.source or "").read_bytes()


def notebook_paths(build: EntryBuild) -> tuple[str, str]:
    """Where ``build``'s notebook is in the site, and its name in the notebooks' archive."""
    return notebook_path(build.entry.name), f"{build.entry.name}.ipynb"


def archive_files(builds: list[EntryBuild], files: list[SiteFile], ahead: dict[str, Deflated] | None = None,
                  published: Mapping[str, PublishedArchive] | None = None) -> list[SiteFile]:
    """The two archives, from the entries' scripts and the notebooks among the site's ``files``
    (``ahead``: notebooks deflated as their pages rendered, by member name; ``published``: the
    published archives by site path, when the site-wide pages are reused: their members are
    taken where they hold the same bytes, see published_members).

    Members keep the demos folder's layout: ``plot.py``, ``basics/plot.py``, ``basics/plot.ipynb``.
    """
    published = published or {}
    before = {name: published_members(archive) for name, archive in published.items()}
    lent_scripts, lent_notebooks = before.get(SCRIPTS_ZIP, {}), before.get(NOTEBOOKS_ZIP, {})
    by_path = {f.path: f for f in files}
    builds = [b for b in builds if not b.entry.is_page]  # pages have no script and no notebook
    scripts: dict[str, bytes | Stored] = {}
    for build in builds:
        member, entry = f"{build.entry.name}.py", build.entry
        stored = lent_scripts.get(member)
        if isinstance(stored, Stored) and entry.known_digest and stored.size == entry.signature[0]:
            scripts[member] = stored  # its file as the state saved it (not read: see Entry.known_digest)
            continue
        data = script_download(entry)
        # the script's digest said it unchanged (the state is data): its bytes must agree too
        scripts[member] = (stored if isinstance(stored, Stored) and stored.size == len(data)
                           and stored.crc == zlib.crc32(data) else data)
    notebooks: dict[str, bytes | Stored] = {}
    for build in builds:
        site_path, member = notebook_paths(build)
        notebook = by_path.get(site_path)
        if notebook is not None:
            stored = lent_notebooks.get(member)  # a notebook linked unchanged is not read
            notebooks[member] = stored if isinstance(stored, Stored) else _data(notebook)
    return [SiteFile(SCRIPTS_ZIP, data=reproducible_zip(scripts, lent_scripts)),
            SiteFile(NOTEBOOKS_ZIP, data=reproducible_zip(notebooks, {**lent_notebooks, **(ahead or {})}))]
