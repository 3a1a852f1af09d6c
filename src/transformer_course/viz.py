"""Moved to :mod:`transformer_course.reader.viz` (the reader's interface); this old name
stays for students' code and old notebooks, and is that very module."""

import sys

from .reader import viz as _moved

sys.modules[__name__] = _moved
