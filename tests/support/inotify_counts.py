"""How often each file of one folder is opened, counted by the kernel (Linux inotify, through
libc with ctypes: no dependency), whoever opens it: this Python process, pyiceberg, or the
Spark JVM. Used to measure manifest reads independently of icemaint's own code.

Every IN_OPEN is paired with the IN_CLOSE_WRITE or IN_CLOSE_NOWRITE that ends it (first
open, first close, per file name): a pair closed without writing is a read, one closed after
writing a write. Each open counts in the phase that was current when it happened; a test
moves to the next phase with `phase()`, which first drains every event queued so far (the
kernel queues a process's events in order, so every open that happened before the call is
counted in the phase before it).

What the kernel cannot tell: two opens of one file at once. inotify merges an event into
the one queued just before it when the two are identical (same watch, mask, cookie and
name) and that one is not read yet (inotify(7), "coalesced"), so two processes or threads
opening the same file within the same instant may count as one open. A test that has two
readers of one file run in parallel bounds their count from both sides (`merged_reads`)
instead of counting it exactly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import struct
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

IN_CLOSE_WRITE = 0x0008
IN_CLOSE_NOWRITE = 0x0010
IN_OPEN = 0x0020
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)

MANIFEST = re.compile(r"^[^.].*-m\d+\.avro$")  # Iceberg's manifests: <uuid>-m<n>.avro (not the manifest lists, snap-*.avro)
MANIFEST_CRC = re.compile(r"^\..*-m\d+\.avro\.crc$")  # Hadoop's checksum sidecar of one: .<uuid>-m<n>.avro.crc
METADATA_JSON = re.compile(r"^[^.].*\.metadata\.json$")


@dataclass(frozen=True)
class Open:
    """One open of one file, once it was closed: `wrote` tells a write from a read."""

    seq: int  # its place among all opens, in the kernel's order
    phase: str
    name: str
    wrote: bool


class FolderOpens:
    """Counts the opens of the files directly in `folder` (not below), by phase."""

    def __init__(self, folder: Path, phase: str = "before") -> None:
        self._libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if self._libc.inotify_add_watch(self._fd, os.fsencode(folder), IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) < 0:
            errno = ctypes.get_errno()
            os.close(self._fd)
            raise OSError(errno, f"inotify_add_watch {folder}")
        self.folder = folder
        self.current = phase
        self.phases = [phase]
        self.opens: list[Open] = []
        self._pending: dict[str, deque[tuple[int, str]]] = {}
        self._seq = 0
        self._lock = threading.Lock()

    def __enter__(self) -> FolderOpens:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._fd >= 0:
            self.drain()
            os.close(self._fd)
            self._fd = -1

    def phase(self, name: str) -> None:
        """Every open so far belongs to the phase before; the next ones to `name`."""
        with self._lock:
            if self._fd >= 0:
                self._drain()
            if name != self.current:
                self.current = name
                if name not in self.phases:
                    self.phases.append(name)

    def drain(self) -> None:
        with self._lock:
            if self._fd >= 0:
                self._drain()

    def _drain(self) -> None:
        while True:
            try:
                buffer = os.read(self._fd, 1 << 20)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(buffer):
                _, mask, _, length = _HEADER.unpack_from(buffer, offset)
                raw = buffer[offset + _HEADER.size: offset + _HEADER.size + length]
                offset += _HEADER.size + length
                if mask & IN_Q_OVERFLOW:
                    raise RuntimeError("inotify queue overflowed: events were lost (raise fs.inotify.max_queued_events)")
                if mask & IN_IGNORED:
                    raise RuntimeError(f"the watch on {self.folder} was removed (folder deleted?)")
                self._event(os.fsdecode(raw.rstrip(b"\0")), mask)

    def _event(self, name: str, mask: int) -> None:
        if mask & IN_OPEN:
            self._pending.setdefault(name, deque()).append((self._seq, self.current))
            self._seq += 1
        if mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE):
            waiting = self._pending.get(name)
            if waiting:  # a close of a file opened before the watch began has no open to pair
                seq, phase = waiting.popleft()
                self.opens.append(Open(seq, phase, name, wrote=bool(mask & IN_CLOSE_WRITE)))

    def still_open(self) -> list[str]:
        """Files opened and not closed yet (after a drain)."""
        self.drain()
        return sorted(name for name, waiting in self._pending.items() for _ in waiting)

    def split(self, phase: str, after: Callable[[Open], bool], into: str) -> None:
        """Move the opens of `phase` that follow its last open matching `after` to the phase
        `into` (a boundary no callback reports, e.g. the last metadata file a commit wrote)."""
        self.drain()
        ordered = sorted(self.opens, key=lambda o: o.seq)
        marks = [o.seq for o in ordered if o.phase == phase and after(o)]
        if not marks:
            raise AssertionError(f"no open in phase {phase!r} to split at")
        self.opens = [Open(o.seq, into, o.name, o.wrote) if o.phase == phase and o.seq > marks[-1] else o for o in ordered]
        if into not in self.phases:
            self.phases.insert(self.phases.index(phase) + 1, into)

    def reads(self, phase: str, pattern: re.Pattern[str] = MANIFEST) -> Counter[str]:
        """Per file matching `pattern`: how often it was opened and closed without writing."""
        return Counter(o.name for o in self.opens if o.phase == phase and not o.wrote and pattern.match(o.name))

    def merged_reads(self, phase: str, expected: Counter[str], at_once: Counter[str], pattern: re.Pattern[str] = MANIFEST) -> bool:
        """Whether the reads of `phase` are `expected`, but for the files `at_once` names
        (read by two readers in parallel), each of which may have one open per parallel
        reader merged into another by the kernel: it was read at least once and at most as
        `expected` says."""
        got = self.reads(phase, pattern)
        if set(got) != set(expected):
            return False
        return all(got[name] == count or (name in at_once and count - at_once[name] <= got[name] < count) for name, count in expected.items())

    def writes(self, phase: str, pattern: re.Pattern[str] = MANIFEST) -> Counter[str]:
        return Counter(o.name for o in self.opens if o.phase == phase and o.wrote and pattern.match(o.name))

    def table(self, pattern: re.Pattern[str] = MANIFEST) -> str:
        """Per phase: reads and writes of matching files, distinct files, the most reads of one."""
        lines = []
        for phase in self.phases:
            reads, writes = self.reads(phase, pattern), self.writes(phase, pattern)
            lines.append(f"{phase}: {sum(reads.values())} reads of {len(reads)} files (at most {max(reads.values(), default=0)} of one), "
                         f"{sum(writes.values())} writes of {len(writes)} files")
        return "\n".join(lines)
