package mcpserver

import (
	"encoding/json"
	"testing"
)

// The id found as bytes go by is the id decoding finds, fed whole or a
// byte at a time; lines whose id is not a usable id give none.
func TestIDFinderAgreesWithDecoding(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ line, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `1`},
		{` { "id" : "a\"b" , "method":"ping"}`, `"a\"b"`},
		{`{"method":"ping","params":{"id":3,"list":[{"id":4}]},"id":-5}`, `-5`},
		{`{"params":{"x":"}\",\"id\":6"},"id":"seven"}`, `"seven"`},
		{`{"idx":1,"xid":2,"id":8}`, `8`},
		{`{"id":null,"method":"x"}`, ``},
		{`{"id":1.5}`, ``},
		{`{"id":true}`, ``},
		{`{"id":{"n":1}}`, ``},
		{`[{"id":1}]`, ``},
		{`"id"`, ``},
		{`{"method":"no id"}`, ``},
	} {
		for _, bytewise := range []bool{false, true} {
			f := &idFinder{}
			if bytewise {
				for i := range len(tt.line) {
					f.write([]byte{tt.line[i]})
				}
			} else {
				f.write([]byte(tt.line))
			}
			if got := string(f.id()); got != tt.want {
				t.Errorf("%s (bytewise %v): id %q, want %q", tt.line, bytewise, got, tt.want)
			}
			if tt.want != "" {
				var m struct{ ID json.RawMessage }
				if json.Unmarshal([]byte(tt.line), &m); string(m.ID) != tt.want {
					t.Errorf("%s: decoding finds %s", tt.line, m.ID)
				}
			}
		}
	}
}
