"""Hostile MCP servers for the `mcp` binary's tests: raw JSON-RPC, no SDK, loopback only.

    python hostile.py text                  stdio: terminal control sequences in every text a server sends
    python hostile.py deep N                stdio: a tool whose inputSchema nests N arrays
    python hostile.py dribble               stdio: answers one byte every 500 ms
    python hostile.py silent-probe          stdio: never answers server/discover (a legacy server that ignores it)
    python hostile.py http-dribble PORT     HTTP on 127.0.0.1:PORT: answer headers at once, body one byte per 500 ms
    python hostile.py http-error PORT       HTTP on 127.0.0.1:PORT: every POST answered 500 with escapes in the body
    python hostile.py echo-meta             stdio: tools/call answers with the request's `_meta` as JSON text
    python hostile.py ask KIND N            stdio: on tools/call, first sends its own request (KIND: `deep`
                                            params nested N deep, `props` a form of N properties, `enum` a
                                            form of one choice among N, `badparams` an elicitation with a
                                            number as its message), waits for the client's answer, and
                                            answers the call with that answer's JSON as its text

Legacy era only: `server/discover` is refused with "method not found", as a 2025 server does.
"""

import json
import sys
import time

# The shapes issue 33 names: OSC 52 (clipboard), OSC 0 (title), CSI 2K + CR
# (a forged line), NUL, C1 CSI, a bidi override, a tag character.
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
OSC0 = "\x1b]0;owned\x07"
FORGE = "\x1b[2K\rmcp: forged line"
NUL = "\x00"
C1 = "\u009b31m"
BIDI = "\u202egnp.exe"
TAG = "\U000e0041"
ALL = OSC52 + OSC0 + FORGE + NUL + C1 + BIDI + TAG


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(req, res):
    send({"jsonrpc": "2.0", "id": req["id"], "result": res})


def error(req, code, message):
    send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": code, "message": message}})


def initialize_result(req, name="hostile", instructions=None):
    res = {
        "protocolVersion": req["params"]["protocolVersion"],
        "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": name, "version": "1.0"},
    }
    if instructions is not None:
        res["instructions"] = instructions
    return res


def serve(handle, answer_probe=True):
    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if "id" not in req or "method" not in req:
            continue
        if req["method"] == "server/discover":
            if answer_probe:
                error(req, -32601, "method not found")
        elif req["method"] == "ping":
            result(req, {})
        else:
            handle(req)


def text_server():
    def handle(req):
        m = req["method"]
        if m == "initialize":
            result(req, initialize_result(req, "hostile" + OSC0, "instructions" + OSC52 + FORGE))
        elif m == "tools/list":
            result(req, {"tools": [
                {"name": "evil" + FORGE, "description": "desc" + OSC52 + BIDI + "\nmore" + TAG,
                 "inputSchema": {"type": "object", "properties": {"a" + C1: {"type": "string"}}}},
                {"name": "refuse", "inputSchema": {"type": "object"}},
            ]})
        elif m == "logging/setLevel":
            result(req, {})
        elif m == "tools/call":
            name = req["params"]["name"]
            token = (req["params"].get("_meta") or {}).get("progressToken")
            if name == "refuse":
                error(req, -32602, "no" + ALL)
                return
            send({"jsonrpc": "2.0", "method": "notifications/message",
                  "params": {"level": "error", "logger": "log" + OSC0, "data": "logged" + ALL}})
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": 1, "total": 2, "message": "half" + ALL}})
            result(req, {"content": [{"type": "text", "text": "out" + ALL}]})
        else:
            error(req, -32601, "method not found")
    serve(handle)


def deep_server(depth):
    schema = "[" * depth + "]" * depth
    tools = '{"tools":[{"name":"deep","inputSchema":{"type":"object","properties":{"x":{"default":%s}}}}]}' % schema

    def handle(req):
        m = req["method"]
        if m == "initialize":
            result(req, initialize_result(req))
        elif m == "tools/list":
            sys.stdout.write('{"jsonrpc":"2.0","id":%s,"result":%s}\n' % (json.dumps(req["id"]), tools))
            sys.stdout.flush()
        else:
            error(req, -32601, "method not found")
    serve(handle)


def dribble_server():
    def handle(req):
        if req["method"] == "initialize":
            text = json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": initialize_result(req)}) + "\n"
            for ch in text:
                sys.stdout.write(ch)
                sys.stdout.flush()
                time.sleep(0.5)
        else:
            error(req, -32601, "method not found")
    serve(handle)


def http_server(port, mode):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if mode == "error":
                data = ("internal trouble" + ALL).encode()
                self.send_response(500)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                return
            if "id" not in body:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if body.get("method") == "initialize":
                res = {"jsonrpc": "2.0", "id": body["id"], "result": initialize_result(body)}
            else:
                res = {"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": "method not found"}}
            data = json.dumps(res).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(0.5)
            except OSError:
                pass

        def do_GET(self):
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_DELETE(self):
            self.do_GET()

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def ask_server(kind, n):
    """Each piece is built by repeating a string: this process stays cheap
    (the tests measure the client's CPU time, and its own counts too)."""
    if kind == "deep":
        params = "[" * n + "]" * n
    elif kind == "props":
        params = ('{"message":"big form","requestedSchema":{"type":"object","properties":{'
                  + ",".join('"f%d":{"type":"string"}' % i for i in range(n)) + "}}}")
    elif kind == "enum":
        params = ('{"message":"big choice","requestedSchema":{"type":"object","properties":'
                  '{"c":{"type":"string","enum":[' + ",".join('"v%d"' % i for i in range(n)) + "]}}}}")
    elif kind == "badparams":
        params = '{"message":5,"requestedSchema":{"type":"object","properties":{}}}'
    else:
        sys.exit("unknown kind " + kind)
    request = '{"jsonrpc":"2.0","id":"srv-1","method":"elicitation/create","params":%s}\n' % params
    pending = {}

    for line in sys.stdin:
        try:
            req = json.loads(line)
        except ValueError:
            continue
        if req.get("id") == "srv-1" and "method" not in req:
            call = pending.pop("call", None)
            if call is not None:
                result(call, {"content": [{"type": "text", "text": json.dumps(req, sort_keys=True)}]})
            continue
        if "id" not in req or "method" not in req:
            continue
        m = req["method"]
        if m == "server/discover":
            error(req, -32601, "method not found")
        elif m == "initialize":
            res = initialize_result(req)
            res["protocolVersion"] = "2025-06-18"
            result(req, res)
        elif m == "tools/call":
            pending["call"] = req
            sys.stdout.write(request)
            sys.stdout.flush()
        elif m == "ping":
            result(req, {})
        else:
            error(req, -32601, "method not found")


def main():
    mode = sys.argv[1]
    if mode == "text":
        text_server()
    elif mode == "deep":
        deep_server(int(sys.argv[2]))
    elif mode == "dribble":
        dribble_server()
    elif mode == "silent-probe":
        serve(lambda req: result(req, initialize_result(req)) if req["method"] == "initialize"
              else error(req, -32601, "method not found"), answer_probe=False)
    elif mode == "http-dribble":
        http_server(int(sys.argv[2]), "dribble")
    elif mode == "http-error":
        http_server(int(sys.argv[2]), "error")
    elif mode == "echo-meta":
        serve(lambda req: result(req, initialize_result(req)) if req["method"] == "initialize"
              else result(req, {"content": [{"type": "text", "text": json.dumps(req["params"].get("_meta"))}]})
              if req["method"] == "tools/call" else error(req, -32601, "method not found"))
    elif mode == "ask":
        ask_server(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 0)
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
