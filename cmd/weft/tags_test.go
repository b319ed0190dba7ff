package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCallSelectsByTag: weft call takes tag:NAME in ids, as JSON and as a
// key=value list, and filters a read by tags; a tag no item carries is
// refused and changes nothing.
func TestCallSelectsByTag(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "tags.db")
	if _, code, err := weft(t, db, "new", "tags"); code != 0 {
		t.Fatal(err)
	}
	if _, code, err := weft(t, db, "call", "append_messages",
		`messages=[{"role":"user","content":"schema?"},{"role":"assistant","content":"two tables"},{"role":"user","content":"lunch?"},{"role":"assistant","content":"an index on email"},{"role":"user","content":"thanks"}]`); code != 0 {
		t.Fatal(err)
	}
	if _, code, err := weft(t, db, "call", "tag_messages", "ids=m1,m2,m4", "tags=db"); code != 0 {
		t.Fatal(err)
	}
	ids := func(out string) []string {
		t.Helper()
		var r struct {
			Messages []struct {
				Index int    `json:"index"`
				ID    string `json:"id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("result %q: %v", out, err)
		}
		var got []string
		for _, m := range r.Messages {
			got = append(got, m.ID)
		}
		return got
	}
	out, code, err := weft(t, db, "call", "get_message_range", "tags=db")
	if code != 0 {
		t.Fatal(err)
	}
	if got := strings.Join(ids(out), " "); got != "m1 m2 m4" {
		t.Errorf("get_message_range tags=db gives %s, want m1 m2 m4", got)
	}

	// Refused: the unknown tag is named, with the tags there are, and the
	// session is as it was.
	before, _, _ := weft(t, db, "call", "list_operations")
	_, code, err = weft(t, db, "call", "snip_messages", `ids=["tag:dbx"]`)
	if code != 1 || err == nil || !strings.Contains(err.Error(), `no item of the effective thread carries tag "dbx"; the session's tags: db`) {
		t.Fatalf("an unknown tag: exit %d, %v", code, err)
	}
	if after, _, _ := weft(t, db, "call", "list_operations"); after != before {
		t.Errorf("a refused edit changed the operations:\n%s\n%s", before, after)
	}

	if _, code, err = weft(t, db, "call", "snip_messages", `ids=["tag:db"]`); code != 0 {
		t.Fatal(err)
	}
	out, _, _ = weft(t, db, "call", "get_message_range", "start_idx=0", "end_idx=1")
	if got := strings.Join(ids(out), " "); got != "m3 m5" {
		t.Errorf("after snip_messages ids=[\"tag:db\"] the thread is %s, want m3 m5", got)
	}
	// The key=value list form, mixed with an ID.
	if _, code, err = weft(t, db, "call", "tag_messages", "ids=tag:DB,m5", "tags=x"); code == 0 || !strings.Contains(err.Error(), `carries tag "DB"; the session has no tags`) {
		t.Errorf("tag:DB with every db item snipped: exit %d, %v", code, err)
	}
	if _, code, err = weft(t, db, "call", "tag_messages", "ids=m5,m3", "tags=later"); code != 0 {
		t.Fatal(err)
	}
	_, code, err = weft(t, db, "call", "digest_messages", "ids=tag:later", "summary=lunch and thanks")
	if code != 0 {
		t.Fatal(err)
	}
	out, _, _ = weft(t, db, "call", "get_message_range", "start_idx=0", "end_idx=0")
	if got := ids(out); len(got) != 1 || !strings.HasSuffix(got[0], "/0") {
		t.Errorf("after digest_messages ids=tag:later the thread is %v, want its summary alone", got)
	}
}
