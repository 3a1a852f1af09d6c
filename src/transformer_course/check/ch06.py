"""Checkers of chapter 6's transfer exercises: a new idea applied somewhere new.

* :func:`alibi_scores`: a linear bias on the scores (ALiBi), which depends on the distance
  between query and key only, so that a window scores the same wherever it starts;
* :func:`rope`: rotary position embeddings, the rotation of section 6.3 applied to queries
  and keys, so that their dot product depends on the offset only;
* :func:`shift_matrix_concatenated`: the shift matrix M_k of section 6.3 for the other layout
  of the table, all sines then all cosines;
* :func:`grid_encoding`: a fixed encoding of positions with two coordinates (the patches of
  an image), the row in one half of the vector and the column in the other.

Heads are numbered from 1 in the verdicts, as in the book's prose; positions from 0, as the
encoding's p.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..i18n import gettext as _
from ..positional import sinusoidal_encoding as _sinusoidal_encoding
from ._core import (
    CheckResult,
    _as_tensor,
    _call,
    _CheckFailedError,
    _compare,
    _ints,
    _num,
    _run,
    _shape,
)

__all__ = ["alibi_scores", "grid_encoding", "rope", "shift_matrix_concatenated"]


def _finite(got: object, shape: tuple[int, ...], *, what: str) -> torch.Tensor:
    """``got`` as a float64 tensor of the expected shape with finite entries, or a verdict."""
    got = _as_tensor(got, what=what)
    if tuple(got.shape) != shape:
        raise _CheckFailedError(
            _("on {what} the shape is {got}, expected {expected}")
            .format(what=what, got=_shape(got.shape), expected=_shape(shape)))
    got = got.to(torch.float64)
    if not torch.isfinite(got).all():
        index = tuple((~torch.isfinite(got)).nonzero()[0].tolist())
        raise _CheckFailedError(
            _("on {what} entry {index} is {value} (not finite)")
            .format(what=what, index=_shape(index), value=_num(got[index].item())))
    return got


def _matches(got: torch.Tensor, other: torch.Tensor, atol: float = 1e-4) -> bool:
    return got.shape == other.shape and torch.allclose(got.to(torch.float64),
                                                       other.to(torch.float64), atol=atol)


# --- ALiBi: a linear bias on the scores --------------------------------------------------------

def _alibi(q: torch.Tensor, k: torch.Tensor, slopes: torch.Tensor, *, sign: float = -1.0,
           scale: bool = True, absolute: bool = True) -> torch.Tensor:
    """``q k^T / sqrt(d) - slope * |i - j|`` per head, in float64; the keywords give the
    classic mistakes (the sign, the scale, i - j without the absolute value)."""
    q, k, slopes = q.double(), k.double(), slopes.double()
    distance = (torch.arange(q.shape[-2])[:, None] - torch.arange(k.shape[-2])[None, :])
    distance = distance.abs() if absolute else distance  # (L_q, L_k)
    scores = q @ k.transpose(-2, -1)  # (h, L_q, L_k)
    if scale:
        scores = scores / math.sqrt(q.shape[-1])
    return scores + sign * slopes[:, None, None] * distance


def _explain_alibi(got: torch.Tensor, q: torch.Tensor, k: torch.Tensor, slopes: torch.Tensor,
                   what: str) -> None:
    if _matches(got, _alibi(q, k, slopes, sign=1.0)):
        raise _CheckFailedError(
            _("on {what} the bias has the wrong sign: far keys get a bonus instead of a "
              "penalty; subtract slope * |i - j|").format(what=what))
    if _matches(got, _alibi(q, k, slopes, scale=False)):
        raise _CheckFailedError(
            _("on {what} the dot products q . k are not divided by sqrt(d) = {root}")
            .format(what=what, root=_num(math.sqrt(q.shape[-1]))))
    if _matches(got, _alibi(q, k, slopes, absolute=False)):
        raise _CheckFailedError(
            _("on {what} the bias is -slope * (i - j): keys after the query get a bonus; "
              "a key two positions ahead is as far as one two positions back, use |i - j|")
            .format(what=what))
    if _matches(got, _alibi(q, k, slopes, sign=0.0)):
        raise _CheckFailedError(
            _("on {what} the scores carry no position bias at all").format(what=what))


def alibi_scores(fn: Callable[..., torch.Tensor]) -> CheckResult:
    """Check ``fn(q, k, slopes)`` -> ``(h, L, L)`` attention scores with a linear position
    bias (ALiBi, in its symmetric form): ``q[n] @ k[n].T / sqrt(d) - slopes[n] * |i - j|``
    for head ``n`` of the ``h`` heads, ``q``, ``k`` of shape ``(h, L, d)`` and ``slopes`` of
    shape ``(h,)``.

    First the property: scores computed on the last positions of a sequence alone equal
    those computed inside the whole sequence (translation invariance). Then the values."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(60)
        q_all, k_all = torch.randn(2, 9, 8, generator=g), torch.randn(2, 9, 8, generator=g)
        slopes = torch.tensor([0.5, 0.125])
        start = 3
        what_all = _("{count} positions").format(count=_num(9))
        what_end = _("positions {first} to {last} alone").format(first=_num(start),
                                                                 last=_num(8))
        whole = _finite(_call(f, q_all.clone(), k_all.clone(), slopes.clone(), what=what_all),
                        (2, 9, 9), what=what_all)
        alone = _finite(_call(f, q_all[:, start:].clone(), k_all[:, start:].clone(),
                              slopes.clone(), what=what_end), (2, 6, 6), what=what_end)
        inside = whole[:, start:, start:]
        error = (alone - inside).abs()
        if error.max() > 1e-4:
            h, i, j = (int(v) for v in torch.unravel_index(error.argmax(), error.shape))
            raise _CheckFailedError(
                _("the scores of positions {first} to {last} depend on where they start: "
                  "computed alone, head {head} gives query {i} and key {j} the score {alone}, "
                  "but {inside} inside the {count} positions; the bias must depend on the "
                  "distance |i - j| only").format(
                    first=_num(start), last=_num(8), head=_num(h + 1), i=_num(i + start),
                    j=_num(j + start),
                    alone=_num(alone[h, i, j].item()), inside=_num(inside[h, i, j].item()),
                    count=_num(9)))
        cases = ((1, 5, 4, [0.5]), (4, 6, 8, [2.0 ** -2, 2.0 ** -4, 2.0 ** -6, 2.0 ** -8]))
        for heads, length, d, values in cases:
            q = torch.randn(heads, length, d, generator=g)
            k = torch.randn(heads, length, d, generator=g)
            head_slopes = torch.tensor(values)
            what = _("q and k {shape} with slopes {slopes}").format(
                shape=_shape(q.shape), slopes="[" + ", ".join(_num(v) for v in values) + "]")
            got = _as_tensor(_call(f, q.clone(), k.clone(), head_slopes.clone(), what=what),
                             what=what)
            expected = _alibi(q, k, head_slopes)
            try:
                _compare(got, expected, what=what, atol=1e-4)
            except _CheckFailedError:
                _explain_alibi(got, q, k, head_slopes, what)
                raise
        return _("q . k / sqrt(d) minus slope * |i - j|: the same scores wherever a window "
                 "starts")
    return _run("alibi_scores", fn, body)


# --- RoPE: rotating queries and keys -----------------------------------------------------------

def _rope(x: torch.Tensor, positions: torch.Tensor, *, sign: float = 1.0,
          halves: bool = False, two: float = 2.0) -> torch.Tensor:
    """Each pair of columns of ``x`` turned by ``M_p`` of section 6.3 (angle p * omega_i), in
    float64. ``sign=-1`` turns the other way, ``halves=True`` pairs column j with column
    j + d/2 (the concatenated layout), ``two=1`` uses 10000^(-i/d): the classic mistakes."""
    x = x.double()
    d = x.shape[-1]
    omega = 10000.0 ** (-two * torch.arange(d // 2, dtype=torch.float64) / d)  # (d/2,)
    angle = sign * positions.double()[:, None] * omega  # (L, d/2)
    cos, sin = torch.cos(angle), torch.sin(angle)
    if halves:
        first, second = x[..., : d // 2], x[..., d // 2:]
    else:
        first, second = x[..., 0::2], x[..., 1::2]
    new_first = first * cos + second * sin  # (..., L, d/2): the rows of M_p
    new_second = -first * sin + second * cos
    out = torch.empty_like(x)
    if halves:
        out[..., : d // 2], out[..., d // 2:] = new_first, new_second
    else:
        out[..., 0::2], out[..., 1::2] = new_first, new_second
    return out


def _explain_rope(got: torch.Tensor, x: torch.Tensor, positions: torch.Tensor,
                  what: str) -> None:
    if _matches(got, x, atol=1e-6) and bool(positions.any()):
        raise _CheckFailedError(
            _("on {what} x came back unchanged: every pair must turn by the angle "
              "p * omega_i of its position").format(what=what))
    if _matches(got, _rope(x, positions, sign=-1.0)):
        raise _CheckFailedError(
            _("on {what} each pair turns the other way: use M_p of section 6.3, so that the "
              "pair (0, 1) of E_0 becomes (sin, cos) of E_p").format(what=what))
    if _matches(got, _rope(x, positions, halves=True)) or _matches(
            got, _rope(x, positions, sign=-1.0, halves=True)):
        raise _CheckFailedError(
            _("on {what} column j is paired with column j + d/2 (the concatenated layout); "
              "here, as in the package's encoding, pair i is the two neighbouring columns "
              "2i and 2i + 1").format(what=what))
    if _matches(got, _rope(x, positions, two=1.0)):
        raise _CheckFailedError(
            _("on {what} pair i turns at 10000^(-i/d): the angular frequency is "
              "omega_i = 10000^(-2i/d)").format(what=what))
    steps = torch.arange(len(positions))
    if not torch.equal(positions, steps) and _matches(got, _rope(x, steps)):
        raise _CheckFailedError(
            _("on {what} the positions given were ignored: the rows were turned as if they "
              "stood at 0, 1, 2, ...").format(what=what))


def rope(fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> CheckResult:
    """Check ``fn(x, positions)`` -> ``x`` ``(..., L, d)`` with each pair of columns
    ``(2i, 2i + 1)`` of row l turned by the rotation ``M_p`` of section 6.3, of angle
    ``p * omega_i`` with ``p = positions[l]`` and ``omega_i = 10000^(-2i/d)``: rotary
    position embeddings (RoPE).

    First the property: shifting every position by the same amount leaves the dot products
    of rotated queries and keys unchanged. Then the values, including that ``E_0`` turned to
    position p is ``E_p``."""
    def body(f: Callable) -> str:
        g = torch.Generator().manual_seed(61)
        q, k = torch.randn(6, 16, generator=g), torch.randn(6, 16, generator=g)
        positions = torch.tensor([0, 1, 2, 5, 9, 14])
        shift = 37
        what = _("q and k {shape} at positions {positions}").format(
            shape=_shape(q.shape), positions=_ints(positions.tolist()))
        moved = _("the same q and k at positions {positions}").format(
            positions=_ints((positions + shift).tolist()))
        before = [_finite(_call(f, t.clone(), positions.clone(), what=what), (6, 16), what=what)
                  for t in (q, k)]
        after = [_finite(_call(f, t.clone(), (positions + shift).clone(), what=moved), (6, 16),
                         what=moved) for t in (q, k)]
        scores, shifted = before[0] @ before[1].T, after[0] @ after[1].T  # (6, 6)
        error = (scores - shifted).abs()
        if error.max() > 1e-3:
            i, j = (int(v) for v in torch.unravel_index(error.argmax(), error.shape))
            raise _CheckFailedError(
                _("shifting every position by {shift} changes the dot product of query {i} "
                  "and key {j} from {before} to {after}: with rotations it depends on the "
                  "offset between their positions only").format(
                    shift=_num(shift), i=_num(i), j=_num(j), before=_num(scores[i, j].item()),
                    after=_num(shifted[i, j].item())))
        start = _sinusoidal_encoding(1, 8, dtype=torch.float64).expand(6, 8)  # E_0 on every row
        cases = [
            (_("E_0 on every row, at positions 0 to 5 (expected: E_0 to E_5)"), start.float(),
             torch.arange(6)),
            (_("x {shape} at positions {positions}").format(
                shape=_shape((5, 8)), positions=_ints([0, 3, 7, 20, 100])),
             torch.randn(5, 8, generator=g), torch.tensor([0, 3, 7, 20, 100])),
            (_("a batch x {shape} at positions {positions}").format(
                shape=_shape((2, 3, 4, 16)), positions=_ints([10, 11, 12, 13])),
             torch.randn(2, 3, 4, 16, generator=g), torch.arange(10, 14)),
        ]
        for what, x, where in cases:
            got = _as_tensor(_call(f, x.clone(), where.clone(), what=what), what=what)
            try:
                _compare(got, _rope(x, where), what=what, atol=1e-4)
            except _CheckFailedError:
                if got.shape == x.shape:
                    _explain_rope(got, x, where, what)
                raise
        return _("each pair turned by M_p: E_0 becomes E_p, and q . k depends on the offset "
                 "between the positions only")
    return _run("rope", fn, body)


# --- the shift matrix of the concatenated layout -----------------------------------------------

def _concatenated(num_positions: int, d_model: int) -> torch.Tensor:
    """The sinusoidal table in the concatenated layout: all sines, then all cosines."""
    table = _sinusoidal_encoding(num_positions, d_model, dtype=torch.float64)
    return torch.cat([table[:, 0::2], table[:, 1::2]], dim=1)  # (L, d_model)


def _shift(k: int, d_model: int, *, layout: str = "concatenated", sign: float = 1.0,
           two: float = 2.0) -> torch.Tensor:
    """M_k for ``layout`` ("concatenated" or "interleaved"), in float64; ``sign=-1`` turns
    the other way and ``two=1`` uses 10000^(-i/d): the classic mistakes."""
    half = d_model // 2
    angle = sign * k * 10000.0 ** (-two * torch.arange(half, dtype=torch.float64) / d_model)
    cos, sin = torch.diag(torch.cos(angle)), torch.diag(torch.sin(angle))  # (d/2, d/2)
    blocks = torch.cat([torch.cat([cos, sin], 1), torch.cat([-sin, cos], 1)], 0)  # (d, d)
    if layout == "concatenated":
        return blocks
    order = torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])
    back = torch.argsort(order)
    return blocks[back][:, back]  # rows and columns back in the interleaved order


def _explain_shift(got: torch.Tensor, k: int, d_model: int, what: str) -> None:
    if _matches(got, _shift(k, d_model, layout="interleaved"), atol=1e-6):
        raise _CheckFailedError(
            _("on {what} this is M_k of the interleaved layout, with its 2 x 2 blocks on the "
              "diagonal: here pair i is columns i and i + d_model/2, so its cosines sit on the "
              "diagonal and its sines d_model/2 columns away").format(what=what))
    if _matches(got, _shift(k, d_model, sign=-1.0), atol=1e-6):
        raise _CheckFailedError(
            _("on {what} the matrix turns the other way: it maps E'_(p+k) to E'_p; transpose "
              "it, or change the sign of its sines").format(what=what))
    if _matches(got, _shift(k, d_model, two=1.0), atol=1e-6):
        raise _CheckFailedError(
            _("on {what} pair i turns at 10000^(-i/d): the angular frequency is "
              "omega_i = 10000^(-2i/d)").format(what=what))


def shift_matrix_concatenated(fn: Callable[[int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(k, d_model)`` -> the ``(d_model, d_model)`` matrix ``M'_k`` with
    ``E'[p + k] = M'_k E'[p]`` for every position p, ``E'`` being the sinusoidal table in the
    concatenated layout: the sines of every pair in columns 0 to d_model/2 - 1, their
    cosines in columns d_model/2 to d_model - 1 (pair i in columns i and i + d_model/2)."""
    def body(f: Callable) -> str:
        for k, d_model in ((1, 8), (3, 16), (40, 16), (0, 4)):
            what = _("k = {k}, d_model = {d_model}").format(k=_num(k), d_model=_num(d_model))
            got = _finite(_call(f, k, d_model, what=what), (d_model, d_model), what=what)
            table = _concatenated(200, d_model)
            moved = table[: len(table) - k] @ got.T  # M'_k E'_p for every p, as rows
            try:
                _compare(moved, table[k:], what=_("{what} (M'_k E'_p against E'_(p+k) for all "
                                                   "p)").format(what=what), atol=1e-5)
            except _CheckFailedError:
                _explain_shift(got, k, d_model, what)
                raise
        return _("the rotation of each pair links columns i and i + d_model/2: the "
                 "interleaved M_k with its rows and columns reordered")
    return _run("shift_matrix_concatenated", fn, body)


# --- positions on a grid: the row in one half, the column in the other --------------------------

def _grid(height: int, width: int, d_model: int, *, swapped: bool = False,
          by_column: bool = False, wide: bool = False) -> torch.Tensor:
    """``(height * width, d_model)``: patch (r, c), row ``r * width + c``, holds the encoding
    of r (width d_model/2) then that of c. The keywords give the classic mistakes: the halves
    swapped, the patches read column by column, each half cut from a table of width d_model."""
    half = d_model // 2
    size = d_model if wide else half
    rows = _sinusoidal_encoding(height, size, dtype=torch.float64)[:, :half]  # (H, d/2)
    cols = _sinusoidal_encoding(width, size, dtype=torch.float64)[:, :half]  # (W, d/2)
    if by_column:
        r, c = torch.arange(height).repeat(width), torch.arange(width).repeat_interleave(height)
    else:
        r, c = torch.arange(height).repeat_interleave(width), torch.arange(width).repeat(height)
    first, second = (cols[c], rows[r]) if swapped else (rows[r], cols[c])
    return torch.cat([first, second], dim=1)  # (H * W, d)


def _explain_grid(got: torch.Tensor, height: int, width: int, d_model: int, what: str) -> None:
    if _matches(got, _grid(height, width, d_model, swapped=True)):
        raise _CheckFailedError(
            _("on {what} the two halves are swapped: the first d_model/2 columns encode the "
              "row r, the last d_model/2 the column c").format(what=what))
    if _matches(got, _grid(height, width, d_model, by_column=True)):
        raise _CheckFailedError(
            _("on {what} the patches are read column by column: patch (r, c) is row "
              "r * width + c of the table").format(what=what))
    if _matches(got, _sinusoidal_encoding(height * width, d_model, dtype=torch.float64)):
        raise _CheckFailedError(
            _("on {what} this is the 1-D encoding of the patch index r * width + c: give the "
              "row and the column an encoding each, in one half of the vector each")
            .format(what=what))
    if _matches(got, _grid(height, width, d_model, wide=True)):
        raise _CheckFailedError(
            _("on {what} each half uses the frequencies of a table of width d_model: it is an "
              "encoding of width d_model/2, omega_i = 10000^(-2i/(d_model/2))")
            .format(what=what))


def grid_encoding(fn: Callable[[int, int, int], torch.Tensor]) -> CheckResult:
    """Check ``fn(height, width, d_model)`` -> the ``(height * width, d_model)`` table of a
    grid of patches read row by row (patch (r, c) is row ``r * width + c``): its first
    ``d_model/2`` columns hold the sinusoidal encoding of r and its last ``d_model/2`` that of
    c, each an encoding of width ``d_model/2`` in the package's interleaved layout
    (``tc.sinusoidal_encoding(height, d_model // 2)[r]``). ``d_model`` is a multiple of 4."""
    def body(f: Callable) -> str:
        for height, width, d_model in ((2, 3, 8), (4, 4, 16), (1, 5, 4), (3, 1, 8)):
            what = _("height = {height}, width = {width}, d_model = {d_model}").format(
                height=_num(height), width=_num(width), d_model=_num(d_model))
            got = _finite(_call(f, height, width, d_model, what=what),
                          (height * width, d_model), what=what)
            try:
                _compare(got, _grid(height, width, d_model), what=what, atol=1e-5)
            except _CheckFailedError:
                _explain_grid(got, height, width, d_model, what)
                raise
        return _("the row in the first half, the column in the second: the dot product of two "
                 "patches depends on their offsets only")
    return _run("grid_encoding", fn, body)
