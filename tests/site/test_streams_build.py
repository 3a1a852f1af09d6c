"""The book's merge of a cell's prints (tools/sphinxext/coursebook_streams.py): a print that
reached the page in several stream messages stays one line, and myst-nb's own merge of the
rest is kept (one block per stream name, stderr before stdout)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "sphinxext"))
import coursebook_streams as streams
from myst_nb.core import render


def stream(text, name="stdout"):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_a_print_split_in_two_messages_stays_one_line():
    outputs = [stream("11.720.448"), stream(" parametri\n"), stream("fine\n")]
    merged = streams.coalesce_streams(outputs)
    assert [o["text"] for o in merged] == ["11.720.448 parametri\nfine\n"]


def test_what_myst_nb_merged_before_is_merged_the_same_way():
    picture = nbformat.v4.new_output("display_data", data={"text/plain": "<Figure>"})
    outputs = [stream("a\n"), picture, stream("b\n"), stream("warning\n", "stderr")]
    merged = streams.coalesce_streams(outputs)
    assert [(o["output_type"], o.get("name"), o.get("text")) for o in merged] == [
        ("stream", "stdout", "a\nb\n"), ("display_data", None, None),
        ("stream", "stderr", "warning\n")]


def test_the_extension_replaces_the_merge_myst_nb_calls():
    class App:
        pass
    streams.setup(App())
    assert render.coalesce_streams is streams.coalesce_streams
