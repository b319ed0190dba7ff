package ops_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"weft/ops"
	"weft/ops/tools/toolstest"
)

func TestCreateSessionPerRoomAndInterface(t *testing.T) {
	f := toolstest.New(t)
	create := func(args string) ops.CreateSessionResult {
		t.Helper()
		return f.MustCall("create_session", args).(ops.CreateSessionResult)
	}
	first := create(`{"room":"!general:example.org","interface":"matrix"}`)
	if first.Existing || first.Title != "!general:example.org (matrix)" || first.Room != "!general:example.org" || first.Interface != "matrix" {
		t.Fatalf("first create of the pair: %+v", first)
	}
	tests := []struct {
		name     string
		args     string
		existing bool // the pair's session comes back
		title    string
	}{
		{"the same pair", `{"room":"!general:example.org","interface":"matrix"}`, true, "!general:example.org (matrix)"},
		{"the same pair, spaced, with another title", `{"title":"other","room":"  !general:example.org ","interface":" matrix"}`, true, "!general:example.org (matrix)"},
		{"the room on another interface", `{"room":"!general:example.org","interface":"cli"}`, false, "!general:example.org (cli)"},
		{"another room on the interface", `{"title":"Random","room":"!random:example.org","interface":"matrix"}`, false, "Random"},
		{"the interface's name in another case", `{"room":"!general:example.org","interface":"Matrix"}`, false, "!general:example.org (Matrix)"},
		// A room or an interface alone is a label: a new session each time.
		{"a room without an interface", `{"room":"!general:example.org"}`, false, "!general:example.org"},
		{"the same again", `{"room":"!general:example.org"}`, false, "!general:example.org"},
		{"an interface without a room", `{"title":"t","interface":"matrix"}`, false, "t"},
		{"the same again", `{"title":"t","interface":"matrix"}`, false, "t"},
	}
	seen := map[string]bool{first.SessionID: true}
	for _, tt := range tests {
		before := f.FileHash()
		got := create(tt.args)
		if got.Existing != tt.existing || got.Title != tt.title {
			t.Errorf("%s: %+v, want existing=%v title %q", tt.name, got, tt.existing, tt.title)
		}
		switch {
		case tt.existing && (got.SessionID != first.SessionID || f.FileHash() != before):
			t.Errorf("%s: session %s and the file changed %v; want %s and nothing written", tt.name, got.SessionID, f.FileHash() != before, first.SessionID)
		case !tt.existing && seen[got.SessionID]:
			t.Errorf("%s: session %s again, want a new one", tt.name, got.SessionID)
		}
		seen[got.SessionID] = true
	}
	list, err := f.Svc.Store().Sessions()
	if err != nil || len(list) != len(seen) {
		t.Errorf("%d sessions in the file (%v), want %d", len(list), err, len(seen))
	}
	// The pair's session is the same one after it was written to.
	f.MustCall("add_turn", fmt.Sprintf(`{"session_id":%q,"query":"hello"}`, first.SessionID))
	if again := create(`{"room":"!general:example.org","interface":"matrix"}`); again.SessionID != first.SessionID || !again.Existing {
		t.Errorf("after a turn: %+v, want %s again", again, first.SessionID)
	}
}

func TestCreateSessionRefusesBadRooms(t *testing.T) {
	f := toolstest.New(t)
	f.MustCall("create_session", `{"room":"r","interface":"cli"}`)
	long := strings.Repeat("r", 121)
	for _, tt := range []struct{ args, says string }{
		{`{"interface":"cli"}`, "title is empty"},
		{`{"title":"  "}`, "title is empty"},
		{fmt.Sprintf(`{"room":%q,"interface":"cli"}`, long), "room is 121 bytes long; keep it to 120"},
		{fmt.Sprintf(`{"room":"r","interface":%q}`, strings.Repeat("i", 41)), "interface is 41 bytes long; keep it to 40"},
		{`{"room":"two\nlines","interface":"cli"}`, "room \"two\\nlines\" holds a control character"},
		{`{"room":"r","interface":"c\tli"}`, "interface \"c\\tli\" holds a control character"},
		{`{"room":"r","interface":"cli","title":7}`, "argument title must be"},
	} {
		before := f.FileHash()
		if _, err := f.Call("create_session", tt.args); !errors.Is(err, ops.ErrInvalid) || !strings.Contains(fmt.Sprint(err), tt.says) {
			t.Errorf("create_session %s: %v, want invalid saying %q", tt.args, err, tt.says)
		}
		if f.FileHash() != before {
			t.Errorf("create_session %s was refused but changed the file", tt.args)
		}
	}
}

// TestCreateSessionConcurrentPair: clients creating the same pair at
// once get one session between them, and every other pair its own.
func TestCreateSessionConcurrentPair(t *testing.T) {
	f := toolstest.New(t)
	const n = 24
	got := make([]ops.CreateSessionResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			// Half call the service, half the registry, as faces do;
			// every third creates another pair, in the same room.
			iface := "matrix"
			if i%3 == 2 {
				iface = "cli"
			}
			if i%2 == 0 {
				got[i], errs[i] = f.Svc.CreateSession(context.Background(), ops.CreateSessionArgs{Title: fmt.Sprint("client ", i), Room: "lobby", Interface: iface})
				return
			}
			var res any
			res, errs[i] = f.Call("create_session", fmt.Sprintf(`{"title":"client %d","room":"lobby","interface":%q}`, i, iface))
			if errs[i] == nil {
				got[i] = res.(ops.CreateSessionResult)
			}
		})
	}
	close(start)
	wg.Wait()
	ids := map[string]string{} // interface -> session
	made := map[string]int{}   // interface -> sessions made
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("client %d: %v", i, errs[i])
		}
		iface := got[i].Interface
		if id, ok := ids[iface]; ok && id != got[i].SessionID {
			t.Errorf("client %d got session %s for lobby/%s, another got %s", i, got[i].SessionID, iface, id)
		}
		ids[iface] = got[i].SessionID
		if !got[i].Existing {
			made[iface]++
		}
	}
	if made["matrix"] != 1 || made["cli"] != 1 {
		t.Errorf("sessions made per interface: %v, want one each", made)
	}
	list, err := f.Svc.Store().Sessions()
	if err != nil || len(list) != 2 {
		t.Errorf("%d sessions in the file (%v), want 2", len(list), err)
	}
}
