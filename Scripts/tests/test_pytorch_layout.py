"""The PyTorch converter's 1-D layers and layout modules (Conv1d, ConvTranspose1d, MaxPool1d, AvgPool1d,
ChannelShuffle, PixelShuffle, PixelUnshuffle), run by `anvil run` ($ANVIL, else the debug build in .build/)
and compared with PyTorch itself. Skipped with the reason when torch or the binary is missing."""

import numpy as np

from helpers import framework, require_anvil, run_anvil

torch = framework("torch")
from torch import nn  # noqa: E402

from anvil_convert.from_pytorch import Converter  # noqa: E402

def run_both(tmp_path, module, x):
    """(layer types, PyTorch's output, Anvil's output in PyTorch's layout) for input `x` (N, C, ...)."""
    require_anvil()
    torch.manual_seed(0)
    module = module.eval()
    with torch.no_grad():
        expected = module(x).numpy()
    shape = (x.shape[2], x.shape[1]) if x.dim() == 3 else (x.shape[2], x.shape[3], x.shape[1])
    writer = Converter(module, shape).convert()
    writer.write(str(tmp_path / "m"))
    to_last = (0, 2, 1) if x.dim() == 3 else (0, 2, 3, 1)
    out = run_anvil(tmp_path / "m" / "model.json", [x.numpy().transpose(to_last)])[0]
    back = {2: (0, 1), 3: (0, 2, 1), 4: (0, 3, 1, 2)}[expected.ndim]
    held = out.reshape([expected.shape[i] for i in np.argsort(back)])
    return [layer["type"] for layer in writer.layers], expected, np.transpose(held, back)


def test_conv1d_and_pooling(tmp_path):
    """Conv1d (stride, dilation, padding), a depthwise Conv1d, MaxPool1d and AvgPool1d on (N, C, L)."""
    torch.manual_seed(1)
    module = nn.Sequential(nn.Conv1d(3, 6, 3, stride=2, padding=2, dilation=2), nn.ReLU(),
                           nn.Conv1d(6, 6, 5, padding="same", groups=6), nn.MaxPool1d(2, ceil_mode=True),
                           nn.AvgPool1d(3, stride=1, padding=1, count_include_pad=False))
    types, expected, actual = run_both(tmp_path, module, torch.randn(2, 3, 21))
    assert types == ["Convolution", "DepthwiseConvolution", "MaxPooling", "AveragePooling"]  # ReLU fused
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())


def test_conv_transpose1d(tmp_path):
    """ConvTranspose1d (stride, padding, output_padding, dilation, groups) on (N, C, L) matches PyTorch."""
    torch.manual_seed(2)
    module = nn.Sequential(nn.ConvTranspose1d(4, 6, 4, stride=3, padding=1, output_padding=1, groups=2), nn.ReLU(),
                           nn.ConvTranspose1d(6, 3, 3, stride=2, dilation=2, bias=False))
    types, expected, actual = run_both(tmp_path, module, torch.randn(2, 4, 9))
    assert types == ["TransposedConvolution", "TransposedConvolution"]  # ReLU fused
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())


def test_channel_shuffle_and_pixel_shuffle(tmp_path):
    """nn.ChannelShuffle, nn.PixelShuffle and nn.PixelUnshuffle: ChannelShuffle, DepthToSpace/SpaceToDepth (CRD)."""
    module = nn.Sequential(nn.ChannelShuffle(3), nn.PixelShuffle(2), nn.Conv2d(3, 4, 1), nn.PixelUnshuffle(2))
    types, expected, actual = run_both(tmp_path, module, torch.randn(1, 12, 3, 4))
    assert types == ["ChannelShuffle", "DepthToSpace", "Convolution", "SpaceToDepth"]
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())


def test_permute_flatten_linear_and_cat_on_height(tmp_path):
    """A torch.cat on dim 2 and x.permute(0, 3, 2, 1).flatten(1) → Linear convert and match PyTorch."""

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3 * 4 * 10, 7)

        def forward(self, x):
            x = torch.cat([x, torch.relu(x)], dim=2)
            return self.fc(x.permute(0, 3, 2, 1).flatten(1))

    types, expected, actual = run_both(tmp_path, Net(), torch.randn(1, 3, 5, 4))
    assert types == ["Activation", "Concatenate", "Transpose", "Dense"]
    assert np.abs(actual - expected).max() <= 1e-4 * max(1.0, np.abs(expected).max())
