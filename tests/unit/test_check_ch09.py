"""Chapter 9's transfer checkers: the right answer passes, plausible wrong answers fail
saying why, junk answers fail without crashing."""

import itertools

import pytest
import torch

import transformer_course as tc
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
    assert "expected a tuple `(inputs, labels)`" in check.mlm_mask(lambda ids, **kw: None).message
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
    (lambda ids, g, v: embedding_grad(ids, g, int(ids.max()) + 1),  # sized by the ids seen
     ["ids [[1, 2, 2], [0, 1, 0]]", "shape (3, 3), expected (8, 3)", "one row per token"]),
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


# --- left padding ---------------------------------------------------------------------------

def left_pad(sequences, pad_id):
    length = max(len(s) for s in sequences)
    ids = torch.tensor([[pad_id] * (length - len(s)) + list(s) for s in sequences])
    mask = torch.tensor([[0] * (length - len(s)) + [1] * len(s) for s in sequences])
    return ids, mask, (mask.cumsum(1) - 1).clamp(min=0)


def right_pad(sequences, pad_id):
    length = max(len(s) for s in sequences)
    ids = torch.tensor([list(s) + [pad_id] * (length - len(s)) for s in sequences])
    mask = (ids != pad_id).long()
    return ids, mask, (mask.cumsum(1) - 1).clamp(min=0)


def test_left_pad_accepts_the_right_answers():
    assert check.left_pad(left_pad)
    assert check.left_pad(lambda seqs, pad: (*left_pad(seqs, pad)[:1],
                                             left_pad(seqs, pad)[1].bool(),
                                             left_pad(seqs, pad)[2]))  # a boolean mask is fine
    assert check.left_pad(lambda seqs, pad: list(left_pad(seqs, pad)))


@pytest.mark.parametrize(("answer", "words"), [
    (right_pad, ["padded on the right", "last column"]),
    (lambda seqs, pad: (left_pad(seqs, pad)[0], 1 - left_pad(seqs, pad)[1],
                        left_pad(seqs, pad)[2]), ["inverted"]),
    (lambda seqs, pad: (*left_pad(seqs, pad)[:2],
                        torch.arange(left_pad(seqs, pad)[0].shape[1]).expand_as(
                            left_pad(seqs, pad)[0])), ["first real token", "position 0"]),
    (lambda seqs, pad: (*left_pad(seqs, pad)[:2], left_pad(seqs, pad)[1].cumsum(1)),
     ["start at 1"]),
    (lambda seqs, pad: (*left_pad(seqs, pad)[:2], left_pad(seqs, pad)[1].cumsum(1) - 1),
     ["the padding should get 0"]),
    (lambda seqs, pad: left_pad(seqs, 0), ["pad_id = 1", "ids at"]),
    (lambda seqs, pad: (left_pad(seqs, pad)[0].float(), *left_pad(seqs, pad)[1:]),
     ["dtype", "integers"]),
    (lambda seqs, pad: left_pad(seqs, pad)[:2], ["expected a tuple"]),
])
def test_left_pad_wrong_answers_say_why(answer, words):
    result = check.left_pad(answer)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


@pytest.mark.parametrize("junk", [None, 3, "text", (1, 2, 3), (torch.zeros(0),) * 3,
                                  (torch.full((3, 6), float("nan")),) * 3])
def test_left_pad_survives_junk(junk):
    result = check.left_pad(lambda *a, junk=junk: junk)
    assert not result and "could not be checked" not in result.message, result.message


# --- one vector per word --------------------------------------------------------------------

SPECIALS = ("[CLS]", "[SEP]", "[PAD]")


def word_vectors(hidden, tokens):
    words = []
    for i, token in enumerate(tokens):
        if token in SPECIALS:
            continue
        if token.startswith("##"):
            words[-1].append(i)
        else:
            words.append([i])
    return torch.stack([hidden[w].mean(0) for w in words])


def by_matrix(hidden, tokens):
    """The masked mean of section 9.6, with a (W, L) matrix of word membership."""
    starts = [not t.startswith("##") and t not in SPECIALS for t in tokens]
    word = torch.tensor(starts).cumsum(0) - 1                     # the word of each token
    keep = torch.tensor([t not in SPECIALS for t in tokens])
    member = (word[None, :] == torch.arange(int(word.max()) + 1)[:, None]) & keep
    member = member.to(hidden.dtype)
    return member @ hidden / member.sum(1, keepdim=True)


def grouped(hidden, tokens, *, keep_specials=False, split_pieces=False, drop_unk=False, how="mean"):
    words = []
    for i, token in enumerate(tokens):
        if (token in SPECIALS and not keep_specials) or (token == "[UNK]" and drop_unk):
            continue
        if token.startswith("##") and not split_pieces:
            words[-1].append(i)
        else:
            words.append([i])
    rows = [hidden[w] for w in words]
    pick = {"mean": lambda r: r.mean(0), "first": lambda r: r[0], "sum": lambda r: r.sum(0),
            "max": lambda r: r.amax(0), "last": lambda r: r[-1]}[how]
    return torch.stack([pick(r) for r in rows])


def test_word_vectors_accepts_the_right_answers():
    assert check.word_vectors(word_vectors)
    assert check.word_vectors(by_matrix)


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"keep_specials": True}, ["[CLS], [SEP] and [PAD] are not words"]),
    ({"split_pieces": True}, ["starts with ##", "continues the word"]),
    ({"drop_unk": True}, ["[UNK]", "is a word"]),
    ({"how": "first"}, ["first piece"]),
    ({"how": "last"}, ["last piece"]),
    ({"how": "sum"}, ["summed", "divide"]),
    ({"how": "max"}, ["largest value", "mean"]),
])
def test_word_vectors_wrong_answers_say_why(kwargs, words):
    result = check.word_vectors(lambda h, t: grouped(h, t, **kwargs))
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


@pytest.mark.parametrize("junk", [None, 3, "text", (1, 2), torch.zeros(0),
                                  torch.full((7, 4), float("nan"))])
def test_word_vectors_survives_junk(junk):
    result = check.word_vectors(lambda *a, junk=junk: junk)
    assert not result and "could not be checked" not in result.message, result.message


# --- the parameters of a whole BERT ---------------------------------------------------------

def bert_parameters(vocab_size, d_model, num_heads, num_layers, d_ff, max_len=512,
                    type_vocab_size=2):
    d = d_model
    embeddings = (vocab_size + max_len + type_vocab_size) * d + 2 * d
    layer = 4 * (d * d + d) + (d * d_ff + d_ff) + (d_ff * d + d) + 4 * d
    return embeddings + num_layers * layer + d * d + d


def test_bert_parameters_accepts_the_right_answer():
    assert check.bert_parameters(bert_parameters)
    assert check.bert_parameters(lambda *a: float(bert_parameters(*a)))
    assert check.bert_parameters(lambda *a: torch.tensor(bert_parameters(*a)))


@pytest.mark.parametrize("shape", [(30522, 384, 12, 6, 1536, 512, 2), (100, 8, 4, 2, 16, 32, 1)])
def test_the_count_is_that_of_hugging_face_bert_and_of_the_package(shape):
    transformers = pytest.importorskip("transformers")
    v, d, h, n, d_ff, max_len, types = shape
    config = transformers.BertConfig(vocab_size=v, hidden_size=d, num_attention_heads=h,
                                     num_hidden_layers=n, intermediate_size=d_ff,
                                     max_position_embeddings=max_len, type_vocab_size=types)
    with torch.device("meta"):
        theirs = transformers.BertModel(config)
        ours = tc.BertEncoder(v, d, h, n, d_ff, max_len=max_len, type_vocab_size=types)
    expected = bert_parameters(*shape)
    assert sum(p.numel() for p in theirs.parameters()) == expected
    assert sum(p.numel() for p in ours.parameters()) == expected


def plus(delta):
    return lambda v, d, h, n, d_ff, max_len, types: (
        bert_parameters(v, d, h, n, d_ff, max_len, types) + delta(v, d, h, n, d_ff, max_len, types))


@pytest.mark.parametrize(("answer", "words"), [
    (plus(lambda v, d, h, n, f, m, t: -(d * d + d)), ["pooler"]),
    (plus(lambda v, d, h, n, f, m, t: -m * d), ["learned positions"]),
    (plus(lambda v, d, h, n, f, m, t: -t * d), ["segments"]),
    (plus(lambda v, d, h, n, f, m, t: -(m + t) * d), ["positions and segments"]),
    (plus(lambda v, d, h, n, f, m, t: -2 * d), ["LayerNorm after the three embeddings"]),
    (plus(lambda v, d, h, n, f, m, t: -2 * d - 4 * n * d), ["LayerNorms are missing"]),
    (plus(lambda v, d, h, n, f, m, t: -(n * (4 * d + f + d) + d)), ["biases"]),
    (plus(lambda v, d, h, n, f, m, t: n * (h - 1) * 4 * (d * d + d)), ["once per head"]),
    (lambda v, d, h, n, f, m, t: bert_parameters(v, d, h, 1, f, m, t), ["counted once"]),
    (lambda v, d, h, n, f, m, t: v * d, ["word embedding table alone"]),
    (plus(lambda v, d, h, n, f, m, t: 1), ["off by 1"]),
    (lambda *a: bert_parameters(*a) + 0.5, ["not a whole number"]),
    (lambda *a: "many", ["whole number"]),
])
def test_bert_parameters_wrong_answers_say_why(answer, words):
    result = check.bert_parameters(answer)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


# --- byte-pair encoding ---------------------------------------------------------------------

def merge_pair(symbols, a, b):
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
            out.append(a + b)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def apply_merges(word, merges):
    symbols = [*word, "</w>"]
    for a, b in merges:
        symbols = merge_pair(symbols, a, b)
    return symbols


def lowest_rank_first(word, merges):
    """How GPT-2's tokenizer does it: merge the known pair learned first, until none is left."""
    rank = {pair: i for i, pair in enumerate(merges)}
    symbols = [*word, "</w>"]
    while True:
        known = [pair for pair in itertools.pairwise(symbols) if pair in rank]
        if not known:
            return symbols
        symbols = merge_pair(symbols, *min(known, key=rank.get))


def first_occurrence_only(word, merges):
    symbols = [*word, "</w>"]
    for a, b in merges:
        for i in range(len(symbols) - 1):
            if symbols[i] == a and symbols[i + 1] == b:
                symbols = [*symbols[:i], a + b, *symbols[i + 2:]]
                break
    return symbols


def from_the_right(word, merges):
    symbols = [*word, "</w>"]
    for a, b in merges:
        symbols = [s[::-1] for s in merge_pair([s[::-1] for s in symbols[::-1]], b[::-1],
                                               a[::-1])][::-1]
    return symbols


def longest_known(word, merges):
    known = {a + b for a, b in merges} | set(word) | {"</w>"}
    text, out, start = word + "</w>", [], 0
    while start < len(text):
        end = next((e for e in range(len(text), start, -1) if text[start:e] in known), start + 1)
        out.append(text[start:end])
        start = end
    return out


def test_apply_merges_accepts_the_right_answers():
    assert check.apply_merges(apply_merges)
    assert check.apply_merges(lowest_rank_first)
    assert check.apply_merges(lambda w, m: tuple(apply_merges(w, m)))


@pytest.mark.parametrize(("answer", "words"), [
    (lambda w, m: apply_merges(w, m[::-1]), ["from the last to the first"]),
    (lambda w, m: [s.removesuffix("</w>") for s in apply_merges(w, m) if s != "</w>"],
     ["end-of-word symbol </w>"]),
    (longest_known, ["longest symbol", "replays the merges"]),
    (first_occurrence_only, ["'banana'", "every occurrence"]),
    (from_the_right, ["'aaa'", "from left to right"]),
    (lambda w, m: [*w, "</w>"], ["'lower'", "every merge"]),
])
def test_apply_merges_wrong_answers_say_why(answer, words):
    result = check.apply_merges(answer)
    assert not result
    for word in words:
        assert word in result.message, (word, result.message)


def test_apply_merges_junk_fails_without_crashing():
    for junk in (None, "lower", ["low", 3], torch.tensor([1, 2]), 3.5):
        result = check.apply_merges(lambda w, m, junk=junk: junk)
        assert not result and "could not be checked" not in result.message, result.message
    assert "expected a list of strings" in check.apply_merges(lambda w, m: None).message
    assert not check.apply_merges("not a function")


def test_every_checker_of_the_chapter_is_tested_here():
    assert set(check.ch09.__all__) == {"apply_merges", "bert_parameters", "embedding_grad",
                                       "left_pad", "mlm_mask", "word_vectors", "wordpiece"}
    assert all(name in check.__all__ for name in check.ch09.__all__)
