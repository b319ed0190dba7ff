// The TypeScript SDK (@modelcontextprotocol/sdk), a second client weft's
// team did not write, against weft over stdio (it launches `weft --db FILE
// mcp`) and over Streamable HTTP (a running weft serve): it lists the
// tools, calls some including an edit and finds the edit in
// list_operations under its own name, lists the sessions as resources
// (page by page), completes session IDs (client.complete), reads every
// resource and the startup prompt, pages reads fitted to max_tokens to
// the end, and checks the listener's HTTP guard (a foreign Origin gets
// 403, a missing token 401, CORS only for an allowed origin).
//
//   WEFT_BIN=… WEFT_CLIENTS=.clients node interop/client.mjs \
//       --db FILE --session ID --url http://127.0.0.1:PORT/mcp --token T \
//       [--origin ORIGIN]   (an origin weft serve allows: CORS is checked)
//
// The SDK is imported by path from WEFT_CLIENTS/node_modules: ESM ignores
// NODE_PATH. The last line printed is RESULT {json}; any failure exits 1.

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({
  options: {
    db: { type: "string" },
    session: { type: "string" },
    url: { type: "string" },
    token: { type: "string", default: "" },
    origin: { type: "string", default: "" },
  },
});
const WEFT = process.env.WEFT_BIN;
const CLIENTS = process.env.WEFT_CLIENTS;
if (!WEFT || !CLIENTS || !opt.db || !opt.session || !opt.url) {
  console.error("usage: WEFT_BIN=… WEFT_CLIENTS=… node interop/client.mjs --db FILE --session ID --url URL/mcp [--token T]");
  process.exit(2);
}
const S = opt.session;
const CLIENT_NAME = "weft-interop-sdk";

// sdkImport loads a module of the SDK the way its package's exports map
// says an ESM import would.
const sdkDir = join(CLIENTS, "node_modules", "@modelcontextprotocol", "sdk");
const sdkPkg = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8"));
async function sdkImport(sub) {
  const pattern = sdkPkg.exports["./*"].import; // ./dist/esm/*
  return import(pathToFileURL(join(sdkDir, pattern.replace("*", sub))).href);
}
const { Client } = await sdkImport("client/index.js");
const { StdioClientTransport } = await sdkImport("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdkImport("client/streamableHttp.js");

class Failure extends Error {}
let step = "start";
const fail = (msg) => {
  throw new Failure(`${step}: ${msg}`);
};
const check = (cond, msg) => cond || fail(msg);
const eq = (got, want, what) => {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) fail(`${what}: got ${g}, want ${w}`);
};

const stats = {};

async function weftTools() {
  return new Promise((resolve, reject) => {
    execFile(WEFT, ["tools"], (err, stdout) => {
      if (err) return reject(err);
      resolve(stdout.split("\n").filter((l) => /^[a-z_]+\(/.test(l)).map((l) => l.slice(0, l.indexOf("("))));
    });
  });
}

// exercise runs the same checks over one connected client.
async function exercise(name, client, names) {
  const st = (stats[name] = { tool_calls: 0, resources_read: 0, prompts: 0, error_paths: 0 });
  const call = async (tool, args) => {
    step = `${name} ${tool}`;
    const res = await client.callTool({ name: tool, arguments: args });
    if (res.isError) fail(`tool error: ${res.content?.map((c) => c.text).join("")}`);
    const text = res.content?.find((c) => c.type === "text")?.text;
    const data = JSON.parse(text);
    if (res.structuredContent !== undefined) eq(res.structuredContent, data, "structuredContent vs text");
    st.tool_calls++;
    return data;
  };
  const refused = async (tool, args, want) => {
    step = `${name} ${tool} (refused)`;
    const res = await client.callTool({ name: tool, arguments: args });
    check(res.isError === true, `want isError, got ${JSON.stringify(res).slice(0, 300)}`);
    const text = res.content.map((c) => c.text ?? "").join("");
    check(want.test(text), `error text ${JSON.stringify(text)} does not match ${want}`);
    st.error_paths++;
  };

  step = `${name} initialize`;
  eq(client.getServerVersion()?.name, "weft", "server name");
  check((client.getInstructions() ?? "").includes("effective thread"), "server instructions");

  step = `${name} tools/list`;
  const { tools } = await client.listTools();
  eq(tools.map((t) => t.name).sort(), [...names].sort(), "tools");
  for (const t of tools) {
    check(t.inputSchema?.type === "object" && t.annotations, `${t.name}: inputSchema or annotations`);
  }

  const before = await call("get_message_range", { session_id: S, start_idx: 0, end_idx: 2 });
  check(before.total >= 3 && before.messages.length === 3, `get_message_range: ${before.total} items, ${before.messages.length} given`);
  const tag = `sdk-${name}`;
  const edit = await call("tag_messages", { session_id: S, start_idx: 2, end_idx: 2, tags: [tag], expected_version: before.version });
  check(edit.success && edit.version > before.version, "tag_messages result");
  const ops = await call("list_operations", { session_id: S });
  const op = ops.operations.find((o) => o.operation_id === edit.operation_id);
  check(op, `list_operations lacks ${edit.operation_id}`);
  eq([op.op_type, op.tags, op.author, op.targets], ["tag", [tag], CLIENT_NAME, [before.messages[2].id]], "the SDK's edit in list_operations");
  const tagged = await call("get_message_range", { session_id: S, start_idx: 2, end_idx: 2 });
  check(tagged.messages[0].tags.includes(tag), "the tag shows on the item");
  const sum = await call("summarize_message_range", { session_id: S, start_idx: 1, end_idx: 4, source: "extractive" });
  eq([sum.source, sum.stored], ["extractive", false], "summary source");
  const asm = await call("assemble_context", { session_id: S, format: "text" });
  check(asm.text.includes("careful engineering assistant") || asm.message_count > 0, "assembled text");

  await refused("snip_messages", { session_id: S, start_idx: 0, end_idx: 9999 }, /end_idx 9999 is past the end/);
  await refused("tag_messages", { session_id: S, start_idx: 0, end_idx: 0, tags: ["late"], expected_version: before.version }, new RegExp(`is at version ${edit.version}, not ${before.version}: since then v${edit.version} tag ${tag} on 2 by ${CLIENT_NAME}`));
  const after = await call("list_operations", { session_id: S });
  eq(after.operations.length, ops.operations.length, "refused edits changed nothing");

  step = `${name} resources`;
  // weft's fixed resources, then one per session, a page at a time.
  const resources = [];
  let pages = 0;
  for (let cursor; ; ) {
    const page = await client.listResources(cursor ? { cursor } : {});
    resources.push(...page.resources);
    pages++;
    if (!page.nextCursor) break;
    check(pages < 1000, "resources/list does not end");
    cursor = page.nextCursor;
  }
  const isSession = (uri) => /^weft:\/\/sessions\/[^/]+$/.test(uri) && uri !== "weft://sessions/recent";
  eq(resources.filter((r) => !isSession(r.uri)).map((r) => r.uri).sort(), ["weft://sessions", "weft://sessions/recent"], "fixed resources");
  const listed = resources.filter((r) => isSession(r.uri));
  eq(new Set(listed.map((r) => r.uri)).size, listed.length, "each session listed once");
  const mine = listed.find((r) => r.uri === `weft://sessions/${S}`);
  check(mine, `resources/list lacks weft://sessions/${S}: ${JSON.stringify(listed.map((r) => r.uri))}`);
  eq([mine.title, mine.mimeType], ["interop thread", "application/json"], "the session's resource");
  check(/^A weft session: \d+ messages, \d+ operations?;/.test(mine.description) && /created \d{4}-\d\d-\d\d/.test(mine.description), `the session's description: ${mine.description}`);
  st.sessions_listed = listed.length;
  const { resourceTemplates } = await client.listResourceTemplates();
  eq(resourceTemplates.map((r) => r.uriTemplate).sort(), ["weft://rooms/{room}{?max_tokens,cursor}", "weft://search/{query}{?max_tokens,cursor}", "weft://sessions/recent{?max_tokens}", "weft://sessions/{id}/context{?max_tokens,cursor}", "weft://sessions/{id}{?max_tokens,cursor}", "weft://sessions{?max_tokens,cursor}"], "templates");
  const read = async (uri) => {
    step = `${name} read ${uri}`;
    const res = await client.readResource({ uri });
    eq([res.contents[0].uri, res.contents[0].mimeType], [uri, "application/json"], "contents");
    st.resources_read++;
    return JSON.parse(res.contents[0].text);
  };
  const all = await read("weft://sessions");
  check(all.sessions.some((s) => s.session_id === S), "weft://sessions lacks the session");
  eq(listed.map((r) => r.uri.slice("weft://sessions/".length)).sort(), all.sessions.map((s) => s.session_id).sort(), "the sessions listed as resources are weft://sessions'");
  await read(mine.uri);
  const recent = await read("weft://sessions/recent");
  eq(recent.sessions[0].session_id, S, "the session just edited is the most recent");
  const one = await read(`weft://sessions/${S}`);
  eq(one.session.session_id, S, "weft://sessions/{id}");
  const ctx = await read(`weft://sessions/${S}/context`);
  check(ctx.unsummarized_count > 0, "weft://sessions/{id}/context");
  step = `${name} read a missing session`;
  try {
    await client.readResource({ uri: "weft://sessions/nosuchsession" });
    fail("reading a missing session succeeded");
  } catch (e) {
    if (e instanceof Failure) throw e;
    check(/not found/.test(e.message), `error ${e.message}`);
  }

  // Reads fit max_tokens and say how to get the rest: pages of a range
  // by next_start_idx, of the context by next_cursor, of a resource by
  // next_uri, together what the read gives without a budget.
  const ids = (r) => [...(r.summaries ?? []), ...(r.raw_turns ?? []), ...(r.messages ?? [])].map((m) => m.id).sort();
  const page = async (tool, args, budget, next) => {
    const whole = await call(tool, { ...args, max_tokens: 0 });
    const got = [];
    let a = { ...args, max_tokens: budget };
    for (let pages = 1; ; pages++) {
      const p = await call(tool, a);
      check(p.result_tokens <= budget && p.max_tokens === budget, `${tool} page ${pages}: ${p.result_tokens} tokens of ${p.max_tokens}, budget ${budget}`);
      got.push(...ids(p));
      const n = next(p);
      if (n === undefined) {
        check(pages > 1, `${tool} fits one page of ${budget} tokens: nothing paged`);
        break;
      }
      a = { ...a, ...n };
    }
    eq(got.sort(), ids(whole), `${tool}: the pages give what the whole read gives`);
  };
  await page("get_message_range", { session_id: S, start_idx: 0, end_idx: before.total - 1 }, 500, (p) => (p.next_start_idx === undefined ? undefined : { start_idx: p.next_start_idx }));
  await page("get_conversation_context", { session_id: S, turns: 30 }, 500, (p) => (p.next_cursor ? { cursor: p.next_cursor } : undefined));
  await refused("get_conversation_context", { session_id: S, turns: 5, max_tokens: 10 }, /max_tokens 10 is too small/);
  await refused("get_conversation_context", { session_id: S, turns: 5, cursor: "not-a-cursor" }, /not a next_cursor weft gave/);
  const wholeCtx = await read(`weft://sessions/${S}?max_tokens=0`);
  const pagedCtx = [];
  for (let uri = `weft://sessions/${S}?max_tokens=900`; uri; ) {
    const r = await read(uri);
    check(r.result_tokens <= 900, `${uri}: ${r.result_tokens} tokens`);
    pagedCtx.push(...ids(r.context));
    uri = r.next_uri;
  }
  eq(pagedCtx.sort(), ids(wholeCtx.context), "weft://sessions/{id} through next_uri");
  step = `${name} read with a bad max_tokens`;
  try {
    await client.readResource({ uri: `weft://sessions/${S}?max_tokens=lots` });
    fail("a resource read with max_tokens=lots succeeded");
  } catch (e) {
    if (e instanceof Failure) throw e;
    check(e.code === -32602 && /max_tokens "lots" is not a whole number/.test(e.message), `error ${e.code} ${e.message}`);
  }

  // Completion of session IDs: the prompt's session_id gets titles, a
  // template's {id} gets IDs.
  step = `${name} completion/complete`;
  check(client.getServerCapabilities()?.completions, "the completions capability is not declared");
  const byTitle = await client.complete({ ref: { type: "ref/prompt", name: "startup" }, argument: { name: "session_id", value: "interop" } });
  eq(byTitle.completion.values, ["interop thread"], "startup session_id completion of \"interop\"");
  eq(byTitle.completion.total, 1, "completion total");
  const everyOne = await client.complete({ ref: { type: "ref/prompt", name: "startup" }, argument: { name: "session_id", value: "" } });
  eq(everyOne.completion.total, all.sessions.length, "an empty value completes to every session");
  const byID = await client.complete({ ref: { type: "ref/resource", uri: "weft://sessions/{id}" }, argument: { name: "id", value: S.slice(0, 12) } });
  check(byID.completion.values.includes(S), `{id} completion of ${S.slice(0, 12)}: ${JSON.stringify(byID.completion)}`);
  const ctxID = await client.complete({ ref: { type: "ref/resource", uri: "weft://sessions/{id}/context" }, argument: { name: "id", value: "interop" } });
  eq(ctxID.completion.values, [S], "{id} of the context template completes a title to its ID");
  st.completions = 4;

  step = `${name} prompts/get startup`;
  const prompt = await client.getPrompt({ name: "startup", arguments: { session_id: S } });
  check(prompt.messages[0].content.text.startsWith('Startup context for "interop thread"'), "startup prompt");
  st.prompts++;
}

// guard checks the listener's HTTP protection with plain requests.
async function guard(url, token) {
  const auth = token ? { Authorization: `Bearer ${token}` } : {};
  const init = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "origin-probe", version: "1" } } });
  const post = (headers) => fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...auth, ...headers }, body: init });

  step = "HTTP guard: foreign Origin";
  const evil = await post({ Origin: "https://evil.example" });
  eq(evil.status, 403, "POST /mcp with Origin https://evil.example");
  const body = await evil.json();
  check(/Origin "https:\/\/evil.example" is not this listener's/.test(body.error ?? ""), `403 body: ${JSON.stringify(body)}`);
  const base = url.replace(/\/mcp$/, "");
  const evilAPI = await fetch(`${base}/api/list_sessions`, { method: "POST", headers: { Origin: "https://evil.example", ...auth }, body: "{}" });
  eq(evilAPI.status, 403, "POST /api/list_sessions with a foreign Origin");
  const crossSite = await post({ "Sec-Fetch-Site": "cross-site" });
  eq(crossSite.status, 403, "POST /mcp marked Sec-Fetch-Site: cross-site");

  step = "HTTP guard: the listener's own Origin";
  const own = await post({ Origin: new URL(url).origin });
  eq(own.status, 200, "POST /mcp initialize with the listener's own Origin");
  const sid = own.headers.get("mcp-session-id");
  await own.text();
  if (sid) await fetch(url, { method: "DELETE", headers: { "Mcp-Session-Id": sid, ...auth } });

  if (opt.origin) {
    // A browser page on the allowed origin: its preflight is answered
    // without the token, and it may read the session ID; the foreign one
    // above got no CORS headers.
    step = "HTTP guard: CORS for the allowed origin";
    eq(evil.headers.get("access-control-allow-origin"), null, "CORS headers for a foreign Origin");
    const pre = await fetch(url, { method: "OPTIONS", headers: { Origin: opt.origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id" } });
    eq([pre.status, pre.headers.get("access-control-allow-origin")], [204, opt.origin], "preflight from the allowed origin");
    const allowed = (pre.headers.get("access-control-allow-headers") ?? "").toLowerCase();
    for (const h of ["mcp-session-id", "mcp-protocol-version", "last-event-id", "authorization", "content-type"]) check(allowed.includes(h), `preflight allows ${allowed}, not ${h}`);
    const page = await post({ Origin: opt.origin, "Sec-Fetch-Site": "cross-site" });
    eq([page.status, page.headers.get("access-control-allow-origin")], [200, opt.origin], "initialize from the allowed origin");
    check((page.headers.get("access-control-expose-headers") ?? "").toLowerCase().includes("mcp-session-id"), "Mcp-Session-Id is not exposed");
    const psid = page.headers.get("mcp-session-id");
    await page.text();
    if (psid) await fetch(url, { method: "DELETE", headers: { "Mcp-Session-Id": psid, ...auth } });
    stats.cors = "ok";
  }

  if (token) {
    step = "HTTP guard: token";
    const none = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" }, body: init });
    eq(none.status, 401, "POST /mcp without the token");
    check((none.headers.get("www-authenticate") ?? "").startsWith("Bearer"), "401 names the Bearer scheme");
    const wrong = await post({ Authorization: "Bearer not-the-token" });
    eq(wrong.status, 401, "POST /mcp with a wrong token");
  }
}

async function main() {
  const names = await weftTools();

  step = "stdio connect";
  const stdio = new StdioClientTransport({ command: WEFT, args: ["--db", opt.db, "mcp"], stderr: "pipe" });
  let serverErr = "";
  stdio.stderr?.on("data", (d) => (serverErr += d));
  const c1 = new Client({ name: CLIENT_NAME, version: "1.0.0" });
  try {
    await c1.connect(stdio);
    await exercise("stdio", c1, names);
  } catch (e) {
    if (serverErr) e.message += `\nweft mcp stderr: ${serverErr.slice(0, 2000)}`;
    throw e;
  } finally {
    await c1.close();
  }

  step = "http connect";
  const http = new StreamableHTTPClientTransport(new URL(opt.url), { requestInit: { headers: opt.token ? { Authorization: `Bearer ${opt.token}` } : {} } });
  const c2 = new Client({ name: CLIENT_NAME, version: "1.0.0" });
  await c2.connect(http);
  try {
    check(http.sessionId, "no Mcp-Session-Id after initialize");
    await exercise("http", c2, names);
    step = "http DELETE session";
    await http.terminateSession();
  } finally {
    await c2.close();
  }

  await guard(opt.url, opt.token);
  stats.guard = "ok";
}

try {
  await main();
  for (const [t, s] of Object.entries(stats)) {
    if (typeof s === "object") console.log(`sdk/${t}: ok: ${s.tool_calls} tool calls, ${s.resources_read} resources read, ${s.sessions_listed} sessions listed as resources, ${s.completions} completions, ${s.prompts} prompt, ${s.error_paths} error paths`);
  }
  console.log("sdk/http guard: ok: foreign Origin 403, cross-site 403, own Origin 200" + (opt.token ? ", no or wrong token 401" : "") + (opt.origin ? `, CORS for ${opt.origin} only` : ""));
  console.log("RESULT " + JSON.stringify(stats));
} catch (e) {
  console.error(`sdk: FAIL: ${e.message}`);
  if (!(e instanceof Failure)) console.error(e.stack);
  process.exit(1);
}
