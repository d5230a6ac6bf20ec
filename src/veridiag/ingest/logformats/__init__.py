"""Log file formats: detect a file's format, then stream typed entries (time, level, component, message).

Pure: no store, no template mining. Formats are small classes registered by id in ``FORMATS``
(one module per family); the importer, the embedded store and the offline engine consume
``LogEntry`` records instead of re-parsing text.

``read_log_file(path)`` detects the format from the first lines, resolves the year of formats
that write none (``year=``, else a full date in the file, else the file's mtime — never today),
keeps stack traces with their entry, and counts what it could not read in a ``LogFileReport``.
"""

# Registered in this order, which breaks detection ties: container records before the JSON
# lines they also are.
from veridiag.ingest.logformats import (  # noqa: F401
    android,
    container,
    generic,
    java,
    loghub,
    structured,
    syslog,
    web,
)
from veridiag.ingest.logformats._base import (
    FORMATS,
    ChangeInfo,
    Level,
    LogEntry,
    LogFileReport,
    LogFormat,
    LogFormatError,
    register,
)
from veridiag.ingest.logformats.reader import detect_format, read_log_file

__all__ = [
    "FORMATS",
    "ChangeInfo",
    "Level",
    "LogEntry",
    "LogFileReport",
    "LogFormat",
    "LogFormatError",
    "detect_format",
    "read_log_file",
    "register",
]
