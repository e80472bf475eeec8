"""The PyTorch converter's F.interpolate with antialias=True (bilinear, bicubic; downsampling by a size or
a factor, and upsampling), run by `anvil run` ($ANVIL, else the debug build in .build/) and compared
with PyTorch itself. Skipped with the reason when torch or the binary is missing."""

import numpy as np
import pytest

from helpers import conversion_error, framework, require_anvil, run_anvil

torch = framework("torch")
from torch import nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from anvil_convert.from_pytorch import Converter  # noqa: E402


class Interpolate(nn.Module):
    """A 1x1 convolution, then F.interpolate with the given arguments."""

    def __init__(self, **arguments):
        """The interpolation's keyword arguments."""
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)
        self.arguments = arguments

    def forward(self, x):
        """(N, 3, H, W) -> (N, 4, H', W')."""
        return F.interpolate(self.conv(x), **self.arguments)


@pytest.mark.parametrize("arguments", [
    dict(size=(5, 4), mode="bilinear", antialias=True),
    dict(size=(3, 7), mode="bicubic", antialias=True),
    dict(scale_factor=0.4, mode="bilinear", antialias=True),
    dict(scale_factor=(0.3, 0.55), mode="bicubic", antialias=True),
    dict(size=(20, 9), mode="bicubic", antialias=True),      # up along H, down along W
    dict(scale_factor=1.5, mode="bilinear", antialias=True),  # upsampling: the plain filter
])
def test_antialiased_interpolate_matches_pytorch(tmp_path, arguments):
    """F.interpolate(..., antialias=True): Resize with antialias (and excludeOutside, a = -0.5 for bicubic)
    giving PyTorch's values."""
    require_anvil()
    torch.manual_seed(3)
    module = Interpolate(**arguments).eval()
    x = torch.randn(2, 3, 13, 11)
    with torch.no_grad():
        expected = module(x).numpy()
    writer = Converter(module, (13, 11, 3)).convert()
    resize = [layer for layer in writer.layers if layer["type"] == "Resize"]
    assert len(resize) == 1 and resize[0]["antialias"] and resize[0]["excludeOutside"]
    assert resize[0]["coordinates"] == "halfPixel"
    if arguments["mode"] == "bicubic":
        assert resize[0]["cubicCoefficient"] == -0.5
    writer.write(str(tmp_path / "m"))
    out = run_anvil(tmp_path / "m" / "model.json", [x.numpy().transpose(0, 2, 3, 1)])[0]
    actual = out.reshape(expected.shape[0], expected.shape[2], expected.shape[3], expected.shape[1]).transpose(0, 3, 1, 2)
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())


def test_antialias_refusals():
    """antialias with align_corners is refused with the node and the reason."""
    conversion_error(lambda: Converter(Interpolate(size=(5, 5), mode="bilinear", align_corners=True, antialias=True),
                                       (13, 11, 3)).convert(), "interpolate", "antialias", "align_corners")
