"""Moved to :mod:`transformer_course.book.claims` (the book's plumbing); this old name stays
for students' code and old notebooks, and is that very module."""

import sys

from .book import claims as _moved

sys.modules[__name__] = _moved
