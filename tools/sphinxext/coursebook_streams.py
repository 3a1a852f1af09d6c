"""A cell's prints in one block, each line as Python wrote it.

The book merges a cell's stream outputs into one block (``nb_merge_streams``), and myst-nb
does it by appending every later stream output to the first one with ``rstrip() + "\\n"``
(``myst_nb.core.utils.coalesce_streams``). A kernel can deliver one ``print`` in several
stream messages (print writes its arguments one by one, and the output is flushed between
two writes now and then), so that join cut a printed line in two at random: a page showed
"11.720.448" and "parametri" on two lines. Here stream outputs that follow each other with
the same name are first concatenated exactly; myst-nb then merges what is left as before.
"""

from __future__ import annotations

from typing import Any

from myst_nb.core import render, utils

_myst_nb_coalesce = utils.coalesce_streams


def join_adjacent_streams(outputs: list[Any]) -> list[Any]:
    """``outputs`` with each run of consecutive stream outputs of one name joined into the
    first of them (its text extended in place, as myst-nb extends it)."""
    joined: list[Any] = []
    for output in outputs:
        last = joined[-1] if joined else None
        if (output.get("output_type") == "stream" and last is not None
                and last.get("output_type") == "stream"
                and last.get("name") == output.get("name")):
            last["text"] += output["text"]
        else:
            joined.append(output)
    return joined


def coalesce_streams(outputs: list[Any]) -> list[Any]:
    return _myst_nb_coalesce(join_adjacent_streams(outputs))


def setup(app: Any) -> dict:
    render.coalesce_streams = coalesce_streams  # the name myst-nb's renderer calls
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
