#!/usr/bin/env python3
"""ONNX Runtime behind FastAPI + uvicorn, speaking the KServe Open Inference Protocol v2 JSON that
`anvil serve` speaks, and with --grpc-port its gRPC API too (grpcio, with the
inference.GRPCInferenceService stubs tritonclient ships): bench_serve.py's peer server. One
model, one input, one output.

    .venv/bin/python Scripts/benchmarks/ort_kserve_server.py --model resnet50.onnx --name resnet50 --port 8080 --grpc-port 8081 --threads 2

Routes: GET /v2/health/ready, GET /v2/models/{name}, POST /v2/models/{name}/infer (JSON data, flat
or nested; the output returned flat). Errors are {"error": "..."} with 400/404. The session uses
intra_op_num_threads=--threads and runs one request at a time (ONNX Runtime parallelises inside
each run; concurrent runs on the same cores would only contend), in a worker thread so the event
loop keeps reading requests meanwhile. No batching across requests.

gRPC (ServerLive, ServerReady, ModelReady, ModelMetadata, ModelInfer with raw_input_contents or
fp32_contents, the output in raw_output_contents as Triton answers): a grpcio server whose
handler threads share the same session and lock.
"""

import argparse
import json
import os
import sys
import threading
from concurrent import futures

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peerbench.engines import ort_session  # noqa: E402 - the session bench_peers times


def build_app(session, lock, name):
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, Response
    from starlette.concurrency import run_in_threadpool

    model_input = session.get_inputs()[0]
    model_output = session.get_outputs()[0]
    app = FastAPI()

    def error(status, message):
        return JSONResponse({"error": message}, status_code=status)

    def shape_of(dims):
        return [d if isinstance(d, int) else -1 for d in dims]

    @app.get("/v2/health/ready")
    def ready():
        return {"ready": True}

    @app.get("/v2/models/{model}")
    def metadata(model: str):
        if model != name:
            return error(404, f"unknown model '{model}'")
        return {"name": name, "platform": "onnxruntime",
                "inputs": [{"name": model_input.name, "datatype": "FP32", "shape": shape_of(model_input.shape)}],
                "outputs": [{"name": model_output.name, "datatype": "FP32", "shape": shape_of(model_output.shape)}]}

    def run(array):
        with lock:
            return session.run([model_output.name], {model_input.name: array})[0]

    @app.post("/v2/models/{model}/infer")
    async def infer(model: str, request: Request):
        if model != name:
            return error(404, f"unknown model '{model}'")
        try:
            payload = json.loads(await request.body())
            tensor = payload["inputs"][0]
            if tensor.get("datatype") != "FP32":
                return error(400, "datatype must be FP32")
            array = np.asarray(tensor["data"], dtype=np.float32).reshape(tensor["shape"])
        except (ValueError, KeyError, IndexError, TypeError) as problem:
            return error(400, f"malformed request: {problem}")
        output = await run_in_threadpool(run, array)
        body = {"model_name": name, "outputs": [{"name": model_output.name, "datatype": "FP32",
                                                 "shape": list(output.shape), "data": output.ravel().tolist()}]}
        if "id" in payload:
            body["id"] = payload["id"]
        return Response(json.dumps(body), media_type="application/json")

    return app


def start_grpc(session, lock, name, host, port, workers):
    """A grpcio server of inference.GRPCInferenceService on `port`, started; returns it."""
    import grpc
    from tritonclient.grpc import service_pb2, service_pb2_grpc

    model_input = session.get_inputs()[0]
    model_output = session.get_outputs()[0]

    def shape_of(dims):
        return [d if isinstance(d, int) else -1 for d in dims]

    class Servicer(service_pb2_grpc.GRPCInferenceServiceServicer):
        def ServerLive(self, request, context):
            return service_pb2.ServerLiveResponse(live=True)

        def ServerReady(self, request, context):
            return service_pb2.ServerReadyResponse(ready=True)

        def ModelReady(self, request, context):
            return service_pb2.ModelReadyResponse(ready=request.name == name)

        def ModelMetadata(self, request, context):
            if request.name != name:
                context.abort(grpc.StatusCode.NOT_FOUND, f"unknown model '{request.name}'")
            tensor = service_pb2.ModelMetadataResponse.TensorMetadata
            return service_pb2.ModelMetadataResponse(
                name=name, platform="onnxruntime",
                inputs=[tensor(name=model_input.name, datatype="FP32", shape=shape_of(model_input.shape))],
                outputs=[tensor(name=model_output.name, datatype="FP32", shape=shape_of(model_output.shape))])

        def ModelInfer(self, request, context):
            if request.model_name != name:
                context.abort(grpc.StatusCode.NOT_FOUND, f"unknown model '{request.model_name}'")
            try:
                tensor = request.inputs[0]
                if tensor.datatype != "FP32":
                    raise ValueError("datatype must be FP32")
                if request.raw_input_contents:
                    array = np.frombuffer(request.raw_input_contents[0], dtype=np.float32)
                else:
                    array = np.asarray(tensor.contents.fp32_contents, dtype=np.float32)
                array = array.reshape(list(tensor.shape))
            except (ValueError, IndexError) as problem:
                context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed request: {problem}")
            with lock:
                output = session.run([model_output.name], {model_input.name: array})[0]
            output = np.ascontiguousarray(output, dtype=np.float32)
            answer = service_pb2.ModelInferResponse.InferOutputTensor(name=model_output.name, datatype="FP32", shape=list(output.shape))
            return service_pb2.ModelInferResponse(model_name=name, id=request.id, outputs=[answer],
                                                  raw_output_contents=[output.tobytes()])

    limit = [("grpc.max_receive_message_length", 1 << 30), ("grpc.max_send_message_length", 1 << 30)]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=workers), options=limit)
    service_pb2_grpc.add_GRPCInferenceServiceServicer_to_server(Servicer(), server)
    server.add_insecure_port(f"{host}:{port}")
    server.start()
    return server


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--grpc-port", type=int, help="also serve gRPC on this port")
    parser.add_argument("--grpc-workers", type=int, default=64, help="grpcio handler threads (one per concurrent call)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import uvicorn
    session = ort_session(args.model, args.threads)
    lock = threading.Lock()
    grpc_server = start_grpc(session, lock, args.name, args.host, args.grpc_port, args.grpc_workers) if args.grpc_port else None
    try:
        uvicorn.run(build_app(session, lock, args.name), host=args.host, port=args.port, log_level="warning", access_log=False)
    finally:
        if grpc_server is not None:
            grpc_server.stop(grace=5)


if __name__ == "__main__":
    main()
