"""Captures real servers' `tools/list` into `shapes.json`, the tool shapes
the catalog benchmark's server (`catalog-server`) serves. Standard library
only: it speaks newline-delimited JSON-RPC to each server over stdio
(`initialize` at 2025-11-25, `notifications/initialized`, `tools/list`
following cursors).

    python3 examples/catalog/capture.py OUT.json NAME=COMMAND... 

`cargo xtask catalog-shapes` installs the pinned servers (peers/catalog/)
and runs it with them.
"""

import json
import shlex
import subprocess
import sys


def capture(name, command):
    p = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)

    def send(msg):
        p.stdin.write(json.dumps(msg) + "\n")
        p.stdin.flush()

    def answer(id_):
        while True:
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"{name}: closed before answering request {id_}")
            msg = json.loads(line)
            if msg.get("id") == id_ and "method" not in msg:
                if "error" in msg:
                    raise SystemExit(f"{name}: {msg['error']}")
                return msg["result"]

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
    p.stdin.close()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
    server = info.get("serverInfo", {})
    return {"server": name, "serverInfo": {"name": server.get("name"), "version": server.get("version")},
            "tools": tools}


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    servers = []
    for spec in specs:
        name, command = spec.split("=", 1)
        s = capture(name, command)
        print(f"{name}: {len(s['tools'])} tools, {len(json.dumps(s['tools']))} bytes", file=sys.stderr)
        servers.append(s)
    with open(out, "w") as f:
        json.dump({"servers": servers}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
