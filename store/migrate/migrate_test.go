package migrate_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"weft/model"
	"weft/ops/thread"
	"weft/store"
	"weft/store/migrate"
)

// opts are the tests' options: small batches, so the long session takes
// several transactions, and the effective thread compared.
func opts() migrate.Options {
	return migrate.Options{Batch: 64, Thread: thread.Signature}
}

// copyAndCheck seeds a store of one backend, copies it into one of
// another, and checks the copy: counts, every session verified, the
// effective threads equal, and a second run skipping everything.
func copyAndCheck(t *testing.T, from, to opener) {
	src, dst := from.open(t), to.open(t)
	seeded := seed(t, src)
	var reported []migrate.Progress
	o := opts()
	o.Report = func(p migrate.Progress) { reported = append(reported, p) }
	start := time.Now()
	res, err := migrate.Copy(context.Background(), src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s -> %s: %d sessions, %d messages, %d operations in %v", from.name, to.name, res.Sessions, res.Messages, res.Ops, time.Since(start))
	if res.Sessions != 4 || res.Copied != 4 || res.Skipped != 0 || res.Messages != seeded.messages || res.Ops != seeded.ops || res.Settings != 1 || res.Verified != 4 {
		t.Errorf("result %+v, want 4 sessions copied, %d messages, %d operations, 1 setting, 4 verified", res, seeded.messages, seeded.ops)
	}
	var copied, verified []string
	var under []uint64
	for _, p := range reported {
		switch p.Action {
		case migrate.Copying:
			if p.Session != "s3-long" || p.Last != 300 || p.N != 3 || p.Of != 4 {
				t.Errorf("a report under way: %+v", p)
			}
			under = append(under, uint64(p.Messages))
		case migrate.Copied:
			copied = append(copied, p.Session)
		case migrate.Verified:
			verified = append(verified, p.Session)
		}
	}
	// The long session's 300 messages go in batches of 64.
	if !slices.Equal(under, []uint64{64, 128, 192, 256}) {
		t.Errorf("reports under way at %v messages, want 64 128 192 256", under)
	}
	if !slices.Equal(copied, seeded.ids) || !slices.Equal(verified, seeded.ids) {
		t.Errorf("reported copied %v, verified %v; want %v (oldest first) each", copied, verified, seeded.ids)
	}
	want, got := effective(t, src, seeded.ids), effective(t, dst, seeded.ids)
	if !maps.EqualFunc(want, got, slices.Equal) {
		t.Errorf("effective threads differ:\nsource %v\ncopy   %v", want, got)
	}
	wantThread(t, got["s1-auth"])
	if !maps.Equal(counts(t, src, seeded.ids), counts(t, dst, seeded.ids)) {
		t.Errorf("counts differ: %v and %v", counts(t, src, seeded.ids), counts(t, dst, seeded.ids))
	}
	// What is read back besides the thread.
	must(t, dst.View(func(tx store.Tx) error {
		rec, err := tx.Session("s2-fork")
		if err != nil {
			return err
		}
		if rec.ForkOf == nil || rec.ForkOf.SessionID != "s1-auth" || rec.Room != "!room:example.org" {
			t.Errorf("the fork's record: %+v", rec)
		}
		if rooms, err := tx.RoomSessions("!room:example.org"); err != nil || len(rooms) != 1 {
			t.Errorf("RoomSessions: %v %v", rooms, err)
		}
		rec, err = tx.Session("s1-auth")
		if err != nil {
			return err
		}
		if rec.Memory == nil || rec.Memory.BudgetTokens != 20000 || rec.Version != 12 || !slices.Equal(rec.ActiveTags, []string{"db"}) {
			t.Errorf("the main record: %+v", rec)
		}
		if sid, ok := tx.SourceSession("claude-code:0f3c2a55"); !ok || sid != "s1-auth" {
			t.Errorf("SourceSession: %q %v", sid, ok)
		}
		if seq, ok, err := tx.ImportKey("s1-auth", "line-7"); err != nil || !ok || seq != 3 {
			t.Errorf("ImportKey: %d %v %v", seq, ok, err)
		}
		if p, err := tx.Prefs("s1-auth"); err != nil || string(p) != `{"slice":[1,2]}` {
			t.Errorf("Prefs: %s %v", p, err)
		}
		if v := tx.Setting("memory/file"); !strings.Contains(string(v), "30000") {
			t.Errorf("Setting: %s", v)
		}
		m, err := tx.Message("s1-auth", 14)
		if err != nil {
			return err
		}
		if len(m.Content) < 16<<10 || !strings.HasPrefix(m.Content, "a large tool output") {
			t.Errorf("the large message came back %d bytes long", len(m.Content))
		}
		return nil
	}))
	// Run again: everything is there.
	again, err := migrate.Copy(context.Background(), src, dst, opts())
	if err != nil {
		t.Fatal(err)
	}
	if again.Skipped != 4 || again.Messages != 0 || again.Ops != 0 || again.Settings != 0 {
		t.Errorf("a second run: %+v, want everything skipped", again)
	}
}

// A file copies into another file whole.
func TestMigrateFileToFile(t *testing.T) {
	t.Parallel()
	copyAndCheck(t, file, file)
}

// A file copies into PostgreSQL, PostgreSQL into a file, and one
// database into another.
func TestMigratePostgres(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, to opener }{{file, postgres}, {postgres, file}, {postgres, postgres}} {
		t.Run(c.from.name+"-to-"+c.to.name, func(t *testing.T) {
			t.Parallel()
			copyAndCheck(t, c.from, c.to)
		})
	}
}

// cancelling is a store that cancels the copy's context after a number
// of write transactions, as an interruption would.
type cancelling struct {
	store.Store
	after  int64
	n      atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelling) Update(fn func(store.Tx) error) error {
	err := c.Store.Update(fn)
	if c.n.Add(1) == c.after {
		c.cancel()
	}
	return err
}

// A copy interrupted anywhere (after each number of write transactions)
// runs again to the end, with no message or operation twice.
func TestMigrateResumesAnInterruptedCopy(t *testing.T) {
	t.Parallel()
	interruptAndResume(t, file, file)
}

// The same from a file into PostgreSQL and back.
func TestMigratePostgresResumesAnInterruptedCopy(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, to opener }{{file, postgres}, {postgres, file}} {
		t.Run(c.from.name+"-to-"+c.to.name, func(t *testing.T) {
			t.Parallel()
			interruptAndResume(t, c.from, c.to)
		})
	}
}

func interruptAndResume(t *testing.T, from, to opener) {
	src := from.open(t)
	seeded := seed(t, src)
	want := counts(t, src, seeded.ids)
	// The whole copy takes 17 write transactions: the settings; the
	// main session's record, messages, keys and last one (2-5); the
	// fork's (6-8); the long one's record, 5 batches and last one
	// (9-15); the empty one's (16-17). Interrupt it after each kind.
	for _, after := range []int64{1, 3, 4, 7, 9, 11, 16} {
		dst := to.open(t)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := migrate.Copy(ctx, src, &cancelling{Store: dst, after: after, cancel: cancel}, opts())
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted after %d transactions: %v, want context.Canceled", after, err)
		}
		res, err := migrate.Copy(context.Background(), src, dst, opts())
		if err != nil {
			t.Fatalf("after an interruption after %d transactions: %v", after, err)
		}
		// After 16 only the empty session's record was missing its
		// last transaction, which puts nothing more: it is whole.
		if res.Verified != 4 || res.Copied+res.Resumed+res.Updated+res.Skipped != 4 || (after < 16 && res.Skipped == 4) {
			t.Errorf("after %d: %+v", after, res)
		}
		if got := counts(t, dst, seeded.ids); !maps.Equal(got, want) {
			t.Errorf("after %d: counts %v, want %v", after, got, want)
		}
	}
}

// A session the destination holds in part, as a copy that stopped
// leaves it (its record, its first messages and operation), is resumed
// after its last message, and its operations, keys and preferences put.
func TestMigrateResumesAPartialSession(t *testing.T) {
	t.Parallel()
	src, dst := file.open(t), file.open(t)
	seeded := seed(t, src)
	must(t, src.View(func(srcTx store.Tx) error {
		rec, err := srcTx.Session("s3-long")
		if err != nil {
			return err
		}
		var first []model.Message
		if err := srcTx.Messages("s3-long", 1, 100, func(m model.Message) error { first = append(first, m); return nil }); err != nil {
			return err
		}
		ops, err := srcTx.Ops("s1-auth")
		if err != nil {
			return err
		}
		main, err := srcTx.Session("s1-auth")
		if err != nil {
			return err
		}
		return dst.Update(func(tx store.Tx) error {
			if err := tx.PutSession(rec); err != nil {
				return err
			}
			if err := tx.AppendMessages("s3-long", first); err != nil {
				return err
			}
			// s1-auth as it was before its last operations, at an
			// earlier version, without its messages yet.
			main.Version, main.OpCount = 5, 3
			if err := tx.PutSession(main); err != nil {
				return err
			}
			for _, op := range ops[:3] {
				if err := tx.PutOp("s1-auth", op); err != nil {
					return err
				}
			}
			return tx.PutImportKey("s1-auth", "line-1", 1)
		})
	}))
	var actions []string
	o := opts()
	o.Report = func(p migrate.Progress) {
		if p.Action != migrate.Verified && p.Action != migrate.Copying {
			actions = append(actions, p.Session+" "+string(p.Action))
		}
	}
	res, err := migrate.Copy(context.Background(), src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"s1-auth resumed", "s2-fork copied", "s3-long resumed", "s4-empty copied"}; !slices.Equal(actions, want) {
		t.Errorf("actions %v, want %v", actions, want)
	}
	if res.Messages != seeded.messages-100 || res.Ops != seeded.ops-3 || res.Verified != 4 {
		t.Errorf("result %+v: want %d messages and %d operations copied, 4 verified", res, seeded.messages-100, seeded.ops-3)
	}
	if got, want := counts(t, dst, seeded.ids), counts(t, src, seeded.ids); !maps.Equal(got, want) {
		t.Errorf("counts %v, want %v", got, want)
	}
}

// A destination that holds something else under a source's session ID,
// or a newer or longer state of it, or another value of a setting, is
// refused before anything is written.
func TestMigrateRefusesADestinationThatDiffers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		put  func(tx store.Tx) error
		says string
	}{
		{"another session", func(tx store.Tx) error {
			return tx.PutSession(model.Session{ID: "s2-fork", Title: "mine", CreatedAt: t0.Add(time.Minute), UpdatedAt: t0})
		}, "another session with this ID"},
		{"a newer version", func(tx store.Tx) error {
			return tx.PutSession(model.Session{ID: "s4-empty", CreatedAt: t0.Add(4 * time.Hour), UpdatedAt: t0, Version: 3})
		}, "at version 3 there"},
		{"more messages", func(tx store.Tx) error {
			if err := tx.PutSession(model.Session{ID: "s4-empty", CreatedAt: t0.Add(4 * time.Hour), UpdatedAt: t0}); err != nil {
				return err
			}
			return tx.AppendMessages("s4-empty", messages("s4-empty", 1, 2))
		}, "2 messages there"},
		{"another operation", func(tx store.Tx) error {
			if err := tx.PutSession(model.Session{ID: "s2-fork", CreatedAt: t0.Add(2 * time.Hour), UpdatedAt: t0, Version: 1}); err != nil {
				return err
			}
			return tx.PutOp("s2-fork", model.Op{ID: "mine", Type: model.OpSnip, Targets: []model.ItemID{"m1"}, Active: true, CreatedAt: t0, Author: "operator"})
		}, "operation 1 is mine there"},
		{"an operation's ID", func(tx store.Tx) error {
			if err := tx.PutSession(model.Session{ID: "mine", CreatedAt: t0, UpdatedAt: t0}); err != nil {
				return err
			}
			return tx.PutOp("mine", model.Op{ID: "op03", Type: model.OpSnip, Targets: []model.ItemID{"m1"}, Active: true, CreatedAt: t0, Author: "operator"})
		}, "its operation op03 is session mine's there"},
		{"a source", func(tx store.Tx) error {
			if err := tx.PutSession(model.Session{ID: "mine", CreatedAt: t0, UpdatedAt: t0}); err != nil {
				return err
			}
			return tx.PutSourceSession("claude-code:0f3c2a55", "mine")
		}, `its source "claude-code:0f3c2a55" leads to session mine there`},
		{"a setting", func(tx store.Tx) error {
			return tx.PutSetting("memory/file", []byte(`{"budget_tokens":1}`))
		}, `setting "memory/file"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src, dst := file.open(t), file.open(t)
			seed(t, src)
			must(t, dst.Update(c.put))
			before, err := dst.Sessions()
			must(t, err)
			_, err = migrate.Copy(context.Background(), src, dst, opts())
			if !errors.Is(err, migrate.ErrDiffers) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("Copy: %v, want ErrDiffers saying %q", err, c.says)
			}
			after, err := dst.Sessions()
			must(t, err)
			if len(after) != len(before) {
				t.Errorf("the refused copy wrote %d sessions", len(after)-len(before))
			}
		})
	}
}

// Verify finds a copy that was changed after it was made, and says
// where.
func TestMigrateVerifyFindsADifference(t *testing.T) {
	t.Parallel()
	src, dst := file.open(t), file.open(t)
	seed(t, src)
	if _, err := migrate.Copy(context.Background(), src, dst, opts()); err != nil {
		t.Fatal(err)
	}
	must(t, dst.Update(func(tx store.Tx) error {
		if err := tx.AppendMessages("s2-fork", messages("s2-fork", 6, 1)); err != nil {
			return err
		}
		ops, err := tx.Ops("s1-auth")
		if err != nil {
			return err
		}
		ops[2].Active = false
		return tx.PutOp("s1-auth", ops[2])
	}))
	n, err := migrate.Verify(context.Background(), src, dst, opts())
	if !errors.Is(err, migrate.ErrMismatch) || n != 2 {
		t.Fatalf("Verify: %d equal, %v; want 2 and ErrMismatch", n, err)
	}
	for _, want := range []string{"session s2-fork: 6 messages there, 5 in the source", "session s1-auth: operation 3 (op03) differs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Verify's error does not say %q:\n%v", want, err)
		}
	}
}

// asking is a store whose reads note the widest span of messages asked
// for at once.
type asking struct {
	store.Store
	widest uint64
}

func (a *asking) View(fn func(store.Tx) error) error {
	return a.Store.View(func(tx store.Tx) error { return fn(askingTx{tx, a}) })
}

type askingTx struct {
	store.Tx
	a *asking
}

func (t askingTx) Messages(id string, from, to uint64, fn func(model.Message) error) error {
	t.a.widest = max(t.a.widest, to-from+1)
	return t.Tx.Messages(id, from, to, fn)
}

// A batch asks its source for no more messages than it holds: a backend
// that streams rows reads every row it was asked for.
func TestMigrateReadsABatchAtATime(t *testing.T) {
	t.Parallel()
	src := &asking{Store: file.open(t)}
	seed(t, src)
	if _, err := migrate.Copy(context.Background(), src, file.open(t), opts()); err != nil {
		t.Fatal(err)
	}
	if src.widest != 64 {
		t.Errorf("the widest read asked for %d messages, want the batch, 64", src.widest)
	}
}

// A source written to after a copy (an operation reverted, a message
// appended) is copied again over its earlier state: the operation put in
// its place, the message after the others.
func TestMigrateBringsACopyUpToDate(t *testing.T) {
	t.Parallel()
	src, dst := file.open(t), file.open(t)
	seeded := seed(t, src)
	if _, err := migrate.Copy(context.Background(), src, dst, opts()); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(2 * time.Hour)
	must(t, src.Update(func(tx store.Tx) error {
		ops, err := tx.Ops("s1-auth")
		if err != nil {
			return err
		}
		ops[2].RevertedAt = &at
		if err := tx.PutOp("s1-auth", ops[2]); err != nil {
			return err
		}
		rec, err := tx.Session("s1-auth")
		if err != nil {
			return err
		}
		rec.Record(at, "operator", "revert")
		if err := tx.PutSession(rec); err != nil {
			return err
		}
		if err := tx.AppendMessages("s2-fork", messages("s2-fork", 6, 2)); err != nil {
			return err
		}
		fork, err := tx.Session("s2-fork")
		if err != nil {
			return err
		}
		fork.MessageCount += 2
		fork.Record(at, "operator", "append")
		return tx.PutSession(fork)
	}))
	var actions []string
	o := opts()
	o.Report = func(p migrate.Progress) {
		if p.Action != migrate.Verified && p.Action != migrate.Copying {
			actions = append(actions, p.Session+" "+string(p.Action))
		}
	}
	res, err := migrate.Copy(context.Background(), src, dst, o)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"s1-auth updated", "s2-fork resumed", "s3-long skipped", "s4-empty skipped"}; !slices.Equal(actions, want) {
		t.Errorf("actions %v, want %v", actions, want)
	}
	if res.Messages != 2 || res.Ops != 1 || res.Verified != 4 {
		t.Errorf("result %+v, want 2 messages and 1 operation written, 4 verified", res)
	}
	if got, want := effective(t, dst, seeded.ids), effective(t, src, seeded.ids); !maps.EqualFunc(got, want, slices.Equal) {
		t.Errorf("effective threads differ:\nsource %v\ncopy   %v", want, got)
	}
	if got := effective(t, dst, seeded.ids)["s1-auth"]; !slices.Contains(got, "m5") {
		t.Errorf("the reverted snip still applies in the copy: %v", got)
	}
}
