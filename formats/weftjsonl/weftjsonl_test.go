package weftjsonl

import (
	"bytes"
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
	if err := Write(&buf, model.Session{ID: "s1", Title: "t", ActiveTags: []string{"x"}}, msgs, ops); err != nil {
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

func FuzzReadWeft(f *testing.F) {
	f.Add(weftSample(f))
	f.Add([]byte(`{"weft":1,"type":"session","session":{"id":"s"}}` + "\n" + `{"type":"op","op":{"id":"o"}}`))
	f.Add([]byte("\x00\xff"))
	f.Add([]byte(`{"weft":1,"type":"session","session":{"id":"s"}}` + "\n" + `{"type":"message","message":{"seq":2,"role":"user","content":"x"}}` + "\n" + `{"type":"message","message":{"seq":2,"role":"user","content":"x"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Read(bytes.NewReader(b), importtest.NewRecorder(t))
	})
}
