"""A minimal npm registry for the npx test, on 127.0.0.1 at a free port:

    python3 tests/dist/registry.py DIST_NPM_DIR NPM_SOURCES_DIR

Serves the packument (package metadata) of every package packed in DIST_NPM_DIR (*.tgz, read
from their package.json) and of every other platform package in NPM_SOURCES_DIR/platforms,
whose tarballs are not here (like a release built on another machine: npm must skip them by
their os/cpu fields without downloading them). Tarballs are served from /-/<file>.
Prints `REGISTRY http://127.0.0.1:PORT/` first; a 404 for anything else.
"""

import base64
import hashlib
import http.server
import json
import sys
import tarfile
import urllib.parse
from pathlib import Path


def manifest_of(tgz: Path) -> dict:
    with tarfile.open(tgz) as t:
        return json.load(t.extractfile("package/package.json"))


def main() -> None:
    dist, sources = Path(sys.argv[1]), Path(sys.argv[2])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), None)
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    tarballs: dict[str, Path] = {}
    packuments: dict[str, dict] = {}

    def add(manifest: dict, tarball: str, data: bytes | None) -> None:
        version = dict(manifest)
        dist_info = {"tarball": base + "-/" + tarball}
        if data is not None:
            dist_info["shasum"] = hashlib.sha1(data).hexdigest()
            dist_info["integrity"] = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        else:
            # Never fetched when npm honours os/cpu; a download attempt fails the install.
            dist_info["shasum"] = "0" * 40
            dist_info["integrity"] = "sha512-" + base64.b64encode(b"\0" * 64).decode()
        version["dist"] = dist_info
        version["_id"] = f"{manifest['name']}@{manifest['version']}"
        packuments[manifest["name"]] = {
            "name": manifest["name"],
            "dist-tags": {"latest": manifest["version"]},
            "versions": {manifest["version"]: version},
        }

    for tgz in sorted(dist.glob("*.tgz")):
        tarballs[tgz.name] = tgz
        add(manifest_of(tgz), tgz.name, tgz.read_bytes())
    for pkg in sorted((sources / "platforms").glob("*/package.json")):
        manifest = json.loads(pkg.read_text())
        if manifest["name"] not in packuments:
            add(manifest, f"missing-{pkg.parent.name}.tgz", None)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
            if path.startswith("-/") and path[2:] in tarballs:
                body, kind = tarballs[path[2:]].read_bytes(), "application/octet-stream"
            elif path in packuments:
                body, kind = json.dumps(packuments[path]).encode(), "application/json"
            else:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, fmt: str, *args) -> None:
            sys.stderr.write("registry: " + fmt % args + "\n")

    server.RequestHandlerClass = Handler
    print(f"REGISTRY {base}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
