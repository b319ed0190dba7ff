// Drives the MCP Inspector CLI (a client weft's team did not write)
// against weft, one inspector process per request, and checks the JSON of
// every answer: tools/list, every tool at least once on the prepared
// session, every resource and template, the startup prompt, and the
// tool-error path (exit code 5 and the error text).
//
//   node interop/inspector.mjs --transport stdio --db FILE --session ID
//   node interop/inspector.mjs --transport http --url URL/mcp --token T --db FILE --session ID
//
// Over http, --db is the file the running weft serve holds: an inspector
// that launches `weft --db FILE mcp` on it must reach the same thread
// through weft's relay. The environment names the programs: WEFT_BIN (the
// weft binary) and WEFT_INSPECTOR_CLI (the inspector's cli/build/index.js).
// The last line printed is RESULT {json} with what was exercised; any
// failure exits 1 with the request and the answer.

import { execFile } from "node:child_process";
import { parseArgs } from "node:util";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const { values: opt } = parseArgs({
  options: {
    transport: { type: "string" },
    db: { type: "string" },
    url: { type: "string" },
    token: { type: "string", default: "" },
    session: { type: "string" },
    other: { type: "string", default: "" },
  },
});
const WEFT = process.env.WEFT_BIN;
const CLI = process.env.WEFT_INSPECTOR_CLI;
const T = opt.transport;
if (!WEFT || !CLI || !opt.db || !opt.session || !["stdio", "http"].includes(T) || (T === "http" && !opt.url)) {
  console.error("usage: WEFT_BIN=… WEFT_INSPECTOR_CLI=… node interop/inspector.mjs --transport stdio|http --db FILE --session ID [--url URL --token T]");
  process.exit(2);
}
const S = opt.session;
const label = `inspector/${T}`;

// The inspector keeps a catalog and client config under HOME: give it a
// scratch one, so CI leaves nothing behind and reads nothing stale.
const home = mkdtempSync(join(tmpdir(), "weft-inspector-home-"));
const inspectorEnv = { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, "mcp.json"), MCP_CLIENT_CONFIG_PATH: join(home, "client.json") };

const stats = { transport: T, tool_calls: 0, tools: new Set(), resources_read: 0, templates: 0, prompts: 0, error_paths: 0, relay: { tool_calls: 0, resources_read: 0 }, schema_errors: 0, schema_warnings: 0, inspector_ms: [] };
let step = "start";

class Failure extends Error {}

function fail(msg, detail) {
  const e = new Failure(`${step}: ${msg}`);
  e.detail = detail;
  throw e;
}

function check(cond, msg, detail) {
  if (!cond) fail(msg, detail);
}

function eq(got, want, what, detail) {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) fail(`${what}: got ${g}, want ${w}`, detail);
}

// target is how the inspector reaches weft: it launches weft over stdio,
// or connects over Streamable HTTP with the bearer token.
function target(via = T) {
  if (via === "stdio" || via === "relay") return [WEFT, "--db", opt.db, "mcp"];
  const t = [opt.url, "--transport", "http", "--stored-auth-only"];
  if (opt.token) t.push("--header", `Authorization: Bearer ${opt.token}`);
  return t;
}

// inspector runs one inspector process and returns its exit code and its
// parsed stdout/stderr JSON.
function inspector(args, via = T) {
  // The relayed weft mcp needs the token of the weft it relays to; the
  // inspector hands a stdio server only the environment it is given.
  const env = via === "relay" && opt.token ? ["-e", `WEFT_TOKEN=${opt.token}`] : [];
  const argv = [CLI, ...env, ...target(via), ...args, "--format", "json", "-q"];
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    execFile("node", argv, { env: inspectorEnv, maxBuffer: 64 << 20, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") {
        reject(new Failure(`${step}: the inspector did not run: ${err.message}`));
        return;
      }
      const parse = (s) => {
        try {
          return s.trim() ? JSON.parse(s) : undefined;
        } catch {
          return undefined;
        }
      };
      stats.inspector_ms.push(performance.now() - t0);
      resolve({ code: err ? err.code : 0, out: parse(stdout), err: parse(stderr), stdout, stderr, argv: argv.slice(1) });
    });
  });
}

function show(r) {
  return `request: inspector ${r.argv.map((a) => (/[\s{"']/.test(a) ? `'${a}'` : a)).join(" ")}\nexit ${r.code}\nstdout: ${r.stdout.slice(0, 2000)}\nstderr: ${r.stderr.slice(0, 2000)}`;
}

// call runs a tool that must succeed and returns its result, read from
// structuredContent and checked against the text content.
async function call(tool, args = {}, via = T) {
  const r = await inspector(["--method", "tools/call", "--tool-name", tool, "--tool-args-json", JSON.stringify(args)], via);
  if (r.code !== 0 || !r.out?.result) fail(`${tool} failed (exit ${r.code})`, show(r));
  const res = r.out.result;
  if (res.isError) fail(`${tool} answered isError`, show(r));
  const text = res.content?.find((c) => c.type === "text")?.text;
  check(typeof text === "string", `${tool}: no text content`, show(r));
  let fromText;
  try {
    fromText = JSON.parse(text);
  } catch {
    fail(`${tool}: text content is not JSON`, show(r));
  }
  if (res.structuredContent !== undefined) {
    eq(res.structuredContent, fromText, `${tool}: structuredContent and text differ`, show(r));
  }
  if (via === "relay") stats.relay.tool_calls++;
  else {
    stats.tool_calls++;
    stats.tools.add(tool);
  }
  return fromText;
}

// callError runs a tool that must be refused: exit code 5, isError with
// the reason in the text, and the inspector's error envelope on stderr.
async function callError(tool, args, want) {
  const r = await inspector(["--method", "tools/call", "--tool-name", tool, "--tool-args-json", JSON.stringify(args)]);
  eq(r.code, 5, `${tool} refused: exit code`, show(r));
  check(r.out?.result?.isError === true, `${tool}: want isError: true`, show(r));
  const text = r.out.result.content?.map((c) => c.text ?? "").join("") ?? "";
  check(want.test(text), `${tool}: error text ${JSON.stringify(text)} does not match ${want}`, show(r));
  eq(r.err?.error?.code, "tool_is_error", `${tool}: stderr envelope code`, show(r));
  stats.error_paths++;
  return text;
}

async function method(args, via = T) {
  const r = await inspector(args, via);
  if (r.code !== 0 || !r.out?.result) fail(`${args.join(" ")} failed (exit ${r.code})`, show(r));
  return r.out.result;
}

async function range(start, end, view) {
  const a = { session_id: S, start_idx: start, end_idx: end };
  if (view) a.view = view;
  return call("get_message_range", a);
}

// verify reads state without the inspector, to check what its edits
// did: weft's own CLI on the file between stdio runs, or the HTTP API of
// the weft serve that holds it. Every inspector run costs a second of
// node start-up; these cost milliseconds.
async function verify(tool, args) {
  if (T === "http") {
    const resp = await fetch(`${opt.url.replace(/\/mcp$/, "")}/api/${tool}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(opt.token ? { Authorization: `Bearer ${opt.token}` } : {}) },
      body: JSON.stringify(args),
    });
    const body = await resp.text();
    if (resp.status !== 200) fail(`POST /api/${tool} ${JSON.stringify(args)}: ${resp.status} ${body}`);
    return JSON.parse(body);
  }
  return new Promise((resolve, reject) => {
    execFile(WEFT, ["--db", opt.db, "call", tool, JSON.stringify(args)], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Failure(`${step}: weft call ${tool} ${JSON.stringify(args)}: ${stderr || err.message}`));
      resolve(JSON.parse(stdout));
    });
  });
}

const total = async () => (await verify("get_message_range", { session_id: S, start_idx: 0, end_idx: 0 })).total;

// par runs independent reads at once over HTTP, where requests share one
// server; over stdio every request launches its own weft on the file, and
// two at once would find it locked, so they run one after another.
async function par(fns) {
  if (T === "http") return Promise.all(fns.map((f) => f()));
  const out = [];
  for (const f of fns) out.push(await f());
  return out;
}

const readOnlyTools = new Set([
  "list_sessions", "search_sessions", "get_session_history", "list_operations", "diff_session", "get_session_by_room",
  "get_conversation_context", "get_turns_since", "get_turns_around",
  "search_session_history", "get_message_range", "get_startup_context",
  "get_memory_policy", "get_tiered_history", "format_history_for_prompt",
]);

async function weftTools() {
  return new Promise((resolve, reject) => {
    execFile(WEFT, ["tools"], (err, stdout) => {
      if (err) return reject(err);
      resolve(stdout.split("\n").filter((l) => /^[a-z_]+\(/.test(l)).map((l) => l.slice(0, l.indexOf("("))));
    });
  });
}

async function main() {
  step = "weft tools";
  const names = await weftTools();
  check(names.length >= 20, `weft tools listed ${names.length} tools`);

  step = "tools/list";
  const listed = await method(["--method", "tools/list"]);
  const byName = new Map(listed.tools.map((t) => [t.name, t]));
  for (const n of names) {
    const t = byName.get(n);
    check(t, `tool ${n} (from weft tools) is not listed`);
    check(t.description?.length > 10, `${n}: no description`);
    eq(t.inputSchema?.type, "object", `${n}: inputSchema.type`);
    check(t.inputSchema.properties && typeof t.inputSchema.properties === "object", `${n}: inputSchema has no properties`);
    const a = t.annotations;
    check(a && typeof a.readOnlyHint === "boolean" && typeof a.destructiveHint === "boolean" && typeof a.idempotentHint === "boolean", `${n}: annotations missing or incomplete: ${JSON.stringify(a)}`);
    eq(a.readOnlyHint, readOnlyTools.has(n), `${n}: readOnlyHint`);
    // Every edit is a reversible operation, but a revert cannot be undone
    // by any tool, nor a session's deletion: those alone are destructive.
    eq(a.destructiveHint, n === "revert_operation" || n === "delete_session", `${n}: destructiveHint`);
    eq(a.openWorldHint === true, n === "summarize_message_range", `${n}: openWorldHint`);
    if (a.readOnlyHint) eq(a.idempotentHint, true, `${n}: a read-only tool is idempotent`);
  }
  eq(listed.tools.length, names.length, "tools listed");

  // The inspector's --strict review of the schemas: how portable they are
  // to clients that map them onto narrower dialects. Legal JSON Schema
  // that it flags is reported, and fails the run only when
  // WEFT_INTEROP_STRICT=1.
  if (T === "http") {
    step = "tools/list --strict";
    const strict = await inspector(["--method", "tools/list", "--strict"]);
    const m = /(\d+) errors?, (\d+) warnings?/.exec(strict.stderr);
    check(strict.code === 0 || (strict.code === 6 && m), "tools/list --strict did not report", show(strict));
    if (m) [stats.schema_errors, stats.schema_warnings] = [Number(m[1]), Number(m[2])];
    if (strict.code === 6) {
      const first = [...strict.stderr.matchAll(/^Error: tool "([^"]+)"\n\s+Path: (\S+)\n\s+Issue: ([^\n]+)/gm)].slice(0, 3).map((x) => `${x[1]} ${x[2]}: ${x[3]}`);
      console.log(`${label}: WARN: inspector --strict finds ${m[1]} schema portability errors and ${m[2]} warnings, e.g.\n  ${first.join("\n  ")}`);
      if (process.env.WEFT_INTEROP_STRICT === "1") fail("schema portability errors (WEFT_INTEROP_STRICT=1)");
    }
  }
  if (T === "http") {
    // The HTTP API's tool list is the same registry: the hints agree.
    const base = opt.url.replace(/\/mcp$/, "");
    const resp = await fetch(`${base}/api`, { headers: opt.token ? { Authorization: `Bearer ${opt.token}` } : {} });
    eq(resp.status, 200, "GET /api status");
    const api = await resp.json();
    for (const t of api.tools) {
      const a = byName.get(t.name)?.annotations;
      check(a, `GET /api lists ${t.name}, tools/list does not`);
      eq([a.readOnlyHint, a.destructiveHint, a.idempotentHint], [t.read_only, t.destructive, t.idempotent], `${t.name}: MCP annotations vs GET /api`);
    }
  }

  // The prepared session: 24 stored messages m1..m24, index i is m(i+1),
  // one every ten minutes from 2026-01-26T09:00Z.
  step = "prepared session";
  const [sessions, all] = await par([() => call("list_sessions", {}), () => range(0, 23)]);
  const info = sessions.sessions.find((s) => s.session_id === S);
  check(info, `list_sessions does not list ${S}`, JSON.stringify(sessions));
  eq([info.message_count, info.op_count], [24, 0], "prepared session's messages and operations");
  eq(all.total, 24, "effective items");
  eq(all.messages.map((m) => m.id), Array.from({ length: 24 }, (_, i) => `m${i + 1}`), "item IDs");
  const v0 = all.version;

  // Edits, each checked in the thread it leaves.
  step = "tag_messages";
  const tag = await call("tag_messages", { session_id: S, start_idx: 1, end_idx: 6, tags: ["cache"], expected_version: v0 });
  eq([tag.success, tag.tag_count, tag.message_count], [true, 1, 6], "tag result");
  check(tag.version > v0, "version did not advance");

  step = "digest_messages";
  const dig = await call("digest_messages", { session_id: S, start_idx: 7, end_idx: 10, summary: "Side discussion: mutex, semaphore and read-write lock.", expected_version: tag.version });
  check(dig.operation_id && dig.version > tag.version, "digest result", JSON.stringify(dig));

  step = "revise_messages";
  const rev = await call("revise_messages", { session_id: S, start_idx: 9, end_idx: 9, replacements: [{ role: "assistant", content: "Coalesce requests (single flight) and add jitter to the TTL." }] });
  check(rev.operation_id, "revise result", JSON.stringify(rev));

  step = "snip_messages";
  const snip = await call("snip_messages", { session_id: S, start_idx: 10, end_idx: 11 });
  check(snip.operation_id, "snip result", JSON.stringify(snip));

  step = "resequence_messages";
  const reseq = await call("resequence_messages", { session_id: S, new_order: [11, 10] });
  check(reseq.operation_id, "resequence result", JSON.stringify(reseq));

  step = "insert_messages";
  const ins = await call("insert_messages", { session_id: S, after_idx: 18, messages: [{ role: "assistant", content: "Ticket note: memcached, coalescing, one-region rollout." }] });
  check(ins.operation_id, "insert result", JSON.stringify(ins));

  step = "the edited thread";
  const after = await range(0, 19);
  eq(after.total, 20, "items after the edits");
  const ids = after.messages.map((m) => m.id);
  eq(ids.slice(0, 7), ["m1", "m2", "m3", "m4", "m5", "m6", "m7"], "items before the digest");
  eq(after.messages[7].content, "Side discussion: mutex, semaphore and read-write lock.", "the digest's summary at 7");
  eq([after.messages[7].role, after.messages[7].synthetic, after.messages[7].op_id], ["system", true, dig.operation_id], "the digest item");
  eq([after.messages[9].synthetic, after.messages[9].op_id, after.messages[9].content], [true, rev.operation_id, "Coalesce requests (single flight) and add jitter to the TTL."], "the revision at 9");
  check(!ids.includes("m14") && !ids.includes("m15"), "snipped m14, m15 are still there", JSON.stringify(ids));
  eq(ids.slice(10, 12), ["m17", "m16"], "resequenced items at 10, 11");
  eq([after.messages[19].op_id, after.messages[19].content], [ins.operation_id, "Ticket note: memcached, coalescing, one-region rollout."], "the insertion at 19");
  eq(after.messages[1].tags, ["cache"], "tags on item 1");
  eq(after.messages[0].tags, [], "tags on item 0");

  step = "list_operations";
  const opsList = await call("list_operations", { session_id: S });
  eq(opsList.operations.map((o) => o.op_type), ["tag", "digest", "revise", "snip", "resequence", "insert"], "operation types");
  eq(opsList.operations.map((o) => o.operation_id), [tag.operation_id, dig.operation_id, rev.operation_id, snip.operation_id, reseq.operation_id, ins.operation_id], "operation IDs");
  for (const o of opsList.operations) {
    eq(o.status, "active", `status of ${o.op_type}`);
    // The inspector names itself inspector-cli in initialize.
    eq(o.author, "inspector-cli", `author of ${o.op_type}`);
  }
  eq(opsList.operations[3].targets, ["m14", "m15"], "snip targets");

  step = "toggle_operation";
  const off = await call("toggle_operation", { operation_id: snip.operation_id, active: false });
  eq([off.success, off.status], [true, "inactive"], "toggled off");
  eq(await total(), 22, "items with the snip off");
  const on = await call("toggle_operation", { operation_id: snip.operation_id, session_id: S, active: true, expected_version: off.version });
  eq(on.status, "active", "toggled on");

  step = "revert_operation";
  const rv = await call("revert_operation", { operation_id: ins.operation_id, expected_version: on.version });
  eq([rv.success, rv.status], [true, "reverted"], "reverted");
  eq(await total(), 19, "items after the revert");

  step = "set_active_tags";
  const cond = await call("snip_messages", { session_id: S, start_idx: 0, end_idx: 0, when_tags: ["terse"] });
  eq(await total(), 19, "a snip whose when_tags are not active changes nothing");
  const set = await call("set_active_tags", { session_id: S, tags: ["terse"] });
  eq(set.active_tags, ["terse"], "active tags");
  const terse = await verify("get_message_range", { session_id: S, start_idx: 0, end_idx: 0 });
  eq([terse.total, terse.messages[0].id], [18, "m2"], "with terse active the system message is snipped");
  const cleared = await call("set_active_tags", { session_id: S, tags: [] });
  eq(cleared.active_tags ?? [], [], "active tags cleared");
  check(cond.operation_id, "conditional snip result");

  // Navigation, over the edited thread (19 items; the digest covers
  // m8..m11, 10:10-10:40).
  step = "navigation";
  const [ctx, since, around, sub, fuzzy, raw, hist] = await par([
    () => call("get_conversation_context", { session_id: S, turns: 40 }),
    () => call("get_turns_since", { session_id: S, timestamp: "2026-01-26T12:00:00Z" }),
    () => call("get_turns_around", { session_id: S, timestamp: "2026-01-26T11:00:00Z", count: 4 }),
    () => call("search_session_history", { session_id: S, query: "memcached" }),
    () => verify("search_session_history", { session_id: S, query: "rollout plan", mode: "fuzzy", limit: 3 }),
    () => verify("get_message_range", { session_id: S, start_idx: 0, end_idx: 23, view: "raw" }),
    () => call("get_session_history", { session_id: S, format: "markdown", limit: 5 }),
  ]);
  // 18 unsummarized turns (17 stored messages and the revision of m13)
  // are all given raw; the digest covers the rest.
  eq([ctx.unsummarized_count, ctx.raw_turns_count, ctx.raw_turns.at(-1)?.id], [18, 18, "m24"], "raw turns");
  check(ctx.summaries.some((s) => s.op_id === dig.operation_id && s.message_count === 4), "get_conversation_context gives the digest as a summary", JSON.stringify(ctx.summaries));
  eq(since.messages.map((m) => m.id), ["m19", "m20", "m21", "m22", "m23", "m24"], "turns since 12:00");
  eq(since.messages_count, 6, "messages_count");
  // 11:00 falls between m12 (10:50) and the revision of m13 (11:00).
  eq([around.before_count, around.after_count, around.messages.map((m) => m.id)], [2, 2, [`${dig.operation_id}/0`, "m12", `${rev.operation_id}/0`, "m17"]], "turns around 11:00");
  eq(sub.total_matches, 5, "substring matches for memcached");
  check(fuzzy.matches.length >= 1 && fuzzy.matches.length <= 3, "fuzzy matches within the limit", JSON.stringify(fuzzy));
  eq([raw.total, raw.messages.length, raw.messages[13].id], [24, 24, "m14"], "the raw view keeps every stored message");
  check(hist.text.includes("Summarise the decisions for the ticket"), "markdown history has the last message", hist.text.slice(0, 400));
  eq([hist.format, hist.count], ["markdown", 5], "history format and count");

  // Context control: a pending slice is used by the next assembly, once.
  step = "request_context_slice";
  const slice = await call("request_context_slice", { session_id: S, start_message_index: 1, end_message_index: 4 });
  eq([slice.success, slice.pending.first_id, slice.pending.last_id, slice.pending.requested_by], [true, "m2", "m5", "inspector-cli"], "pending slice");
  step = "assemble_context (consumes the slice)";
  const asm1 = await call("assemble_context", { session_id: S, format: "openai" });
  eq(asm1.preferences_used?.first_id, "m2", "preferences used");
  eq(asm1.messages.map((m) => m.content.slice(0, 20)), all.messages.slice(1, 5).map((m) => m.content.slice(0, 20)), "the slice's messages");
  step = "assemble_context (nothing pending)";
  const asm2 = await call("assemble_context", { session_id: S });
  eq(asm2.preferences_used, null, "preferences used the second time");
  eq(asm2.message_count, 19, "the whole effective thread");
  check(!asm2.messages.some((m) => m.content.includes("price:v2")), "a snipped message reached the assembled context");
  step = "assemble_context (anthropic, budget)";
  const asm3 = await verify("assemble_context", { session_id: S, format: "anthropic", max_tokens: 200 });
  check(asm3.anthropic && asm3.anthropic.system?.includes("careful engineering assistant"), "anthropic body keeps the system prompt", JSON.stringify(asm3).slice(0, 400));
  check(asm3.tokens <= 200 && asm3.left_out > 0, `budget of 200 tokens: tokens ${asm3.tokens}, left out ${asm3.left_out}`);

  step = "summarize_message_range";
  const sum = await call("summarize_message_range", { session_id: S, start_idx: 12, end_idx: 15, source: "extractive" });
  eq([sum.source, sum.stored, sum.message_count], ["extractive", false, 4], "extractive draft");
  check(sum.summary.length > 20, "summary text", sum.summary);
  const stored = await call("summarize_message_range", { session_id: S, start_idx: 12, end_idx: 15, source: "extractive", store: true });
  check(stored.stored && stored.operation_id, "stored summary", JSON.stringify(stored));

  step = "get_startup_context";
  const startup = await call("get_startup_context", { session_id: S, summaries: 2 });
  eq(startup.summaries.map((s) => s.op_id), [dig.operation_id, stored.operation_id], "the two latest summaries");
  // Turns: the stored messages shown, and the revision of m13.
  eq(startup.unsummarized_count, 14, "unsummarized turns");
  eq(startup.unsummarized.map((m) => m.id), ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m12", `${rev.operation_id}/0`, "m17", "m16", "m22", "m23", "m24"], "unsummarized turns, in thread order");

  // The pre-request hook: the caller's thread is the stored one plus one
  // new message; it comes back with the operations applied.
  step = "apply_context_operations";
  const callerThread = all.messages.map((m) => ({ role: m.role, content: m.content }));
  callerThread.push({ role: "user", content: "Add the ticket number PRICE-42." });
  const hook = await call("apply_context_operations", { session_id: S, messages: callerThread });
  eq([hook.recognized, hook.appended, hook.appended_ids], [24, 1, ["m25"]], "recognised and appended");
  eq(hook.messages.at(-1).content, "Add the ticket number PRICE-42.", "the new message comes back last");
  check(!hook.messages.some((m) => m.content.includes("price:v2")), "the snip applies to the caller's thread");
  check(hook.messages.some((m) => m.content === "Side discussion: mutex, semaphore and read-write lock."), "the digest applies to the caller's thread");

  // The memory policy, on a session of its own (deleted after): set,
  // it digests the oldest turns at once, by memory; the tiers and the
  // history for a prompt say so.
  step = "memory";
  const mem = await call("create_session", { title: "memory policy" });
  const M = mem.session_id;
  const turns = [];
  for (let k = 0; k < 12; k++) turns.push({ role: "user", content: `Question ${k}: what does the cache key on?` }, { role: "assistant", content: `Answer ${k}: on the prefix, byte for byte.` });
  await call("append_messages", { session_id: M, messages: turns });
  const p0 = await call("get_memory_policy", { session_id: M });
  eq(p0.policy, null, "no policy yet");
  const p1 = await call("set_memory_policy", { session_id: M, max_active_turns: 10 });
  eq([p1.policy.max_active_turns, p1.policy.summary_turn_count, p1.check.made.length, p1.check.made[0].rule], [10, 5, 1, "turns"], "set_memory_policy digests the oldest five turns at once");
  const tiers = await call("get_tiered_history", { session_id: M });
  eq([tiers.active.turns, tiers.summaries.length, tiers.summaries[0].author, tiers.summaries[0].turns], [7, 1, "memory", 5], "get_tiered_history");
  const memHist = await call("format_history_for_prompt", { session_id: M, max_tokens: 500 });
  check(memHist.tokens <= 500 && memHist.history.startsWith("[summary]") && memHist.history.includes("Answer 11"), "format_history_for_prompt", JSON.stringify(memHist).slice(0, 400));
  const forced = await call("summarize_conversation", { session_id: M });
  eq(forced.made.length, 1, "summarize_conversation makes one digest now");
  await callError("set_memory_policy", { session_id: M, max_active_turns: 0 }, /max_active_turns 0 must be 1 or more/);
  await call("delete_session", { session_id: M });

  // Sessions.
  step = "sessions";
  const created = await call("create_session", { title: "inspector scratch", source: "interop" });
  const N = created.session_id;
  check(/^\w+$/.test(N ?? ""), "create_session gave no ID", JSON.stringify(created));
  const turn = await call("add_turn", { session_id: N, query: "Is the inspector connected?", response: "Yes, over " + T + "." });
  eq(turn.appended, 2, "add_turn appended");
  const app = await call("append_messages", { session_id: N, messages: [{ role: "user", content: "One more message about PRICE-42." }], expected_version: turn.version });
  eq([app.appended, app.ids], [1, ["m3"]], "append_messages");
  const [found, foundTitle, hist2, list2] = await par([
    () => call("search_sessions", { query: "PRICE-42" }),
    () => verify("search_sessions", { query: "inspector scratch" }),
    () => verify("get_session_history", { session_id: N, format: "json" }),
    () => verify("list_sessions", { limit: 1 }),
  ]);
  eq(found.sessions.map((m) => [m.session.session_id, m.matched, m.content_matches]).sort(), [[S, ["content"], 1], [N, ["content"], 1]].sort(), "sessions mentioning PRICE-42");
  check(found.sessions.every((m) => m.snippets.some((sn) => sn.snippet.includes("PRICE-42"))), "search_sessions snippets show the match", JSON.stringify(found));
  check(foundTitle.sessions.some((m) => m.session.session_id === N && m.matched.includes("title")), "search_sessions finds the title", JSON.stringify(foundTitle));
  eq(hist2.messages.map((m) => m.role), ["user", "assistant", "user"], "the new session's history");
  eq([list2.sessions.length, list2.sessions[0].session_id, list2.total], [1, N, 3], "list_sessions limit 1: the latest");
  // A session made to be renamed and deleted: the file is as it was.
  const tmp = await call("create_session", { title: "to delete" });
  const ren = await call("rename_session", { session_id: tmp.session_id, title: "renamed, then deleted" });
  eq(ren.title, "renamed, then deleted", "rename_session");
  const del = await call("delete_session", { session_id: tmp.session_id });
  eq([del.session_id, del.title], [tmp.session_id, "renamed, then deleted"], "delete_session");
  await callError("delete_session", { session_id: tmp.session_id }, /not found/);
  // A fork of the new session, the diff of the edited one, a room's one
  // session: each made and then deleted, so the file is as it was.
  const fork = await call("fork_session", { session_id: N, at_idx: 1, title: "inspector fork" });
  eq([fork.items, fork.fork_of.session_id], [2, N], "fork_session: the first two items of the session");
  const diffed = await call("diff_session", { session_id: S });
  check(typeof diffed.text === "string" && Array.isArray(diffed.hunks), "diff_session gives hunks and a unified diff", JSON.stringify(diffed).slice(0, 300));
  await call("delete_session", { session_id: fork.session_id });
  const room = await call("create_session", { room: "!inspector:room", interface: "inspector" });
  const again = await call("create_session", { room: "!inspector:room", interface: "inspector" });
  eq([again.session_id, again.existing], [room.session_id, true], "create_session: one session per room and interface");
  const byRoom = await call("get_session_by_room", { room: "!inspector:room", interface: "inspector" });
  eq(byRoom.session_id, room.session_id, "get_session_by_room");
  await call("delete_session", { session_id: room.session_id });

  // Refused requests: exit 5, isError and a reason that says what is right.
  step = "errors";
  await callError("digest_messages", { session_id: S, start_idx: 5, end_idx: 99, summary: "x" }, /end_idx 99 is past the end of the thread/);
  await callError("tag_messages", { session_id: S, start_idx: 0, end_idx: 0, tags: ["late"], expected_version: v0 }, /is at version \d+, not \d+: since then/);
  await callError("tag_messages", { session_id: S, start_idx: 0, end_idx: 0, tags: ["x"], colour: "red" }, /has no argument "colour"/);
  const unknown = await inspector(["--method", "tools/call", "--tool-name", "no_such_tool", "--tool-args-json", "{}"]);
  eq(unknown.code, 5, "unknown tool: exit code", show(unknown));
  eq(unknown.err?.error?.code, "tool_not_found", "unknown tool: envelope", show(unknown));
  stats.error_paths++;
  step = "the refused requests changed nothing";
  const afterErrors = await verify("list_operations", { session_id: S });
  eq(afterErrors.operations.length, 8, "operations after the refused requests");

  // Resources and the prompt.
  step = "resources";
  const [rl, tl] = await par([() => method(["--method", "resources/list"]), () => method(["--method", "resources/templates/list"])]);
  // The fixed resources, then one per session (three fit on a page).
  const sessionURI = /^weft:\/\/sessions\/([^/]+)$/;
  eq(rl.resources.filter((r) => !sessionURI.test(r.uri) || r.uri === "weft://sessions/recent").map((r) => r.uri).sort(), ["weft://sessions", "weft://sessions/recent"], "resources");
  const asResources = rl.resources.filter((r) => sessionURI.test(r.uri) && r.uri !== "weft://sessions/recent");
  check(!rl.nextCursor && asResources.length === 3, "three sessions listed as resources", JSON.stringify(rl).slice(0, 600));
  const ours = asResources.find((r) => r.uri === `weft://sessions/${S}`);
  check(ours && ours.title === "interop thread" && ours.mimeType === "application/json" && /\d+ messages/.test(ours.description), "the session's resource", JSON.stringify(ours));
  eq(tl.resourceTemplates.map((r) => r.uriTemplate).sort(), ["weft://rooms/{room}{?max_tokens,cursor}", "weft://search/{query}{?max_tokens,cursor}", "weft://sessions/recent{?max_tokens}", "weft://sessions/{id}/context{?max_tokens,cursor}", "weft://sessions/{id}{?max_tokens,cursor}", "weft://sessions{?max_tokens,cursor}"], "resource templates");
  stats.templates = tl.resourceTemplates.length;
  const read = async (uri) => {
    const res = await method(["--method", "resources/read", "--uri", uri]);
    const c = res.contents?.[0];
    check(c && c.uri === uri && c.mimeType === "application/json", `${uri}: contents`, JSON.stringify(res).slice(0, 400));
    stats.resources_read++;
    return JSON.parse(c.text);
  };
  const [rs, rr, rsess, rctx] = await par([
    () => read("weft://sessions"),
    () => read("weft://sessions/recent"),
    () => read(`weft://sessions/${S}`),
    () => read(`weft://sessions/${S}/context`),
  ]);
  eq(rs.total, 3, "weft://sessions total");
  eq(asResources.map((r) => sessionURI.exec(r.uri)[1]).sort(), rs.sessions.map((s) => s.session_id).sort(), "the sessions listed as resources are weft://sessions'");
  check(rs.sessions.some((s) => s.session_id === S && s.op_count === 8), "weft://sessions lists the edited session", JSON.stringify(rs.sessions));
  eq(rr.sessions[0].session_id, N, "weft://sessions/recent: the latest first");
  check(rr.sessions[0].latest_messages.length === 3, "recent: the latest messages", JSON.stringify(rr.sessions[0]));
  eq(rsess.session.session_id, S, "weft://sessions/{id}: the session");
  eq(rsess.context.raw_turns.at(-1).id, "m25", "weft://sessions/{id}: the latest turn");
  eq([rctx.session.session_id, rctx.summaries.length, rctx.unsummarized_count], [S, 2, 15], "weft://sessions/{id}/context");
  // A budget in the query: the package fitted to it, and the URI that
  // reads on.
  const small = await read(`weft://sessions/${S}/context?max_tokens=1000`);
  check(small.result_tokens <= 1000 && small.max_tokens === 1000 && small.omitted > 0 && small.next_uri?.startsWith(`weft://sessions/${S}/context?cursor=`), "weft://sessions/{id}/context?max_tokens=1000 is fitted and reads on", JSON.stringify(small).slice(0, 400));
  const missing = await inspector(["--method", "resources/read", "--uri", "weft://sessions/nosuchsession"]);
  check(missing.code !== 0 && /not found/.test(missing.stderr), "reading a missing session is refused with the reason", show(missing));

  step = "prompts";
  const pl = await method(["--method", "prompts/list"]);
  check(pl.prompts.some((p) => p.name === "startup"), "prompts/list has startup", JSON.stringify(pl));
  const pg = await method(["--method", "prompts/get", "--prompt-name", "startup", "--prompt-args", `session_id=${S}`, "summaries=1"]);
  const ptext = pg.messages?.[0]?.content?.text ?? "";
  check(ptext.startsWith("Startup context for \"interop thread\""), "startup prompt text", ptext.slice(0, 300));
  check(ptext.includes("## Summaries") && ptext.includes("Add the ticket number PRICE-42."), "startup prompt has the summary and the latest turn", ptext.slice(0, 600));
  stats.prompts++;

  if (T === "http") {
    // A client that launches `weft mcp` on the file weft serve holds is
    // relayed to it: same tools, and its edits land in the same thread
    // under its own name.
    step = "relay (weft mcp on a held file)";
    const rlist = await method(["--method", "tools/list"], "relay");
    eq(rlist.tools.length, names.length, "tools over the relay");
    const rtag = await call("tag_messages", { session_id: S, start_idx: 0, end_idx: 0, tags: ["relayed"] }, "relay");
    check(rtag.success, "tag over the relay");
    const seen = await verify("list_operations", { session_id: S });
    const last = seen.operations.at(-1);
    eq([last.operation_id, last.tags, last.author], [rtag.operation_id, ["relayed"], "inspector-cli"], "the relayed edit, seen over HTTP");
    const rread = await method(["--method", "resources/read", "--uri", `weft://sessions/${S}/context`], "relay");
    check(JSON.parse(rread.contents[0].text).session.session_id === S, "a resource over the relay");
    stats.relay.resources_read++;
  }

  for (const n of names) check(stats.tools.has(n), `tool ${n} was never called`);
}

try {
  await main();
  const ms = stats.inspector_ms.sort((a, b) => a - b);
  const out = { ...stats, tools: stats.tools.size, inspector_runs: ms.length, inspector_median_ms: Math.round(ms[ms.length >> 1]), inspector_ms: undefined };
  console.log(`${label}: ok: ${out.tools} tools in ${out.tool_calls} calls, ${out.resources_read} resources read, ${out.templates} templates, ${out.prompts} prompt, ${out.error_paths} error paths${T === "http" ? `, ${out.relay.tool_calls} tool call(s) and ${out.relay.resources_read} read through the weft mcp relay` : ""}; ${out.inspector_runs} inspector runs, median ${out.inspector_median_ms} ms`);
  console.log("RESULT " + JSON.stringify(out));
} catch (e) {
  console.error(`${label}: FAIL: ${e.message}`);
  if (e.detail) console.error(e.detail);
  if (!(e instanceof Failure)) console.error(e.stack);
  process.exitCode = 1;
} finally {
  rmSync(home, { recursive: true, force: true });
}
