"""The zoo networks in PyTorch, with a width factor, and a robust torchvision import.

At width 1 each network has exactly torchvision's module paths, parameter shapes and forward
computation (MobileNet v1, absent from torchvision: Keras's layer names and computation);
the Swift definitions in Sources/AnvilModels/Zoo scale channels the same way. Used by the
PyTorch converter's `--torchvision` option and by the zoo fixture scripts
(Scripts/fixtures/zoo_reference.py, zoo_full_check.py) and benchmarks.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from .writer import ConversionError

# ---------------------------------------------------------------------------------------
# torchvision
# ---------------------------------------------------------------------------------------

_TORCHVISION_OPERATOR_STUBS = None


def import_torchvision():
    """Imports torchvision, also when its C++ operators cannot load.

    PyPI's torchvision wheels are CUDA builds; against a CPU torch their `_C.so` fails to
    load and `import torchvision` then stops at registering a fake kernel for
    `torchvision::nms` (and `qnms`), operators that only that library defines. The model
    definitions do not use them: declaring the two schemas is enough to import.
    """
    global _TORCHVISION_OPERATOR_STUBS
    try:
        import torchvision
        return torchvision
    except RuntimeError as error:
        if "torchvision::" not in str(error):
            raise
    for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[name]
    if _TORCHVISION_OPERATOR_STUBS is None:
        library = torch.library.Library("torchvision", "DEF")  # kept alive: dropping it unregisters
        library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _TORCHVISION_OPERATOR_STUBS = library
    import torchvision
    return torchvision


# ---------------------------------------------------------------------------------------
# The zoo networks, with a width factor. At width 1 each has exactly torchvision's module
# paths, parameter shapes and forward computation (MobileNet v1: Keras's layer names and
# computation); the Swift definitions in Sources/AnvilModels/Zoo scale channels the same way.
# ---------------------------------------------------------------------------------------

ZOO = ("vgg16", "mobilenet_v1", "inception_v3", "squeezenet1_1", "resnet18", "resnet50",
       "mobilenet_v2", "googlenet", "densenet121", "fcn_resnet50", "mobilenet_v3_large", "mobilenet_v3_small",
       "efficientnet_b0", "shufflenet_v2_x1_0")
DEFAULT_INPUT_SIZE = {"vgg16": 224, "mobilenet_v1": 224, "inception_v3": 299,
                      "squeezenet1_1": 224, "resnet18": 224, "resnet50": 224,
                      "mobilenet_v2": 224, "googlenet": 224, "densenet121": 224, "fcn_resnet50": 224,
                      "mobilenet_v3_large": 224, "mobilenet_v3_small": 224, "efficientnet_b0": 224,
                      "shufflenet_v2_x1_0": 224}
# Networks whose torchvision constructor already takes a width (MobileNet v2's and v3's and
# EfficientNet's `width_mult`, DenseNet's growth rate and stem features, ShuffleNet v2's stage
# channels): build_network always uses torchvision's class.
TORCHVISION_SCALABLE = ("mobilenet_v2", "densenet121", "mobilenet_v3_large", "mobilenet_v3_small", "efficientnet_b0",
                        "shufflenet_v2_x1_0")
# Segmentation networks: their output is a per-pixel class map (N, classes, H, W).
SEGMENTATION = ("fcn_resnet50",)


def scaled(channels, width):
    """A channel count times the width factor, rounded down, at least 1 (as in the Swift zoo)."""
    return max(1, int(channels * width))


class VGG(nn.Module):
    """VGG: `features.N` (3x3 convolutions with ReLU, 2x2 max pools), `avgpool` (adaptive
    7x7), `classifier.{0,3,6}` (two hidden layers of 4096 and the output)."""

    CONFIG_D = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")

    def __init__(self, classes=1000, width=1.0, config=CONFIG_D):
        """VGG with the given configuration; channels and hidden sizes scaled by `width`."""
        super().__init__()
        layers, channels = [], 3
        for item in config:
            if item == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
                continue
            layers += [nn.Conv2d(channels, scaled(item, width), kernel_size=3, padding=1), nn.ReLU(inplace=True)]
            channels = scaled(item, width)
        hidden = scaled(4096, width)
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
        self.classifier = nn.Sequential(
            nn.Linear(channels * 7 * 7, hidden), nn.ReLU(inplace=True), nn.Dropout(),
            nn.Linear(hidden, hidden), nn.ReLU(inplace=True), nn.Dropout(),
            nn.Linear(hidden, classes))

    def forward(self, x):
        """Features, adaptive 7x7 average pooling, flatten, classifier."""
        x = self.avgpool(self.features(x))
        return self.classifier(torch.flatten(x, 1))


class Fire(nn.Module):
    """SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated."""

    def __init__(self, channels, squeeze, expand):
        """A squeeze to `squeeze` channels and two expands to `expand` channels each."""
        super().__init__()
        self.squeeze = nn.Conv2d(channels, squeeze, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze, expand, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze, expand, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)
        self.out_channels = 2 * expand

    def forward(self, x):
        """Squeeze, then the two expands concatenated."""
        x = self.squeeze_activation(self.squeeze(x))
        return torch.cat([self.expand1x1_activation(self.expand1x1(x)),
                          self.expand3x3_activation(self.expand3x3(x))], 1)


class SqueezeNet11(nn.Module):
    """SqueezeNet 1.1: `features.N` (stem, ceil-mode max pools, fires), `classifier.1`
    (1x1 convolution to the classes) with ReLU and global average pooling."""

    FIRES = ((16, 64), (16, 64), "M", (32, 128), (32, 128), "M", (48, 192), (48, 192), (64, 256), (64, 256))

    def __init__(self, classes=1000, width=1.0):
        """The stem, fire modules scaled by `width`, and the 1x1 classifier convolution."""
        super().__init__()
        stem = scaled(64, width)
        layers = [nn.Conv2d(3, stem, kernel_size=3, stride=2), nn.ReLU(inplace=True),
                  nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True)]
        channels = stem
        for item in self.FIRES:
            if item == "M":
                layers.append(nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True))
                continue
            fire = Fire(channels, scaled(item[0], width), scaled(item[1], width))
            layers.append(fire)
            channels = fire.out_channels
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=0.5), nn.Conv2d(channels, classes, kernel_size=1),
                                        nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d((1, 1)))

    def forward(self, x):
        """Features and classifier, flattened to (N, classes)."""
        return torch.flatten(self.classifier(self.features(x)), 1)


class BasicBlock(nn.Module):
    """ResNet-18/34 block: two 3x3 convolutions with batch norm; `downsample` (1x1
    convolution + batch norm) when the shape changes; ReLU after the addition."""

    expansion = 1

    def __init__(self, channels, planes, stride):
        """Two 3x3 convolutions to `planes` channels, the first with `stride`."""
        super().__init__()
        self.conv1 = nn.Conv2d(channels, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = _downsample(channels, planes, stride)

    def forward(self, x):
        """The two convolutions plus the (downsampled) input, then ReLU."""
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        out += identity
        return self.relu(out)


class Bottleneck(nn.Module):
    """ResNet-50 block (v1.5, stride on the 3x3): 1x1, 3x3, 1x1 x4 convolutions with batch
    norm, `downsample` when the shape changes, ReLU after the addition."""

    expansion = 4

    def __init__(self, channels, planes, stride, dilation=1):
        """1x1 to `planes`, 3x3 with `stride` (and `dilation`), 1x1 to 4 x `planes` channels."""
        super().__init__()
        self.conv1 = nn.Conv2d(channels, planes, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=dilation, dilation=dilation,
                               bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = _downsample(channels, planes * 4, stride)

    def forward(self, x):
        """The three convolutions plus the (downsampled) input, then ReLU."""
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        out += identity
        return self.relu(out)


def _downsample(channels, out, stride):
    """The 1x1 convolution + batch norm that matches a shortcut to the block's output, or None."""
    if stride == 1 and channels == out:
        return None
    return nn.Sequential(nn.Conv2d(channels, out, kernel_size=1, stride=stride, bias=False), nn.BatchNorm2d(out))


class ResNet(nn.Module):
    """ResNet: `conv1`, `bn1`, `relu`, `maxpool`, `layer1`...`layer4` of blocks, `avgpool`, `fc`."""

    def __init__(self, block, counts, classes=1000, width=1.0):
        """Stem, four stages of `counts` blocks of type `block`, pooling and the classifier."""
        super().__init__()
        stem = scaled(64, width)
        self.conv1 = nn.Conv2d(3, stem, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(stem)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        channels = stem
        for stage, (planes, count) in enumerate(zip((64, 128, 256, 512), counts)):
            blocks = []
            for index in range(count):
                blocks.append(block(channels, scaled(planes, width), 2 if stage > 0 and index == 0 else 1))
                channels = scaled(planes, width) * block.expansion
            setattr(self, f"layer{stage + 1}", nn.Sequential(*blocks))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        """Stem, stages, global average pooling, flatten, fc."""
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class ConvBN(nn.Module):
    """Inception v3's and GoogLeNet's unit (torchvision's `BasicConv2d`): convolution without bias,
    batch norm (epsilon 0.001), ReLU."""

    def __init__(self, channels, out, kernel_size, stride=1, padding=0):
        """A bias-free convolution and its batch norm."""
        super().__init__()
        self.conv = nn.Conv2d(channels, out, kernel_size=kernel_size, stride=stride, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out, eps=0.001)

    def forward(self, x):
        """relu(bn(conv(x)))."""
        return F.relu(self.bn(self.conv(x)), inplace=True)


class InceptionA(nn.Module):
    """35x35 block: 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | avgpool(3, pads counted)-1x1."""

    def __init__(self, channels, pool_features, s):
        """The four branches; `s` scales channel counts."""
        super().__init__()
        self.branch1x1 = ConvBN(channels, s(64), 1)
        self.branch5x5_1 = ConvBN(channels, s(48), 1)
        self.branch5x5_2 = ConvBN(s(48), s(64), 5, padding=2)
        self.branch3x3dbl_1 = ConvBN(channels, s(64), 1)
        self.branch3x3dbl_2 = ConvBN(s(64), s(96), 3, padding=1)
        self.branch3x3dbl_3 = ConvBN(s(96), s(96), 3, padding=1)
        self.branch_pool = ConvBN(channels, s(pool_features), 1)
        self.out_channels = s(64) + s(64) + s(96) + s(pool_features)

    def forward(self, x):
        """The branches concatenated along the channels."""
        a = self.branch1x1(x)
        b = self.branch5x5_2(self.branch5x5_1(x))
        c = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        d = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([a, b, c, d], 1)


class InceptionB(nn.Module):
    """Reduction 35 -> 17: 3x3/2 | 1x1-3x3-3x3/2 | maxpool 3/2."""

    def __init__(self, channels, s):
        """The three branches; `s` scales channel counts."""
        super().__init__()
        self.branch3x3 = ConvBN(channels, s(384), 3, stride=2)
        self.branch3x3dbl_1 = ConvBN(channels, s(64), 1)
        self.branch3x3dbl_2 = ConvBN(s(64), s(96), 3, padding=1)
        self.branch3x3dbl_3 = ConvBN(s(96), s(96), 3, stride=2)
        self.out_channels = s(384) + s(96) + channels

    def forward(self, x):
        """The branches concatenated along the channels."""
        a = self.branch3x3(x)
        b = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        c = F.max_pool2d(x, kernel_size=3, stride=2)
        return torch.cat([a, b, c], 1)


class InceptionC(nn.Module):
    """17x17 block with factorised 7x7: 1x1 | 1x1-1x7-7x1 | 1x1-7x1-1x7-7x1-1x7 | avgpool-1x1."""

    def __init__(self, channels, channels_7x7, s):
        """The four branches with `channels_7x7` inner channels; `s` scales channel counts."""
        super().__init__()
        c7 = s(channels_7x7)
        self.branch1x1 = ConvBN(channels, s(192), 1)
        self.branch7x7_1 = ConvBN(channels, c7, 1)
        self.branch7x7_2 = ConvBN(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = ConvBN(c7, s(192), (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = ConvBN(channels, c7, 1)
        self.branch7x7dbl_2 = ConvBN(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = ConvBN(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = ConvBN(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = ConvBN(c7, s(192), (1, 7), padding=(0, 3))
        self.branch_pool = ConvBN(channels, s(192), 1)
        self.out_channels = 4 * s(192)

    def forward(self, x):
        """The branches concatenated along the channels."""
        a = self.branch1x1(x)
        b = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        c = self.branch7x7dbl_1(x)
        c = self.branch7x7dbl_5(self.branch7x7dbl_4(self.branch7x7dbl_3(self.branch7x7dbl_2(c))))
        d = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([a, b, c, d], 1)


class InceptionD(nn.Module):
    """Reduction 17 -> 8: 1x1-3x3/2 | 1x1-1x7-7x1-3x3/2 | maxpool 3/2."""

    def __init__(self, channels, s):
        """The three branches; `s` scales channel counts."""
        super().__init__()
        self.branch3x3_1 = ConvBN(channels, s(192), 1)
        self.branch3x3_2 = ConvBN(s(192), s(320), 3, stride=2)
        self.branch7x7x3_1 = ConvBN(channels, s(192), 1)
        self.branch7x7x3_2 = ConvBN(s(192), s(192), (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = ConvBN(s(192), s(192), (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = ConvBN(s(192), s(192), 3, stride=2)
        self.out_channels = s(320) + s(192) + channels

    def forward(self, x):
        """The branches concatenated along the channels."""
        a = self.branch3x3_2(self.branch3x3_1(x))
        b = self.branch7x7x3_4(self.branch7x7x3_3(self.branch7x7x3_2(self.branch7x7x3_1(x))))
        c = F.max_pool2d(x, kernel_size=3, stride=2)
        return torch.cat([a, b, c], 1)


class InceptionE(nn.Module):
    """8x8 block with split 1x3 / 3x1 outputs: 1x1 | 1x1-(1x3, 3x1) | 1x1-3x3-(1x3, 3x1) | avgpool-1x1."""

    def __init__(self, channels, s):
        """The four branches; `s` scales channel counts."""
        super().__init__()
        self.branch1x1 = ConvBN(channels, s(320), 1)
        self.branch3x3_1 = ConvBN(channels, s(384), 1)
        self.branch3x3_2a = ConvBN(s(384), s(384), (1, 3), padding=(0, 1))
        self.branch3x3_2b = ConvBN(s(384), s(384), (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = ConvBN(channels, s(448), 1)
        self.branch3x3dbl_2 = ConvBN(s(448), s(384), 3, padding=1)
        self.branch3x3dbl_3a = ConvBN(s(384), s(384), (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = ConvBN(s(384), s(384), (3, 1), padding=(1, 0))
        self.branch_pool = ConvBN(channels, s(192), 1)
        self.out_channels = s(320) + 4 * s(384) + s(192)

    def forward(self, x):
        """The branches concatenated along the channels (the split branches first joined themselves)."""
        a = self.branch1x1(x)
        b = self.branch3x3_1(x)
        b = torch.cat([self.branch3x3_2a(b), self.branch3x3_2b(b)], 1)
        c = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        c = torch.cat([self.branch3x3dbl_3a(c), self.branch3x3dbl_3b(c)], 1)
        d = self.branch_pool(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))
        return torch.cat([a, b, c, d], 1)


class InceptionV3(nn.Module):
    """Inception-v3 as torchvision's `inception_v3(aux_logits=False, transform_input=False)`."""

    def __init__(self, classes=1000, width=1.0):
        """The stem, the eleven Mixed blocks, pooling and the classifier, scaled by `width`."""
        super().__init__()
        s = lambda channels: scaled(channels, width)  # noqa: E731
        self.Conv2d_1a_3x3 = ConvBN(3, s(32), 3, stride=2)
        self.Conv2d_2a_3x3 = ConvBN(s(32), s(32), 3)
        self.Conv2d_2b_3x3 = ConvBN(s(32), s(64), 3, padding=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b_1x1 = ConvBN(s(64), s(80), 1)
        self.Conv2d_4a_3x3 = ConvBN(s(80), s(192), 3)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        channels = s(192)
        blocks = [("Mixed_5b", InceptionA, (32,)), ("Mixed_5c", InceptionA, (64,)), ("Mixed_5d", InceptionA, (64,)),
                  ("Mixed_6a", InceptionB, ()), ("Mixed_6b", InceptionC, (128,)), ("Mixed_6c", InceptionC, (160,)),
                  ("Mixed_6d", InceptionC, (160,)), ("Mixed_6e", InceptionC, (192,)),
                  ("Mixed_7a", InceptionD, ()), ("Mixed_7b", InceptionE, ()), ("Mixed_7c", InceptionE, ())]
        for name, kind, options in blocks:
            block = kind(channels, *options, s)
            setattr(self, name, block)
            channels = block.out_channels
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=0.5)
        self.fc = nn.Linear(channels, classes)
        self._blocks = [name for name, _, _ in blocks]

    def forward(self, x):
        """Stem, Mixed blocks, global average pooling, dropout, fc."""
        x = self.maxpool1(self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x))))
        x = self.maxpool2(self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(x)))
        for name in self._blocks:
            x = getattr(self, name)(x)
        x = self.dropout(self.avgpool(x))
        return self.fc(torch.flatten(x, 1))


def tf_same_pads(size, kernel, stride):
    """TensorFlow SAME padding along one axis: (before, after), the smaller half before."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


class MobileNetV1(nn.Module):
    """MobileNet v1 (Howard et al. 2017) as Keras builds it: 3x3/2 convolution, then 13
    depthwise-separable blocks, each depthwise 3x3 and pointwise 1x1 without bias and
    followed by batch norm (epsilon 0.001) and ReLU6; global average pooling and a 1x1
    convolution to the classes (`conv_preds`). TensorFlow SAME padding: the stem pads as
    SAME, stride-2 depthwise convolutions pad one row and column at the bottom/right.

    Module names are Keras's layer names: `conv1`, `conv1_bn`, `conv_dw_N`, `conv_dw_N_bn`,
    `conv_pw_N`, `conv_pw_N_bn` (N = 1...13), `conv_preds`.
    """

    BLOCKS = ((64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
              (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1))

    def __init__(self, classes=1000, alpha=1.0, depth_multiplier=1, input_size=224):
        """The blocks for input images of `input_size` (the stem's SAME padding depends on it)."""
        super().__init__()
        channels = scaled(32, alpha)
        before, after = tf_same_pads(input_size, 3, 2)
        self.conv1_pad = nn.ZeroPad2d((before, after, before, after))
        self.conv1 = nn.Conv2d(3, channels, kernel_size=3, stride=2, bias=False)
        self.conv1_bn = nn.BatchNorm2d(channels, eps=0.001)
        self.conv1_relu = nn.ReLU6()
        for block, (filters, stride) in enumerate(self.BLOCKS, 1):
            if stride == 2:
                setattr(self, f"conv_pad_{block}", nn.ZeroPad2d((0, 1, 0, 1)))
            spread = channels * depth_multiplier
            setattr(self, f"conv_dw_{block}", nn.Conv2d(channels, spread, kernel_size=3, stride=stride,
                                                        padding=1 if stride == 1 else 0, groups=channels, bias=False))
            setattr(self, f"conv_dw_{block}_bn", nn.BatchNorm2d(spread, eps=0.001))
            setattr(self, f"conv_dw_{block}_relu", nn.ReLU6())
            channels = scaled(filters, alpha)
            setattr(self, f"conv_pw_{block}", nn.Conv2d(spread, channels, kernel_size=1, bias=False))
            setattr(self, f"conv_pw_{block}_bn", nn.BatchNorm2d(channels, eps=0.001))
            setattr(self, f"conv_pw_{block}_relu", nn.ReLU6())
        self.global_pool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=0.001)
        self.conv_preds = nn.Conv2d(channels, classes, kernel_size=1)

    def forward(self, x):
        """Stem, the 13 separable blocks, pooling, the 1x1 classifier, flattened."""
        x = self.conv1_relu(self.conv1_bn(self.conv1(self.conv1_pad(x))))
        for block, (_, stride) in enumerate(self.BLOCKS, 1):
            if stride == 2:
                x = getattr(self, f"conv_pad_{block}")(x)
            for kind in ("dw", "pw"):
                name = f"conv_{kind}_{block}"
                x = getattr(self, f"{name}_relu")(getattr(self, f"{name}_bn")(getattr(self, name)(x)))
        x = self.conv_preds(self.dropout(self.global_pool(x)))
        return torch.flatten(x, 1)


class GoogLeNetInception(nn.Module):
    """GoogLeNet's inception block: 1x1 | 1x1-3x3 | 1x1-3x3 (torchvision's "5x5" branch is a
    3x3) | maxpool 3/1 (ceil mode)-1x1, concatenated."""

    def __init__(self, channels, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj):
        """The four branches with these (already scaled) channel counts."""
        super().__init__()
        self.branch1 = ConvBN(channels, ch1x1, 1)
        self.branch2 = nn.Sequential(ConvBN(channels, ch3x3red, 1), ConvBN(ch3x3red, ch3x3, 3, padding=1))
        self.branch3 = nn.Sequential(ConvBN(channels, ch5x5red, 1), ConvBN(ch5x5red, ch5x5, 3, padding=1))
        self.branch4 = nn.Sequential(nn.MaxPool2d(kernel_size=3, stride=1, padding=1, ceil_mode=True),
                                     ConvBN(channels, pool_proj, 1))
        self.out_channels = ch1x1 + ch3x3 + ch5x5 + pool_proj

    def forward(self, x):
        """The branches concatenated along the channels."""
        return torch.cat([self.branch1(x), self.branch2(x), self.branch3(x), self.branch4(x)], 1)


class GoogLeNet(nn.Module):
    """GoogLeNet (Inception v1) as torchvision's `googlenet(aux_logits=False, transform_input=False)`."""

    BLOCKS = (("inception3a", (64, 96, 128, 16, 32, 32)), ("inception3b", (128, 128, 192, 32, 96, 64)), "maxpool3",
              ("inception4a", (192, 96, 208, 16, 48, 64)), ("inception4b", (160, 112, 224, 24, 64, 64)),
              ("inception4c", (128, 128, 256, 24, 64, 64)), ("inception4d", (112, 144, 288, 32, 64, 64)),
              ("inception4e", (256, 160, 320, 32, 128, 128)), "maxpool4",
              ("inception5a", (256, 160, 320, 32, 128, 128)), ("inception5b", (384, 192, 384, 48, 128, 128)))

    def __init__(self, classes=1000, width=1.0):
        """The stem, nine inception blocks, pooling and the classifier, channels scaled by `width`."""
        super().__init__()
        s = lambda channels: scaled(channels, width)  # noqa: E731
        self.conv1 = ConvBN(3, s(64), 7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.conv2 = ConvBN(s(64), s(64), 1)
        self.conv3 = ConvBN(s(64), s(192), 3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        channels = s(192)
        for item in self.BLOCKS:
            if item == "maxpool3":
                self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
            elif item == "maxpool4":
                self.maxpool4 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
            else:
                block = GoogLeNetInception(channels, *(s(c) for c in item[1]))
                setattr(self, item[0], block)
                channels = block.out_channels
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=0.2)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        """Stem, inception blocks and pools, global average pooling, dropout, fc."""
        x = self.maxpool2(self.conv3(self.conv2(self.maxpool1(self.conv1(x)))))
        for item in self.BLOCKS:
            x = getattr(self, item if isinstance(item, str) else item[0])(x)
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(self.dropout(x))


class DilatedResNet50Backbone(nn.Module):
    """torchvision's `resnet50(replace_stride_with_dilation=[False, True, True])` without
    `avgpool` and `fc`: layers 3 and 4 keep the resolution (output stride 8) and dilate their
    3x3 convolutions by 2 and 4 instead (each stage's first block by the previous dilation)."""

    def __init__(self, width=1.0):
        """Stem and the four bottleneck stages, channels scaled by `width`."""
        super().__init__()
        stem = scaled(64, width)
        self.conv1 = nn.Conv2d(3, stem, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(stem)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        channels, dilation = stem, 1
        for stage, (planes, count, dilate) in enumerate(zip((64, 128, 256, 512), (3, 4, 6, 3), (False, False, True, True))):
            stride, previous = (2 if stage > 0 else 1), dilation
            if dilate:
                dilation, stride = dilation * stride, 1
            blocks = []
            for index in range(count):
                blocks.append(Bottleneck(channels, scaled(planes, width), stride if index == 0 else 1,
                                         previous if index == 0 else dilation))
                channels = scaled(planes, width) * 4
            setattr(self, f"layer{stage + 1}", nn.Sequential(*blocks))
        self.out_channels = channels

    def forward(self, x):
        """Stem and stages: (N, 2048 x width, H/8, W/8)."""
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        return self.layer4(self.layer3(self.layer2(self.layer1(x))))


class FCNResNet50(nn.Module):
    """FCN (Long et al. 2015) as torchvision's `fcn_resnet50(aux_loss=False)`: the dilated
    ResNet-50 `backbone`, the `classifier` head (3x3 convolution to 512 channels, batch norm,
    ReLU, dropout, 1x1 convolution to the classes) and bilinear upsampling
    (`align_corners=False`) to the input size. Returns the `"out"` map as a tensor (torchvision
    returns a dict)."""

    def __init__(self, classes=21, width=1.0):
        """Backbone and head, channels scaled by `width`."""
        super().__init__()
        self.backbone = DilatedResNet50Backbone(width)
        inner = scaled(512, width)
        self.classifier = nn.Sequential(
            nn.Conv2d(self.backbone.out_channels, inner, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(inner),
            nn.ReLU(), nn.Dropout(0.1), nn.Conv2d(inner, classes, kernel_size=1))

    def forward(self, x):
        """Per-pixel class scores (N, classes, H, W)."""
        size = x.shape[-2:]
        x = self.classifier(self.backbone(x))
        return F.interpolate(x, size=size, mode="bilinear", align_corners=False)


def make_divisible(value, divisor=8):
    """torchvision's `_make_divisible`: `value` rounded to the nearest multiple of `divisor`,
    at least `divisor`, and not below 90% of `value`."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def build_network(name, classes=None, width=1.0, input_size=None, use_torchvision=None):
    """A zoo network in eval mode. At width 1 torchvision's own model is used where it has
    one (unless `use_torchvision` is False); otherwise the definitions above. MobileNet v2
    and DenseNet-121 are always torchvision's classes (their constructors take the width).
    `classes` defaults to 1000 (21, PASCAL VOC's, for the segmentation networks)."""
    if name not in ZOO:
        raise ConversionError(f"unknown zoo network '{name}' (one of {', '.join(ZOO)})")
    classes = classes or (21 if name in SEGMENTATION else 1000)
    input_size = input_size or DEFAULT_INPUT_SIZE[name]
    if name in TORCHVISION_SCALABLE:
        models = import_torchvision().models
        if name == "mobilenet_v2":
            module = models.MobileNetV2(num_classes=classes, width_mult=width)
        elif name.startswith("mobilenet_v3"):
            # mobilenet_v3_large(width_mult=...) passes the width on to MobileNetV3, which refuses it:
            # build the block list the builder would (its `_mobilenet_v3_conf`) and the class directly.
            blocks, last_channel = sys.modules["torchvision.models.mobilenetv3"]._mobilenet_v3_conf(name, width_mult=width)
            module = models.MobileNetV3(blocks, last_channel, num_classes=classes)
        elif name == "shufflenet_v2_x1_0":  # stage channels kept even (each block splits them in halves)
            channels = [scaled(24, width)] + [2 * scaled(c // 2, width) for c in (116, 232, 464)] + [scaled(1024, width)]
            module = models.ShuffleNetV2([4, 8, 4], channels, num_classes=classes)
        elif name == "efficientnet_b0":  # as efficientnet_b0() builds it, with the width given
            stages, last_channel = sys.modules["torchvision.models.efficientnet"]._efficientnet_conf(
                name, width_mult=width, depth_mult=1.0)
            module = models.EfficientNet(stages, 0.2, last_channel=last_channel, num_classes=classes)
        else:
            module = models.DenseNet(growth_rate=scaled(32, width), block_config=(6, 12, 24, 16),
                                     num_init_features=scaled(64, width), num_classes=classes)
        return module.eval()
    if use_torchvision is None:
        use_torchvision = width == 1.0 and name not in ("mobilenet_v1", "fcn_resnet50")
    if use_torchvision:
        if width != 1.0 or name == "mobilenet_v1":
            raise ConversionError(f"torchvision has no {name} at width {width}")
        models = import_torchvision().models
        if name == "inception_v3":
            module = models.inception_v3(num_classes=classes, aux_logits=False, transform_input=False, init_weights=False)
        elif name == "googlenet":
            module = models.googlenet(num_classes=classes, aux_logits=False, transform_input=False, init_weights=False)
        elif name == "fcn_resnet50":  # returns a dict: {"out": ...}
            module = models.segmentation.fcn_resnet50(weights=None, weights_backbone=None, num_classes=classes,
                                                      aux_loss=False)
        else:
            module = getattr(models, name)(num_classes=classes)
    elif name == "vgg16":
        module = VGG(classes, width)
    elif name == "mobilenet_v1":
        module = MobileNetV1(classes, alpha=width, input_size=input_size)
    elif name == "inception_v3":
        module = InceptionV3(classes, width)
    elif name == "squeezenet1_1":
        module = SqueezeNet11(classes, width)
    elif name == "resnet18":
        module = ResNet(BasicBlock, (2, 2, 2, 2), classes, width)
    elif name == "googlenet":
        module = GoogLeNet(classes, width)
    elif name == "fcn_resnet50":
        module = FCNResNet50(classes, width)
    else:
        module = ResNet(Bottleneck, (3, 4, 6, 3), classes, width)
    return module.eval()


