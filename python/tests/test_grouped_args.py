"""hopgen.grouped_gemm's block-wise scale arguments checked on the CPU side (torch tensors on
the CPU; no GPU, no library call): the layouts grouped_gemm documents are taken with their
leading dimensions, anything else is refused with a sentence. Skips without torch."""
import pytest

torch = pytest.importorskip("torch")
from hopgen import errors, ops  # noqa: E402

E, N, K = 4, 520, 1040  # ceil(N/128) = 5, ceil(K/128) = 9


def _sb(ldb=9):
    return torch.zeros(E, 5, ldb)[:, :, :9]


def test_contiguous_layout_and_leading_dimensions():
    sa = torch.zeros(9, 300).t()  # [300, 9] strides (1, 300)
    assert ops._grouped_block_scales(sa, _sb(), False, E, 300, N, K, sa.device) == (300, 9)
    wide = torch.zeros(9, 304)[:, :300].t()  # lda 304
    assert ops._grouped_block_scales(wide, _sb(12), False, E, 300, N, K, sa.device) == (304, 12)


def test_masked_layout():
    sa = torch.zeros(E, 9, 64).transpose(1, 2)  # [E, 64, 9] strides (9 * 64, 1, 64)
    assert ops._grouped_block_scales(sa, _sb(), True, E, 64, N, K, sa.device) == (64, 9)


@pytest.mark.parametrize("bad, words", [
    (lambda: (torch.zeros(300, 9), _sb()), "expected M-major 1x128 scales"),  # K-major A scales
    (lambda: (torch.zeros(9, 300).t(), torch.zeros(E, 9, 5).transpose(1, 2)), "strides"),
    (lambda: (torch.zeros(9, 299).t(), _sb()), "expected [total, ceil(K/128)]"),
    (lambda: (torch.zeros(9, 300).t(), torch.zeros(E, 5, 8)), "expected [E, ceil(N/128)"),
    (lambda: (torch.zeros(9, 300, dtype=torch.float64).t(), _sb()), "must be float32"),
    (lambda: (None, _sb()), "needs block-wise scale_a"),
])
def test_refusals(bad, words):
    sa, sb = bad()
    with pytest.raises(errors.InvalidError) as ei:
        ops._grouped_block_scales(sa, sb, False, E, 300, N, K, torch.device("cpu"))
    assert words in str(ei.value)
