#!/usr/bin/python3
"""Average single-batch profiles of the same model and batch into one (docs/profiles.md).

    analysis/average_profiles.py OUT.json IN1.json IN2.json [...]

Every input must have the same model, batch_size and layers (names, parameters, grad_bytes, in the
same order); the output keeps those and takes the arithmetic mean of every time: each layer's
forward_s and backward_s, optimizer_s, io_s and unattributed_s (0 where an input has none). Its
provenance names the inputs and repeats their provenance. Used for profiles measured by several
processes at once (docs/validation.md, "Results: DDP iterations"). Multi-batch profiles are refused.
Exit 2 with one line on bad input. Standard library only.
"""

import json
import os
import statistics
import sys

PROG = "average_profiles.py"
TIMES = ("optimizer_s", "io_s", "unattributed_s")


class UsageError(Exception):
    pass


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: malformed JSON: {e}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("layers"), list) or not doc["layers"]:
        raise UsageError(f"{path}: not a profile (no layers)")
    if "batch_profiles" in doc:
        raise UsageError(f"{path}: a multi-batch profile; average single-batch profiles only")
    return doc


def shape(profile):
    return [(l.get("name"), l.get("parameters"), l.get("grad_bytes")) for l in profile["layers"]]


def average(profiles, names):
    first = profiles[0]
    for p, name in zip(profiles[1:], names[1:]):
        for key in ("model", "batch_size"):
            if p.get(key) != first.get(key):
                raise UsageError(f"{name}: {key} {p.get(key)!r}, but {names[0]} has {first.get(key)!r}")
        if shape(p) != shape(first):
            raise UsageError(f"{name}: its layers differ from {names[0]}'s")
    out = {k: v for k, v in first.items() if k not in ("layers", "provenance") + TIMES}
    out["provenance"] = (f"mean of {len(profiles)} profiles ({', '.join(os.path.basename(n) for n in names)}): "
                         + " | ".join(p.get("provenance", "") for p in profiles))
    for key in TIMES:
        out[key] = statistics.fmean(float(p.get(key, 0.0)) for p in profiles)
    out["layers"] = []
    for i, layer in enumerate(first["layers"]):
        merged = dict(layer)
        for key in ("forward_s", "backward_s"):
            merged[key] = statistics.fmean(float(p["layers"][i][key]) for p in profiles)
        out["layers"].append(merged)
    return out


def dumps(profile):
    head = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in profile.items() if k != "layers"]
    layers = ",\n".join("    " + json.dumps(l, separators=(", ", ": ")) for l in profile["layers"])
    return "{\n" + ",\n".join(head) + ',\n  "layers": [\n' + layers + "\n  ]\n}\n"


def main(argv):
    if len(argv) < 3:
        raise UsageError("usage: average_profiles.py OUT.json IN1.json IN2.json [...]")
    out, names = argv[0], argv[1:]
    profile = average([load(n) for n in names], names)
    with open(out, "w", encoding="utf-8") as f:
        f.write(dumps(profile))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        sys.exit(2)
