#!/usr/bin/env python3
"""Every sentence a program prints beside its figures says what those figures say.

    tools/check_sentences.py FILE...    (each FILE a program's stdout; its first line names the section)
    tools/check_sentences.py --self-test FILE...   (each sentence's other wording must be caught)

The programs choose each conclusion from the run (a word follows a sign, a bound, a verdict). This re-reads what
they printed and checks each sentence against the figures and the verdict line printed beside it, so a sentence
that was typed in, or chosen by a different test than its verdict, fails here at whichever seed shows it. ctest
runs it on every seeded program's output at three seeds (the _runs test's and the two of _same_seed_same_bytes).

A rule whose sentence is missing from an output that should hold it fails too: a rule that matches nothing
could not fail. Exit 0 when every sentence agrees, 1 naming the file, the sentence and what contradicts it.
"""
import re
import sys

NUM = r"(-?[0-9][0-9,]*\.?[0-9]*)"


def num(s):
    return float(s.replace(",", ""))


def verdict(text, claim):
    """The verdict word of a claim's line in the summary, e.g. 'agrees' ('DIFFERS' is printed in capitals)."""
    m = re.search(r"^  " + claim + r"\s+(\w+)\s", text, re.M)
    return m.group(1).lower() if m else None


class Check:
    def __init__(self, path, text):
        self.path, self.text, self.errors, self.checked = path, text, [], 0

    def find(self, pattern, what):
        m = re.search(pattern, self.text, re.S)
        if not m:
            self.errors.append(f"{self.path}: no sentence {what!r} (the rule's pattern /{pattern}/ matches nothing)")
        return m

    def expect(self, ok, sentence, why):
        self.checked += 1
        if not ok:
            self.errors.append(f"{self.path}: \"{' '.join(sentence.split())}\" contradicts {why}")


def check_04(c):
    m = c.find(r"it answers " + NUM + r" with the right noun and " + NUM + r" with the other noun of the pair, (so more often the wrong one|so more often the right one|as often one as the other)",
               "the uniform average's answers")
    if m:
        right, other, words = num(m.group(1)), num(m.group(2)), m.group(3)
        want = "so more often the wrong one" if other > right else "so more often the right one" if other < right else "as often one as the other"
        c.expect(words == want, m.group(0), f"its figures ({right} right, {other} other): \"{want}\"")
    m = c.find(r"bag of words (beats|ties with|loses to) a block that fits its training sentences too \(" + NUM + r" vs " + NUM,
               "the bag of words against a block")
    if m:
        bag, block = num(m.group(2)), num(m.group(3))
        want = "beats" if bag > block else "ties with" if bag == block else "loses to"
        c.expect(m.group(1) == want, m.group(0), f"its figures ({bag} vs {block}): \"{want}\"")


def check_08(c):
    rows = {}
    for name in ("pre-norm, no warmup", "pre-norm, [0-9]+-step warmup", "post-norm, no warmup", "post-norm, [0-9]+-step warmup"):
        m = c.find(r"\n\s+" + name + r"\s+" + NUM + r"\s+" + NUM + r"\n", "the warmup table's row " + name)
        if m:
            rows[name.split(",")[0] + (" warmup" if "step" in name else "")] = num(m.group(1))
    m = c.find(r"Post-norm without warmup is " + NUM + r" times pre-norm's perplexity; with warmup " + NUM +
               r" times: warmup (brings post-norm level with pre-norm|rescues post-norm, not to pre-norm's level|does not rescue post-norm), and pre-norm (does not need it|moves by " + NUM + r" % with it)\.",
               "the warmup sentence")
    if m and len(rows) == 4 and verdict(c.text, "C24") == "skipped":  # --quick: no bound printed; rescue is bound-free
        pre, post, post_w = rows["pre-norm"], rows["post-norm"], rows["post-norm warmup"]
        if m.group(3).startswith("brings"):  # level: within the bound, a few percent; a quarter apart is level by no bound
            c.expect(abs(post_w / pre - 1) < 0.25, m.group(0), f"the table ({post_w} with warmup, pre-norm {pre})")
        elif abs(post_w * 3 / post - 1) > 0.01:
            c.expect(m.group(3).startswith("rescues") == (post_w < post / 3), m.group(0), f"the table ({post_w} with warmup, {post} without)")
        return
    bound = c.find(r"matches and needs none: within " + NUM + r" %", "C24's bound")
    if m and bound and len(rows) == 4:
        pre, pre_w, post, post_w = rows["pre-norm"], rows["pre-norm warmup"], rows["post-norm"], rows["post-norm warmup"]
        b = num(bound.group(1)) / 100
        # The printed perplexities are rounded to 2 decimals: a ratio within 1 % of a bound is not decided here.
        matches, rescued, needs_none = abs(post_w / pre - 1) < b, post_w < post / 3, abs(pre_w / pre - 1) < b
        if abs(abs(post_w / pre - 1) - b) > 0.01 and abs(post_w * 3 / post - 1) > 0.01:
            want = "brings post-norm level with pre-norm" if matches else "rescues post-norm, not to pre-norm's level" if rescued else "does not rescue post-norm"
            c.expect(m.group(3) == want, m.group(0), f"the table ({post_w} with warmup, {post} without, pre-norm {pre}): \"warmup {want}\"")
        if abs(abs(pre_w / pre - 1) - b) > 0.01:
            c.expect((m.group(4) == "does not need it") == needs_none, m.group(0), f"the table (pre-norm {pre}, {pre_w} with warmup; bound {b:.3f})")
        v = verdict(c.text, "C24")
        several = post >= 3 * pre
        level, needless = m.group(3).startswith("brings"), m.group(4) == "does not need it"
        if v == "agrees":
            c.expect(several and level and needless, m.group(0), "C24's verdict `agrees`")
        elif v == "shape":
            c.expect(several and not (level and needless) and not m.group(3).startswith("does not"), m.group(0), "C24's verdict `shape`")
        elif v == "differs":
            c.expect(not (several and level and needless) and not (several and m.group(3).startswith("rescues")), m.group(0), "C24's verdict `differs`")


def check_09(c):
    m = c.find(r"Without positions (the model cannot tell|the outputs should only be permuted)", "C25's sentence")
    if m:
        c.expect((m.group(1) == "the model cannot tell") == (verdict(c.text, "C25") == "agrees"), m.group(0), f"C25's verdict `{verdict(c.text, 'C25')}`")
    m = c.find(r"M_k (does not depend on i|misses some)", "C26's sentence")
    if m:
        c.expect((m.group(1) == "does not depend on i") == (verdict(c.text, "C26") == "agrees"), m.group(0), f"C26's verdict `{verdict(c.text, 'C26')}`")


def check_10(c):
    m = c.find(r"two blocks' loss is (lower|not lower) on the training sentences \(" + NUM + r" vs " + NUM + r"\) and (higher|not higher) on the held-out ones \(" + NUM + r" vs " + NUM,
               "the pronoun task's analogue of C37")
    if m:
        two_t, one_t, two_h, one_h = num(m.group(2)), num(m.group(3)), num(m.group(5)), num(m.group(6))
        if two_t != one_t:
            c.expect((m.group(1) == "lower") == (two_t < one_t), m.group(0), f"its figures ({two_t} vs {one_t})")
        if two_h != one_h:
            c.expect((m.group(4) == "higher") == (two_h > one_h), m.group(0), f"its figures ({two_h} vs {one_h})")
    if "--no-timing skips the n^2 table" in c.text:
        return
    e = c.find(r"tiled time ~ n\^" + NUM + r", memory ~ n\^" + NUM, "the fitted exponents")
    m = c.find(r"(Tiling removes them from memory|Tiling should remove them from memory).*?(but not from the arithmetic|and its time grows like)", "the tiling sentence")
    if e and m:
        t_tile, m_tile = num(e.group(1)), num(e.group(2))
        c.expect(m.group(1).startswith("Tiling removes") == (m_tile < 1.35), m.group(0), f"the tiled memory's exponent {m_tile}")
        c.expect(m.group(2).startswith("but not") == (t_tile > 1.5), m.group(0), f"the tiled time's exponent {t_tile}")
        if verdict(c.text, "C31") == "agrees":
            c.expect(m.group(1).startswith("Tiling removes"), m.group(0), "C31's verdict `agrees` (tiled memory linear)")


def check_12(c):
    def rung(name):
        m = c.find(r"\n\s+" + re.escape(name) + r"\s+" + NUM + r"\s+" + NUM, "the ladder's row " + name)
        return num(m.group(2)) if m else None

    residual, replacing, added, heads = rung("+ residual"), rung("one head, replacing"), rung("one head, added"), rung("4 heads")
    m = c.find(r"learned weights (beat|lose to) uniform ones by " + NUM + r" points; the same head added rather than replacing (lowers|raises) the perplexity by " + NUM,
               "the ladder's learned-weights sentence")
    if m and None not in (residual, replacing, added):
        if residual != added:
            c.expect((m.group(1) == "beat") == (residual > added), m.group(0), f"the table (+ residual {residual}, one head added {added})")
        if replacing != added:
            c.expect((m.group(3) == "lowers") == (added < replacing), m.group(0), f"the table (replacing {replacing}, added {added})")
    m = c.find(r"more parameters \(d_model\^2 \+ d_model = [0-9,]+ at d_model = [0-9]+\), which (lower|raise) the perplexity by " + NUM, "the heads' sentence")
    if m and None not in (added, heads) and added != heads:
        c.expect((m.group(1) == "lower") == (heads <= added), m.group(0), f"the table (one head added {added}, 4 heads {heads})")
    m = re.search(r"No context, per character: ours " + NUM + r" bits, the chapter's " + NUM + r" \(ours " + NUM + r" % (higher|lower)\)", c.text)
    if m:  # only with BPE (the chapter's tokenizer)
        ours, theirs = num(m.group(1)), num(m.group(2))
        if ours != theirs:
            c.expect((m.group(4) == "higher") == (ours > theirs), m.group(0), f"its figures ({ours} vs {theirs})")


# Each sentence's other wording: --self-test puts it in place of the printed one, and the rules must catch it.
FLIPS = [("so more often the wrong one", "so more often the right one"), ("so more often the right one", "so more often the wrong one"),
         ("bag of words beats", "bag of words loses to"), ("bag of words ties with", "bag of words beats"), ("bag of words loses to", "bag of words beats"),
         ("warmup does not rescue post-norm", "warmup brings post-norm level with pre-norm"),
         ("warmup brings post-norm level with pre-norm", "warmup does not rescue post-norm"),
         ("warmup rescues post-norm, not to pre-norm's level", "warmup brings post-norm level with pre-norm"),
         ("Without positions the model cannot tell", "Without positions the outputs should only be permuted"),
         ("M_k does not depend on i", "M_k misses some"),
         ("loss is lower on the training", "loss is not lower on the training"), ("loss is not lower on the training", "loss is lower on the training"),
         ("Tiling removes them from memory", "Tiling should remove them from memory"),
         ("but not from the arithmetic", "and its time grows like"),
         ("learned weights beat uniform", "learned weights lose to uniform"), ("learned weights lose to uniform", "learned weights beat uniform"),
         ("replacing lowers the", "replacing raises the"), ("replacing raises the", "replacing lowers the"),
         ("which lower the perplexity", "which raise the perplexity"), ("which raise the perplexity", "which lower the perplexity")]


def self_test(paths):
    """Each printed wording swapped for its other one must be caught: the rules can fail."""
    bad = 0
    for path in paths:
        text = open(path, encoding="utf-8").read()
        rule = next((f for title, f in RULES.items() if text.startswith(title)), None)
        flipped = 0
        for old, new in FLIPS:
            if rule is None or old not in text:
                continue
            c = Check(path, text.replace(old, new, 1))
            rule(c)
            flipped += 1
            if not c.errors:
                print(f"{path}: \"{old}\" changed to \"{new}\" passes the rules", file=sys.stderr)
                bad += 1
        if flipped == 0:
            print(f"{path}: no sentence to swap: the self-test tests nothing here", file=sys.stderr)
            bad += 1
        print(f"check_sentences --self-test: {path}: {flipped} swapped wordings tried")
    return 1 if bad else 0


RULES = {"Sections 9.1 and 9.3 — Learned": check_04, "Section 9.5 — LayerNorm": check_08, "Section 9.6": check_09,
         "Sections 9.5, 9.7, 9.8": check_10, "Sections 9.1-9.8, the trained": check_12}


def main(paths):
    if paths and paths[0] == "--self-test":
        return self_test(paths[1:])
    if not paths:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    errors, checked = [], 0
    for path in paths:
        try:
            text = open(path, encoding="utf-8").read()
        except OSError as e:
            print(f"check_sentences: cannot read {path}: {e.strerror}", file=sys.stderr)
            return 1
        rule = next((f for title, f in RULES.items() if text.startswith(title)), None)
        if rule is None:
            errors.append(f"{path}: no rules for a program whose output starts {text.splitlines()[0] if text else '(empty)'!r}")
            continue
        c = Check(path, text)
        rule(c)
        errors += c.errors
        checked += c.checked
    for e in errors:
        print(e, file=sys.stderr)
    print(f"check_sentences: {checked} sentences checked in {len(paths)} outputs, {len(errors)} contradicted or missing")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
