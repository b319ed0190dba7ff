package claudecode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// line makes a wireLine at base+ms milliseconds.
func line(base time.Time, ms int, from, via, msg, note string) wireLine {
	l := wireLine{Time: base.Add(time.Duration(ms) * time.Millisecond), From: from, Via: via, Note: note}
	if msg != "" {
		l.Msg = json.RawMessage(msg)
	}
	return l
}

// TestSubscriptionsReadsBothProtocols: a subscription is a
// resources/subscribe, or resourceSubscriptions in the 2026-07-28
// protocol's subscriptions/listen; what listen asked for is reported.
func TestSubscriptionsReadsBothProtocols(t *testing.T) {
	base := time.Now()
	wire := []wireLine{
		line(base, 0, "client", "stdio", `{"jsonrpc":"2.0","id":"listen:0","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["weft://sessions/a"]}}}`, ""),
		line(base, 1, "client", "stdio", `{"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"weft://sessions/b"}}`, ""),
		line(base, 2, "server", "stdio", `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"weft://sessions/b"}}`, ""),
	}
	uris, listen := subscriptions(wire)
	if !reflect.DeepEqual(uris, []string{"weft://sessions/a", "weft://sessions/b"}) {
		t.Errorf("subscriptions %v", uris)
	}
	if !reflect.DeepEqual(listen, []string{`resourceSubscriptions=["weft://sessions/a"]`, "resourcesListChanged=true", "toolsListChanged=true"}) {
		t.Errorf("listen asked for %v", listen)
	}
	if got := notificationsAfter(wire, base); len(got) != 1 || got[0].method != updatedMethod || got[0].uri != "weft://sessions/b" || got[0].via != "stdio" {
		t.Errorf("notifications %+v", got)
	}
	if uris, listen = subscriptions(wire[2:]); uris != nil || listen != nil {
		t.Errorf("a log without subscriptions: %v %v", uris, listen)
	}
}

// TestTakenQuietlyFindsTrouble: each way a client can stumble over a
// notification fails the check, and a clean log passes it.
func TestTakenQuietlyFindsTrouble(t *testing.T) {
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	n := notification{method: listChangedMethod, via: "GET", at: base.Add(10 * time.Millisecond)}
	notif := line(base, 10, "server", "GET", `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, "")
	read := line(base, 20, "client", "POST", `{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"weft://sessions/a"}}`, "")
	answer := line(base, 21, "server", "POST", `{"jsonrpc":"2.0","id":4,"result":{"contents":[]}}`, "")
	before := line(base, 0, "client", "POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, "")
	debug := func(t *testing.T, lines ...string) string {
		p := filepath.Join(t.TempDir(), "debug.log")
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return p
	}
	quiet := []string{"2026-01-02T03:04:05.000Z [ERROR] before the notification: not counted", "2026-01-02T03:04:05.030Z [DEBUG] fine"}

	for _, tc := range []struct {
		name  string
		wire  []wireLine
		debug []string
		want  string // in the error; "" for none
	}{
		{"clean", []wireLine{before, notif, read, answer}, quiet, ""},
		{"an error back", []wireLine{notif, line(base, 15, "client", "POST", `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no"}}`, ""), read, answer}, quiet, "sent an error"},
		{"a reconnection", []wireLine{notif, line(base, 15, "client", "POST", `{"jsonrpc":"2.0","id":9,"method":"initialize","params":{}}`, ""), read, answer}, quiet, "connected again"},
		{"not passed on", []wireLine{notif, line(base, 11, "server", "GET", "", notPassedOn+" broken pipe"), read, answer}, quiet, "broken pipe"},
		{"no answer", []wireLine{notif, read}, quiet, "got no answer"},
		{"a failed request", []wireLine{notif, read, line(base, 21, "server", "POST", `{"jsonrpc":"2.0","id":4,"error":{"code":-32603,"message":"x"}}`, "")}, quiet, "failed"},
		{"no request after", []wireLine{before, notif}, quiet, "made no request"},
		{"a warning after", []wireLine{notif, read, answer}, append(quiet, "2026-01-02T03:04:05.012Z [WARN] [mcp] weft: resources/list_changed refresh failed"), "refresh failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := claudeRun{wire: tc.wire, debugLog: debug(t, tc.debug...)}
			got, err := takenQuietly(run, n)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("a clean log fails: %v", err)
			case tc.want == "" && !strings.Contains(got, "over the GET event stream"):
				t.Errorf("the report says %q", got)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
