#!/usr/bin/env bash
# Regenerates Sources/AnvilServe/GRPC/Generated/grpc_service.pb.swift (the messages) and
# grpc_service.grpc.swift (the gRPC service and client stubs) from
# Sources/AnvilServe/GRPC/Proto/grpc_service.proto. Run by hand, never at build time; the
# generated files are committed.
#
#   Scripts/dev/generate_grpc_proto.sh
#
# Needs protoc (Debian protobuf-compiler) and two plugins built from the versions Package.swift
# pins (generated code and runtime must match): protoc-gen-swift from swift-protobuf 1.39.0 and
# protoc-gen-grpc-swift-2 from grpc-swift-protobuf 2.4.1. grpc-swift-protobuf's package builds
# both (it resolves swift-protobuf 1.39.0), in a folder outside the repository:
#   git clone /opt/swift-packages/grpc/grpc-swift-protobuf.git /tmp/gen-grpc
#   git -C /tmp/gen-grpc checkout 2.4.1
#   (cd /tmp/gen-grpc && swift build --product protoc-gen-grpc-swift-2 && swift build --product protoc-gen-swift)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PLUGINS="${GRPC_PLUGIN_DIR:-/tmp/gen-grpc/.build/debug}"
PROTO_DIR="$REPO/Sources/AnvilServe/GRPC/Proto"
OUT="$REPO/Sources/AnvilServe/GRPC/Generated"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
# Internal visibility: the generated types are the server's business, not AnvilServe's API.
protoc --plugin=protoc-gen-swift="$PLUGINS/protoc-gen-swift" \
  --plugin=protoc-gen-grpc-swift-2="$PLUGINS/protoc-gen-grpc-swift-2" \
  --proto_path="$PROTO_DIR" \
  --swift_opt=Visibility=Internal --swift_out="$STAGE" \
  --grpc-swift-2_opt=Visibility=Internal --grpc-swift-2_opt=Server=true --grpc-swift-2_opt=Client=true \
  --grpc-swift-2_out="$STAGE" \
  "$PROTO_DIR/grpc_service.proto"
mkdir -p "$OUT"
mv "$STAGE/grpc_service.pb.swift" "$STAGE/grpc_service.grpc.swift" "$OUT/"
echo "wrote $OUT/grpc_service.pb.swift and grpc_service.grpc.swift"
