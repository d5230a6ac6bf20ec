"""Users' data into the embedded backend: log files (``logformats``), metric files
(``metric_files``) and the importers that write them through ``tools.backends.embedded``
(``importers``). Above ``tools``: it writes through a backend, and no tool reads through it."""
