package demo

import (
	"fmt"
	"strings"
)

// script tells the demo's story. Marks name the spans the seeded
// operations act on and the tour points at.
func script(b *builder) {
	// Day 1, morning: setup (digested by the agent later).
	b.mark("setup")
	b.user("Morning! I want to add rate limiting to our API gateway today. Can you get set up in the repo first?")
	b.tool("Let me look at the layout.", "Bash", map[string]any{"command": "git clone git@internal:platform/gateway.git && cd gateway && ls"},
		"Makefile\nREADME.md\ncmd/\ngo.mod\ngo.sum\ninternal/\nproxy/\nroutes.yaml")
	b.tool("", "Bash", map[string]any{"command": "go version && make test"},
		"go version go1.26.1 linux/amd64\nok  \tgateway/internal/auth\t0.412s\nok  \tgateway/internal/config\t0.087s\nok  \tgateway/proxy\t1.931s\n212 tests passed")
	b.assistant("The workspace is ready: Go 1.26, all 212 tests pass. There is a Redis 7 on localhost if we want to try a shared store.")
	b.user("Great. Is redis-cli there too?")
	b.tool("", "Bash", map[string]any{"command": "redis-cli ping"}, "PONG")
	b.assistant("Yes — `redis-cli ping` answers `PONG`.")
	b.end("setup")

	// The design discussion (tagged "design").
	b.tick(600, 900)
	b.mark("design")
	b.user("OK. Requirements: 100 requests/second sustained, bursts up to 300, per client. What algorithm?")
	b.assistant(`Three usual choices:

| algorithm | bursts | memory per client | precision |
|---|---|---|---|
| fixed window | 2× at window edges | 1 counter | poor |
| sliding window log | exact | one entry per request | exact, costly |
| **token bucket** | configurable | 2 numbers | good |

A **token bucket** fits "100/s with bursts to 300" directly: capacity 300, refill 100 tokens per second.`)
	b.user("Token bucket it is. Sketch the core?")
	b.assistant("```go\n// Bucket is a token bucket: it holds up to Capacity tokens and gains\n// Rate tokens per second.\ntype Bucket struct {\n\tCapacity float64\n\tRate     float64\n\ttokens   float64\n\tlast     time.Time\n}\n\n// Allow takes one token if there is one.\nfunc (b *Bucket) Allow(now time.Time) bool {\n\tb.tokens = min(b.Capacity, b.tokens+now.Sub(b.last).Seconds()*b.Rate)\n\tb.last = now\n\tif b.tokens < 1 {\n\t\treturn false\n\t}\n\tb.tokens--\n\treturn true\n}\n```\n\nNo goroutine per client, no timers: the refill is computed when a request arrives.")
	b.user("What about concurrency? Many requests for one client at once.")
	b.assistant("One mutex per bucket is enough at these rates; buckets live in a sharded map keyed by client so the map lock is never hot. I'd shard 64 ways.")
	b.mark("decision")
	b.user("And what should a limited client get back?")
	b.assistant("`429 Too Many Requests` with `Retry-After` (seconds until one token is available) and the `RateLimit-*` headers from the IETF draft, so well-behaved clients can pace themselves.")
	b.end("design")

	// The long digression: Redis vs in-memory, worth digesting.
	b.tick(900, 1500)
	b.mark("digression")
	b.user("Before we build it: should the buckets live in Redis so all gateway replicas share them?")
	topics := []struct{ q, a string }{
		{"How many replicas do we run?", "Checking the deploy config."},
		{"Would a Redis round trip hurt latency?", "On the same rack a round trip is ~0.2 ms; our p99 budget for the gateway hop is 5 ms, so it fits — but every request pays it."},
		{"Could we use a Lua script to make the check atomic?", "Yes: one EVALSHA per request doing refill + take atomically. I can write it."},
		{"What happens when Redis is down?", "We must pick fail-open (let traffic through) or fail-closed (reject). For a gateway, fail-open with a local fallback bucket is the usual choice."},
		{"How do other gateways do it?", "Envoy uses a separate rate-limit service; Kong offers both local and Redis policies; many teams start local and divide the limit by replica count."},
		{"Dividing by replica count — is that accurate?", "Only if the load balancer spreads a client evenly. With consistent hashing by API key, one client mostly hits one replica, and local buckets are nearly exact."},
		{"Do we hash by key at the load balancer?", "Checking."},
		{"Let's measure the Redis option anyway.", "Writing a quick benchmark."},
		{"What did the benchmark say?", "See the results above: Redis adds ~190 µs per request at p50 and 1.1 ms at p99 under load."},
		{"And the local bucket?", "Under 100 ns — three orders of magnitude cheaper."},
	}
	for i, t := range topics {
		b.user(t.q)
		switch i {
		case 0:
			b.tool(t.a, "Bash", map[string]any{"command": "grep -n replicas deploy/gateway.yaml"}, "14:  replicas: 6")
			b.assistant("Six replicas in production.")
		case 6:
			b.tool(t.a, "Bash", map[string]any{"command": "grep -n -A3 hash_policy deploy/lb.yaml"}, "31:    hash_policy:\n32:      - header:\n33:          header_name: X-API-Key")
			b.assistant("Yes: the load balancer hashes on `X-API-Key`, so a client sticks to one replica.")
		case 7:
			b.tool(t.a, "Bash", map[string]any{"command": "go test -run XXX -bench 'Redis|Local' ./internal/ratelimit/experiments"},
				"BenchmarkRedisAllow-8   \t   6284\t    191204 ns/op\nBenchmarkLocalAllow-8   \t15734521\t        76.2 ns/op\nPASS")
			b.assistant("Benchmarks are in.")
		default:
			b.assistant(t.a)
		}
		if i < len(asides) {
			b.user(asides[i])
			b.assistant(asideAnswers[i])
		}
	}
	b.user("Decision: local buckets, per replica, no Redis. We can revisit if hashing changes.")
	b.assistant("Agreed: local token buckets, keyed by API key, sharded map. I'll note the Redis numbers in the design doc in case we revisit.")
	b.end("digression")

	// Day 2: implementation.
	b.nextDay(9, 40)
	b.user("Good morning. Let's implement it in internal/ratelimit.")
	files := []string{"bucket.go", "limiter.go", "middleware.go", "headers.go"}
	for i, f := range files {
		b.tool(fmt.Sprintf("Writing `%s`.", f), "Write", map[string]any{"file_path": "internal/ratelimit/" + f}, "File written: internal/ratelimit/"+f)
		b.tool("", "Bash", map[string]any{"command": "go test ./internal/ratelimit/..."}, testRun(i))
		if i == 1 {
			b.assistant("`TestLimiterConcurrent` fails: the refill uses the bucket's `last` before taking the lock. Moving the lock up.")
			b.tool("", "Edit", map[string]any{"file_path": "internal/ratelimit/limiter.go", "old_string": "b := l.bucket(key)\n\tnow := l.clock()", "new_string": "now := l.clock()\n\tb := l.bucket(key)\n\tb.mu.Lock()"}, "Edited internal/ratelimit/limiter.go")
			b.tool("", "Bash", map[string]any{"command": "go test -race ./internal/ratelimit/..."}, "ok  \tgateway/internal/ratelimit\t1.208s")
		}
		b.assistant(fmt.Sprintf("`%s` is in and its tests pass.", f))
	}
	b.user("Show me the middleware.")
	b.assistant("```go\n// Middleware rejects requests over the client's limit with 429.\nfunc (l *Limiter) Middleware(next http.Handler) http.Handler {\n\treturn http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {\n\t\tkey := r.Header.Get(\"X-API-Key\")\n\t\tok, state := l.Allow(key)\n\t\tstate.WriteHeaders(w.Header())\n\t\tif !ok {\n\t\t\tw.Header().Set(\"Retry-After\", strconv.Itoa(state.RetryAfterSeconds()))\n\t\t\thttp.Error(w, \"rate limit exceeded\", http.StatusTooManyRequests)\n\t\t\treturn\n\t\t}\n\t\tnext.ServeHTTP(w, r)\n\t})\n}\n```")
	for i := range 12 {
		b.user(reviewQuestion(i))
		b.assistant(reviewAnswer(i))
	}
	// A noisy tool output, snipped in the seeded operations.
	b.mark("noisy")
	b.tool("Dumping the full verbose test log to be sure.", "Bash", map[string]any{"command": "go test -v ./internal/ratelimit/... 2>&1"}, verboseLog())
	b.assistant("All 41 tests pass; nothing surprising in the verbose log.")
	b.tick(3600, 5400)
	// The misplaced message: it belongs with the design discussion.
	b.mark("misplaced")
	b.user("Oh, I should have said this on day one: limits are per API key, not per client IP. Some customers share NAT addresses.")
	b.assistant("Good thing the key is `X-API-Key` already — the implementation matches. I'll make sure the design doc says so.")

	// Day 3: load test, metrics, docs.
	b.nextDay(10, 5)
	b.user("Let's load test it before we ship.")
	b.tool("Running vegeta at 150 req/s for one key.", "Bash", map[string]any{"command": "echo 'GET http://localhost:8080/v1/ping' | vegeta attack -rate=150 -duration=30s -header 'X-API-Key: demo' | vegeta report"},
		"Requests      [total, rate, throughput]  4500, 150.03, 100.02\nLatencies     [mean, 50, 95, 99, max]  412µs, 388µs, 602µs, 911µs, 3.1ms\nStatus Codes  [code:count]  200:3000  429:1500")
	b.assistant("As designed: 100/s pass, the excess gets 429. Latency added by the limiter is in the noise.")
	for i := range 8 {
		b.user(metricsQuestion(i))
		if i%3 == 1 {
			b.tool("", "Bash", map[string]any{"command": "curl -s localhost:9090/metrics | grep ratelimit"}, fmt.Sprintf("ratelimit_allowed_total %d\nratelimit_rejected_total %d\nratelimit_buckets %d", 3000+i*137, 1500+i*61, 12+i))
		}
		b.assistant(metricsAnswer(i))
	}
	b.user("Write the design doc section.")
	b.assistant("## Rate limiting\n\n- **Algorithm:** token bucket, capacity 300, refill 100/s, per API key.\n- **Placement:** local to each replica; the load balancer hashes on `X-API-Key`, so a key's traffic stays on one replica.\n- **Why not Redis:** +190 µs p50 / +1.1 ms p99 per request, and a new failure mode.\n- **Responses:** `429` with `Retry-After` and `RateLimit-*` headers.\n- **Metrics:** `ratelimit_allowed_total`, `ratelimit_rejected_total`, `ratelimit_buckets`.")
	for i := range 6 {
		b.user(wrapQuestion(i))
		b.assistant(wrapAnswer(i))
	}
	b.user("Ship it. Thanks!")
	b.assistant("Merged and deployed to staging; production rollout is behind the `ratelimit` flag at 10%.")

	rollout(b)
}

// rollout is day 4: the ramp to production, and a customer who hits the
// limit for a reason worth finding.
func rollout(b *builder) {
	b.nextDay(8, 55)
	b.user("Morning. How did the 10% ramp go overnight?")
	b.tool("Checking the overnight metrics.", "Bash", map[string]any{"command": "promql 'sum by (plan) (increase(ratelimit_rejected_total[12h]))'"},
		"plan=free       4121\nplan=team        212\nplan=enterprise  9034")
	b.assistant("Free-plan rejections look normal. But **enterprise** has 9,034 rejections — that plan should almost never be limited.")
	b.user("That's odd. Which keys?")
	b.tool("", "Bash", map[string]any{"command": "promql 'topk(3, sum by (key) (increase(ratelimit_rejected_total{plan=\"enterprise\"}[12h])))'"},
		"key=ent_7f3a…  8990\nkey=ent_02bc…    31\nkey=ent_9d41…    13")
	b.assistant("Almost all from one key, `ent_7f3a…`. Let me look at its traffic pattern.")
	hours := []string{"00", "02", "04", "06", "08"}
	for i, h := range hours {
		b.tool("", "Bash", map[string]any{"command": fmt.Sprintf("logq --key ent_7f3a --since %s:00 --until %s:59 --stats", h, h)},
			fmt.Sprintf("requests %d\npeak/s %d\nreplicas seen %d\n429s %d", 90000+i*4100, 280+i*35, 1+i%2, 1200+i*610))
		b.assistant(fmt.Sprintf("%s:00 — peaks of %d/s, spread over %d replica(s).", h, 280+i*35, 1+i%2))
	}
	b.user("Peaks above 300/s on an enterprise plan. What's their limit?")
	b.tool("", "Bash", map[string]any{"command": "grep -n -A4 'enterprise:' routes.yaml"},
		"57:  enterprise:\n58:    ratelimit:\n59:      rate: 100\n60:      burst: 300")
	b.assistant("There it is: enterprise got the **default** 100/s — the plan block was copied from `team` and never raised. The contract says 1,000/s with bursts to 3,000.")
	b.user("Fix it, and add a test that every plan's limit matches the contracts table.")
	b.tool("", "Edit", map[string]any{"file_path": "routes.yaml", "old_string": "      rate: 100\n      burst: 300", "new_string": "      rate: 1000\n      burst: 3000"}, "Edited routes.yaml")
	b.tool("Adding a test over the contracts table.", "Write", map[string]any{"file_path": "internal/ratelimit/plans_test.go"}, "File written: internal/ratelimit/plans_test.go")
	b.tool("", "Bash", map[string]any{"command": "go test ./internal/ratelimit/..."}, "ok  \tgateway/internal/ratelimit\t0.388s")
	b.assistant("Fixed and tested. The new test fails if any plan in routes.yaml disagrees with `contracts/plans.csv`.")
	tickets := []string{"ACME-1182", "ACME-1190", "GLOBEX-77", "INITECH-301", "UMBRELLA-12", "HOOLI-5"}
	for i, tk := range tickets {
		b.user(fmt.Sprintf("Support forwarded ticket %s: \"we get 429s since yesterday\". Same cause?", tk))
		b.tool("", "Bash", map[string]any{"command": fmt.Sprintf("support show %s --fields plan,key,first_429", tk)},
			fmt.Sprintf("plan=%s\nkey=%s_%04x…\nfirst_429=2026-03-05T0%d:1%d:00Z", []string{"enterprise", "team", "free"}[i%3], strings.ToLower(tk[:4]), 0x1a2b+i*977, 1+i, i))
		switch i % 3 {
		case 0:
			b.assistant("Enterprise plan: yes, the same misconfiguration. Fixed by today's change; I'll reply on the ticket.")
		case 1:
			b.assistant("Team plan at its real limit (100/s). Their client retries immediately on 429 instead of honouring `Retry-After`; I'll send them the pacing guide.")
		default:
			b.assistant("Free plan, working as intended: they exceed 100/s. Suggesting an upgrade is for sales, not us.")
		}
	}
	for i := range 10 {
		b.user(rampQuestion(i))
		if i%4 == 2 {
			b.tool("", "Bash", map[string]any{"command": "flags set ratelimit --percent " + []string{"25", "50", "100"}[min(i/4, 2)]}, "ratelimit: rollout updated")
		}
		b.assistant(rampAnswer(i))
	}
	b.user("Let's write the incident note.")
	b.assistant("## Incident note: enterprise keys limited at 100/s\n\n- **What:** the enterprise plan's rate-limit block was copied from `team` (100/s) instead of the contract's 1,000/s.\n- **Impact:** one key saw 8,990 rejections over 12 hours at the 10% ramp; two others a few dozen.\n- **Fix:** routes.yaml corrected; a test now checks every plan against `contracts/plans.csv`.\n- **Follow-up:** ramp resumed; support replied on six tickets.")
	b.user("Perfect. That's the week.")
	b.assistant("The limiter is at 100% with correct plan limits, dashboards and alerts in place.")
}

var ramp = [][2]string{
	{"Can we resume the ramp?", "Yes: the fix is deployed and enterprise rejections dropped to zero in the last hour."},
	{"Go to 25%.", "Done."},
	{"Set it.", "Rollout is at 25%."},
	{"Any new rejections pattern at 25%?", "Only free-plan keys, in proportion to their traffic."},
	{"What's the p99 now?", "Gateway p99 is 4.1 ms, unchanged from before the limiter."},
	{"Go to 50%.", "Done."},
	{"Set it.", "Rollout is at 50%."},
	{"Memory use?", "About 3 MB of buckets per replica at 50%: 21k live keys."},
	{"Let's finish: 100%.", "Done."},
	{"Set it.", "Rollout is at 100%."},
}

func rampQuestion(i int) string { return ramp[i][0] }
func rampAnswer(i int) string   { return ramp[i][1] }

func testRun(i int) string {
	if i == 1 {
		return "--- FAIL: TestLimiterConcurrent (0.03s)\n    limiter_test.go:88: allowed 307 requests, want at most 300\nFAIL\tgateway/internal/ratelimit\t0.311s"
	}
	return fmt.Sprintf("ok  \tgateway/internal/ratelimit\t0.%03ds", 120+i*37)
}

func verboseLog() string {
	var b strings.Builder
	for i := range 41 {
		fmt.Fprintf(&b, "=== RUN   TestCase%02d\n--- PASS: TestCase%02d (0.00s)\n", i, i)
	}
	b.WriteString("PASS\nok  \tgateway/internal/ratelimit\t0.402s")
	return b.String()
}

var asides = []string{
	"Would Redis Cluster change that?", "What about memory on the Redis side?", "Does the Lua script need to handle clock skew?",
	"Could we batch the Redis calls?", "What about a sidecar instead?", "Is there a managed option?",
	"Would consistent hashing survive a deploy?", "How noisy were the benchmark numbers?", "What if a replica restarts?",
	"Is 76 ns including the map lookup?", "Could we pre-warm buckets?", "Do we need persistence at all?",
}

var asideAnswers = []string{
	"Cluster spreads keys over shards but each check is still one round trip; latency stays the same.",
	"Two numbers per key with a TTL: about 100 bytes each, so a million keys is ~100 MB.",
	"Use Redis's own TIME inside the script so all replicas agree on the clock.",
	"Pipelining helps throughput, not the latency each request sees.",
	"A sidecar moves the network hop, it doesn't remove it.",
	"Managed Redis is the same design with someone else's pager.",
	"During a rolling deploy keys move once; a fresh bucket starts full, so a client may briefly get up to 2× the burst.",
	"Five runs, ±4% — stable enough to decide on.",
	"Its buckets start full again: at worst one extra burst per client per restart.",
	"Yes, the sharded map lookup plus the bucket update.",
	"No need: buckets are created lazily on the first request and start full.",
	"No: a limiter's state is worthless after a few seconds.",
}

var reviews = [][2]string{
	{"Why float64 tokens instead of integers?", "Fractional refill: at 100/s a request 3 ms after the last one earns 0.3 tokens. Integers would need a finer unit."},
	{"Do we ever delete idle buckets?", "A janitor sweeps every minute and drops buckets full for over 10 minutes — a full bucket carries no information."},
	{"What's the clock — time.Now?", "An injected clock, so tests run on a fake one and never sleep."},
	{"Is the shard count configurable?", "It's a constant (64); measured contention is zero at our rates, so a knob would only be noise."},
	{"How do we configure limits per plan?", "routes.yaml gets a `ratelimit:` block per plan; keys map to plans through the existing auth lookup."},
	{"What if the API key header is missing?", "Those requests are already rejected by auth (401) before the limiter runs."},
	{"Headers on allowed requests too?", "Yes — `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` on every response."},
	{"Retry-After rounding?", "Rounded up to whole seconds, never 0 when limited."},
	{"Any allocation per request?", "None on the hot path after the bucket exists: `go test -bench` shows 0 allocs/op."},
	{"Can an operator exempt a key?", "A plan with `unlimited: true` skips the limiter entirely."},
	{"Logging?", "One debug line per rejection, sampled 1/100 so an attack can't flood the logs."},
	{"Tests for the headers?", "Table tests over (tokens, rate) states check each header's value."},
}

func reviewQuestion(i int) string { return reviews[i][0] }
func reviewAnswer(i int) string   { return reviews[i][1] }

var metrics = [][2]string{
	{"Which metrics do we export?", "Counters for allowed and rejected requests, and a gauge of live buckets."},
	{"Can you show me the live numbers?", "Here they are."},
	{"Per-plan labels?", "Added a `plan` label; cardinality is the number of plans, so it's safe."},
	{"A dashboard panel?", "Added \"Rejected by plan\" (rate of ratelimit_rejected_total by plan) to the gateway dashboard."},
	{"Let me see the numbers again after the second run.", "Updated numbers above; the rejected share holds at a third, as the test rate implies."},
	{"An alert?", "Warn when rejections exceed 5% of a plan's traffic for 10 minutes."},
	{"Is the bucket gauge accurate after the janitor runs?", "Yes, it's decremented when the janitor drops a bucket."},
	{"One more look at the metrics.", "Final numbers above — stable."},
}

func metricsQuestion(i int) string { return metrics[i][0] }
func metricsAnswer(i int) string   { return metrics[i][1] }

var wraps = [][2]string{
	{"Changelog entry?", "Added under *Unreleased*: \"Per-key token-bucket rate limiting (100/s, burst 300 by default).\""},
	{"Feature flag?", "`ratelimit` flag, default off; we'll ramp 10% → 50% → 100%."},
	{"Rollback plan?", "Turning the flag off restores the old path instantly; no data to migrate."},
	{"Docs for customers?", "A page on limits and headers, with a pacing example using `RateLimit-Reset`."},
	{"Anything left?", "Only the ramp. The code, tests, metrics, dashboard and docs are done."},
	{"Open the PR.", "PR #482 opened with the design section in the description."},
}

func wrapQuestion(i int) string { return wraps[i][0] }
func wrapAnswer(i int) string   { return wraps[i][1] }
