package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"weft/ops"
	"weft/ops/listen"
	"weft/ops/reads"
	"weft/ops/tools"
)

func TestRelay(t *testing.T) {
	t.Parallel()
	svc, sid := seeded(t)
	l := listening(t, svc, listen.Options{Addr: "127.0.0.1:0", Token: "relay-token"})
	relay, err := relayServer(l.Addr(), "relay-token")
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := connectAt(t, relay, "relayed-agent", legacyVersion, nil)
	ctx := context.Background()

	listed, err := cs.ListTools(ctx, nil)
	if err != nil || len(listed.Tools) != len(tools.All()) {
		t.Fatalf("relay tools/list: %d, %v", len(listed.Tools), err)
	}
	var op ops.OpResult
	res := callOK(t, cs, "snip_messages", map[string]any{"start_idx": 1, "end_idx": 2}, &op)
	if got := text(res); strings.TrimSpace(got) != got {
		t.Errorf("relayed result %q has space around it", got)
	}
	list, _ := reads.ListOperations(svc, ctx, reads.ListOperationsArgs{SessionID: sid})
	if last := list.Operations[len(list.Operations)-1]; last.OperationID != op.OperationID || last.Author != "relayed-agent" {
		t.Errorf("relayed edit recorded as %+v", last)
	}

	// Refusals come back with the running weft's words.
	info, _, _ := svc.View(sid)
	for _, args := range []string{
		`{"session_id":"nosuch","start_idx":0,"end_idx":1}`,
		`{"start_idx":"x"}`,
		fmt.Sprintf(`{"start_idx":0,"end_idx":1,"expected_version":%d}`, info.Version-1),
	} {
		tool, _ := tools.Lookup("snip_messages")
		_, want := tool.Call(ctx, svc, json.RawMessage(args))
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		if got := callErr(t, cs, "snip_messages", m); got != want.Error() {
			t.Errorf("relay says %q, in-process %q", got, want)
		}
	}

	// Resources and the prompt work over the relay too.
	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weft://sessions/" + sid + "/context"})
	if err != nil || !strings.Contains(read.Contents[0].Text, `"unsummarized_count"`) {
		t.Errorf("relayed resource: %v", err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weft://sessions/nosuch"}); err == nil || !strings.Contains(err.Error(), `"nosuch" not found`) {
		t.Errorf("relayed missing resource: %v", err)
	}
	if p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "startup"}); err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "Unsummarized turns") {
		t.Errorf("relayed prompt: %v", err)
	}

	// A wrong token and a listener that went away say what to do.
	bad, _ := relayServer(l.URL(), "wrong")
	badCS, _ := connectAt(t, bad, "x", legacyVersion, nil)
	if got := callErr(t, badCS, "list_sessions", map[string]any{}); !strings.Contains(got, "WEFT_TOKEN") {
		t.Errorf("wrong token: %q", got)
	}
	l.Close()
	if got := callErr(t, cs, "list_sessions", map[string]any{}); !strings.Contains(got, "did not answer") {
		t.Errorf("listener gone: %q", got)
	}
	if _, err := relayServer("not a url", ""); err == nil {
		t.Errorf("Dial took a non-URL")
	}
}
