"""A hostile MCP server (stdio, stdlib only): each tool tries one thing a
sandbox must stop and answers "ok: ..." when it worked or "denied: ..." with
the error when it did not. The tests run it with and without the sandbox.

Tools (all arguments strings):
    read(path)              the file's first 200 bytes
    write(path, text)       writes text to path
    environ(pid)            /proc/<pid>/environ, first 200 bytes
    signal(pid)             SIGCONT to pid (harmless to a running process)
    ptrace(pid)             PTRACE_SEIZE then PTRACE_DETACH
    http_get(url)           urllib GET, through the proxy variables if set
    connect(host, port)     a plain TCP connection, no proxy
    udp(host, port)         one datagram "hostile", then waits 1 s for "ack"
    unix_connect(path)      connects to a Unix socket file
    getenv(name)            the server's own environment variable
    tunnel(host, port)      an HTTP GET through a CONNECT tunnel of the proxy
                            named by HTTPS_PROXY (directly when none is set)
"""

import ctypes
import json
import os
import signal
import socket
import sys
import urllib.request


def attempt(fn):
    try:
        return "ok: " + str(fn())
    except Exception as e:  # the error is the answer
        return "denied: %s: %s" % (type(e).__name__, e)


def read(a):
    with open(a["path"], "rb") as f:
        return f.read(200).decode("utf-8", "replace")


def write(a):
    with open(a["path"], "w") as f:
        f.write(a["text"])
    return "wrote"


def environ(a):
    with open("/proc/%s/environ" % a["pid"], "rb") as f:
        return f.read(200).decode("utf-8", "replace")


def send_signal(a):
    os.kill(int(a["pid"]), signal.SIGCONT)
    return "signalled"


def ptrace(a):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    pid = int(a["pid"])
    if libc.ptrace(0x4206, pid, None, None) != 0:  # PTRACE_SEIZE
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    libc.ptrace(17, pid, None, None)  # PTRACE_DETACH
    return "attached"


def http_get(a):
    with urllib.request.urlopen(a["url"], timeout=15) as r:
        return "%s %s" % (r.status, r.read(200).decode("utf-8", "replace"))


def connect(a):
    with socket.create_connection((a["host"], int(a["port"])), timeout=10):
        return "connected"


def udp(a):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(5)
        s.sendto(b"hostile", (a["host"], int(a["port"])))
        data, _ = s.recvfrom(100)
        return data.decode()


def unix_connect(a):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(a["path"])
        return "connected"


def tunnel(a):
    target = "%s:%s" % (a["host"], a["port"])
    proxy = os.environ.get("HTTPS_PROXY")
    if proxy:
        where = proxy.split("://", 1)[-1].rstrip("/").rsplit(":", 1)
        s = socket.create_connection((where[0], int(where[1])), timeout=15)
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(1)
            if not chunk:
                break
            head += chunk
        status = head.split(b"\r\n", 1)[0].decode()
        if " 200 " not in status + " ":
            s.close()
            raise OSError("proxy refused: " + status)
    else:
        s = socket.create_connection((a["host"], int(a["port"])), timeout=15)
    with s:
        s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.split(b"\r\n\r\n", 1)[-1].decode()


def getenv(a):
    return os.environ.get(a["name"], "")


TOOLS = {
    "getenv": (getenv, ["name"]),
    "tunnel": (tunnel, ["host", "port"]),
    "read": (read, ["path"]),
    "write": (write, ["path", "text"]),
    "environ": (environ, ["pid"]),
    "signal": (send_signal, ["pid"]),
    "ptrace": (ptrace, ["pid"]),
    "http_get": (http_get, ["url"]),
    "connect": (connect, ["host", "port"]),
    "udp": (udp, ["host", "port"]),
    "unix_connect": (unix_connect, ["path"]),
}


def tool_list():
    return [
        {
            "name": name,
            "inputSchema": {
                "type": "object",
                "properties": {p: {"type": "string"} for p in params},
                "required": params,
            },
        }
        for name, (_, params) in TOOLS.items()
    ]


def answer(msg):
    method = msg.get("method")
    if method == "initialize":
        return {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": tool_list()}
    if method == "tools/call":
        fn, _ = TOOLS[msg["params"]["name"]]
        text = attempt(lambda: fn(msg["params"].get("arguments", {})))
        return {"content": [{"type": "text", "text": text}]}
    if method == "ping":
        return {}
    return None


def main():
    ran = os.environ.get("HOSTILE_RAN")
    if ran:  # a test checks that a refused start never ran this
        with open(ran, "w") as f:
            f.write("ran")
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if "id" not in msg or "method" not in msg:
            continue
        result = answer(msg)
        if result is None:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "no such method"}}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
