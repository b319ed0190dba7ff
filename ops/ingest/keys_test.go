package ingest

import (
	"bytes"
	"context"
	"os"
	"testing"

	"weft/formats"
	"weft/formats/codex"
	"weft/formats/sharegpt"
	"weft/ops/opstest"
	"weft/store"
)

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Many threads imported into one session keep apart: their messages' keys
// (an ordinal and digest, a line) only identify a message within its own
// thread, so they are qualified with the thread's key. One session, one
// entry in the report.
func TestImportThreadsIntoOneSession(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	sgData := readFile(t, "../../formats/testdata/sharegpt/fastchat_dummy_conversation.json")
	cxData := readFile(t, "../../formats/testdata/codex-rollout/rollout_all_record_types.jsonl")
	// a second rollout: the same records under another session ID
	cxData2 := bytes.ReplaceAll(cxData, []byte("11111111-1111-4111-8111-111111111111"), []byte("22222222-2222-4222-8222-222222222222"))

	imp := func(read formats.Reader, data []byte) ImportedSession {
		t.Helper()
		im := New(ctx, f.Svc, Options{Session: "merged"})
		if _, err := read(bytes.NewReader(data), im); err != nil {
			t.Fatal(err)
		}
		mustClose(t, im)
		if len(im.Sessions) != 1 {
			t.Fatalf("%d sessions reported, want 1 (first %+v)", len(im.Sessions), im.Sessions[0])
		}
		return im.Sessions[0]
	}
	s := imp(sharegpt.Read, sgData)
	if !s.Created || s.Added != 2000 || s.Skipped != 0 {
		t.Fatalf("sharegpt into one session: %+v, want 2000 added", s)
	}
	if s := imp(sharegpt.Read, sgData); s.Created || s.Added != 0 || s.Skipped != 2000 {
		t.Fatalf("sharegpt again: %+v, want nothing added", s)
	}
	if s := imp(codex.Read, cxData); s.Added != 9 {
		t.Fatalf("first rollout: %+v", s)
	}
	if s := imp(codex.Read, cxData2); s.Added != 9 || s.Skipped != 0 {
		t.Fatalf("second rollout: %+v, want its 9 messages added", s)
	}
	if s := imp(codex.Read, cxData2); s.Added != 0 || s.Skipped != 9 {
		t.Fatalf("second rollout again: %+v", s)
	}
	info, _, err := f.Svc.View(s.SessionID)
	if err != nil || info.MessageCount != 2018 {
		t.Fatalf("merged session: %d messages (%v), want 2018", info.MessageCount, err)
	}
}

// A session imported before keys were qualified holds the format's bare
// keys: importing its file again still finds them.
func TestImportFindsUnqualifiedKeys(t *testing.T) {
	t.Parallel()
	f := opstest.New(t)
	ctx := context.Background()
	sid := f.Session("legacy", 5)
	info := formats.ThreadInfo{Key: "abc", Title: "legacy", Source: formats.OpenAI}
	err := f.St.Update(func(tx store.Tx) error {
		for i := range 5 {
			if err := tx.PutImportKey(sid, "k"+string(rune('0'+i)), uint64(i+1)); err != nil {
				return err
			}
		}
		return tx.PutSourceSession(sourceKey(info), sid)
	})
	if err != nil {
		t.Fatal(err)
	}
	im := New(ctx, f.Svc, Options{})
	if err := feed(im, info, 7, [2]int{}); err != nil {
		t.Fatal(err)
	}
	if s := im.Sessions; len(s) != 1 || s[0].SessionID != sid || s[0].Added != 2 || s[0].Skipped != 5 {
		t.Fatalf("re-import into a session with bare keys: %+v, want 2 added, 5 there", s)
	}
	again := New(ctx, f.Svc, Options{})
	if err := feed(again, info, 7, [2]int{}); err != nil {
		t.Fatal(err)
	}
	if s := again.Sessions[0]; s.Added != 0 || s.Skipped != 7 {
		t.Fatalf("and again: %+v", s)
	}
}
