package migrate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/model"
	"weft/ops/thread"
	"weft/store"
	"weft/store/boltstore"
	"weft/store/pgstore"
	"weft/store/pgstore/pgtest"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// opener opens a fresh, empty store of one backend for a test.
type opener struct {
	name string
	open func(t *testing.T) store.Store
}

var (
	file = opener{"file", func(t *testing.T) store.Store {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "weft.db"), boltstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}}
	postgres = opener{"postgres", func(t *testing.T) store.Store {
		s, err := pgstore.Open(context.Background(), pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}}
)

func msg(seq uint64, role model.Role, content string, at time.Time) model.Message {
	return model.Message{
		ID: model.MessageID(seq), Seq: seq, Role: role, Content: content, CreatedAt: at,
		Tokens: len(content)/4 + 1, Digest: model.ContentDigest(role, content),
	}
}

// thread is n messages, a minute apart, from seq first.
func messages(id string, first uint64, n int) []model.Message {
	out := make([]model.Message, n)
	for i := range out {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		seq := first + uint64(i)
		out[i] = msg(seq, role, fmt.Sprintf("message %d of %s", seq, id), t0.Add(time.Duration(seq)*time.Minute))
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// seeded is what seed put in a store.
type seeded struct {
	ids      []string
	messages int
	ops      int
}

// seed fills s with sessions of every kind: one with operations of each
// type (a digest, a revise of its summary, a snip, tags, one with
// when_tags, a resequence, an insert, one reverted, one switched off), a
// memory policy, active tags, import keys, a source, pending
// preferences, a tool message with parts, meta and a name, and a message
// over 16 KB; a fork of it in a room; a long session (more than a batch
// of the tests' copies); an empty one; and a setting.
func seed(t *testing.T, s store.Store) seeded {
	t.Helper()
	local := time.FixedZone("CET", 3600)
	main := model.Session{
		ID: "s1-auth", Title: "auth design", CreatedAt: t0.In(local), UpdatedAt: t0.Add(time.Hour).In(local),
		Version: 12, ActiveTags: []string{"db"}, Source: "claude-code", Interface: "cli",
		Memory:  &model.MemoryPolicy{MaxActiveTurns: 6, SummaryTurnCount: 3, MaxSummaries: 2, MaxArchivedTurns: 20, MaxTokens: 1500, BudgetTokens: 20000, ToolOutput: &model.ToolOutputRule{MinTokens: 2000, OlderThanTurns: 3}, Summarizer: model.SummarizerExtractive},
		Changes: []model.Change{{Version: 12, At: t0.Add(time.Hour), Author: "operator", What: "snip"}},
	}
	msgs := messages(main.ID, 1, 24)
	msgs[11] = msg(12, model.RoleTool, "total 0\n", t0.Add(12*time.Minute))
	msgs[11].Name, msgs[11].Meta = "bash", map[string]string{"tool_call_id": "c1", "model": "m"}
	msgs[11].Parts = model.EncodeParts([]model.Part{{Type: model.PartToolResult, ToolCallID: "c1", Text: "total 0\n"}})
	big := strings.Repeat("a large tool output line, more than a page of it\n", 800) // 40 KB
	msgs[13] = msg(14, model.RoleAssistant, big, t0.Add(14*time.Minute))
	main.MessageCount = len(msgs)
	at := t0.Add(50 * time.Minute)
	ops := []model.Op{
		{ID: "op01", Type: model.OpDigest, Targets: []model.ItemID{"m1", "m2", "m3", "m4"}, Payload: model.OpPayload{Summary: "they chose sessions", SummaryTokens: 4, SummarySource: model.SummarizerExtractive}, Active: true, CreatedAt: t0.Add(30 * time.Minute), Author: model.MemoryAuthor, Rule: model.RuleTurns, Turns: 2, Version: 3},
		{ID: "op02", Type: model.OpRevise, Targets: []model.ItemID{"op01/0"}, Payload: model.OpPayload{Messages: []model.NewMessage{{Role: model.RoleSystem, Content: "they chose server sessions", CreatedAt: t0.Add(31 * time.Minute).In(local)}}}, Active: true, CreatedAt: t0.Add(31 * time.Minute), Author: "operator", Version: 4},
		{ID: "op03", Type: model.OpSnip, Targets: []model.ItemID{"m5"}, Active: true, CreatedAt: t0.Add(32 * time.Minute), Author: "operator", Version: 5},
		{ID: "op04", Type: model.OpTag, Targets: []model.ItemID{"m6", "m7"}, Payload: model.OpPayload{Tags: []string{"db"}}, Active: true, CreatedAt: t0.Add(33 * time.Minute), Author: "operator", Version: 6},
		{ID: "op05", Type: model.OpSnip, Targets: []model.ItemID{"m8"}, WhenTags: []string{"db"}, Active: true, CreatedAt: t0.Add(34 * time.Minute), Author: "operator", Version: 7},
		{ID: "op06", Type: model.OpResequence, Targets: []model.ItemID{"m10", "m9"}, Active: true, CreatedAt: t0.Add(35 * time.Minute), Author: "operator", Version: 8},
		{ID: "op07", Type: model.OpInsert, Anchor: "m11", Payload: model.OpPayload{Messages: []model.NewMessage{
			{Role: model.RoleUser, Content: "an inserted note", Parts: model.EncodeParts([]model.Part{{Type: model.PartText, Text: "an inserted note"}}), Meta: map[string]string{"k": "v"}},
		}}, Active: true, CreatedAt: t0.Add(36 * time.Minute), Author: "operator", Version: 9},
		{ID: "op08", Type: model.OpSnip, Targets: []model.ItemID{"m15"}, Active: true, CreatedAt: t0.Add(37 * time.Minute), RevertedAt: &at, Author: "operator", Version: 10},
		{ID: "op09", Type: model.OpTag, Targets: []model.ItemID{"m16"}, Payload: model.OpPayload{Tags: []string{"off"}}, Active: false, CreatedAt: t0.Add(38 * time.Minute), Author: "operator", Version: 11},
	}
	main.OpCount = len(ops)

	fork := model.Session{
		ID: "s2-fork", Title: "auth design (fork)", CreatedAt: t0.Add(2 * time.Hour), UpdatedAt: t0.Add(2 * time.Hour),
		Version: 2, Room: "!room:example.org", Interface: "matrix",
		ForkOf: &model.Fork{SessionID: main.ID, At: "m6", Index: 3},
	}
	forkMsgs := messages(fork.ID, 1, 5)
	fork.MessageCount = len(forkMsgs)

	long := model.Session{ID: "s3-long", Title: "a long one", CreatedAt: t0.Add(3 * time.Hour), UpdatedAt: t0.Add(3 * time.Hour), Version: 1}
	longMsgs := messages(long.ID, 1, 300)
	long.MessageCount = len(longMsgs)

	empty := model.Session{ID: "s4-empty", Title: "nothing yet", CreatedAt: t0.Add(4 * time.Hour), UpdatedAt: t0.Add(4 * time.Hour)}

	must(t, s.Update(func(tx store.Tx) error {
		for _, x := range []struct {
			rec  model.Session
			msgs []model.Message
		}{{main, msgs}, {fork, forkMsgs}, {long, longMsgs}, {empty, nil}} {
			if err := tx.PutSession(x.rec); err != nil {
				return err
			}
			if err := tx.AppendMessages(x.rec.ID, x.msgs); err != nil {
				return err
			}
		}
		for _, op := range ops {
			if err := tx.PutOp(main.ID, op); err != nil {
				return err
			}
		}
		if err := tx.PutOp(fork.ID, model.Op{ID: "op10", Type: model.OpTag, Targets: []model.ItemID{"m2"}, Payload: model.OpPayload{Tags: []string{"t"}}, Active: true, CreatedAt: t0.Add(2 * time.Hour), Author: "operator", Version: 2}); err != nil {
			return err
		}
		for i, k := range []string{"line-1", "line-2", "line-7"} {
			if err := tx.PutImportKey(main.ID, k, uint64(i+1)); err != nil {
				return err
			}
		}
		// Sources that sort apart bytewise and in a locale's collation.
		for _, src := range []string{"claude-code:0f3c2a55", "Codex:B-1", "codex:a_2"} {
			if err := tx.PutSourceSession(src, main.ID); err != nil {
				return err
			}
		}
		if err := tx.PutPrefs(main.ID, []byte(`{"slice":[1,2]}`)); err != nil {
			return err
		}
		return tx.PutSetting("memory/file", []byte(`{"budget_tokens":30000}`))
	}))
	return seeded{
		ids:      []string{main.ID, fork.ID, long.ID, empty.ID},
		messages: len(msgs) + len(forkMsgs) + len(longMsgs),
		ops:      len(ops) + 1,
	}
}

// effective is each session's effective thread in s.
func effective(t *testing.T, s store.Store, ids []string) map[string][]model.ItemID {
	t.Helper()
	out := map[string][]model.ItemID{}
	must(t, s.View(func(tx store.Tx) error {
		for _, id := range ids {
			rec, err := tx.Session(id)
			if err != nil {
				return err
			}
			heads, err := tx.Heads(id)
			if err != nil {
				return err
			}
			ops, err := tx.Ops(id)
			if err != nil {
				return err
			}
			out[id] = thread.Signature(heads, ops, rec.ActiveTags)
		}
		return nil
	}))
	return out
}

// counts are each session's last seq and number of operations in s.
func counts(t *testing.T, s store.Store, ids []string) map[string][2]int {
	t.Helper()
	out := map[string][2]int{}
	must(t, s.View(func(tx store.Tx) error {
		for _, id := range ids {
			last, err := tx.LastSeq(id)
			if err != nil {
				return err
			}
			ops, err := tx.Ops(id)
			if err != nil {
				return err
			}
			out[id] = [2]int{int(last), len(ops)}
		}
		return nil
	}))
	return out
}

// wantThread checks that the main session's thread shows every kind of
// operation at work, so equal threads are not equal by being plain.
func wantThread(t *testing.T, got []model.ItemID) {
	t.Helper()
	for _, want := range []model.ItemID{"op02/0", "op07/0", "m6#db", "m15"} {
		if !slices.Contains(got, want) {
			t.Errorf("the effective thread %v has no %s", got, want)
		}
	}
	for _, gone := range []model.ItemID{"m1", "op01/0", "m5", "m8"} {
		if slices.Contains(got, gone) {
			t.Errorf("the effective thread %v still has %s", got, gone)
		}
	}
	if i, j := slices.Index(got, "m10"), slices.Index(got, "m9"); i < 0 || j < 0 || i > j {
		t.Errorf("the effective thread %v is not resequenced (m10 before m9)", got)
	}
}
