"""What the seed generators of the TCP targets share: writing a target's seeds.

write_seeds(target, seeds) replaces every file in tests/fuzz/corpus/<target>/
but the regress_* crash reproducers (kept by hand) with the seeds, a dict of
file name to input bytes.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def write_seeds(target, seeds):
    out = os.path.join(HERE, "corpus", target)
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        if not name.startswith("regress_"):
            os.unlink(os.path.join(out, name))
    for name, blob in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(blob)
