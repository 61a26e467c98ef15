"""``.eval752.zip`` bundles: datasets and runs in one checked, reproducible file (see ``export.py``)."""
from .export import FORMAT, FORMAT_VERSION, export_dataset, export_run
from .importer import import_bundle, inspect_lines, verify_bundle
from .zipio import BundleError, Limits

__all__ = ["FORMAT", "FORMAT_VERSION", "BundleError", "Limits", "export_dataset", "export_run",
           "import_bundle", "inspect_lines", "verify_bundle"]
