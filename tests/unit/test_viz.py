"""bertviz wrappers: the libraries come from the site (offline) or the CDN, never both."""

import pytest
import torch

import transformer_course as tc

viz = pytest.importorskip("transformer_course.viz")
pytest.importorskip("bertviz")


@pytest.fixture
def maps():
    enc = tc.Encoder(16, 4, 32, 2).eval()
    _, maps = enc(torch.randn(1, 5, 16), return_attention=True)
    return maps


def test_head_view_uses_local_copies_offline(maps, monkeypatch):
    monkeypatch.setenv(viz.ENV_VAR, "_static/vendor")
    view = viz.head_view(maps, list("abcde"))
    assert "cdnjs" not in view.html
    assert '"_static/vendor/require.js"' in view.html
    assert '"_static/vendor/d3.min"' in view.html and '"_static/vendor/jquery.min"' in view.html
    assert "window.requirejs" in view.html and view._repr_html_() == view.html
    assert (view.num_layers, view.num_heads) == (2, 4)


def test_head_view_falls_back_to_the_cdn(maps, monkeypatch):
    monkeypatch.delenv(viz.ENV_VAR, raising=False)
    view = viz.model_view(maps, list("abcde"))
    assert "cdnjs.cloudflare.com/ajax/libs/require.js" in view.html
    assert view.kind == "model view"
    explicit = viz.head_view(maps, list("abcde"), base_url="assets/js/")
    assert '"assets/js/require.js"' in explicit.html


def test_view_accepts_three_dim_layers_and_outputs(maps):
    view = viz.head_view([m[0] for m in maps], list("abcde"), base_url="x")
    assert view.num_layers == 2

    class Output:
        attentions = tuple(maps)

    assert viz.head_view(Output(), list("abcde"), base_url="x").num_heads == 4


def test_view_bad_inputs(maps):
    with pytest.raises(ValueError, match="tokens has 4 entries but the attention covers 5"):
        viz.head_view(maps, list("abcd"))
    with pytest.raises(ValueError, match=r"must be \(1, H, L, L\)"):
        viz.head_view([torch.rand(2, 4, 5, 5)], list("abcde"))
    with pytest.raises(TypeError, match="non-empty list"):
        viz.head_view([], [])


@pytest.mark.parametrize("lang, word", [("en", "Layer"), ("fr", "Couche"), ("it", "Strato")])
def test_the_layer_menu_is_named_by_the_word_shown_before_it(maps, lang, word):
    """bertviz's layer menu had no accessible name (axe: select-name): it gets the word the
    reader sees before it, in the reader's language."""
    tc.set_language(lang)
    try:
        html = tc.viz.head_view(maps, ["a", "b", "c", "d", "e"]).html
    finally:
        tc.set_language("en")
    assert f'<select aria-label="{word}" id="layer">' in html


@pytest.mark.parametrize("lang, words", [("en", "2 layers × 4 heads, 5 tokens"),
                                         ("fr", "2 couches × 4 têtes, 5 jetons"),
                                         ("it", "2 strati × 4 teste, 5 token")])
def test_the_repr_speaks_the_language_the_view_was_built_in(maps, lang, words):
    tc.set_language(lang)
    try:
        view = tc.viz.model_view(maps, list("abcde"), base_url="x")
    finally:
        tc.set_language("en")
    assert "bertviz" in repr(view) and repr(view).endswith(f"{words}>"), repr(view)
