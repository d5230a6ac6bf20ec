"""Users' data into the embedded backend: log formats (``logformats``, container records
included), metric files (``metric_files``), call graphs (``dependencies``), the importers that
write them through ``tools.backends.embedded`` (``importers``) and several files or folders at
once (``batch``); what columns and pod names say (``columns``, ``kubernetes``) and the time
strings general parsers misread (``times``). Above ``tools``: it writes through a backend, and
no tool reads through it."""
