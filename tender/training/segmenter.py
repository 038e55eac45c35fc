"""Does a learned segmenter beat the decomposition's rules? Measured, not assumed.

The only segmentations Tender has are the decomposition suite's dev part (90 requirements with gold need and
context spans). Both readers cut a requirement into the same pieces (decomposition._pieces); the rules then call
each piece a need, a detail of the need before it, or context. The learned reader makes that call with a logistic
model per decision over simple features of the piece (its first word, the words that cut it off, its content words,
whether it points back, its place), trained on the pieces of the other folds. Five folds over the dev part, need-
level F1 under the suite's matching rule:

    python -m tender.training.segmenter
"""

import argparse
import random
import sys

import numpy as np

from tender.agents import decomposition as rules
from tender.evaluation import decomposition as suite

from .ranker import fit_logistic

KINDS = ("need", "detail", "context")


def label(case: suite.Case, pieces: list[tuple[str, str]]) -> list[str]:
    """Each piece's gold kind: context where its words are the context's, a detail where its words are in the same
    gold need as the piece before, else a need."""
    spans = [suite.words(" ".join(s)) for _, s in case.needs]
    context = suite.words(" ".join(case.context))
    kinds, previous = [], None
    for _, piece in pieces:
        have = suite.words(piece)
        if not have or len(have & context) > len(have) / 2:
            kinds.append("context")
            continue
        owner = max(range(len(spans)), key=lambda j: len(have & spans[j])) if spans else None
        kinds.append("detail" if owner is not None and owner == previous else "need")
        previous = owner
    return kinds


def features(pieces: list[tuple[str, str]], index: int, vocabulary: dict[str, int]) -> np.ndarray:
    separator, piece = pieces[index]
    first = (rules._WORD.findall(piece.lower()) or [""])[0]
    cut = (rules._WORD.findall(separator.lower()) or [","])[-1]
    dense = [
        float(index == 0),
        float(index == len(pieces) - 1),
        min(len(rules.content_words(piece)), 6) / 6,
        float(rules.dangling(piece)),
        float(rules.is_asking(piece)),
        float(bool(rules._FRAMING_OPENING.match(piece))),
        float(bool(rules._WHEN.match(piece))),
    ]
    sparse = np.zeros(len(vocabulary))
    for token in (f"first:{first}", f"cut:{cut}"):
        if token in vocabulary:
            sparse[vocabulary[token]] = 1.0
    return np.concatenate([dense, sparse])


def learned_reader(train: list[suite.Case]):
    rows, labels = [], []
    vocabulary: dict[str, int] = {}
    for case in train:
        pieces = rules._pieces(case.requirement)
        for separator, piece in pieces:
            for token in (
                f"first:{(rules._WORD.findall(piece.lower()) or [''])[0]}",
                f"cut:{(rules._WORD.findall(separator.lower()) or [','])[-1]}",
            ):
                vocabulary.setdefault(token, len(vocabulary))
    for case in train:
        pieces = rules._pieces(case.requirement)
        for i, kind in enumerate(label(case, pieces)):
            rows.append(features(pieces, i, vocabulary))
            labels.append(kind)
    x = np.stack(rows)
    models = {k: fit_logistic(x, np.array([float(y == k) for y in labels]), np.ones(len(labels))) for k in KINDS}

    def read(requirement: str) -> tuple[list[str], list[str]]:
        pieces = rules._pieces(requirement)
        needs: list[str] = []
        context: list[str] = []
        for i, (separator, piece) in enumerate(pieces):
            v = np.append(features(pieces, i, vocabulary), 1.0)
            kind = max(KINDS, key=lambda k: float(v @ models[k]))
            if kind == "context":
                context.append(piece)
            elif kind == "detail" and needs:
                needs[-1] = f"{needs[-1]}{separator}{piece}"
            else:
                needs.append(piece)
        return needs or [requirement], context

    return read


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tender.training.segmenter", description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cases = suite.load("dev")
    random.Random(args.seed).shuffle(cases)
    folds = [cases[k :: args.folds] for k in range(args.folds)]
    learned, ruled = [], []
    for k, fold in enumerate(folds):
        train = [c for j, f in enumerate(folds) if j != k for c in f]
        learned.append(suite.score(fold, learned_reader(train)))
        ruled.append(suite.score(fold, lambda t: (rules.read(t).needs, rules.read(t).context)))

    def pooled(results: list[dict]) -> str:
        f1 = np.mean([r["f1"] for r in results])
        dropped = sum(r["dropped_needs"] for r in results)
        return f"need-level F1 {f1:.3f} (folds {min(r['f1'] for r in results):.3f} to {max(r['f1'] for r in results):.3f}), {dropped} needs dropped"

    print(f"rules:   {pooled(ruled)}")
    print(f"learned: {pooled(learned)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
