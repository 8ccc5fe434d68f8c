"""The resumable result store of a sweep: one record per point key, each written atomically.

Two formats, chosen by ``open_store(path)``:

* **Parquet** (when pyarrow is installed and the path does not end in ``.sqlite``/``.db``): ``path`` is a
  folder holding one ``KEY.parquet`` file per finished point. A record is written to a temporary file in
  the same folder, flushed to disk (``fsync``) and renamed over its final name with ``os.replace``, which
  is atomic on POSIX and Windows: a reader sees the whole file or none. A sweep killed mid-write leaves at
  most a ``.KEY.*.tmp`` file, which is ignored and removed on the next open.
* **SQLite** (the standard library; when pyarrow is missing, a ``.parquet`` path becomes ``.sqlite``): a
  table ``points(key PRIMARY KEY, record)`` with the record as JSON, one transaction per point; SQLite's
  journal makes each commit all or nothing.

Only the process that runs the sweep writes (workers return records), so there is one writer per sweep.
``load_store(path)`` reads every stored record as a DataFrame, whatever sweep wrote it.

Simplifications: records are flat dicts of scalars; a Parquet file that cannot be read (only possible if
something outside gpusim wrote into the folder) is skipped with a warning and its point runs again.
"""

from __future__ import annotations

import json
import os
import sqlite3
import warnings
from pathlib import Path

from gpusim.errors import ConfigError

SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def have_pyarrow() -> bool:
    try:
        import pyarrow  # noqa: F401 -- only probing whether it is installed
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        return False
    return True


class ParquetStore:
    """A folder of ``KEY.parquet`` files, one per point."""

    format = "parquet"

    def __init__(self, path: Path):
        self.path = path
        if path.exists() and not path.is_dir():
            raise ConfigError("a Parquet store is a folder, and this is a file; give another path (or a "
                              ".sqlite one)", file=str(path))
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob(".*.tmp"):
            stale.unlink(missing_ok=True)

    def load(self) -> dict[str, dict]:
        import pyarrow.parquet as pq

        records = {}
        for file in sorted(self.path.glob("*.parquet")):
            try:
                rows = pq.read_table(file).to_pylist()
            except Exception as error:  # noqa: BLE001 -- a foreign, unreadable file: skip it, rerun its point
                warnings.warn(f"{file}: unreadable ({error}); its point will run again", stacklevel=2)
                continue
            if rows:
                records[file.stem] = rows[0]
        return records

    def put(self, key: str, record: dict) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        temporary = self.path / f".{key}.{os.getpid()}.tmp"
        with temporary.open("wb") as handle:
            pq.write_table(pa.Table.from_pylist([record]), handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path / f"{key}.parquet")

    def close(self) -> None:
        pass


class SQLiteStore:
    """An SQLite file with one row per point."""

    format = "sqlite"

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.connection = sqlite3.connect(path)
            with self.connection:
                self.connection.execute("CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, record TEXT)")
        except sqlite3.DatabaseError as error:
            raise ConfigError(f"not a usable SQLite store: {error}", file=str(path)) from None

    def load(self) -> dict[str, dict]:
        rows = self.connection.execute("SELECT key, record FROM points ORDER BY key").fetchall()
        return {key: json.loads(record) for key, record in rows}

    def put(self, key: str, record: dict) -> None:
        with self.connection:
            self.connection.execute("INSERT OR REPLACE INTO points (key, record) VALUES (?, ?)",
                                    (key, json.dumps(record)))

    def close(self) -> None:
        self.connection.close()


def open_store(path: str | Path) -> ParquetStore | SQLiteStore:
    """The store at ``path`` (created if missing): see the module docstring for the format chosen."""
    path = Path(path)
    if path.suffix in SQLITE_SUFFIXES:
        return SQLiteStore(path)
    if have_pyarrow():
        return ParquetStore(path)
    return SQLiteStore(path.with_suffix(".sqlite"))


def load_store(path: str | Path):
    """Every record in the store at ``path`` as a pandas DataFrame (one row per point key, by key)."""
    import pandas as pd

    path = Path(path)
    if not path.exists() and not (path.suffix not in SQLITE_SUFFIXES and path.with_suffix(".sqlite").exists()):
        raise ConfigError("no sweep store here", file=str(path))
    store = open_store(path)
    try:
        records = store.load()
    finally:
        store.close()
    return pd.DataFrame([{"key": key, **record} for key, record in sorted(records.items())])
