"""A conftest whose import kills the worker: its error, not that of the test module imported before it."""
import os

os.abort()
