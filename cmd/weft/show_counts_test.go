package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// weft show counts in words that agree with the count: "1 operation",
// "1 message".
func TestShowCountsInTheSingular(t *testing.T) {
	db := filepath.Join(t.TempDir(), "w.db")
	call := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := run(context.Background(), append([]string{"--db", db}, args...), &out, &out); err != nil {
			t.Fatalf("weft %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	call("new", "one of each")
	call("call", "append_messages", `messages=[{"role":"user","content":"Hello."},{"role":"assistant","content":"Hi."}]`)
	call("call", "snip_messages", "start_idx=0", "end_idx=0")
	out := call("show")
	if !strings.Contains(out, "· 2 messages · 1 operation ·") {
		t.Errorf("weft show's header:\n%s", out)
	}
	if !strings.Contains(out, "snipped 1 item ·") {
		t.Errorf("weft show's marker:\n%s", out)
	}
}
