#!/usr/bin/env bash
# Regenerates Sources/AnvilONNX/Proto/onnx.pb.swift from ONNX's onnx.proto (run by hand, never at
# build time; the generated file is committed).
#
#   Scripts/dev/generate_onnx_proto.sh
#
# Needs: protoc (Debian protobuf-compiler), the onnx 1.22.0 wheel (pip install onnx==1.22.0; it
# ships onnx/onnx.proto, the proto2 form, which keeps field presence: a dim_value of 0 and an
# absent one differ), and protoc-gen-swift built from swift-protobuf 1.39.0, the version
# Package.swift pins (generated code and runtime must match):
#   git clone /opt/swift-packages/apple/swift-protobuf.git /tmp/swift-protobuf
#   git -C /tmp/swift-protobuf checkout 1.39.0
#   (cd /tmp/swift-protobuf && swift build -c release --product protoc-gen-swift)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PLUGIN="${PROTOC_GEN_SWIFT:-/tmp/swift-protobuf/.build/release/protoc-gen-swift}"
ONNX_DIR="$(python3 -c 'import onnx, os; assert onnx.__version__ == "1.22.0", onnx.__version__; print(os.path.dirname(onnx.__file__))')"
OUT="$REPO/Sources/AnvilONNX/Proto"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
cp "$ONNX_DIR/onnx.proto" "$STAGE/onnx.proto"
# Internal visibility: the generated types are the importer's business, not Anvil's API.
protoc --plugin=protoc-gen-swift="$PLUGIN" --proto_path="$STAGE" \
  --swift_opt=Visibility=Internal --swift_out="$STAGE" "$STAGE/onnx.proto"
mkdir -p "$OUT"
mv "$STAGE/onnx.pb.swift" "$OUT/onnx.pb.swift"
echo "wrote $OUT/onnx.pb.swift"
