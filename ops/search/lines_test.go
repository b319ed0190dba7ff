package search_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"weft/ops"
	"weft/ops/opstest"
	"weft/ops/search"

	"weft/model"
)

func TestSubstringLines(t *testing.T) {
	f := opstest.New(t)
	sid := f.Session("exact", 10)
	long := strings.Repeat("x", 900) + " the Needle here"
	f.MustCall("append_messages", `{"messages":[
		{"role":"user","content":"first line\nwe keep a NEEDLE in the hay\nlast needle"},
		{"role":"assistant","content":"no match: n e e d l e"},
		{"role":"assistant","content":"`+long+`"},
		{"role":"user","content":"Straße and STRASSE"}]}`)
	hits, ids, total, err := search.SubstringLines(f.Svc, sid, "needle", 0)
	if err != nil {
		t.Fatal(err)
	}
	if total != 2 || len(hits) != 2 {
		t.Fatalf("total %d, hits %+v", total, hits)
	}
	// In thread order, the first line holding it, the matched characters
	// marked.
	if h := hits[0]; h.Index != 10 || h.Line != "we keep a NEEDLE in the hay" || !slices.Equal(h.Matched, []int{10, 11, 12, 13, 14, 15}) {
		t.Errorf("first hit %+v", h)
	}
	if ids[0] != "m11" || ids[1] != "m13" {
		t.Errorf("ids %v", ids)
	}
	// A long line is cut to a window around the match, the offsets with it.
	h := hits[1]
	if len(h.Line) > search.MaxHitLine || len(h.Matched) != 6 || h.Line[h.Matched[0]:h.Matched[5]+1] != "Needle" {
		t.Errorf("long line hit: %d bytes, matched %v", len(h.Line), h.Matched)
	}
	// A limit keeps the first hits in thread order and still counts all.
	hits, _, total, _ = search.SubstringLines(f.Svc, sid, "needle", 1)
	if len(hits) != 1 || total != 2 || hits[0].Index != 10 {
		t.Errorf("limit 1: %d hits, total %d", len(hits), total)
	}
	// Case is ignored beyond ASCII too, and offsets are bytes.
	hits, _, _, _ = search.SubstringLines(f.Svc, sid, "straße", 0)
	if len(hits) != 1 || len(hits[0].Matched) != 6 || hits[0].Matched[5] != 6 {
		t.Errorf("straße: %+v", hits)
	}
	if _, _, _, err := search.SubstringLines(f.Svc, sid, "  ", 0); err == nil {
		t.Error("an empty query was searched")
	}
}

func TestFilterItems(t *testing.T) {
	f := opstest.New(t)
	sid := f.Session("filter", 6) // user, assistant, user, …
	f.MustCall("append_messages", `{"messages":[{"role":"assistant","name":"claude-code","content":"named"}]}`)
	f.MustCall("tag_messages", `{"start_idx":1,"end_idx":2,"tags":["db"]}`)
	agent := ops.WithAuthor(context.Background(), "claude-code")
	if _, err := f.Svc.InsertMessages(agent, ops.InsertArgs{SessionID: sid, AfterIdx: new(int), Messages: []model.NewMessage{{Role: model.RoleSystem, Content: "a note"}}}); err != nil {
		t.Fatal(err)
	}
	// Items: m1, inserted system note, m2..m7.
	v := f.View(sid)
	tests := []struct {
		name string
		f    search.ItemFilter
		want []int
	}{
		{"none", search.ItemFilter{}, []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"role", search.ItemFilter{Roles: []model.Role{model.RoleUser}}, []int{0, 3, 5}},
		{"roles: any of them", search.ItemFilter{Roles: []model.Role{model.RoleUser, model.RoleSystem}}, []int{0, 1, 3, 5}},
		{"tag, case ignored", search.ItemFilter{Tags: []string{"DB"}}, []int{2, 3}},
		{"tag and role: both", search.ItemFilter{Tags: []string{"db"}, Roles: []model.Role{model.RoleUser}}, []int{3}},
		{"author: a name, or an operation's author", search.ItemFilter{Authors: []string{"claude"}}, []int{1, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := search.FilterItems(f.Svc, v, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
