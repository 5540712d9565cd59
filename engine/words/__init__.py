"""The words layer: formatters (one per quantity), labels (one table per choice) and the
sentences built from the numbers' records. Imports only the numbers layer."""
