"""Triton's own Python clients (tritonclient.http and tritonclient.grpc) against a running
`anvil serve`: every method of the KServe v2 API and of Triton's configuration, statistics and
repository extensions, bad requests answered with the protocol's status, and concurrent clients
of both protocols served meanwhile. Run by TritonClientTests.swift, which starts the server and
gives the expected outputs (the model's own predict); prints one line per check and exits 1 if
any failed.

    python3 triton_client_check.py --http-port P --grpc-port Q --model mnist --repository-model digits \
        --inputs in.f32 --expected out.f32 --max-message-bytes N [--typed-model tokens --typed-dir DIR]

With --typed-model, also a model of INT64 token ids and a BOOL mask in, INT64 indices and a BOOL
mask out (ServeFixtures.tokens): DIR holds tokens.i64, keep.bool (2 x 5, little-endian) and the
model's own outputs ids.i64, mask.bool.
"""
import argparse
import concurrent.futures
import signal
import sys

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

passed, failed = 0, 0


def check(what, condition, detail=""):
    global passed, failed
    if condition:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}: {detail}")


def refused(what, call, status, fragment):
    """`call` must raise InferenceServerException with `status` and a message holding `fragment`."""
    try:
        call()
    except InferenceServerException as error:
        check(what, str(error.status()) == status and fragment in (error.message() or ""),
              f"status {error.status()}, message {error.message()!r}")
        return
    check(what, False, "no error")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--http-port", "--grpc-port", "--max-message-bytes"):
        parser.add_argument(name, type=int, required=True)
    for name in ("--model", "--repository-model", "--inputs", "--expected"):
        parser.add_argument(name, required=True)
    parser.add_argument("--typed-model")
    parser.add_argument("--typed-dir")
    args = parser.parse_args()
    # Bounded: a server that stops answering fails the check instead of hanging the suite.
    signal.alarm(900)
    model, digits = args.model, args.repository_model
    images = np.fromfile(args.inputs, dtype=np.float32).reshape(-1, 28, 28, 1)
    expected = np.fromfile(args.expected, dtype=np.float32).reshape(len(images), 10)
    http = httpclient.InferenceServerClient(f"127.0.0.1:{args.http_port}", concurrency=8)
    grpc = grpcclient.InferenceServerClient(f"127.0.0.1:{args.grpc_port}")
    successes = 0

    def infer(client, module, batch, binary=True):
        nonlocal successes
        tensor = module.InferInput("image", list(batch.shape), "FP32")
        if module is httpclient:
            tensor.set_data_from_numpy(batch, binary_data=binary)
            outputs = [module.InferRequestedOutput("probabilities", binary_data=binary)]
        else:
            tensor.set_data_from_numpy(batch)
            outputs = [module.InferRequestedOutput("probabilities")]
        result = client.infer(model, [tensor], outputs=outputs, request_id="check")
        successes += 1
        return result.as_numpy("probabilities")

    for name, client in (("http", http), ("grpc", grpc)):
        check(f"{name} server live", client.is_server_live())
        check(f"{name} server ready", client.is_server_ready())
        check(f"{name} model ready", client.is_model_ready(model))
        metadata = client.get_server_metadata()
        extensions = metadata["extensions"] if name == "http" else list(metadata.extensions)
        check(f"{name} server metadata", {"model_configuration", "statistics", "model_repository"} <= set(extensions), extensions)
        metadata = client.get_model_metadata(model)
        inputs = metadata["inputs"] if name == "http" else [{"name": i.name, "shape": list(i.shape)} for i in metadata.inputs]
        check(f"{name} model metadata", inputs[0]["name"] == "image" and list(inputs[0]["shape"]) == [-1, 28, 28, 1], inputs)
        config = client.get_model_config(model)
        config = config if name == "http" else {"max_batch_size": config.config.max_batch_size,
                                                 "input": [{"dims": list(config.config.input[0].dims)}],
                                                 "dynamic_batching": {"preferred_batch_size": list(config.config.dynamic_batching.preferred_batch_size)}}
        check(f"{name} model config", config["max_batch_size"] == 8 and list(config["input"][0]["dims"]) == [28, 28, 1]
              and list(config["dynamic_batching"]["preferred_batch_size"]) == [8], config)

    module = {"http": httpclient, "grpc": grpcclient}
    for name, client in (("http", http), ("grpc", grpc)):
        got = infer(client, module[name], images)
        check(f"{name} infer, a batch of {len(images)}: the model's own outputs", np.array_equal(got, expected),
              np.abs(got - expected).max())
        check(f"{name} infer: the digits", list(got.argmax(1)) == list(expected.argmax(1)))
    got = infer(http, httpclient, images[:2], binary=False)
    check("http infer in JSON", np.array_equal(got, expected[:2]))

    # Bad requests, each followed by a good one.
    wrong_shape = images.reshape(-1, 28, 28)
    for name, client in (("http", http), ("grpc", grpc)):
        invalid, not_found = ("400", "404") if name == "http" else ("StatusCode.INVALID_ARGUMENT", "StatusCode.NOT_FOUND")
        tensor = module[name].InferInput("image", list(wrong_shape.shape), "FP32")
        tensor.set_data_from_numpy(wrong_shape)
        refused(f"{name} wrong shape", lambda: client.infer(model, [tensor]), invalid, "[N, 28, 28, 1]")
        ints = images.astype(np.int32)
        tensor = module[name].InferInput("image", list(ints.shape), "INT32")
        tensor.set_data_from_numpy(ints)
        refused(f"{name} wrong datatype", lambda: client.infer(model, [tensor]), invalid, "datatype 'INT32'")
        tensor = module[name].InferInput("image", list(images.shape), "FP32")
        tensor.set_data_from_numpy(images)
        refused(f"{name} unknown model", lambda: client.infer("resnet", [tensor]), not_found, "unknown model 'resnet'")
        refused(f"{name} unknown model's config", lambda: client.get_model_config("resnet"), not_found, "resnet")
        refused(f"{name} load of a model the repository lacks", lambda: client.load_model("nothing"), not_found, "nothing")
        check(f"{name} serving after bad requests", np.array_equal(infer(client, module[name], images), expected))
    too_many = np.zeros((args.max_message_bytes // (28 * 28 * 4) + 1, 28, 28, 1), dtype=np.float32)
    tensor = grpcclient.InferInput("image", list(too_many.shape), "FP32")
    tensor.set_data_from_numpy(too_many)
    refused("grpc message over the limit", lambda: grpc.infer(model, [tensor]), "StatusCode.RESOURCE_EXHAUSTED", "")
    check("grpc serving after an over-large message", np.array_equal(infer(grpc, grpcclient, images), expected))

    if args.typed_model:
        check_typed(args.typed_model, args.typed_dir, http, grpc)

    # Concurrent clients of both protocols, one image each.
    # Each thread its own client: tritonclient.http's (gevent) cannot be shared across threads.
    def one(index):
        name = "http" if index % 2 == 0 else "grpc"
        client = (httpclient.InferenceServerClient(f"127.0.0.1:{args.http_port}") if name == "http"
                  else grpcclient.InferenceServerClient(f"127.0.0.1:{args.grpc_port}"))
        row = index % len(images)
        got = infer(client, module[name], images[row:row + 1])
        # Batched with other clients' images: equal up to the last bits where the summation
        # order depends on the batch size (docs/errors.md, "Determinism").
        return bool(np.allclose(got, expected[row:row + 1], rtol=1e-5, atol=1e-7) and got.argmax() == expected[row].argmax())
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(32)))
    check("32 requests from 8 concurrent clients, both protocols", all(results), results)

    # Statistics count what was sent (the failures: the bad requests to the served model).
    for name, client in (("http", http), ("grpc", grpc)):
        stats = client.get_inference_statistics(model)
        if name == "http":
            entry = stats["model_stats"][0]
            success, fail, count = entry["inference_stats"]["success"]["count"], entry["inference_stats"]["fail"]["count"], entry["inference_count"]
            queue = entry["inference_stats"]["queue"]["count"]
        else:
            entry = stats.model_stats[0]
            success, fail, count, queue = entry.inference_stats.success.count, entry.inference_stats.fail.count, entry.inference_count, entry.inference_stats.queue.count
        check(f"{name} statistics: {successes} successes, 4 failures", int(success) == successes and int(fail) == 4 and int(queue) == successes,
              (success, fail, queue))
        check(f"{name} statistics: inference count", int(count) > successes, count)

    # The model repository: index, unload, load, without a restart.
    def states(client, name):
        index = client.get_model_repository_index()
        entries = index if name == "http" else [{"name": m.name, "state": m.state} for m in index.models]
        return {entry["name"]: entry["state"] for entry in entries}
    for name, client in (("http", http), ("grpc", grpc)):
        check(f"{name} repository index", states(client, name).get(digits) == "READY", states(client, name))
        client.unload_model(digits)
        check(f"{name} unloaded", states(client, name).get(digits) == "UNAVAILABLE" and not client.is_model_ready(digits), states(client, name))
        client.load_model(digits)
        check(f"{name} loaded again", states(client, name).get(digits) == "READY" and client.is_model_ready(digits), states(client, name))
    tensor = grpcclient.InferInput("image", list(images.shape), "FP32")
    tensor.set_data_from_numpy(images)
    got = grpc.infer(digits, [tensor]).as_numpy("probabilities")
    check("grpc infer on the reloaded repository model", np.array_equal(got, expected))

    print(f"tritonclient checks: {passed} ok, {failed} failed")
    return 1 if failed else 0


def check_typed(typed, folder, http, grpc):
    """INT64 and BOOL tensors both ways, over http (binary and JSON) and grpc: metadata, the
    model's own outputs in their own dtypes, and the refusals of a wrong datatype and of a token
    beyond 2^24 (Anvil computes integers as float32), each followed by a good request."""
    def load(name, dtype):
        return np.fromfile(f"{folder}/{name}", dtype=dtype).reshape(2, 5)
    tokens, keep = load("tokens.i64", "<i8"), load("keep.bool", np.bool_)
    ids, mask = load("ids.i64", "<i8"), load("mask.bool", np.bool_)
    module = {"http": httpclient, "grpc": grpcclient}
    for name, client in (("http", http), ("grpc", grpc)):
        metadata = client.get_model_metadata(typed)
        tensors = (metadata["inputs"] + metadata["outputs"] if name == "http"
                   else [{"name": t.name, "datatype": t.datatype, "shape": list(t.shape)} for t in list(metadata.inputs) + list(metadata.outputs)])
        described = [(t["name"], t["datatype"], list(t["shape"])) for t in tensors]
        check(f"{name} typed model metadata", described == [("tokens", "INT64", [-1, -1]), ("keep", "BOOL", [-1, -1]),
                                                           ("ids", "INT64", [-1, -1]), ("mask", "BOOL", [-1, -1])], described)

    def infer(name, tokens, keep, binary=True, tokens_type="INT64"):
        client, chosen = (http if name == "http" else grpc), module[name]
        inputs = [chosen.InferInput("tokens", list(tokens.shape), tokens_type), chosen.InferInput("keep", list(keep.shape), "BOOL")]
        if chosen is httpclient:
            for tensor, array in zip(inputs, (tokens, keep)):
                tensor.set_data_from_numpy(array, binary_data=binary)
            outputs = [chosen.InferRequestedOutput(output, binary_data=binary) for output in ("ids", "mask")]
        else:
            for tensor, array in zip(inputs, (tokens, keep)):
                tensor.set_data_from_numpy(array)
            outputs = [chosen.InferRequestedOutput(output) for output in ("ids", "mask")]
        result = client.infer(typed, inputs, outputs=outputs)
        return result.as_numpy("ids"), result.as_numpy("mask")

    for name, binary in (("http", True), ("http", False), ("grpc", True)):
        what = f"{name}{'' if binary else ' JSON'} typed infer"
        got_ids, got_mask = infer(name, tokens, keep, binary)
        check(f"{what}: INT64 ids", got_ids.dtype == np.int64 and np.array_equal(got_ids, ids), (got_ids.dtype, got_ids, ids))
        check(f"{what}: BOOL mask", got_mask.dtype == np.bool_ and np.array_equal(got_mask, mask), (got_mask.dtype, got_mask, mask))
    large = tokens.copy()
    large[0, 1] = 2 ** 24 + 1
    for name in ("http", "grpc"):
        invalid = "400" if name == "http" else "StatusCode.INVALID_ARGUMENT"
        refused(f"{name} typed: INT32 tokens", lambda: infer(name, tokens.astype(np.int32), keep, tokens_type="INT32"), invalid,
                "datatype 'INT32'; model 'tokens' takes INT64")
        refused(f"{name} typed: a token beyond 2^24", lambda: infer(name, large, keep), invalid, "element 1 is 16777217, beyond ±2^24")
        check(f"{name} typed: serving after bad requests", np.array_equal(infer(name, tokens, keep)[0], ids))


if __name__ == "__main__":
    sys.exit(main())
