"""A static file server for the install tests: serves DIR on 127.0.0.1 at a free port.

    python3 tests/dist/serve.py DIR [--exit-on-stdin-eof]

Prints `SERVING http://127.0.0.1:PORT` as its first stdout line, logs requests to stderr, and
runs until SIGTERM (or until stdin closes, when asked). Symlinks are followed
(dist/v<version> -> .).
"""

import functools
import http.server
import sys
import threading


def main() -> None:
    directory = sys.argv[1]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    print(f"SERVING http://127.0.0.1:{server.server_address[1]}", flush=True)

    def watch_stdin() -> None:
        sys.stdin.read()
        server.shutdown()

    if "--exit-on-stdin-eof" in sys.argv[2:]:
        threading.Thread(target=watch_stdin, daemon=True).start()
    server.serve_forever()


if __name__ == "__main__":
    main()
