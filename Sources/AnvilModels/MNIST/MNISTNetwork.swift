import Anvil

/// The MNIST digit classifiers Anvil ships definitions for.
public enum MNISTNetwork {
    /// TensorFlow's "Deep MNIST" network, trained by `Scripts/fixtures/train_mnist.py` into `Weights/mnist/`:
    /// input pixels / 255; 3,274,634 parameters; outputs class probabilities.
    ///
    /// With `probabilities: false` the final softmax is left out and the model returns logits.
    public static func deep(probabilities: Bool = true) throws -> Model {
        let input = Input(width: 28, height: 28, channels: 1, name: "image")
        let logits = input
            --> Convolution(kernel: (5, 5), channels: 32, activation: .relu, name: "conv1")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "pool1")
            --> Convolution(kernel: (5, 5), channels: 64, activation: .relu, name: "conv2")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "pool2")
            --> Dense(neurons: 1024, activation: .relu, name: "fc1")
            --> Dense(neurons: 10, name: "fc2")
        return try Model(input: input, output: probabilities ? logits --> Softmax(name: "probabilities") : logits)
    }

    /// Forge's MNIST example network, for the weights Forge itself trained
    /// (`../shared/forge-mnist/`): input raw pixels 0-255; 813,100 parameters.
    public static func forge(probabilities: Bool = true) throws -> Model {
        let input = Input(width: 28, height: 28, channels: 1, name: "image")
        let logits = input
            --> Convolution(kernel: (5, 5), channels: 20, activation: .relu, name: "conv1")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "pool1")
            --> Convolution(kernel: (5, 5), channels: 50, activation: .relu, name: "conv2")
            --> MaxPooling(kernel: (2, 2), stride: (2, 2), name: "pool2")
            --> Dense(neurons: 320, activation: .relu, name: "fc1")
            --> Dense(neurons: 10, name: "fc2")
        return try Model(input: input, output: probabilities ? logits --> Softmax(name: "probabilities") : logits)
    }

    /// The pixel scale each network expects: 1/255 for ``deep(probabilities:)``, 1 for ``forge(probabilities:)``.
    public static func inputScale(forge: Bool) -> Float { forge ? 1 : 1 / 255 }
}
