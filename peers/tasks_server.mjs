// A 2026-07-28 MCP server with the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663), built on the official TypeScript SDK (@modelcontextprotocol/server)
// and the extension's own wire schemas (@modelcontextprotocol/ext-tasks/core/v2):
// every task it sends is checked against them before it goes out.
//
//   node tasks_server.mjs            serves over stdio
//   node tasks_server.mjs --http 0   serves Streamable HTTP on 127.0.0.1 (port 0:
//                                    any free one), printing "listening on <url>"
//
// Tools (every one but `echo` and `task_state` answers with a task, and only
// to a client that declares the extension; others get -32021):
//   slow_task {topic, ms?}   completes after `ms` (default 300) with "done: <topic>"
//   failing_job              fails (status "failed", a JSON-RPC error -32603)
//   confirm_delete {filename} goes input_required (one elicitation), then
//                            completes with "deleted <filename>" or "kept <filename>"
//   never_finishes           stays "working" until cancelled or its ttl passes
//   echo {text}              answers at once (no task)
//   task_state {taskId}      answers at once with the task's status (to check a cancel)
import http from "node:http";
import { z } from "zod/v4";
import { Server, ProtocolError, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";
import {
  GetTaskResultV2Schema,
  CreateTaskResultV2Schema,
  TASKS_EXTENSION_ID_V2,
  CLIENT_CAPABILITIES_META_KEY_V2,
} from "@modelcontextprotocol/ext-tasks/core/v2";

const TTL_MS = 60_000;
const POLL_MS = 100;
// Task id → state. Module-level: the SDK builds a server per HTTP request.
const tasks = new Map();
let next = 0;

const now = () => new Date().toISOString();

function declared(ctx) {
  const caps =
    ctx?.mcpReq?.envelope?.[CLIENT_CAPABILITIES_META_KEY_V2] ??
    ctx?.mcpReq?.envelope?.clientCapabilities ??
    ctx?.mcpReq?._meta?.[CLIENT_CAPABILITIES_META_KEY_V2];
  return caps?.extensions?.[TASKS_EXTENSION_ID_V2] !== undefined;
}

function requireExtension(ctx) {
  if (!declared(ctx)) {
    throw new ProtocolError(-32021, "Missing required client capability", {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
    });
  }
}

function taskOf(params) {
  const t = tasks.get(params.taskId);
  if (!t) throw new ProtocolError(-32602, "Failed to retrieve task: Task not found");
  return t;
}

function touch(t, status, message) {
  if (["completed", "failed", "cancelled"].includes(t.status)) return;
  t.status = status;
  t.statusMessage = message;
  t.lastUpdatedAt = now();
}

/** The task as tasks/get and the handle show it (DetailedTask). */
function detailed(t) {
  const out = {
    taskId: t.taskId,
    status: t.status,
    createdAt: t.createdAt,
    lastUpdatedAt: t.lastUpdatedAt,
    ttlMs: t.ttlMs,
    pollIntervalMs: POLL_MS,
  };
  if (t.statusMessage) out.statusMessage = t.statusMessage;
  if (t.status === "completed") out.result = t.result;
  if (t.status === "failed") out.error = t.error;
  if (t.status === "input_required") out.inputRequests = t.inputRequests;
  return out;
}

function create(run) {
  const taskId = `task-${process.pid}-${++next}-${Math.random().toString(36).slice(2)}`;
  const t = {
    taskId,
    status: "working",
    statusMessage: "started",
    createdAt: now(),
    lastUpdatedAt: now(),
    ttlMs: TTL_MS,
    answers: {},
    answered: new Set(),
  };
  tasks.set(taskId, t);
  setTimeout(() => tasks.delete(taskId), TTL_MS).unref();
  run(t);
  const handle = { resultType: "task", ...detailed(t) };
  CreateTaskResultV2Schema.parse(handle);
  return handle;
}

const text = (s, isError = false) => ({ content: [{ type: "text", text: s }], isError });

const tools = [
  { name: "slow_task", description: "Completes after a while", inputSchema: { type: "object", properties: { topic: { type: "string" }, ms: { type: "number" } } } },
  { name: "failing_job", description: "Fails with a JSON-RPC error", inputSchema: { type: "object" } },
  { name: "confirm_delete", description: "Asks for confirmation, then completes", inputSchema: { type: "object", properties: { filename: { type: "string" } } } },
  { name: "never_finishes", description: "Runs until cancelled", inputSchema: { type: "object" } },
  { name: "echo", description: "Answers at once", inputSchema: { type: "object", properties: { text: { type: "string" } } } },
  { name: "task_state", description: "A task's status, at once", inputSchema: { type: "object", properties: { taskId: { type: "string" } } } },
];

function callTool(params, ctx) {
  const args = params.arguments ?? {};
  switch (params.name) {
    case "echo":
      return text(String(args.text ?? ""));
    case "task_state": {
      const t = tasks.get(String(args.taskId));
      return text(t ? t.status : "unknown");
    }
  }
  requireExtension(ctx);
  switch (params.name) {
    case "slow_task":
      return create((t) => {
        setTimeout(() => touch(t, "working", "halfway"), Math.floor((args.ms ?? 300) / 2));
        setTimeout(() => {
          if (t.status !== "working") return;
          t.result = text(`done: ${args.topic ?? ""}`);
          touch(t, "completed", "finished");
        }, args.ms ?? 300);
      });
    case "failing_job":
      return create((t) =>
        setTimeout(() => {
          t.error = { code: -32603, message: "job failed" };
          touch(t, "failed", "job failed");
        }, 100),
      );
    case "confirm_delete":
      return create((t) =>
        setTimeout(() => {
          t.inputRequests = {
            confirm: {
              method: "elicitation/create",
              params: {
                mode: "form",
                message: `Delete ${args.filename}?`,
                requestedSchema: { type: "object", properties: { confirm: { type: "boolean" } }, required: ["confirm"] },
              },
            },
          };
          touch(t, "input_required", "waiting for confirmation");
          t.onAnswers = () => {
            const a = t.answers.confirm;
            if (!a) return;
            delete t.inputRequests;
            touch(t, "working", "deleting");
            setTimeout(() => {
              const yes = a.action === "accept" && a.content?.confirm === true;
              t.result = text(`${yes ? "deleted" : "kept"} ${args.filename}`);
              touch(t, "completed", "done");
            }, 100);
          };
        }, 100),
      );
    case "never_finishes":
      return create(() => {});
    default:
      throw new ProtocolError(-32602, `Unknown tool: ${params.name}`);
  }
}

const TaskIdParams = z.object({ taskId: z.string() }).passthrough();
// The SDK lifts `inputResponses` out of every request's params (the
// multi-round-trip member) into `ctx.mcpReq.inputResponses`.
const UpdateParams = z.object({ taskId: z.string() }).passthrough();

function makeServer() {
  const server = new Server(
    { name: "tasks-peer", version: "1.0.0" },
    { capabilities: { tools: {}, extensions: { [TASKS_EXTENSION_ID_V2]: {} } } },
  );
  server.setRequestHandler("tools/list", () => ({ tools }));
  server.setRequestHandler("tools/call", (request, ctx) => callTool(request.params, ctx));
  server.setRequestHandler("tasks/get", { params: TaskIdParams }, (params, ctx) => {
    requireExtension(ctx);
    const out = { resultType: "complete", ...detailed(taskOf(params)) };
    GetTaskResultV2Schema.parse(out);
    return out;
  });
  server.setRequestHandler("tasks/update", { params: UpdateParams }, (params, ctx) => {
    requireExtension(ctx);
    const t = taskOf(params);
    const responses = params.inputResponses ?? ctx.mcpReq.inputResponses;
    if (!responses || typeof responses !== "object") {
      throw new ProtocolError(-32602, "tasks/update needs inputResponses");
    }
    for (const [k, v] of Object.entries(responses)) {
      // Keys not outstanding (never issued, already answered) are ignored.
      if (t.inputRequests?.[k] && !t.answered.has(k)) {
        t.answered.add(k);
        t.answers[k] = v;
      }
    }
    t.onAnswers?.();
    return { resultType: "complete" };
  });
  server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, (params, ctx) => {
    requireExtension(ctx);
    touch(taskOf(params), "cancelled", "cancelled by the client");
    return { resultType: "complete" };
  });
  return server;
}

const httpAt = process.argv.indexOf("--http");
if (httpAt < 0) {
  serveStdio(() => makeServer(), { legacy: "reject" });
} else {
  const handler = createMcpHandler(() => makeServer(), { legacy: "reject" });
  const srv = http.createServer(async (req, res) => {
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const body = Buffer.concat(chunks);
      const request = new Request(`http://${req.headers.host}${req.url}`, {
        method: req.method,
        headers: Object.entries(req.headers).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x) => [k, x]) : [[k, v]])),
        body: ["GET", "HEAD"].includes(req.method) ? undefined : body,
      });
      const response = await handler.fetch(request);
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (e) {
      process.stderr.write(`tasks_server: ${e?.stack ?? e}\n`);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  srv.listen(Number(process.argv[httpAt + 1] ?? 0), "127.0.0.1", () => {
    process.stderr.write(`listening on http://127.0.0.1:${srv.address().port}/mcp\n`);
  });
}
