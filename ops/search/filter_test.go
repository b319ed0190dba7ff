package search_test

import (
	"context"
	"slices"
	"testing"

	"weft/model"
	"weft/ops"
	"weft/ops/search"
	"weft/ops/tools/toolstest"
)

func TestFilterItems(t *testing.T) {
	t.Parallel()
	f := toolstest.New(t)
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
