// A 2026-07-28 MCP server with the tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663), built on the official TypeScript SDK (@modelcontextprotocol/server)
// and the extension's own wire schemas (@modelcontextprotocol/ext-tasks/core/v2):
// every task it sends is checked against them before it goes out.
//
//   node tasks_server.mjs            serves over stdio
//   node tasks_server.mjs --http 0   serves Streamable HTTP on 127.0.0.1 (port 0:
//                                    any free one), printing "listening on <url>"
//
// Tools (taskSupport "optional" ones answer with a task to a client that
// declares the extension and run at once for one that does not; "required"
// ones refuse such a client with -32021). Besides the ones below, the
// conformance suite's tasks-* fixtures: greet, slow_compute {seconds},
// multi_input, protocol_error_job, test_tool_with_task (an MRTR round, then
// a task).
//   slow_task {topic, ms?}   completes after `ms` (default 300) with "done: <topic>"
//   failing_job              completes with a tool error (isError; not "failed")
//   protocol_error_job       fails (status "failed", the JSON-RPC error -32603 "job failed")
//   confirm_delete {filename} goes input_required (one elicitation), then
//                            completes with "deleted <filename>" or "kept <filename>"
//   never_finishes           stays "working" until cancelled or its ttl passes
//   echo {text}              answers at once (no task)
//   task_state {taskId}      answers at once with the task's status (to check a cancel)
import http from "node:http";
import { z } from "zod/v4";
import { Server, ProtocolError, createMcpHandler, inputRequired } from "@modelcontextprotocol/server";
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

const obj = (properties = {}) => ({ type: "object", properties });
const optional = { taskSupport: "optional" };
const required = { taskSupport: "required" };
const tools = [
  { name: "slow_task", description: "Completes after a while", inputSchema: obj({ topic: { type: "string" }, ms: { type: "number" } }), execution: optional },
  { name: "failing_job", description: "Completes with a tool error", inputSchema: obj(), execution: required },
  { name: "protocol_error_job", description: "Fails with a JSON-RPC error", inputSchema: obj(), execution: optional },
  { name: "confirm_delete", description: "Asks for confirmation, then completes", inputSchema: obj({ filename: { type: "string" } }), execution: optional },
  { name: "multi_input", description: "Asks two questions at once", inputSchema: obj(), execution: optional },
  { name: "never_finishes", description: "Runs until cancelled", inputSchema: obj(), execution: optional },
  { name: "slow_compute", description: "Sleeps `seconds`, then answers", inputSchema: obj({ seconds: { type: "number" }, label: { type: "string" } }), execution: optional },
  { name: "test_tool_with_task", description: "Asks for a name (MRTR), then runs as a task", inputSchema: obj(), execution: required },
  { name: "greet", description: "Answers at once", inputSchema: obj({ name: { type: "string" } }) },
  { name: "echo", description: "Answers at once", inputSchema: obj({ text: { type: "string" } }) },
  { name: "task_state", description: "A task's status, at once", inputSchema: obj({ taskId: { type: "string" } }) },
];

const elicit = (message, properties, req) => ({
  method: "elicitation/create",
  params: { mode: "form", message, requestedSchema: { type: "object", properties, required: req } },
});

/** Parks `t` on `requests` until every key is answered, then `then(answers)`. */
function ask(t, requests, then) {
  t.inputRequests = requests;
  touch(t, "input_required", "waiting for input");
  t.onAnswers = () => {
    for (const k of Object.keys(t.inputRequests ?? {})) {
      if (t.answers[k]) delete t.inputRequests[k];
    }
    if (Object.keys(t.inputRequests ?? {}).length > 0) return;
    delete t.inputRequests;
    t.onAnswers = undefined;
    touch(t, "working", "resumed");
    then(t.answers);
  };
}

function complete(t, result, after) {
  setTimeout(() => {
    if (t.status !== "working") return;
    t.result = result;
    touch(t, "completed", "finished");
  }, after);
}

/** What the tool does as a task (`t` just created). */
function runAsTask(name, args, t) {
  switch (name) {
    case "slow_task":
      setTimeout(() => touch(t, "working", "halfway"), Math.floor((args.ms ?? 300) / 2));
      return complete(t, text(`done: ${args.topic ?? ""}`), args.ms ?? 300);
    case "slow_compute":
      return complete(t, text(`computed ${args.label ?? ""}`), (args.seconds ?? 1) * 1000);
    case "failing_job":
      return complete(t, text("job failed: bad input", true), 100);
    case "protocol_error_job":
      return setTimeout(() => {
        t.error = { code: -32603, message: "job failed" };
        touch(t, "failed", "job failed");
      }, 100);
    case "confirm_delete":
      return setTimeout(() => {
        const q = elicit(`Delete ${args.filename}?`, { confirm: { type: "boolean" } }, ["confirm"]);
        ask(t, { confirm: q }, (a) => {
          const yes = a.confirm.action === "accept" && a.confirm.content?.confirm === true;
          complete(t, text(`${yes ? "deleted" : "kept"} ${args.filename}`), 100);
        });
      }, 100);
    case "multi_input":
      return setTimeout(() => {
        const q = (m) => elicit(m, { answer: { type: "string" } }, ["answer"]);
        ask(t, { first: q("First?"), second: q("Second?") }, () => complete(t, text("both answered"), 50));
      }, 50);
    case "test_tool_with_task":
      return complete(t, text(`Hello, ${args.__name}!`), 100);
    case "never_finishes":
      return;
  }
}

const syncResult = (name, args) => {
  switch (name) {
    case "slow_task":
      return text(`done: ${args.topic ?? ""}`);
    case "slow_compute":
      return text(`computed ${args.label ?? ""}`);
    case "protocol_error_job":
      throw new ProtocolError(-32603, "job failed");
    default:
      throw new ProtocolError(-32602, `${name} needs the tasks extension`);
  }
};

function callTool(params, ctx) {
  const args = params.arguments ?? {};
  const name = params.name;
  switch (name) {
    case "echo":
      return text(String(args.text ?? ""));
    case "greet":
      return text(`Hello, ${args.name ?? ""}!`);
    case "task_state": {
      const t = tasks.get(String(args.taskId));
      return text(t ? t.status : "unknown");
    }
  }
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new ProtocolError(-32602, `Unknown tool: ${name}`);
  if (!declared(ctx)) {
    if (tool.execution?.taskSupport === "required") requireExtension(ctx);
    return syncResult(name, args);
  }
  if (name === "test_tool_with_task") {
    // An MRTR round first (synchronous), then the task.
    const answer = ctx.mcpReq.inputResponses?.user_name;
    if (!answer) {
      return inputRequired({ inputRequests: { user_name: elicit("Your name?", { name: { type: "string" } }, ["name"]) } });
    }
    args.__name = answer.content?.name ?? "";
  }
  // A fast computation may skip the task (the spec allows either).
  if (name === "slow_compute" && (args.seconds ?? 1) === 0) return syncResult(name, args);
  return create((t) => runAsTask(name, args, t));
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
