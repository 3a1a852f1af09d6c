"""The language-model explorer as the tests see it (shared by test_lm_explorer*.py).

Everything here is independent of ``transformer_course.reader.lm_explorer``: the weights JSON is
decoded with :mod:`struct`, the sampling rule and the page's random stream are written again
in Python, and the page is driven through its controls only."""

from __future__ import annotations

import base64
import json
import math
import re
import struct

import torch

import transformer_course as tc

TOLERANCE = 1e-3  # page against PyTorch: logits and attention rows
STATE_KEYS = {"prompt", "text", "temperature", "top_k", "top_p", "seed", "steps", "logits",
              "attention", "cache_positions"}
MASK32 = 0xFFFFFFFF
GOLDEN = 0x6D2B79F5


# --- the weights, decoded without the package's decoder -----------------------------------------

def _numbers(text: str, code: str, size: int) -> list:
    raw = base64.b64decode(text)
    return list(struct.unpack(f"<{len(raw) // size}{code}", raw))


def rebuild(weights: dict) -> tc.LanguageModel:
    """A LanguageModel from the page's weights JSON, dequantised as the JSON says."""
    model = tc.LanguageModel(**weights["config"])
    state = {}
    for key, entry in weights["tensors"].items():
        shape = entry["shape"]
        if entry["dtype"] == "int8":
            values = torch.tensor(_numbers(entry["data"], "b", 1), dtype=torch.float32)
            scale = torch.tensor(_numbers(entry["scale"], "f", 4), dtype=torch.float32)
            values = values.reshape(shape) * scale[:, None]
        elif entry["dtype"] == "float16":
            values = torch.tensor(_numbers(entry["data"], "e", 2), dtype=torch.float32)
        elif entry["dtype"] == "float32":
            values = torch.tensor(_numbers(entry["data"], "f", 4), dtype=torch.float32)
        else:
            raise AssertionError(f"unknown dtype {entry['dtype']!r} for {key}")
        state[key] = values.reshape(shape)
    model.load_state_dict(state)
    return model.eval()


def ids_of(weights: dict, text: str) -> list[int]:
    """The ids the page reads: unknown characters as <unk>, an empty text as a line break."""
    chars = weights["chars"]
    specials = set(weights["specials"].values())
    stoi = {c: i for i, c in enumerate(chars) if i not in specials}
    return [stoi.get(c, weights["unk_id"]) for c in (text or "\n")]


def pytorch(model: tc.LanguageModel, ids: list[int]):
    """PyTorch's (V,) next-token logits and per layer the (H, L) rows of the last position."""
    with torch.no_grad():
        logits, maps = model(torch.tensor([ids]), return_attention=True)
    return logits[0, -1].double(), [m[0, :, -1].double() for m in maps]


# --- the sampling rule and the random stream, again ----------------------------------------------

def rule(logits, allowed, temperature, top_k, top_p):
    """The distribution a step draws from, in float64: softmax(logits / T) over the allowed
    ids (T = 0: the argmax, lowest id first), top-k (ties kept), then top-p (the fewest most
    likely ids whose mass reaches p, ties kept), renormalised."""
    logits = [float(v) for v in logits]
    kept = list(allowed)
    if top_k is not None and top_k < len(kept):
        kth = sorted((logits[i] for i in kept), reverse=True)[top_k - 1]
        kept = [i for i in kept if logits[i] >= kth]
    probs = [0.0] * len(logits)
    if temperature == 0:
        best = max(kept, key=lambda i: (logits[i], -i))
        probs[best] = 1.0
        return probs
    top = max(logits[i] for i in kept)
    for i in kept:
        probs[i] = math.exp((logits[i] - top) / temperature)
    total = sum(probs[i] for i in kept)
    for i in kept:
        probs[i] /= total
    if top_p < 1:
        before, last = 0.0, 0.0
        for i in sorted(kept, key=lambda i: (-probs[i], i)):
            if before >= top_p:
                break
            last = probs[i]
            before += last
        kept = [i for i in kept if probs[i] >= last]
        probs = [p if i in kept else 0.0 for i, p in enumerate(probs)]
        total = sum(probs)
        probs = [p / total for p in probs]
    return probs


def uniform(seed: int, draw: int) -> float:
    """The page's random number for step ``draw`` (from 0) after seeding with ``seed``:
    mulberry32 on the state seed + (draw + 1) * 0x6D2B79F5 mod 2**32."""
    a = (seed + (draw + 1) * GOLDEN) & MASK32
    t = ((a ^ (a >> 15)) * (a | 1)) & MASK32
    t = ((t + (((t ^ (t >> 7)) * (t | 61)) & MASK32)) & MASK32) ^ t
    return ((t ^ (t >> 14)) & MASK32) / 2**32


def pick(probs, u: float) -> int:
    total, last = 0.0, -1
    for i, p in enumerate(probs):
        if p > 0:
            total += p
            last = i
            if total > u:
                return i
    return last


# --- driving a page ----------------------------------------------------------------------------

# The weights a mounted explorer runs: its script's JSON, or, on the built site, what the file
# that its data-src names stored in window.TcWeights[data-key] (coursebook_lean).
WEIGHTS_JS = """e => {
  const s = e.querySelector(':scope > script.tc-weights'), key = s.getAttribute('data-key');
  return key ? window.TcWeights[key] : JSON.parse(s.textContent);
}"""


class LMDriver:
    """One language-model explorer on a page: its controls, and its state checked against
    PyTorch after every change."""

    def __init__(self, visit, root, model: tc.LanguageModel | None = None):
        self.visit, self.page, self.root = visit, visit.page, root
        root.wait_for(state="attached", timeout=20000)
        root.scroll_into_view_if_needed()  # it starts when it comes near the screen
        self.page.wait_for_function("e => e.hasAttribute('data-state')",
                                    arg=root.element_handle(), timeout=20000)
        self.weights = root.evaluate(WEIGHTS_JS)
        self.payload = json.loads(root.locator("script.tc-lm-payload").text_content())
        self.model = model if model is not None else rebuild(self.weights)
        self.specials = set(self.weights["specials"].values())
        self.allowed = [i for i in range(len(self.weights["chars"])) if i not in self.specials]
        self.max_len = self.weights["config"]["max_len"]
        self.checked = 0

    def raw(self) -> str:
        return self.root.get_attribute("data-state")

    def state(self) -> dict:
        return json.loads(self.raw())

    def idle(self):
        self.page.wait_for_function("e => !e.hasAttribute('data-busy')",
                                    arg=self.root.element_handle(), timeout=60000)

    def text(self, name: str, **values) -> str:
        return self.payload["strings"][name].format(**values)

    # controls
    def start(self, prompt: str) -> dict:
        box = self.root.locator("input.tc-prompt")
        box.fill(prompt)
        box.press("Enter")
        return self.check(prompt=prompt, steps=0)

    def step(self, times: int = 1) -> dict:
        for _ in range(times):
            before = self.state()
            expected = self.expected_next(before)
            self.root.locator("button.tc-step").click()
            s = self.check(steps=before["steps"] + 1)
            assert s["text"] == before["text"] + self.weights["chars"][expected], (s["text"],
                                                                                  expected)
        return s

    def write(self) -> dict:
        before = self.raw()
        self.root.locator("button.tc-write").click()
        self.page.wait_for_function(
            "([e, s]) => e.getAttribute('data-state') !== s && !e.hasAttribute('data-busy')",
            arg=[self.root.element_handle(), before], timeout=60000)
        return self.check()

    def write_to_the_end(self) -> dict:
        """Write lines until the text fills the model's position table."""
        s = self.state()
        while len(ids_of(self.weights, s["text"])) < self.max_len:
            s = self.write()
        return s

    def set_range(self, selector: str, value) -> None:
        self.root.locator(selector).evaluate(
            "(e, v) => { e.value = String(v); e.dispatchEvent(new Event('input', "
            "{bubbles: true})); }", value)

    def set_top_k(self, text: str) -> None:
        self.root.locator("input.tc-top-k").fill(text)

    def set_seed(self, seed) -> None:
        box = self.root.locator("input.tc-seed")
        box.fill(str(seed))
        box.press("Enter")

    def cache(self, on: bool) -> None:
        """The hidden switch for tests: data-cache="off" recomputes every position."""
        self.root.evaluate("(e, on) => on ? e.removeAttribute('data-cache') : "
                           "e.setAttribute('data-cache', 'off')", on)

    # what the page must show
    def expected_next(self, s: dict) -> int:
        probs = rule(s["logits"], self.allowed, s["temperature"], s["top_k"], s["top_p"])
        return pick(probs, uniform(s["seed"], s["steps"]))

    def check(self, **expected) -> dict:
        s = self.state()
        assert set(s) == STATE_KEYS, set(s) ^ STATE_KEYS
        for key, value in expected.items():
            assert s[key] == value, (key, s[key], value)
        text, prompt = s["text"], s["prompt"]
        start = (prompt or "\n")[: self.max_len]
        assert text.startswith(start) and len(text) == len(start) + s["steps"], (prompt, text)
        ids = ids_of(self.weights, text)
        assert len(ids) <= self.max_len
        logits = torch.tensor(s["logits"], dtype=torch.float64)
        assert logits.shape == (self.weights["config"]["vocab_size"],)
        assert torch.isfinite(logits).all()
        want, rows = pytorch(self.model, ids)
        torch.testing.assert_close(logits, want, atol=TOLERANCE, rtol=0)
        config = self.weights["config"]
        assert len(s["attention"]) == config["num_layers"]
        for layer, got in zip(rows, s["attention"], strict=True):
            got = torch.tensor(got, dtype=torch.float64)
            assert got.shape == (config["num_heads"], len(ids))
            torch.testing.assert_close(got, layer, atol=TOLERANCE, rtol=0)
            torch.testing.assert_close(got.sum(-1), torch.ones(len(got), dtype=torch.float64))
        cached = self.root.get_attribute("data-cache") != "off"
        assert s["cache_positions"] == (len(ids) if cached else 0)
        kv = self.root.locator(".tc-lm-cache")
        assert int(kv.get_attribute("data-positions")) == s["cache_positions"]
        assert int(kv.get_attribute("data-bytes")) == (
            2 * config["num_layers"] * s["cache_positions"] * config["d_model"] * 4)
        self.check_bars(s)
        self.checked += 1
        return s

    def check_bars(self, s: dict) -> None:
        """The bars: the ten likeliest characters (and the next one if it is not among
        them), the model's own and the reshaped probabilities, the next character marked."""
        probs = rule(s["logits"], self.allowed, s["temperature"], s["top_k"], s["top_p"])
        model = rule(s["logits"], self.allowed, 1.0, None, 1.0)
        bars = self.root.locator(".tc-lm-bar")
        rows = bars.evaluate_all("rs => rs.map(r => [Number(r.dataset.id), Number(r.dataset.p),"
                                 " Number(r.dataset.model), r.classList.contains('tc-lm-next')])")
        order = sorted(self.allowed, key=lambda i: (-s["logits"][i], i))
        ids = [r[0] for r in rows]
        assert ids[:10] == order[:10], (ids, order[:10])
        for i, p, m, _ in rows:
            assert abs(p - probs[i]) < 1e-9 and abs(m - model[i]) < 1e-9, (i, p, probs[i])
        marked = [r[0] for r in rows if r[3]]
        if len(ids_of(self.weights, s["text"])) >= self.max_len:
            assert marked == [] and self.root.locator("[data-note='limit']").count() == 1
        else:
            assert marked == [self.expected_next(s)], (marked, self.expected_next(s))
            assert len(ids) == 10 + (marked[0] not in order[:10])


def greedy_text(d: LMDriver, prompt: str, steps: int) -> str:
    """The argmax continuation with PyTorch, over the characters (not special tokens)."""
    ids = ids_of(d.weights, prompt)
    text = prompt or "\n"
    for _ in range(steps):
        logits, _ = pytorch(d.model, ids)
        masked = logits.clone()
        masked[sorted(d.specials)] = -math.inf
        best = int(masked.argmax())
        ids.append(best)
        text += d.weights["chars"][best]
    return text


def page_texts(root) -> list[str]:
    """What a reader sees of an explorer, texts and tooltips, without the text the model
    reads and writes or the characters labelling bars and attention columns."""
    return root.evaluate("""e => {
        const out = [], skip = n => n.closest('.tc-lm-text, .tc-lm-char, .tc-lm-rows thead');
        const walk = document.createTreeWalker(e, NodeFilter.SHOW_TEXT);
        while (walk.nextNode()) {
          const n = walk.currentNode, tag = n.parentNode.tagName;
          if (tag !== 'SCRIPT' && tag !== 'STYLE' && !skip(n.parentNode)) out.push(n.textContent);
        }
        e.querySelectorAll('[title], [aria-label], [placeholder]').forEach(n => {
          if (skip(n)) return;
          ['title', 'aria-label', 'placeholder'].forEach(a => out.push(n.getAttribute(a) || ''));
        });
        return out.filter(t => t.trim()); }""")


def english_words(english: dict, translated: dict) -> set[str]:
    """Words of the English strings (4 letters or more, placeholders cut out) that the
    translation never uses: one of them on a French or Italian page is English leaking."""
    placeholder = re.compile(r"\{\w*\}")

    def words(strings, size):
        return {w for s in strings.values()
                for w in re.findall(rf"[^\W\d_]{{{size},}}", placeholder.sub(" ", s).lower())}

    return words(english, 4) - words(translated, 1)
