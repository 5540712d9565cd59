"""The words layer: formatters (format: one per quantity), labels (labels: one table per
choice, and the memory parts' names and colours) and the sentences built from the numbers'
records (memory, cost, training, answers: the five questions of a plan). Imports only the
numbers layer."""
