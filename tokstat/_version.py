"""The package version (one place: pyproject reads it, signatures print it)."""

__version__ = "0.1.0"
