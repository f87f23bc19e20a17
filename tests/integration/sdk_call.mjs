// One tools/call through the MCP TypeScript SDK's own client (installed from
// npm with the Inspector, tests/integration/agentlib.py), with the idle
// timeout Claude Code puts on a call: `timeout` ms of silence ends it, each
// notifications/progress starts the count again (resetTimeoutOnProgress),
// and on time-out the SDK sends notifications/cancelled.
//
//   node sdk_call.mjs SDK_DIR IDLE_MS ARGS_JSON -- CORRAL mcp [OPTIONS...]
//
// Prints one JSON line: {ok, text, structured, error: {code, message},
// progress: the number of progress notifications, seconds}.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, idleMs, argsJson, dashes, command, ...args] = process.argv.slice(2);
if (dashes !== "--" || !command) {
    console.error("usage: node sdk_call.mjs SDK_DIR IDLE_MS ARGS_JSON -- CORRAL mcp [OPTIONS...]");
    process.exit(2);
}
const load = (p) => import(pathToFileURL(join(sdkDir, "dist/esm", p)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");

const client = new Client({ name: "idle-probe", version: "1.0.0" });
// The SDK passes only a few variables on by default; corral mcp needs the
// test's runtime and config directories.
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
await client.connect(transport);
let progress = 0;
const started = Date.now();
const out = { ok: false, progress: 0 };
try {
    const result = await client.callTool({ name: "exec_command", arguments: JSON.parse(argsJson) }, undefined, {
        timeout: Number(idleMs),
        maxTotalTimeout: 600000,
        resetTimeoutOnProgress: true,
        onprogress: () => { progress++; },
    });
    out.ok = !result.isError;
    out.text = (result.content || []).map((c) => c.text || "").join("\n");
    out.structured = result.structuredContent || null;
} catch (e) {
    out.error = { code: e.code ?? null, message: String(e.message || e) };
}
out.progress = progress;
out.seconds = (Date.now() - started) / 1000;
console.log(JSON.stringify(out));
await client.close();
