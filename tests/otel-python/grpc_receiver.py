"""A local OTLP/gRPC trace receiver for tests/e2e/otel.rs, on the OpenTelemetry project's own
generated service (opentelemetry-proto) and grpcio.

    python grpc_receiver.py PORT_FILE OUT_FILE

Writes its port to PORT_FILE once it listens, and one JSON line per exported span to OUT_FILE:
its name, span and parent ids, attributes, and the request's metadata.
"""

import json
import os
import sys
from concurrent import futures

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc


def value(v):
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


class Traces(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, out):
        self.out = out

    def Export(self, request, context):
        metadata = dict(context.invocation_metadata())
        with open(self.out, "a") as f:
            for rs in request.resource_spans:
                resource = {a.key: value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        f.write(
                            json.dumps(
                                {
                                    "name": span.name,
                                    "id": span.span_id.hex(),
                                    "parent": span.parent_span_id.hex(),
                                    "attrs": {a.key: value(a.value) for a in span.attributes},
                                    "service": resource.get("service.name"),
                                    "metadata": metadata,
                                }
                            )
                            + "\n"
                        )
        return trace_service_pb2.ExportTraceServiceResponse()


def main():
    port_file, out = sys.argv[1], sys.argv[2]
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(out), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    with open(port_file + ".tmp", "w") as f:
        f.write(str(port))
    os.replace(port_file + ".tmp", port_file)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
