package weftjsonl

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"weft/formats/internal/importtest"
	"weft/model"
)

func weftSample(t testing.TB) []byte {
	var buf bytes.Buffer
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	msgs := []model.Message{
		{ID: "m1", Seq: 1, Role: model.RoleUser, Content: "hi", CreatedAt: at, Tokens: 1},
		{ID: "m2", Seq: 2, Role: model.RoleAssistant, Content: "yo", CreatedAt: at.Add(time.Second), Tokens: 1, Meta: map[string]string{"model": "x"}},
	}
	ops := []model.Op{{ID: "op1", Type: model.OpSnip, Targets: []model.ItemID{"m1"}, Active: true, CreatedAt: at, Author: "a"}}
	e := Export{Session: model.Session{ID: "s1", Title: "t", ActiveTags: []string{"x"}}, Messages: msgs, Ops: ops,
		Keys: [][]string{{"uuid-1"}}, Sources: []string{"claude-code:abc"}}
	if err := Write(&buf, e); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadWeft(t *testing.T) {
	r := importtest.NewRecorder(t)
	problems, err := Read(bytes.NewReader(weftSample(t)), r)
	if err != nil || len(problems) > 0 {
		t.Fatal(err, problems)
	}
	th := r.Threads[0]
	if th.Info.Key != "s1" || len(th.Messages) != 2 || th.Messages[1].Key != "s1/m2" || len(th.Ops) != 1 || th.Info.ActiveTags[0] != "x" {
		t.Fatalf("%+v", th)
	}
	// What the session is known by comes along: its sources, and each
	// message's other import keys.
	if !slices.Equal(th.Info.SourceKeys, []string{"claude-code:abc"}) || !slices.Equal(th.Messages[0].Aliases, []string{"uuid-1"}) || th.Messages[1].Aliases != nil {
		t.Fatalf("sources %q, aliases %q and %q", th.Info.SourceKeys, th.Messages[0].Aliases, th.Messages[1].Aliases)
	}
	tests := []struct{ in, says string }{
		{"", "empty file"},
		{"{broken\n", "no weft session found"},
		{`{"type":"message","message":{"seq":1,"role":"user","content":"x"}}` + "\n", "no weft session found"},
		{`{"weft":99,"type":"session","session":{"id":"s"}}` + "\n", "newer than this weft reads"},
	}
	for _, tt := range tests {
		_, err := Read(strings.NewReader(tt.in), importtest.NewRecorder(t))
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%q: %v, want %q", tt.in, err, tt.says)
		}
	}
	// A broken line in the middle is a problem; the rest imports.
	lines := strings.Split(string(weftSample(t)), "\n")
	in := lines[0] + "\n{oops\n" + strings.Join(lines[1:], "\n")
	r = importtest.NewRecorder(t)
	problems, err = Read(strings.NewReader(in), r)
	if err != nil || len(problems) != 1 || problems[0].Line != 2 || len(r.Threads[0].Messages) != 2 {
		t.Fatalf("%v %v", err, problems)
	}
}

// A file from before sessions carried their keys reads as it did; keys
// and sources that cannot be keys are left out, and said so.
func TestReadWeftKeys(t *testing.T) {
	session := `{"weft":1,"type":"session","session":{"id":"s"}`
	msg := `{"type":"message","message":{"seq":1,"role":"user","content":"x"}`
	old, _ := importtest.RunOK(t, Read, session+"}\n"+msg+"}\n")
	if th := old.Threads[0]; th.Info.SourceKeys != nil || th.Messages[0].Aliases != nil || th.Messages[0].Key != "s/m1" {
		t.Errorf("an old file: %+v", th)
	}
	in := session + `,"sources":["claude-code:a","claude-code:a","nocolon",":x",""]}` + "\n" +
		msg + `,"keys":["s/m1","k","k","",` + strconv.Quote(strings.Repeat("x", maxKey+1)) + `]}` + "\n"
	rec, problems, err := importtest.Run(t, Read, in)
	if err != nil {
		t.Fatal(err)
	}
	th := rec.Threads[0]
	if !slices.Equal(th.Info.SourceKeys, []string{"claude-code:a"}) || !slices.Equal(th.Messages[0].Aliases, []string{"k"}) {
		t.Errorf("sources %q, aliases %q", th.Info.SourceKeys, th.Messages[0].Aliases)
	}
	var says []string
	for _, p := range problems {
		says = append(says, p.String())
	}
	want := []string{
		`line 1: source "nocolon" was left out: a source is format:key`,
		`line 1: source ":x" was left out: a source is format:key`,
		`line 1: source "" was left out: a source is format:key`,
		"line 2: an import key of 0 bytes was left out (at most 4096)",
		"line 2: an import key of 4097 bytes was left out (at most 4096)",
	}
	if !slices.Equal(says, want) {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(says, "\n"), strings.Join(want, "\n"))
	}
}

func FuzzReadWeft(f *testing.F) {
	f.Add(weftSample(f))
	f.Add([]byte(`{"weft":1,"type":"session","session":{"id":"s"}}` + "\n" + `{"type":"op","op":{"id":"o"}}`))
	f.Add([]byte("\x00\xff"))
	f.Add([]byte(`{"weft":1,"type":"session","session":{"id":"s"}}` + "\n" + `{"type":"message","message":{"seq":2,"role":"user","content":"x"}}` + "\n" + `{"type":"message","message":{"seq":2,"role":"user","content":"x"}}`))
	f.Add([]byte(`{"weft":1,"type":"session","session":{"id":"s"},"sources":["claude-code:x","y"]}` + "\n" + `{"type":"message","message":{"seq":1,"role":"user","content":"x"},"keys":["u1","s/m1",""]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Read(bytes.NewReader(b), importtest.NewRecorder(t))
	})
}
