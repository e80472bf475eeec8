#!/usr/bin/env python3
"""ONNX Runtime behind FastAPI + uvicorn, speaking the KServe Open Inference Protocol v2 JSON that
`anvil serve` speaks: bench_serve.py's peer server. One model, one input, one output.

    python3 Scripts/benchmarks/ort_kserve_server.py --model resnet50.onnx --name resnet50 --port 8081 --threads 2

Routes: GET /v2/health/ready, GET /v2/models/{name}, POST /v2/models/{name}/infer (JSON data, flat
or nested; the output returned flat). Errors are {"error": "..."} with 400/404. The session uses
intra_op_num_threads=--threads and runs one request at a time (ONNX Runtime parallelises inside
each run; concurrent runs on the same cores would only contend), in a worker thread so the event
loop keeps reading requests meanwhile. No batching across requests.
"""

import argparse
import json
import threading

import numpy as np


def build_app(model_path, name, threads):
    import onnxruntime as ort
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, Response
    from starlette.concurrency import run_in_threadpool

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
    model_input = session.get_inputs()[0]
    model_output = session.get_outputs()[0]
    lock = threading.Lock()
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


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    import uvicorn
    uvicorn.run(build_app(args.model, args.name, args.threads), host=args.host, port=args.port, log_level="warning",
                access_log=False)


if __name__ == "__main__":
    main()
