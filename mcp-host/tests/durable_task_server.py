"""A stdio MCP server (2025-11-25, standard library only) whose tasks are
kept in a state file, as a server backed by a database keeps them: a new
process of it knows the tasks an earlier one created. Its one tool,
`slow-report` (taskSupport "required"), finishes 3 s after the task was
created. Written for mcp-host's durable-task test (tests/tasks.rs); the
state file is the first argument."""

import json
import os
import sys
import time
import uuid

STATE = sys.argv[1]
RUN_FOR = 3.0

def load():
    try:
        with open(STATE) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}

def save(tasks):
    tmp = STATE + ".tmp"
    with open(tmp, "w") as f:
        json.dump(tasks, f)

    os.replace(tmp, STATE)

def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))

def view(task_id, t):
    done = time.time() - t["created"] >= RUN_FOR
    return {
        "taskId": task_id,
        "status": "completed" if done else "working",
        "statusMessage": None if done else "writing the report",
        "createdAt": iso(t["created"]),
        "lastUpdatedAt": iso(time.time()),
        "ttl": 300000,
        "pollInterval": 200,
    }

def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()

def answer(req):
    method, params = req["method"], req.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": "2025-11-25",
            "capabilities": {
                "tools": {},
                "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
            },
            "serverInfo": {"name": "durable-task-server", "version": "1"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {
            "tools": [
                {
                    "name": "slow-report",
                    "inputSchema": {"type": "object", "properties": {"topic": {"type": "string"}}},
                    "execution": {"taskSupport": "required"},
                }
            ]
        }
    tasks = load()
    if method == "tools/call":
        task_id = str(uuid.uuid4())
        topic = (params.get("arguments") or {}).get("topic", "")
        tasks[task_id] = {"created": time.time(), "topic": topic}
        save(tasks)
        return {"task": view(task_id, tasks[task_id])}
    task_id = params.get("taskId")
    t = tasks.get(task_id)
    if method in ("tasks/get", "tasks/result", "tasks/cancel") and t is None:
        raise LookupError(f"Task not found: {task_id}")
    if method == "tasks/get":
        return view(task_id, t)
    if method == "tasks/result":
        left = t["created"] + RUN_FOR - time.time()
        if left > 0:
            time.sleep(left)
        return {"content": [{"type": "text", "text": f"report on {t['topic']}"}]}
    if method == "tasks/cancel":
        del tasks[task_id]
        save(tasks)
        return view(task_id, t)
    raise NotImplementedError(method)

for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    if "id" not in req or "method" not in req:
        continue
    try:
        send({"jsonrpc": "2.0", "id": req["id"], "result": answer(req)})
    except LookupError as e:
        send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32602, "message": str(e)}})
    except NotImplementedError as e:
        send({"jsonrpc": "2.0", "id": req["id"], "error": {"code": -32601, "message": f"no {e}"}})
