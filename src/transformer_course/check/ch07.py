"""Checkers of chapter 7's transfer exercises: a new idea applied somewhere new."""

from __future__ import annotations

__all__: list[str] = []
