"""The book's plumbing: what keeps the chapters' prose true to their outputs.

:mod:`.claims` holds ``tc.claim`` and ``tc.ClaimError``, the hidden checks that pin every
sentence about an output to the number the page prints. It may import the model and the
package's languages (:mod:`transformer_course.i18n`, which stays at the top: every error
message is translated); the model never imports this package.
"""

from .claims import ClaimError, claim

__all__ = ["ClaimError", "claim"]
