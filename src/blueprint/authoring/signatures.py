"""An input's near-duplicate signature: its shingles hashed, a MinHash signature over them
(datasketch, imported at the first signature) and the signature's LSH band keys, and the
signature packed as bytes for another process."""

from __future__ import annotations

import functools
import struct
from array import array
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from blueprint.validation.inputtext import MIN_WORDS_FOR_NEAR, comparable_text, shingle_hashes

if TYPE_CHECKING:
    from datasketch import MinHash

#: MinHash permutations: enough for the banding below, small enough to stay fast
NUM_PERM: Final = 128
#: the chance that LSH proposes a pair whose similarity is exactly the threshold; pairs above
#: it are proposed more often still (0.99 and more at 0.05 above the threshold)
RECALL_AT_THRESHOLD: Final = 0.97

#: how many of the signature's values estimate a candidate's similarity before the exact
#: comparison: one vectorised comparison spares most exact ones
ESTIMATE_PERM: Final = 64


@functools.cache
def lsh_bands(threshold: float, num_perm: int = NUM_PERM) -> tuple[int, int]:
    """The LSH banding (bands, rows per band) for a threshold.

    datasketch's own choice balances false positives against false negatives, which misses
    more than half of the pairs right at the threshold. Candidates are confirmed exactly, so a
    false positive costs only a comparison: take the banding that proposes a pair at the
    threshold with probability ``RECALL_AT_THRESHOLD`` and proposes the fewest pairs below it.
    """

    def proposed(similarity: float, bands: int, rows: int) -> float:
        return float(1 - (1 - similarity**rows) ** bands)

    best: tuple[float, int, int] | None = None
    for rows in range(1, num_perm // 2 + 1):
        for bands in range(2, num_perm // rows + 1):
            if proposed(threshold, bands, rows) < RECALL_AT_THRESHOLD:
                continue
            below = sum(proposed(threshold * step / 50, bands, rows) for step in range(50)) / 50
            if best is None or below < best[0]:
                best = (below, bands, rows)
            break  # more bands only propose more pairs below the threshold
    if best is None:  # unreachable for thresholds in (0, 1]; the most bands then
        return num_perm // 2, 2
    return best[1], best[2]


def _same(value: int) -> int:
    # shingles arrive hashed already; MinHash must not hash them again
    return value


class _Banding:
    """A MinHash signature's LSH band keys: the signature is cut into ``bands`` bands of
    ``rows`` values, each made one 64-bit key; two inputs whose signatures agree on a whole
    band share its key."""

    def __init__(self, bands: int, rows: int) -> None:
        import numpy

        self.bands, self.rows = bands, rows
        # fixed, so that keys (and so results) are the same on every run and every machine
        generator = numpy.random.RandomState(20240601)
        self._multipliers = generator.randint(0, 2**62, rows, dtype=numpy.uint64) * 2 + 1
        self._salts = generator.randint(0, 2**62, bands, dtype=numpy.uint64)

    def keys(self, values: Any) -> Any:
        import numpy

        band = values[: self.bands * self.rows].astype(numpy.uint64).reshape(self.bands, self.rows)
        # arithmetic modulo 2**64: a collision only adds a candidate, which is then compared
        return (band * self._multipliers).sum(axis=1, dtype=numpy.uint64) + self._salts


@functools.cache
def _signing(threshold: float) -> tuple[MinHash, _Banding]:
    from datasketch import MinHash

    return MinHash(num_perm=NUM_PERM, hashfunc=_same), _Banding(*lsh_bands(threshold, NUM_PERM))


@dataclass(frozen=True)
class Signature:
    """What near-duplicate matching needs of an input: its shingle hashes (sorted, distinct),
    the first ``ESTIMATE_PERM`` values of its MinHash signature and its LSH band keys."""

    hashes: array[int]
    estimate: Any
    keys: Any

    def packed(self) -> bytes:
        """The signature as bytes (to send to another process): a header, the band keys,
        the shingle hashes and the estimate's values."""
        header = _PACKED.pack(self.estimate.itemsize, len(self.hashes), len(self.keys))
        return b"".join(
            (header, self.keys.tobytes(), self.hashes.tobytes(), self.estimate.tobytes())
        )

    @staticmethod
    def band_keys(packed: bytes) -> array[int]:
        """The band keys of a packed signature, without the rest."""
        _, _, count = _PACKED.unpack_from(packed)
        keys = array("Q")
        keys.frombytes(packed[_PACKED.size : _PACKED.size + 8 * count])
        return keys

    @staticmethod
    def unpacked(packed: bytes) -> Signature:
        import numpy

        width, hashes_count, keys_count = _PACKED.unpack_from(packed)
        start = _PACKED.size + 8 * keys_count
        keys = numpy.frombuffer(packed, numpy.uint64, keys_count, _PACKED.size)
        hashes = array("I")
        hashes.frombytes(packed[start : start + 4 * hashes_count])
        dtype = numpy.uint32 if width == 4 else numpy.uint64
        estimate = numpy.frombuffer(packed, dtype, offset=start + 4 * hashes_count)
        return Signature(hashes, estimate, keys)


#: a packed signature's header: the estimate's value width, the shingle hashes, the band keys
_PACKED: Final = struct.Struct("<BII")


def signature_of(value: Any, threshold: float) -> Signature | None:
    """An input's signature for near-duplicates at ``threshold``; None when it has fewer
    than ``MIN_WORDS_FOR_NEAR`` words to compare."""
    text = comparable_text(value, near=True)
    words = text.split() if text is not None else []
    if len(words) < MIN_WORDS_FOR_NEAR:
        return None
    hashes = shingle_hashes(words)
    template, banding = _signing(threshold)
    signature = template.copy()
    signature.update_batch(hashes)
    values = signature.hashvalues
    return Signature(hashes, values[:ESTIMATE_PERM].copy(), banding.keys(values))


__all__ = ["ESTIMATE_PERM", "NUM_PERM", "Signature", "lsh_bands", "signature_of"]
