"""The drills: generated questions, the reader's answer checked, the slip named."""
