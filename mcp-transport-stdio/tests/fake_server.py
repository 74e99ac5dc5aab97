#!/usr/bin/env python3
"""A scriptable stdio "MCP server" for mcp-transport-stdio's tests.

Options:
  --banner            print a non-JSON banner line on stdout first
  --ignore-eof        keep running after stdin is closed
  --ignore-term       ignore SIGTERM
  --exit-now CODE MSG write MSG to stderr and exit with CODE before reading

Requests (by method), each answered with a result unless noted:
  echo              {"params": <params>}
  banner            prints a banner line on stdout before the result
  big               first a line of params.mib MiB (a JSON notification)
  stderr_flood      first params.mib MiB written to stderr, 100-byte lines
  crash             writes params.msg to stderr, exits with params.code (no result)
  spawn_grandchild  starts `sleep 1000`; {"pid": <its pid>}; params.hold_pipes
                    keeps our stdout/stderr open in the grandchild
  env               {"env": <environment>}
  endless           the head of a valid answer, then "x" forever (never a newline)
  not_utf8          an answer with an invalid UTF-8 byte in one of its strings
Notifications are ignored. On stdin EOF: exit 0 (unless --ignore-eof).
"""

import json
import os
import signal
import subprocess
import sys
import time

out = sys.stdout.buffer
err = sys.stderr.buffer
args = sys.argv[1:]


def send(obj):
    out.write(json.dumps(obj).encode() + b"\n")
    out.flush()


def reply(req, result):
    send({"jsonrpc": "2.0", "id": req["id"], "result": result})


if "--ignore-term" in args:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "--exit-now" in args:
    i = args.index("--exit-now")
    err.write(args[i + 2].encode() + b"\n")
    err.flush()
    sys.exit(int(args[i + 1]))
if "--banner" in args:
    out.write(b"Fake server v0.1 starting on stdio...\n")
    out.flush()

children = []
for line in iter(sys.stdin.buffer.readline, b""):
    try:
        req = json.loads(line)
    except ValueError:
        continue
    method = req.get("method")
    params = req.get("params") or {}
    if "id" not in req:
        continue
    if method == "echo":
        reply(req, {"params": params})
    elif method == "banner":
        out.write(b"** a banner between messages **\n")
        out.flush()
        reply(req, {})
    elif method == "big":
        size = int(params["mib"] * 1024 * 1024)
        out.write(b'{"jsonrpc":"2.0","method":"notifications/big","params":{"data":"')
        chunk = b"x" * (1024 * 1024)
        left = size
        while left > 0:
            n = min(left, len(chunk))
            out.write(chunk[:n])
            left -= n
        out.write(b'"}}\n')
        out.flush()
        reply(req, {"sent": size})
    elif method == "stderr_flood":
        size = int(params["mib"] * 1024 * 1024)
        line100 = b"e" * 99 + b"\n"
        block = line100 * 10486  # ~1 MiB
        left = size
        while left > 0:
            n = min(left, len(block))
            err.write(block[:n])
            left -= n
        err.flush()
        reply(req, {"flooded": size})
    elif method == "crash":
        err.write(params.get("msg", "crash").encode() + b"\n")
        err.flush()
        os._exit(int(params.get("code", 1)))
    elif method == "spawn_grandchild":
        hold = params.get("hold_pipes", False)
        p = subprocess.Popen(
            ["sleep", "1000"],
            stdin=subprocess.DEVNULL,
            stdout=None if hold else subprocess.DEVNULL,
            stderr=None if hold else subprocess.DEVNULL,
        )
        children.append(p)
        reply(req, {"pid": p.pid})
    elif method == "env":
        reply(req, {"env": dict(os.environ)})
    elif method == "endless":
        head = '{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"'
        out.write((head % json.dumps(req["id"])).encode())
        chunk = b"x" * 65536
        try:
            while True:
                out.write(chunk)
                out.flush()
        except (BrokenPipeError, OSError):
            os._exit(0)
    elif method == "not_utf8":
        head = '{"jsonrpc":"2.0","id":%s,"result":{"t":"caf' % json.dumps(req["id"])
        out.write(head.encode() + b"\xe9" + b'"}}\n')
        out.flush()
    else:
        send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": "no such method"}})

if "--ignore-eof" in args:
    while True:
        time.sleep(1000)
sys.exit(0)
