// The official provider SDKs (@anthropic-ai/sdk, openai) as clients of
// weft's context proxy: TestLoopSDKs (sdks_test.go) runs this against a
// weft serve whose upstreams are the test's stand-ins. Each SDK holds a
// conversation streaming and one not: a question; a question its tool
// answers (the call, the result sent back, the answer); then weft's
// operator digests the first exchange over weft's HTTP API; then one
// more question, which the Messages API's conversations count first
// (count_tokens). Every answer is read by the SDK as an application
// would (create, or the stream's events), and the bytes the SDK was
// given (and the body it sent) are kept too, through the fetch the SDK
// is handed. What each call
// got is printed as the last line, RESULT {json}, for the test to check
// against what the stand-ins sent; this script only checks that the SDK
// calls succeed.
//
//   node e2e/claudecode/sdks.mjs --url http://127.0.0.1:PORT --sdks DIR
//
// DIR holds node_modules with both SDKs (.ci/loop installs them).

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { parseArgs } from "node:util";

const { values: opt } = parseArgs({ options: { url: { type: "string" }, sdks: { type: "string" } } });
if (!opt.url || !opt.sdks) {
  console.error("usage: node sdks.mjs --url WEFT_BASE_URL --sdks DIR_WITH_NODE_MODULES");
  process.exit(2);
}
const require = createRequire(join(opt.sdks, "package.json"));
const Anthropic = require("@anthropic-ai/sdk").default;
const OpenAI = require("openai").default;
// The packages' exports keep their package.json private: read as a file.
const version = (pkg) => JSON.parse(readFileSync(join(opt.sdks, "node_modules", pkg, "package.json"), "utf8")).version;
const versions = { "@anthropic-ai/sdk": version("@anthropic-ai/sdk"), openai: version("openai") };

// tapped is the fetch an SDK is given: the request goes as the SDK made
// it, and a copy of the answer's bytes is kept, with its status and
// weft's session header, in the record of the call under way.
function tapped(rec) {
  return async (url, init) => {
    rec.request = typeof init?.body === "string" ? init.body : null;
    const res = await fetch(url, init);
    rec.status = res.status;
    rec.session = res.headers.get("x-weft-session");
    const [mine, theirs] = res.body.tee();
    rec.bytes = (async () => {
      const chunks = [];
      for await (const c of mine) chunks.push(Buffer.from(c));
      return Buffer.concat(chunks).toString("utf8");
    })();
    return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}

const lookup = "lookup";
const tools = {
  anthropic: [{ name: lookup, description: "Look up a team's limits.", input_schema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } }],
  openai: [{ type: "function", function: { name: lookup, description: "Look up a team's limits.", parameters: { type: "object", properties: { q: { type: "string" } }, required: ["q"] } } }],
};
const toolOutput = "api-gw: sustained 1,200 requests/s, burst 300";

// One conversation of one SDK, streaming or not, through weft at base.
async function conversation(api, stream) {
  const label = `${api}-${stream ? "stream" : "whole"}`;
  const rec = {};
  const fetchTap = tapped(rec);
  // The session is named three ways: by the /s/ prefix, by the
  // X-Weft-Session header, or not at all (recognised by its messages).
  const named = { "anthropic-stream": "prefix", "openai-stream": "header" }[label] ?? "recognised";
  const base = named === "prefix" ? `${opt.url}/s/sdk-${label}` : opt.url;
  const defaultHeaders = named === "header" ? { "X-Weft-Session": `sdk-${label}` } : {};
  const client =
    api === "anthropic"
      ? new Anthropic({ apiKey: "sk-ant-stand-in", baseURL: base, fetch: fetchTap, defaultHeaders, maxRetries: 0 })
      : new OpenAI({ apiKey: "sk-stand-in", baseURL: `${base}/v1`, fetch: fetchTap, defaultHeaders, maxRetries: 0 });
  const messages = [];
  const calls = [];
  let n = 0;

  // ask sends the conversation and reads the answer as the SDK gives it.
  async function ask(withTools) {
    const id = `${label}-${++n}`;
    for (const k of Object.keys(rec)) delete rec[k];
    const headers = { "X-Call": id };
    const out = { id, api, stream, named, messages: messages.length };
    if (api === "anthropic") {
      const body = { model: "claude-stand-in", max_tokens: 1024, messages, ...(withTools ? { tools: tools.anthropic } : {}) };
      let msg;
      if (stream) {
        const s = client.messages.stream(body, { headers });
        let events = 0;
        for await (const _ of s) events++;
        msg = await s.finalMessage();
        out.events = events;
      } else {
        msg = await client.messages.create(body, { headers });
      }
      out.text = msg.content.filter((b) => b.type === "text").map((b) => b.text).join("");
      out.calls = msg.content.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, input: b.input }));
      out.stop = msg.stop_reason;
      messages.push({ role: "assistant", content: msg.content });
    } else {
      const body = { model: "gpt-stand-in", messages, ...(withTools ? { tools: tools.openai } : {}) };
      let message;
      if (stream) {
        const s = await client.chat.completions.create({ ...body, stream: true }, { headers });
        let events = 0;
        let text = "";
        const tc = [];
        let finish = null;
        for await (const chunk of s) {
          events++;
          const ch = chunk.choices[0];
          if (!ch) continue;
          text += ch.delta?.content ?? "";
          for (const d of ch.delta?.tool_calls ?? []) {
            tc[d.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
            if (d.id) tc[d.index].id = d.id;
            tc[d.index].function.name += d.function?.name ?? "";
            tc[d.index].function.arguments += d.function?.arguments ?? "";
          }
          finish = ch.finish_reason ?? finish;
        }
        message = { role: "assistant", content: tc.length ? null : text, ...(tc.length ? { tool_calls: tc } : {}) };
        out.events = events;
        out.stop = finish;
      } else {
        const c = await client.chat.completions.create(body, { headers });
        message = c.choices[0].message;
        out.stop = c.choices[0].finish_reason;
      }
      out.text = message.content ?? "";
      out.calls = (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, input: JSON.parse(c.function.arguments) }));
      messages.push(message);
    }
    out.status = rec.status;
    out.session = rec.session;
    out.bytes = await rec.bytes;
    out.request = rec.request;
    calls.push(out);
    return out;
  }

  const user = (text) => messages.push({ role: "user", content: text });
  user(`${label}: what is a token bucket?`);
  await ask(false);
  user("Look up the api-gw limits.");
  const call = await ask(true);
  if (call.calls.length !== 1) throw new Error(`${call.id}: the stand-in asked for no call: ${JSON.stringify(call)}`);
  const [c] = call.calls;
  if (api === "anthropic") messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: c.id, content: toolOutput }] });
  else messages.push({ role: "tool", tool_call_id: c.id, content: toolOutput });
  await ask(true);

  // The operator digests the first exchange (items 0-1) between two calls.
  const session = calls[0].session;
  const digest = await fetch(`${opt.url}/api/digest_messages`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Weft-Author": "sdk-operator" },
    body: JSON.stringify({ session_id: session, start_idx: 0, end_idx: 1, summary: `${label}: a token bucket refills at a fixed rate.` }),
  });
  if (digest.status !== 200) throw new Error(`${label}: digest_messages answered ${digest.status}: ${await digest.text()}`);

  user("Which one suits it?");
  // The Messages API's token count of what is about to be sent: weft
  // counts the effective thread, and stores nothing.
  let count = null;
  if (api === "anthropic") {
    for (const k of Object.keys(rec)) delete rec[k];
    const id = `${label}-count`;
    const c = await client.messages.countTokens({ model: "claude-stand-in", messages, tools: tools.anthropic }, { headers: { "X-Call": id } });
    count = { id, input_tokens: c.input_tokens, status: rec.status, session: rec.session, bytes: await rec.bytes, request: rec.request };
  }
  await ask(true);
  return { label, session, calls, count, sent: messages };
}

const conversations = [];
for (const api of ["anthropic", "openai"]) {
  for (const stream of [false, true]) {
    conversations.push(await conversation(api, stream));
  }
}
console.log("RESULT " + JSON.stringify({ versions, conversations }));
