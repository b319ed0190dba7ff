// The TypeScript SDK against what weft tells its clients and how its
// sessions survive:
//
//   subscriptions  a client subscribed to a session (and with a logging
//                  level) hears another client's edit: over Streamable
//                  HTTP with the editor on stdio relayed to the same weft,
//                  and the other way round (the relay hears through the
//                  holder's /events); a session made is a list change
//   progress       a 10,000-message append with a progress callback
//   oversized      a stdio line over 8 MB is answered with its own id at
//                  once (the SDK writes the id last), not left to time out
//   restart        a relay (weft mcp on a held file) follows the weft it
//                  relays to across a restart on another port, then opens
//                  the file itself once it is free
//
//   WEFT_BIN=… WEFT_CLIENTS=.clients node interop/news.mjs \
//       --db FILE --base FILE --session ID --url http://127.0.0.1:PORT/mcp \
//       --token T --scratch DIR
//
// --db is the file the weft serve at URL holds; --base a file nobody
// holds with the same session, copied into DIR for the checks that need
// a file of their own. The last line printed is
// RESULT {json}; any failure exits 1.

import { spawn } from "node:child_process";
import { copyFileSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    db: { type: "string" },
    session: { type: "string" },
    url: { type: "string" },
    token: { type: "string", default: "" },
    base: { type: "string" },
    scratch: { type: "string" },
  },
});
const WEFT = process.env.WEFT_BIN;
const CLIENTS = process.env.WEFT_CLIENTS;
if (!WEFT || !CLIENTS || !opt.db || !opt.base || !opt.session || !opt.url || !opt.scratch) {
  console.error("usage: WEFT_BIN=… WEFT_CLIENTS=… node interop/news.mjs --db FILE --base FILE --session ID --url URL/mcp [--token T] --scratch DIR");
  process.exit(2);
}
const S = opt.session;

const sdkDir = join(CLIENTS, "node_modules", "@modelcontextprotocol", "sdk");
const sdkPkg = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8"));
async function sdkImport(sub) {
  const pattern = sdkPkg.exports["./*"].import;
  return import(pathToFileURL(join(sdkDir, pattern.replace("*", sub))).href);
}
const { Client } = await sdkImport("client/index.js");
const { StdioClientTransport } = await sdkImport("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdkImport("client/streamableHttp.js");
const { ResourceUpdatedNotificationSchema, ResourceListChangedNotificationSchema, LoggingMessageNotificationSchema, McpError } = await sdkImport("types.js");

class Failure extends Error {}
let step = "start";
const fail = (msg) => {
  throw new Failure(`${step}: ${msg}`);
};
const check = (cond, msg) => cond || fail(msg);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const stats = {};

// heard gathers what a client is told.
function listen(client) {
  const h = { updated: [], listChanged: 0, logs: [] };
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => h.updated.push(n.params.uri));
  client.setNotificationHandler(ResourceListChangedNotificationSchema, () => h.listChanged++);
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => h.logs.push(n.params.data));
  return h;
}

async function until(what, cond, ms = 10000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) fail(`never ${what}`);
    await sleep(20);
  }
}

const auth = opt.token ? { Authorization: `Bearer ${opt.token}` } : {};
function httpClient(name) {
  return { client: new Client({ name, version: "1.0.0" }), transport: new StreamableHTTPClientTransport(new URL(opt.url), { requestInit: { headers: auth } }) };
}
function stdioClient(name, db, env = {}) {
  const transport = new StdioClientTransport({ command: WEFT, args: ["--db", db, "mcp", ...(opt.token ? ["--token", opt.token] : [])], stderr: "pipe", env: { ...process.env, ...env } });
  let err = "";
  transport.stderr?.on("data", (d) => (err += d));
  return { client: new Client({ name, version: "1.0.0" }), transport, stderr: () => err };
}

async function callData(client, tool, args) {
  const res = await client.callTool({ name: tool, arguments: args });
  if (res.isError) fail(`${tool}: tool error: ${res.content?.map((c) => c.text).join("")}`);
  return JSON.parse(res.content.find((c) => c.type === "text").text);
}

// subscriptions: the listener on one transport, the editor on the other.
async function subscriptions(listenerOn) {
  const name = `subscriptions/${listenerOn}`;
  step = `${name} connect`;
  const L = listenerOn === "http" ? httpClient("weft-interop-listener") : stdioClient("weft-interop-listener", opt.db);
  const E = listenerOn === "http" ? stdioClient("weft-interop-editor", opt.db) : httpClient("weft-interop-editor");
  await L.client.connect(L.transport);
  await E.client.connect(E.transport);
  try {
    const caps = L.client.getServerCapabilities();
    check(caps?.resources?.subscribe === true && caps?.resources?.listChanged === true, `resources capability ${JSON.stringify(caps?.resources)}`);
    const h = listen(L.client);
    const uri = `weft://sessions/${S}`;
    step = `${name} subscribe`;
    await L.client.subscribeResource({ uri });
    await L.client.subscribeResource({ uri: `${uri}/context` });
    await L.client.setLoggingLevel("info");
    // Through a relay, the holder's stream of events opens as the relay's
    // client connects: give it a moment.
    await sleep(300);

    step = `${name} another client's edit`;
    const tag = `heard-${listenerOn}`;
    const edit = await callData(E.client, "tag_messages", { session_id: S, start_idx: 0, end_idx: 0, tags: [tag] });
    await until(`heard the edit (updated ${JSON.stringify(h.updated)}, logs ${JSON.stringify(h.logs)})`, () =>
      h.updated.includes(uri) && h.updated.includes(`${uri}/context`) && h.logs.some((l) => l.version === edit.version));
    const log = h.logs.find((l) => l.version === edit.version);
    check(log.author === "weft-interop-editor" && log.session_id === S && /tag/.test(log.what), `log ${JSON.stringify(log)}`);

    step = `${name} its own edit is not logged to it`;
    const own = await callData(L.client, "tag_messages", { session_id: S, start_idx: 0, end_idx: 0, tags: [`${tag}-own`] });
    await until("heard its own edit as an update", () => h.updated.filter((u) => u === uri).length >= 2);
    await sleep(200);
    check(!h.logs.some((l) => l.version === own.version), `its own edit was logged: ${JSON.stringify(h.logs)}`);

    step = `${name} a new session is a list change`;
    await callData(E.client, "create_session", { title: `made while ${listenerOn} listened` });
    await until("heard the list change", () => h.listChanged > 0);

    step = `${name} an invalid logging level`;
    try {
      await L.client.setLoggingLevel("loud");
      fail("logging/setLevel loud was accepted");
    } catch (e) {
      if (e instanceof Failure) throw e;
      check(e.code === -32602, `error ${e.code} ${e.message}`);
    }
    stats[name] = { updated: h.updated.length, logs: h.logs.length, list_changed: h.listChanged };
  } catch (e) {
    for (const c of [L, E]) if (c.stderr?.()) e.message += `\nweft mcp stderr: ${c.stderr().slice(0, 2000)}`;
    throw e;
  } finally {
    await L.client.close();
    await E.client.close();
  }
}

// progress: a long append over HTTP reports how far it has come.
async function progress() {
  step = "progress connect";
  const C = httpClient("weft-interop-progress");
  await C.client.connect(C.transport);
  try {
    const created = await callData(C.client, "create_session", { title: "progress" });
    const messages = Array.from({ length: 10000 }, (_, i) => ({ role: "user", content: `message ${i}` }));
    const seen = [];
    step = "progress append 10,000 messages";
    const res = await C.client.callTool({ name: "append_messages", arguments: { session_id: created.session_id, messages } }, undefined, { onprogress: (p) => seen.push(p) });
    check(!res.isError, "append failed");
    check(seen.length >= 2, `progress reports: ${JSON.stringify(seen)}`);
    for (let i = 1; i < seen.length; i++) check(seen[i].progress > seen[i - 1].progress, `progress went down: ${JSON.stringify(seen)}`);
    const last = seen[seen.length - 1];
    check(last.total === 10001 && last.progress === last.total, `last report ${JSON.stringify(last)}`);
    stats.progress = { reports: seen.length };
  } finally {
    await C.client.close();
  }
}

// oversized: a line over 8 MB on stdio gets its answer at once.
async function oversized() {
  step = "oversized connect";
  const db = join(opt.scratch, "oversized.db");
  copyFileSync(opt.base, db);
  const C = stdioClient("weft-interop-oversized", db);
  await C.client.connect(C.transport);
  try {
    step = "oversized append of 9 MB";
    const started = Date.now();
    try {
      await C.client.callTool({ name: "append_messages", arguments: { session_id: S, messages: [{ role: "user", content: "x".repeat(9 << 20) }] } }, undefined, { timeout: 20000 });
      fail("a 9 MB line was taken");
    } catch (e) {
      if (e instanceof Failure) throw e;
      check(e instanceof McpError && e.code === -32600 && /longer than 8 MB/.test(e.message), `error ${e.code} ${e.message}`);
    }
    const ms = Date.now() - started;
    check(ms < 10000, `the answer took ${ms} ms`);
    step = "oversized the session goes on";
    const list = await callData(C.client, "list_sessions", {});
    check(list.total >= 1, "list_sessions after the oversized line");
    stats.oversized = { answered_ms: ms };
  } catch (e) {
    if (C.stderr()) e.message += `\nweft mcp stderr: ${C.stderr().slice(0, 2000)}`;
    throw e;
  } finally {
    await C.client.close();
  }
}

function freePort() {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// serve starts weft serve on db at a free port and waits until it answers.
async function serve(db) {
  const port = await freePort();
  const proc = spawn(WEFT, ["--db", db, "serve", "--addr", `127.0.0.1:${port}`], { stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  proc.stderr.on("data", (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15000;
  for (;;) {
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) break;
    } catch {}
    if (Date.now() > deadline) fail(`weft serve did not start: ${log}`);
    await sleep(50);
  }
  const stop = () =>
    new Promise((resolve) => {
      proc.once("exit", resolve);
      proc.kill("SIGTERM");
    });
  return { base, stop };
}

// restart: the relay survives a restart of the weft it relays to.
async function restart() {
  const db = join(opt.scratch, "restart.db");
  copyFileSync(opt.base, db);
  step = "restart first weft serve";
  const first = await serve(db);
  const C = stdioClient("weft-interop-relay", db);
  const tagged = async (tag) => {
    const r = await callData(C.client, "tag_messages", { session_id: S, start_idx: 1, end_idx: 1, tags: [tag] });
    check(r.success, `tag ${tag}`);
    return r;
  };
  await C.client.connect(C.transport);
  let second;
  try {
    step = "restart an edit through the first weft";
    await tagged("relay-first");
    await first.stop();
    step = "restart second weft serve";
    second = await serve(db);
    check(second.base !== first.base, "the second weft serve took the first's port");
    step = "restart an edit through the second weft";
    const r = await tagged("relay-second");
    const ops = await (await fetch(`${second.base}/api/list_operations`, { method: "POST", body: JSON.stringify({ session_id: S }) })).json();
    check(ops.operations.some((o) => o.operation_id === r.operation_id && o.author === "weft-interop-relay"), "the edit is not in the second weft");
    await second.stop();
    second = undefined;
    step = "restart an edit with the file free";
    await tagged("relay-itself");
    const addr = readFileSync(`${db}.addr`, "utf8").trim();
    check(addr && !addr.startsWith(first.base) && addr.startsWith("http://127.0.0.1:"), `address file after the takeover: ${addr}`);
    stats.restart = { edits: 3 };
  } catch (e) {
    if (C.stderr()) e.message += `\nweft mcp stderr: ${C.stderr().slice(0, 2000)}`;
    throw e;
  } finally {
    await C.client.close();
    if (second) await second.stop();
  }
}

try {
  await subscriptions("http");
  await subscriptions("stdio");
  await progress();
  await oversized();
  await restart();
  for (const [t, s] of Object.entries(stats)) console.log(`news/${t}: ok: ${JSON.stringify(s)}`);
  console.log("RESULT " + JSON.stringify(stats));
} catch (e) {
  console.error(`news: FAIL: ${e.message}`);
  if (!(e instanceof Failure)) console.error(e.stack);
  process.exit(1);
}
