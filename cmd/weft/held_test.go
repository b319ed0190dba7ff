package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/relay"
	"weft/ops/tools"
	"weft/store"
	"weft/store/boltstore"
	"weft/tui"
)

// weft [SESSION] on a file a running weft holds opens the TUI through
// that weft: the TUI is handed a relay to it, its edits land in the
// holder's file as the operator's, the status bar is told where that
// weft listens, and the session it had open stops being the holder's
// default when it closes.
func TestTheTUIOpensAHeldFileThroughItsHolder(t *testing.T) {
	db, sid := seededDB(t)
	holder := holdDB(t, db, "held-token")
	t.Setenv("WEFT_TOKEN", "held-token")
	saved := runTUI
	t.Cleanup(func() { runTUI = saved })
	var (
		got    tui.Options
		edited error
		deflt  string
	)
	runTUI = func(_ context.Context, desk tools.Desk, opts tui.Options) error {
		got = opts
		if _, ok := desk.(*relay.Remote); !ok {
			t.Errorf("the TUI is handed %T, not a relay to the holder", desk)
		}
		info, v, err := desk.View(opts.Session)
		if err != nil {
			edited = err
			return nil
		}
		ver := info.Version
		_, edited = desk.TagMessages(context.Background(), ops.TagArgs{
			Selection: ops.Selection{SessionID: info.ID, IDs: []model.ItemID{v.ID(v.Items[0])}},
			Tags:      []string{"through"}, EditOptions: ops.EditOptions{ExpectedVersion: &ver},
		})
		// A session newer than the one open: a call naming none still
		// goes to the one open.
		if _, err := holder.CreateSession(context.Background(), ops.CreateSessionArgs{Title: "made meanwhile"}); err != nil {
			t.Fatal(err)
		}
		desk.SetDefaultSession(info.ID)
		desk.(*relay.Remote).Settle()
		d, _, _ := holder.View("")
		deflt = d.ID
		return nil
	}
	if _, errOut, code, err := runCLIWaiting(0, db, sid); code != 0 {
		t.Fatalf("weft SESSION on a held file: exit %d: %v\n%s", code, err, errOut)
	}
	if edited != nil {
		t.Fatalf("the TUI's tag through the holder: %v", edited)
	}
	list, _ := holder.Operations(sid)
	if op := list[len(list)-1]; op.Type != model.OpTag || op.Author != "operator" || op.Payload.Tags[0] != "through" {
		t.Errorf("the holder's file has %+v, want the operator's tag", op)
	}
	if got.Session != sid || got.Holder == nil || !strings.HasPrefix(got.Holder.Addr(), "127.0.0.1:") || got.Listener != nil {
		t.Errorf("the TUI is given session %q, holder %v, listener %v", got.Session, got.Holder, got.Listener)
	}
	if !strings.Contains(got.Notice, "holds this file: this TUI works through it, and q leaves it running") {
		t.Errorf("the notice at start: %q", got.Notice)
	}
	if deflt != sid {
		t.Errorf("while the TUI ran, the holder's default session was %q, want %q", deflt, sid)
	}
	// Closed: the holder's default is the latest session again, not the
	// one the TUI had open.
	if d, _, _ := holder.View(""); d.Title != "made meanwhile" {
		t.Errorf("after the TUI closed, the holder's default session is %q (%s), want the latest", d.Title, d.ID)
	}
}

// What cannot be opened through the holder is said before the screen is
// taken: a session not there, a token refused, a holder that does not
// listen for other wefts.
func TestTheTUIOnAHeldFileRefusesBeforeTheScreen(t *testing.T) {
	db, _ := seededDB(t)
	holdDB(t, db, "held-token")
	started := tuiRun(t)
	t.Setenv("WEFT_TOKEN", "held-token")
	_, _, code, err := runCLIWaiting(0, db, "no-such-session")
	if code == 0 || !errors.Is(err, ops.ErrNotFound) || !strings.Contains(err.Error(), `"no-such-session" is not a command`) {
		t.Errorf("a session not there, through the holder: exit %d: %v", code, err)
	}
	t.Setenv("WEFT_TOKEN", "wrong")
	if _, _, code, err := runCLIWaiting(0, db); code == 0 || !strings.Contains(err.Error(), "refused the token") {
		t.Errorf("a wrong token: exit %d: %v", code, err)
	}
	if started.Session != "" || started.Holder != nil {
		t.Errorf("the TUI started: %+v", *started)
	}

	// A file held by a weft that does not listen (the TUI with --no-mcp).
	db2, _ := seededDB(t)
	st, err := boltstore.Open(db2, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, _, code, err := runCLIWaiting(0, db2); code == 0 || !errors.Is(err, store.ErrInUse) || !strings.Contains(err.Error(), "cannot go through it") {
		t.Errorf("a file held by a weft that does not listen: exit %d: %v", code, err)
	}
}
