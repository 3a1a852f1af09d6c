"""The explorers: controls change the computed weights, every setting stays finite and drawn,
and the static page has what it needs (frames in stacks, jslinks)."""

import io

import pytest
import torch

widgets = pytest.importorskip("transformer_course.widgets")
W = pytest.importorskip("ipywidgets")


def picture_ok(png: bytes) -> bool:
    """A real PNG with more than a blank canvas in it."""
    from matplotlib.image import imread

    pixels = torch.from_numpy(imread(io.BytesIO(png), format="png").copy())
    return png[:8] == b"\x89PNG\r\n\x1a\n" and pixels.std() > 0.05


@pytest.fixture(scope="module")
def beta():
    return widgets.beta_explorer()


def test_beta_control_changes_the_weights(beta):
    beta.outer.value, beta.inner.value = "soft", 1.0
    before = beta.result["weights"].clone()
    image_before = beta.current_image().value
    beta.inner.value = 8.0
    assert not torch.allclose(beta.result["weights"], before)
    assert beta.current_image() is not None and picture_ok(beta.current_image().value)
    beta.inner.value = 0.0
    w = beta.result["weights"]
    torch.testing.assert_close(w, torch.full_like(w, 1 / w.shape[-1]))  # uniform
    beta.outer.value = "hard"
    hard = beta.result["weights"]
    assert torch.all((hard == 0) | (hard == 1)) and torch.all(hard.sum(-1) == 1)
    beta.outer.value, beta.inner.value = "soft", 1.0
    assert beta.current_image().value == image_before  # same setting, same picture


def test_beta_extremes_are_finite_and_drawn(beta):
    beta.outer.value = "soft"
    for b in (0.0, 1000.0):
        beta.inner.value = b
        assert torch.isfinite(beta.result["weights"]).all()
        assert torch.isfinite(beta.result["outputs"]).all()
        assert picture_ok(beta.current_image().value)
    huge = widgets.beta_explorer(betas=(1.0, 1e6), beta=1e6)
    assert torch.isfinite(huge.result["weights"]).all()


def test_static_page_structure(beta):
    # one frame per soft β plus a single hard frame, linked in the browser by jslink
    soft, hard = beta.frames
    assert isinstance(soft, W.Stack) and len(soft.children) == len(widgets.BETAS)
    assert isinstance(hard, W.Image)
    assert len(beta.links) == 2
    assert all(isinstance(link, W.widgets.widget_link.Link) for link in beta.links)
    pictures = {child.value for child in soft.children}
    assert len(pictures) == len(widgets.BETAS)  # every β gives a different picture
    assert all(picture_ok(p) for p in pictures)
    bundle = beta._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_heads_explorer():
    e = widgets.heads_explorer()
    e.outer.value = 4
    assert e.result["weights"].shape == (4, 6, 6)
    first = e.result["weights"].clone()
    e.outer.value = 8
    assert e.result["weights"].shape == (8, 6, 6)
    e.inner.value = 7
    assert int(e.result["head"]) == 7
    e.outer.value = 2  # head 8 of 2 does not exist: the last head is shown, never a blank
    assert int(e.result["head"]) == 1 and picture_ok(e.current_image().value)
    e.outer.value = 4
    torch.testing.assert_close(e.result["weights"], first)
    with pytest.raises(ValueError, match="do not divide d_model=6"):
        widgets.heads_explorer(torch.randn(3, 6), head_counts=(1, 4))


def test_masks_explorer_every_key_masked():
    e = widgets.masks_explorer()
    e.outer.value = "causal"
    w = e.result["weights"]
    assert torch.all(w.triu(1) == 0)
    e.outer.value = "padding"
    e.inner.value = 2
    assert torch.all(e.result["weights"][:, -2:] == 0)
    e.inner.value = 6  # everything is padding: no key at all
    assert torch.all(e.result["weights"] == 0) and torch.all(e.result["output"] == 0)
    assert torch.isfinite(e.result["output"]).all() and picture_ok(e.current_image().value)
    e.outer.value = "causal + padding"
    assert torch.isfinite(e.result["weights"]).all()


def test_explorer_input_errors():
    with pytest.raises(ValueError, match="labels has 2 names but x"):
        widgets.beta_explorer(torch.randn(3, 2), ["a", "b"])
    with pytest.raises(ValueError, match="beta=3.0 must be one of"):
        widgets.beta_explorer(beta=3.0)
    with pytest.raises(ValueError, match="tokens must not be empty"):
        widgets.masks_explorer([])
