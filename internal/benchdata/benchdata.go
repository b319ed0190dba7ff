// Package benchdata generates the threads the TUI's and the binary's
// benchmarks run on: deterministic chat sessions of any size with tool
// calls, code, logs and operations, built once into bbolt files under
// testdata/bench/ (git-ignored) and reused.
package benchdata

// Whichever benchmark runs first builds a file; the others reuse it.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/store"
	"weft/store/boltstore"
)

// Version names the generator: change it whenever what the
// generator writes changes, so stale cached files are not reused (2: the
// store's schema 2).
const Version = 2

// SessionID is the one session in every benchmark file.
const SessionID = "bench"

// benchStart is when the first generated message was written.
var benchStart = time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)

// SmallWords is a small vocabulary of prose, the words of the ops and
// fuzzy benchmarks that generate their own texts: every word recurs
// often, so most of a query's letters are everywhere.
var SmallWords = strings.Fields(`the a of to and in is for on that with as it be this are by from at or
database migration plan schema index query postgres sqlite connection pool transaction commit
rollback cursor bucket session message thread digest summary operator agent tool call result
error retry timeout latency throughput benchmark profile memory allocation goroutine channel
render view model update terminal keyboard search fuzzy timeline token budget context window`)

// Prose makes deterministic prose of about n bytes from SmallWords.
func Prose(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(SmallWords[r.IntN(len(SmallWords))])
		b.WriteByte(' ')
	}
	return b.String()
}

// benchWords is the vocabulary of generated prose: everyday words, with
// the technical ones an engineer's chat with an assistant is full of.
var benchWords = strings.Fields(`the a of to and in is for on that with as it be this are by from at or
we you can should will not but if then so when which there have has was were would could
need needs use uses using run runs change changes check checks keep keeps make makes first
next last new old same other each every all some more less only just still also again here
database migration plan schema index query postgres pgsql sqlite connection pool transaction
commit rollback cursor bucket session message thread digest summary operator agent tool call
result error retry timeout latency throughput benchmark profile memory allocation goroutine
channel render view model update terminal keyboard search fuzzy timeline token budget context
window request response handler server client config deploy rollout staging production test
tests failing passes build cache lock mutex deadlock race condition backoff jitter limiter
bucket rate quota header payload json field column table row primary foreign key constraint
column type nullable default value migration step version upgrade downgrade replica lag
backup restore snapshot worker queue job scheduler cron metric alert dashboard log trace span`)

var benchNames = strings.Fields(`internal/db/migrate.go cmd/server/main.go pkg/limiter/bucket.go
store/tx.go api/handler.go deploy/staging.yaml Makefile go.mod internal/queue/worker.go
migrations/0042_add_index.sql scripts/backfill.sh`)

var benchTools = []string{"bash", "read_file", "grep", "edit_file", "run_tests"}

// benchGen writes deterministic, realistic chat: a user turn, sometimes a
// few tool calls and their results, then the assistant's answer; prose in
// long single-line paragraphs as models write them, with lists, code
// blocks and logs. Messages average about 650 bytes.
type benchGen struct {
	r     *rand.Rand
	b     strings.Builder
	at    time.Time
	seq   uint64
	call  int
	queue []model.Message // the rest of the current turn
}

func newBenchGen() *benchGen {
	return &benchGen{r: rand.New(rand.NewPCG(2025, 650)), at: benchStart}
}

func (g *benchGen) word() string { return benchWords[g.r.IntN(len(benchWords))] }

func (g *benchGen) sentence() {
	n := 6 + g.r.IntN(16)
	for i := range n {
		w := g.word()
		if i == 0 {
			w = benchCapital(w)
		}
		g.b.WriteString(w)
		switch {
		case i == n-1:
			g.b.WriteString(". ")
		case g.r.IntN(12) == 0:
			g.b.WriteString(", ")
		case g.r.IntN(40) == 0:
			g.b.WriteString(" `" + benchNames[g.r.IntN(len(benchNames))] + "` ")
		default:
			g.b.WriteByte(' ')
		}
	}
}

// benchCapital capitalises an ASCII word.
func benchCapital(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

func (g *benchGen) paragraph(sentences int) {
	for range sentences {
		g.sentence()
	}
	g.trim()
	g.b.WriteString("\n\n")
}

func (g *benchGen) trim() {
	s := strings.TrimRight(g.b.String(), " ")
	g.b.Reset()
	g.b.WriteString(s)
}

func (g *benchGen) code(lines int) {
	g.b.WriteString("```go\n")
	for i := range lines {
		indent := strings.Repeat("\t", 1+g.r.IntN(2))
		switch i % 4 {
		case 0:
			fmt.Fprintf(&g.b, "%sif err := %s.%s(ctx, %s); err != nil {\n", indent, g.word(), benchCapital(g.word()), g.word())
		case 1:
			fmt.Fprintf(&g.b, "%s\treturn fmt.Errorf(\"%s %s: %%w\", err)\n", indent, g.word(), g.word())
		case 2:
			fmt.Fprintf(&g.b, "%s}\n", indent)
		default:
			fmt.Fprintf(&g.b, "%s%s := %s[%d] // %s %s\n", indent, g.word(), g.word(), g.r.IntN(64), g.word(), g.word())
		}
	}
	g.b.WriteString("```\n\n")
}

func (g *benchGen) log(lines int) {
	for range lines {
		fmt.Fprintf(&g.b, "%s %s %s: %s %s %s (%dms)\n", g.at.Format("15:04:05.000"),
			[]string{"INFO", "WARN", "ERROR", "DEBUG"}[g.r.IntN(4)], benchNames[g.r.IntN(len(benchNames))],
			g.word(), g.word(), g.word(), g.r.IntN(2000))
	}
}

func (g *benchGen) take() string {
	s := strings.TrimRight(g.b.String(), "\n ")
	g.b.Reset()
	return s
}

func (g *benchGen) message(role model.Role, content, name string, parts []model.Part) model.Message {
	g.seq++
	// Mostly seconds apart, now and then a pause of hours: a long session
	// over many working days.
	step := time.Duration(5+g.r.IntN(90)) * time.Second
	if g.r.IntN(400) == 0 {
		step = time.Duration(1+g.r.IntN(14)) * time.Hour
	}
	g.at = g.at.Add(step)
	return model.Message{
		ID: model.MessageID(g.seq), Seq: g.seq, Role: role, Content: content, Name: name,
		Parts: model.EncodeParts(parts), CreatedAt: g.at, Tokens: len(content)/4 + 4,
		Digest: model.ContentDigest(role, content),
	}
}

// next returns the next message of the thread.
func (g *benchGen) next() model.Message {
	if len(g.queue) == 0 {
		g.turn()
	}
	m := g.queue[0]
	g.queue = g.queue[1:]
	return m
}

// turn queues one exchange: the user asks, the assistant may call tools,
// then answers.
func (g *benchGen) turn() {
	for range 1 + g.r.IntN(2) {
		g.paragraph(1 + g.r.IntN(4))
	}
	if g.r.IntN(6) == 0 {
		g.log(2 + g.r.IntN(6))
	}
	g.queue = append(g.queue, g.message(model.RoleUser, g.take(), "", nil))
	for range max(g.r.IntN(5)-2, 0) { // no calls in most turns, up to two
		g.call++
		id := fmt.Sprintf("call_%06d", g.call)
		tool := benchTools[g.r.IntN(len(benchTools))]
		input, _ := json.Marshal(map[string]string{"command": g.word() + " " + benchNames[g.r.IntN(len(benchNames))]})
		g.paragraph(1)
		g.queue = append(g.queue, g.message(model.RoleAssistant, g.take(), "",
			[]model.Part{{Type: model.PartToolCall, ToolCallID: id, ToolName: tool, Input: input}}))
		g.log(4 + g.r.IntN(14))
		g.queue = append(g.queue, g.message(model.RoleTool, g.take(), tool,
			[]model.Part{{Type: model.PartToolResult, ToolCallID: id}}))
	}
	for range 2 + g.r.IntN(3) {
		g.paragraph(2 + g.r.IntN(4))
	}
	if g.r.IntN(3) == 0 {
		for range 2 + g.r.IntN(4) {
			g.b.WriteString("- ")
			g.sentence()
			g.trim()
			g.b.WriteByte('\n')
		}
		g.b.WriteByte('\n')
	}
	if g.r.IntN(4) == 0 {
		g.code(3 + g.r.IntN(10))
	}
	g.queue = append(g.queue, g.message(model.RoleAssistant, g.take(), "", nil))
}

// benchOpsFor makes the operations an operator and an agent would have
// left on a thread of n messages: about one per thousand messages, spread
// evenly, none in the first hundred (so the top row is a message), and a
// digest just before the last four messages, so the first screen shows a
// marker.
func benchOpsFor(n int) []model.Op {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	count := n/1000 + 4
	ops := make([]model.Op, 0, count+1)
	span := func(from, to int) []model.ItemID {
		ids := make([]model.ItemID, 0, to-from+1)
		for s := from; s <= to; s++ {
			ids = append(ids, model.MessageID(uint64(s)))
		}
		return ids
	}
	at := benchStart.Add(24 * time.Hour)
	for i := range count {
		lo := 100 + i*(n-200)/count
		slot := (n - 200) / count
		start := lo + r.IntN(max(slot/2, 1))
		end := min(start+1+r.IntN(min(30, max(slot/2, 1))), n-20)
		if end <= start {
			continue
		}
		author := "operator"
		if r.IntN(3) == 0 {
			author = "claude-code"
		}
		o := model.Op{ID: fmt.Sprintf("benchop%07d", i), Active: true, CreatedAt: at.Add(time.Duration(i) * time.Minute), Author: author}
		switch w := r.IntN(20); {
		case w < 7:
			summary := fmt.Sprintf("Worked through the %s %s: settled on %s %s after %d messages.", benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))], benchWords[r.IntN(len(benchWords))], end-start+1)
			o.Type, o.Targets, o.Payload.Summary, o.Payload.SummaryTokens = model.OpDigest, span(start, end), summary, len(summary)/4
		case w < 11:
			o.Type, o.Targets = model.OpSnip, span(start, end)
		case w < 15:
			o.Type, o.Targets, o.Payload.Tags = model.OpTag, span(start, end), []string{[]string{"db", "auth", "perf", "decision"}[r.IntN(4)]}
		case w < 17:
			o.Type, o.Targets = model.OpRevise, span(start, min(end, start+2))
			o.Payload.Messages = []model.NewMessage{{Role: model.RoleAssistant, Content: "Revised: the plan is to migrate in two steps and retry with backoff.", Tokens: 16}}
		case w < 19:
			o.Type, o.Anchor = model.OpInsert, model.MessageID(uint64(start))
			o.Payload.Messages = []model.NewMessage{{Role: model.RoleUser, Content: "Note for later: check the replica lag before the rollout.", Tokens: 14}}
		default:
			o.Type, o.Targets = model.OpResequence, []model.ItemID{model.MessageID(uint64(start + 1)), model.MessageID(uint64(start))}
		}
		ops = append(ops, o)
	}
	ops = append(ops, model.Op{
		ID: fmt.Sprintf("benchop%07d", count), Type: model.OpDigest, Targets: span(n-8, n-4), Active: true,
		CreatedAt: at.Add(time.Duration(count) * time.Minute), Author: "claude-code",
		Payload: model.OpPayload{Summary: "Agreed to ship the migration behind a flag.", SummaryTokens: 10},
	})
	for i := range ops {
		ops[i].Version = uint64(i + 1)
	}
	return ops
}

// Label names a size the way the sub-benchmarks do: 1k, 100k, 1M.
func Label(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

// Dir is testdata/bench at the module root (git-ignored).
func Dir(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
	d := filepath.Join(dir, "testdata", "bench")
	if err := os.MkdirAll(d, 0o755); err != nil {
		tb.Fatal(err)
	}
	return d
}

// DB returns the path of a file holding one session of n generated
// messages with their operations, building it the first time. It is built
// under a temporary name and renamed when complete, so a half-built file
// is never reused.
func DB(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(Dir(tb), fmt.Sprintf("weft-%s-v%d.db", Label(n), Version))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	start := time.Now()
	tmp, err := os.CreateTemp(filepath.Dir(path), "building-*.db")
	if err != nil {
		tb.Fatal(err)
	}
	_ = tmp.Close()
	_ = os.Remove(tmp.Name()) // bbolt creates it
	defer func() { _ = os.Remove(tmp.Name()) }()
	st, err := boltstore.Open(tmp.Name(), boltstore.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	info := model.Session{ID: SessionID, Title: "bench " + Label(n), CreatedAt: benchStart}
	g := newBenchGen()
	var size int
	const batch = 20_000
	for done := 0; done < n; {
		msgs := make([]model.Message, 0, min(batch, n-done))
		for len(msgs) < cap(msgs) {
			m := g.next()
			size += len(m.Content)
			info.Tokens += m.Tokens
			msgs = append(msgs, m)
		}
		done += len(msgs)
		info.MessageCount, info.UpdatedAt = done, msgs[len(msgs)-1].CreatedAt
		err := st.Update(func(tx store.Tx) error {
			if err := tx.PutSession(info); err != nil {
				return err
			}
			return tx.AppendMessages(info.ID, msgs)
		})
		if err != nil {
			_ = st.Close()
			tb.Fatal(err)
		}
	}
	ops := benchOpsFor(n)
	err = st.Update(func(tx store.Tx) error {
		for _, o := range ops {
			if err := tx.PutOp(info.ID, o); err != nil {
				return err
			}
		}
		info.OpCount, info.Version = len(ops), uint64(len(ops))
		return tx.PutSession(info)
	})
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("built %s: %d messages averaging %d bytes, %d operations, in %v", filepath.Base(path), n, size/n, len(ops), time.Since(start).Round(time.Millisecond))
	return path
}

// LastMessage returns the generated thread's last message, as the
// benchmark file holds it.
func LastMessage(n int) model.Message {
	g := newBenchGen()
	var m model.Message
	for range n {
		m = g.next()
	}
	return m
}

// Contents returns the texts of the first n generated messages, for
// benchmarks of matching alone.
func Contents(n int) [][]byte {
	g := newBenchGen()
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(g.next().Content)
	}
	return out
}
