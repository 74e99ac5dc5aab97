"""Captures real servers' `tools/list` (and their `instructions`) into a
JSON file: the tool shapes the catalog benchmark's server serves
(`shapes.json`), and the tool-search evaluation catalog
(`mcp-tools/tests/search/catalog.json`). Standard library only: it speaks
newline-delimited JSON-RPC to each server over stdio (`initialize` at
2025-11-25, `notifications/initialized`, `tools/list` following cursors).

    python3 examples/catalog/capture.py [--skip-failing] OUT.json NAME=COMMAND...

COMMAND is split as a shell would (no shell runs it); `env K=V prog ...`
sets variables. Each server gets 90 s to answer each request. With
`--skip-failing`, a server that fails is reported and left out instead of
stopping the capture. `cargo xtask catalog-shapes` and `cargo xtask
search-catalog` install the pinned servers and run it with them.
"""

import json
import os
import queue
import shlex
import subprocess
import sys
import threading

TIMEOUT = 90


def capture(name, command):
    p = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, cwd=os.environ.get("CAPTURE_CWD"))
    lines = queue.Queue()

    def pump():
        for line in p.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()

    def send(msg):
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()

    def answer(id_):
        while True:
            try:
                line = lines.get(timeout=TIMEOUT)
            except queue.Empty:
                raise RuntimeError(f"{name}: no answer to request {id_} in {TIMEOUT} s")
            if line is None:
                raise RuntimeError(f"{name}: closed before answering request {id_}")
            try:
                msg = json.loads(line)
            except ValueError:
                continue  # a log line on stdout
            if msg.get("id") == id_ and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{name}: {msg['error']}")
                return msg["result"]

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "catalog-capture", "version": "0"}}})
        info = answer(1)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        tools, cursor, n = [], None, 2
        while True:
            send({"jsonrpc": "2.0", "id": n, "method": "tools/list",
                  "params": {"cursor": cursor} if cursor is not None else {}})
            page = answer(n)
            tools.extend(page.get("tools", []))
            cursor = page.get("nextCursor")
            n += 1
            if cursor is None:
                break
    finally:
        try:
            p.stdin.close()
            p.wait(timeout=10)
        except (subprocess.TimeoutExpired, BrokenPipeError):
            p.kill()
    server = info.get("serverInfo", {})
    out = {"server": name, "serverInfo": {"name": server.get("name"), "version": server.get("version")}}
    if info.get("instructions"):
        out["instructions"] = info["instructions"]
    out["tools"] = tools
    return out


def main():
    args = sys.argv[1:]
    skip = "--skip-failing" in args
    args = [a for a in args if a != "--skip-failing"]
    out, specs = args[0], args[1:]
    servers = []
    for spec in specs:
        name, command = spec.split("=", 1)
        try:
            s = capture(name, command)
        except (RuntimeError, OSError) as e:
            if not skip:
                raise SystemExit(str(e))
            print(f"{name}: SKIPPED: {e}", file=sys.stderr)
            continue
        print(f"{name}: {len(s['tools'])} tools, {len(json.dumps(s['tools']))} bytes", file=sys.stderr)
        servers.append(s)
    with open(out, "w") as f:
        json.dump({"servers": servers}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
