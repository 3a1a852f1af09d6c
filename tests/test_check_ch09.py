"""Chapter 9's transfer checkers: the right answer passes, plausible wrong answers fail
saying why, junk answers fail without crashing."""

import pytest
import torch

from transformer_course import check

# --- WordPiece ------------------------------------------------------------------------------


def wordpiece(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return ["[UNK]"]
    return pieces


def shortest_first(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(start + 1, len(word) + 1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return ["[UNK]"]
    return pieces


def no_hashes(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if word[start:end] in vocab:
                pieces.append(word[start:end])
                start = end
                break
        else:
            return ["[UNK]"]
    return pieces


def always_hashes(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            if "##" + word[start:end] in vocab:
                pieces.append("##" + word[start:end])
                start = end
                break
        else:
            return ["[UNK]"]
    return pieces


def partial_unk(word, vocab):
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return [*pieces, "[UNK]"]
    return pieces


def fewest_pieces(word, vocab):
    """Not greedy: the segmentation with the fewest pieces (dynamic programming)."""
    best = {0: []}
    for end in range(1, len(word) + 1):
        for start in range(end):
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if start in best and piece in vocab:
                candidate = [*best[start], piece]
                if end not in best or len(candidate) < len(best[end]):
                    best[end] = candidate
    return best.get(len(word), ["[UNK]"])


def test_wordpiece_right_answer_passes():
    result = check.wordpiece(wordpiece)
    assert result, result
    assert check.wordpiece(lambda w, v: tuple(wordpiece(w, v)))  # a tuple is fine too


@pytest.mark.parametrize(("answer", "words"), [
    (shortest_first, ["longest piece"]),
    (no_hashes, ["with ## in front"]),
    (always_hashes, ["the first piece looked up as it is"]),
    (partial_unk, ["whole word", "single token [UNK]"]),
    (fewest_pieces, ["greedy", "never goes back", "hugely"]),
    (lambda w, v: [w], ["'play'", "expected"]),
])
def test_wordpiece_wrong_answers_say_why(answer, words):
    result = check.wordpiece(answer)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


def test_wordpiece_junk_fails_without_crashing():
    for junk in (None, "play", ["play", 3], torch.tensor([1, 2]), 3.5):
        result = check.wordpiece(lambda w, v, junk=junk: junk)
        assert not result and "could not be checked" not in result.message, result.message
    assert "expected a list of strings" in check.wordpiece(lambda w, v: None).message
    raised = check.wordpiece(lambda w, v: v["missing"])
    assert not raised and "raised KeyError" in raised.message
    assert not check.wordpiece("not a function")


# --- the masked-language-model corruption ---------------------------------------------------


def mask_tokens(ids, *, mask_id, vocab_size, special_ids, p=0.15, generator=None):
    special = torch.isin(ids, torch.tensor(special_ids))
    chosen = (torch.rand(ids.shape, generator=generator) < p) & ~special
    labels = torch.where(chosen, ids, -100)
    action = torch.rand(ids.shape, generator=generator)
    ordinary = torch.tensor([i for i in range(vocab_size) if i not in special_ids])
    random_ids = ordinary[torch.randint(len(ordinary), ids.shape, generator=generator)]
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask_id
    swap = chosen & (action >= 0.8) & (action < 0.9)
    inputs[swap] = random_ids[swap]
    return inputs, labels


def exact_count(ids, *, mask_id, vocab_size, special_ids, p=0.15, generator=None):
    """BERT's original code: exactly round(p * n) positions per sequence, a random token
    different from the original. Right too."""
    inputs, labels = ids.clone(), torch.full_like(ids, -100)
    ordinary = [i for i in range(vocab_size) if i not in special_ids]
    for row in range(ids.shape[0]):
        candidates = [j for j in range(ids.shape[1]) if int(ids[row, j]) not in special_ids]
        order = torch.randperm(len(candidates), generator=generator)
        for k in order[:round(p * len(candidates))].tolist():
            j = candidates[k]
            labels[row, j] = ids[row, j]
            u = torch.rand((), generator=generator).item()
            if u < 0.8:
                inputs[row, j] = mask_id
            elif u < 0.9:
                others = [t for t in ordinary if t != int(ids[row, j])]
                inputs[row, j] = others[int(torch.randint(len(others), (), generator=generator))]
    return inputs, labels


def all_masked(ids, *, mask_id, vocab_size, special_ids, p=0.15, generator=None):
    special = torch.isin(ids, torch.tensor(special_ids))
    chosen = (torch.rand(ids.shape, generator=generator) < p) & ~special
    return torch.where(chosen, mask_id, ids), torch.where(chosen, ids, -100)


def whole_vocabulary(ids, *, mask_id, vocab_size, special_ids, p=0.15, generator=None):
    """Random tokens from the whole vocabulary, special tokens included (as Hugging Face)."""
    special = torch.isin(ids, torch.tensor(special_ids))
    chosen = (torch.rand(ids.shape, generator=generator) < p) & ~special
    action = torch.rand(ids.shape, generator=generator)
    random_ids = torch.randint(vocab_size, ids.shape, generator=generator)
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask_id
    swap = chosen & (action >= 0.8) & (action < 0.9)
    inputs[swap] = random_ids[swap]
    return inputs, torch.where(chosen, ids, -100)


def skip_first_specials(ids, *, mask_id, vocab_size, special_ids, p=0.15, generator=None):
    """Random tokens drawn in [len(special_ids), vocab_size): wrong when the special ids are
    not the first ones, as in BERT (0 and 100 to 103)."""
    special = torch.isin(ids, torch.tensor(special_ids))
    chosen = (torch.rand(ids.shape, generator=generator) < p) & ~special
    action = torch.rand(ids.shape, generator=generator)
    random_ids = torch.randint(len(special_ids), vocab_size, ids.shape, generator=generator)
    inputs = ids.clone()
    inputs[chosen & (action < 0.8)] = mask_id
    swap = chosen & (action >= 0.8) & (action < 0.9)
    inputs[swap] = random_ids[swap]
    return inputs, torch.where(chosen, ids, -100)


def labels_everywhere(ids, **kwargs):
    inputs, _labels = mask_tokens(ids, **kwargs)
    return inputs, ids.clone()


def specials_too(ids, *, mask_id, vocab_size, special_ids, p=0.15, generator=None):
    return mask_tokens(ids, mask_id=mask_id, vocab_size=vocab_size, special_ids=[], p=p,
                       generator=generator)


def global_rng(ids, **kwargs):
    kwargs["generator"] = None
    return mask_tokens(ids, **kwargs)


def reseeded(ids, **kwargs):
    kwargs["generator"] = torch.Generator().manual_seed(0)
    return mask_tokens(ids, **kwargs)


def fixed_rate(ids, **kwargs):
    kwargs["p"] = 0.15
    return mask_tokens(ids, **kwargs)


def independent_draws(ids, *, mask_id, vocab_size, special_ids, p=0.15, generator=None):
    """80% and 10% drawn independently over the chosen tokens: the random tokens overwrite
    some [MASK] and the split becomes 72/10/18."""
    special = torch.isin(ids, torch.tensor(special_ids))
    chosen = (torch.rand(ids.shape, generator=generator) < p) & ~special
    ordinary = torch.tensor([i for i in range(vocab_size) if i not in special_ids])
    inputs = ids.clone()
    inputs[chosen & (torch.rand(ids.shape, generator=generator) < 0.8)] = mask_id
    swap = chosen & (torch.rand(ids.shape, generator=generator) < 0.1)
    inputs[swap] = ordinary[torch.randint(len(ordinary), ids.shape, generator=generator)][swap]
    return inputs, torch.where(chosen, ids, -100)


def in_place(ids, **kwargs):
    inputs, labels = mask_tokens(ids, **kwargs)
    ids.copy_(inputs)
    return ids, labels


def unlabelled_changes(ids, **kwargs):
    inputs, labels = mask_tokens(ids, **kwargs)
    labels[inputs == kwargs["mask_id"]] = -100
    return inputs, labels


def test_mlm_mask_right_answers_pass():
    result = check.mlm_mask(mask_tokens)
    assert result, result
    assert check.mlm_mask(exact_count)


@pytest.mark.parametrize(("answer", "words"), [
    (all_masked, ["became [MASK]", "random token", "unchanged"]),
    (whole_vocabulary, ["a special token", "ordinary tokens"]),
    (skip_first_specials, ["a special token"]),
    (labels_everywhere, ["-100", "cross-entropy ignores"]),
    (specials_too, ["special token", "never chosen"]),
    (global_rng, ["seeded alike", "generator"]),
    (reseeded, ["seeded differently", "generator"]),
    (fixed_rate, ["p = 0.4", "ordinary tokens were chosen", "expected about 40%"]),
    (independent_draws, ["of the chosen tokens", "expected about 80%, 10% and 10%"]),
    (in_place, ["changed the ids", "clone"]),
    (unlabelled_changes, ["label is -100", "only chosen positions may change"]),
])
def test_mlm_mask_wrong_answers_say_why(answer, words):
    result = check.mlm_mask(answer)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


def test_mlm_mask_junk_fails_without_crashing():
    for junk in (None, (), (torch.zeros(2), torch.zeros(2)), torch.zeros(128, 256),
                 (torch.zeros(128, 256), torch.zeros(128, 256)),
                 (torch.full((128, 256), float("nan")),) * 2, "text"):
        result = check.mlm_mask(lambda ids, junk=junk, **kwargs: junk)
        assert not result and "could not be checked" not in result.message, result.message
    assert "expected a tuple (inputs, labels)" in check.mlm_mask(lambda ids, **kw: None).message
    floats = check.mlm_mask(lambda ids, **kw: (ids.float(), ids.float()))
    assert "expected integer token ids" in floats.message
    raised = check.mlm_mask(lambda ids, mask_id: ids)
    assert not raised and "raised TypeError" in raised.message
    todo = check.mlm_mask(lambda ids, **kw: (_ for _ in ()).throw(NotImplementedError("x")))
    assert not todo and "NotImplementedError" in todo.message


def test_checkers_leave_the_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    check.mlm_mask(global_rng)
    check.mlm_mask(mask_tokens)
    assert torch.equal(torch.rand(3), expected)


# --- the gradient of a lookup ---------------------------------------------------------------

def embedding_grad(ids, grad_output, vocab_size):
    flat = grad_output.reshape(-1, grad_output.shape[-1])
    return torch.zeros(vocab_size, flat.shape[-1]).index_add_(0, ids.reshape(-1), flat)


def assigned(ids, grad_output, vocab_size):
    out = torch.zeros(vocab_size, grad_output.shape[-1])
    out[ids.reshape(-1)] = grad_output.reshape(-1, grad_output.shape[-1])
    return out


def averaged(ids, grad_output, vocab_size):
    counts = torch.bincount(ids.reshape(-1), minlength=vocab_size).clamp(min=1)
    return embedding_grad(ids, grad_output, vocab_size) / counts[:, None]


def test_embedding_grad_accepts_the_right_answers():
    assert check.embedding_grad(embedding_grad)

    def one_hot(ids, grad_output, vocab_size):  # the transposed one-hot product of section 9.2
        flat = grad_output.reshape(-1, grad_output.shape[-1])
        return torch.nn.functional.one_hot(ids.reshape(-1), vocab_size).to(flat.dtype).T @ flat

    def autograd(ids, grad_output, vocab_size):  # what nn.Embedding's backward gives
        table = torch.zeros(vocab_size, grad_output.shape[-1], requires_grad=True)
        torch.nn.functional.embedding(ids, table).backward(grad_output)
        return table.grad

    assert check.embedding_grad(one_hot) and check.embedding_grad(autograd)


@pytest.mark.parametrize(("answer", "words"), [
    (assigned, ["id 3", "looked up 3 times", "only one of its gradients", "add up"]),
    (averaged, ["id 3", "the mean of its gradients"]),
    (lambda ids, g, v: g, ["shape"]),
    (lambda ids, g, v: embedding_grad(ids, g, v)[:, :1], ["shape"]),
    (lambda ids, g, v: embedding_grad(ids.flip(0), g, v), ["entry", "off by"]),
])
def test_embedding_grad_wrong_answers_say_why(answer, words):
    result = check.embedding_grad(answer)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


@pytest.mark.parametrize("junk", [None, 3, "text", (1, 2), torch.zeros(0),
                                  torch.full((10, 4), float("nan"))])
def test_embedding_grad_survives_junk(junk):
    result = check.embedding_grad(lambda *a, junk=junk: junk)
    assert not result and "could not be checked" not in result.message, result.message


# --- max pooling ----------------------------------------------------------------------------

def max_pooling(hidden, attention_mask):
    return hidden.masked_fill(attention_mask[..., None] == 0, float("-inf")).amax(dim=1)


def test_max_pooling_accepts_the_right_answers():
    assert check.max_pooling(max_pooling)
    assert check.max_pooling(lambda h, m: torch.stack(
        [h[b, m[b].bool()].max(dim=0).values for b in range(len(h))]))


@pytest.mark.parametrize(("answer", "words"), [
    (lambda h, m: (h * m[..., None]).amax(dim=1), ["zeros at the padding", "-inf"]),
    (lambda h, m: h.amax(dim=1), ["padding positions took part"]),
    (lambda h, m: torch.max(h.masked_fill(m[..., None] == 0, float("-inf")), dim=1),
     ["(values, indices)"]),
    (lambda h, m: (h * m[..., None]).sum(1) / m.sum(1, keepdim=True), ["entry", "off by"]),
    (lambda h, m: max_pooling(h, m)[:, :2], ["shape"]),
])
def test_max_pooling_wrong_answers_say_why(answer, words):
    result = check.max_pooling(answer)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


@pytest.mark.parametrize("junk", [None, 3, "text", (1, 2), torch.zeros(0),
                                  torch.full((3, 4), float("nan"))])
def test_max_pooling_survives_junk(junk):
    result = check.max_pooling(lambda *a, junk=junk: junk)
    assert not result and "could not be checked" not in result.message, result.message


def test_every_checker_of_the_chapter_is_tested_here():
    assert set(check.ch09.__all__) == {"embedding_grad", "max_pooling", "mlm_mask", "wordpiece"}
    assert all(name in check.__all__ for name in check.ch09.__all__)
