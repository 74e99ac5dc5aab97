"""A hostile MCP server over stdio for the memory tests (issue 33): valid
messages whose decoded form would cost many times their size, or lists that
never end. Each large member is written in chunks, so this process stays
small (the tests measure the client, and a test that measures the largest
RSS of a process tree must not see this one).

Usage: memory_server.py MODE [N] [M]
  structured N   tools/call: structuredContent of N `{}`s (3 bytes each)
  error N        tools/call: an error whose data is N `{}`s
  meta N         tools/call: _meta and an unknown member of N/2 `{}`s each
  schema N       tools/list: one tool whose inputSchema holds N `{}`s
  deep N         tools/call: a result nested N arrays deep
  log N          tools/call: first a log notification whose data is N `{}`s
  blocks N       tools/call: N empty text blocks (26 bytes each)
  pages N M P    tools/list: N pages, each with a cursor of M bytes and a
                 member of P bytes nobody reads, one tool a page
  repeat         tools/list: the same nextCursor on every page
Anything else is answered as a plain server would (one text block).
"""
import json
import sys

MODE = sys.argv[1]
ARGS = [int(a) for a in sys.argv[2:]]
CHUNK = 1 << 16
out = sys.stdout


def write(s):
    out.write(s)


def empties(n):
    """`{},{},…` (n of them), written in chunks."""
    per = CHUNK // 3
    left = n
    first = True
    while left > 0:
        k = min(per, left)
        write(("" if first else ",") + ",".join(["{}"] * k))
        first = False
        left -= k


def repeated(ch, n):
    while n > 0:
        k = min(CHUNK, n)
        write(ch * k)
        n -= k


def answer(mid, result_head, body, result_tail):
    write('{"jsonrpc":"2.0","id":%s,%s' % (mid, result_head))
    body()
    write(result_tail + "\n")
    out.flush()


def reply(mid, result):
    write(json.dumps({"jsonrpc": "2.0", "id": mid, "result": result}) + "\n")
    out.flush()


TEXT = '"content":[{"type":"text","text":"hi"}]'
TOOL = '{"name":"t%d","inputSchema":{"type":"object"}}'

for line in sys.stdin:
    if not line.strip():
        continue
    m = json.loads(line)
    if "id" not in m:
        continue
    mid = json.dumps(m["id"])
    method = m.get("method")
    params = m.get("params") or {}
    if method == "initialize":
        reply(m["id"], {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile-memory", "version": "1"},
        })
    elif method == "tools/call" and MODE == "structured":
        answer(mid, '"result":{%s,"structuredContent":[' % TEXT,
               lambda: empties(ARGS[0]), "]}}")
    elif method == "tools/call" and MODE == "error":
        answer(mid, '"error":{"code":-32000,"message":"no","data":[',
               lambda: empties(ARGS[0]), "]}}")
    elif method == "tools/call" and MODE == "meta":
        def body():
            empties(ARGS[0] // 2)
            write(']},"x-unknown":[')
            empties(ARGS[0] // 2)
        answer(mid, '"result":{%s,"_meta":{"x":[' % TEXT, body, "]}}")
    elif method == "tools/call" and MODE == "log":
        write('{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":[')
        empties(ARGS[0])
        write(']}}\n')
        write('{"jsonrpc":"2.0","id":%s,"result":{%s}}\n' % (mid, TEXT))
        out.flush()
    elif method == "tools/call" and MODE == "blocks":
        def body():
            per = CHUNK // 26
            left = ARGS[0]
            first = True
            while left > 0:
                k = min(per, left)
                write(("" if first else ",") + ",".join(['{"type":"text","text":""}'] * k))
                first = False
                left -= k
        answer(mid, '"result":{"content":[', body, "]}}")
    elif method == "tools/call" and MODE == "deep":
        answer(mid, '"result":{%s,"structuredContent":' % TEXT,
               lambda: (repeated("[", ARGS[0]), repeated("]", ARGS[0])), "}}")
    elif method == "tools/list" and MODE == "schema":
        answer(mid, '"result":{"tools":[{"name":"big","inputSchema":{"type":"object","x":[',
               lambda: empties(ARGS[0]), "]}}]}}")
    elif method == "tools/list" and MODE == "pages":
        pages, cursor_len, pad = ARGS
        cursor = params.get("cursor")
        k = 0 if cursor is None else int(cursor[:8]) + 1

        def body():
            write('"result":{"tools":[%s],"x-pad":"' % (TOOL % k))
            repeated("p", pad)
            write('"')
            if k + 1 < pages:
                write(',"nextCursor":"%08d' % k)
                repeated("c", max(cursor_len - 8, 0))
                write('"')
        answer(mid, "", body, "}}")
    elif method == "tools/list" and MODE == "repeat":
        write('{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s],"nextCursor":"again"}}\n' % (mid, TOOL % 0))
        out.flush()
    elif method == "tools/list":
        write('{"jsonrpc":"2.0","id":%s,"result":{"tools":[%s]}}\n' % (mid, TOOL % 0))
        out.flush()
    elif method == "tools/call":
        write('{"jsonrpc":"2.0","id":%s,"result":{%s}}\n' % (mid, TEXT))
        out.flush()
    elif method == "ping":
        reply(m["id"], {})
    else:
        write('{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no such method"}}\n' % mid)
        out.flush()
