package mcpserver

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// cutMarker is the end of a cut body: how much is left and the call that
// reads on.
var cutMarker = regexp.MustCompile(`\n… \[([\d,]+) more characters: get_message_range start_idx=(\d+) end_idx=(\d+) content_offset=(\d+)( view=raw)?\]$`)

// TestCutBodiesReadOn: a body cut to fit a budget ends with a marker
// that names the call reading on; following the markers, over MCP and
// over POST /api, gives back the whole body, character for character.
func TestCutBodiesReadOn(t *testing.T) {
	t.Parallel()
	svc, sid := toolHeavy(t)
	fs, _ := faces(t, svc)
	for _, f := range fs {
		for _, c := range []struct {
			name string
			tool string
			args map[string]any
			list string
		}{
			{"get_conversation_context", "get_conversation_context", map[string]any{"session_id": sid, "turns": 30, "max_tokens": 2000}, "raw_turns"},
			{"get_turns_since stored", "get_turns_since", map[string]any{"session_id": sid, "timestamp": heavyT0.Format("2006-01-02T15:04:05Z"), "include_summaries": false, "max_tokens": 2000}, "messages"},
			{"get_message_range raw", "get_message_range", map[string]any{"session_id": sid, "start_idx": 290, "end_idx": 299, "view": "raw", "max_tokens": 1500}, "messages"},
		} {
			t.Run(f.name+"/"+c.name, func(t *testing.T) {
				res, _, refused := f.call(t, c.tool, c.args)
				if refused != "" {
					t.Fatal(refused)
				}
				followed := 0
				for _, x := range res[c.list].([]any) {
					m := x.(map[string]any)
					content := m["content"].(string)
					mark := cutMarker.FindStringSubmatch(content)
					if mark == nil {
						continue
					}
					whole := wholeContent(t, f, sid, mark)
					got := readOn(t, f, sid, content, mark)
					if got != whole {
						t.Errorf("%s: following the markers gives %d bytes, the message has %d", m["id"], len(got), len(whole))
					}
					followed++
				}
				if followed == 0 {
					t.Fatalf("no cut body in %s", c.name)
				}
			})
		}
	}
}

// wholeContent reads a message's content without a budget, where a
// marker says it is.
func wholeContent(t *testing.T, f face, sid string, mark []string) string {
	t.Helper()
	idx, _ := strconv.Atoi(mark[2])
	args := map[string]any{"session_id": sid, "start_idx": idx, "end_idx": idx, "max_tokens": 0}
	if mark[5] != "" {
		args["view"] = "raw"
	}
	res, _, refused := f.call(t, "get_message_range", args)
	if refused != "" {
		t.Fatal(refused)
	}
	return res["messages"].([]any)[0].(map[string]any)["content"].(string)
}

// readOn follows a cut content's markers, each call with the default
// budget, and returns what they give together.
func readOn(t *testing.T, f face, sid, content string, mark []string) string {
	t.Helper()
	var b strings.Builder
	for calls := 0; mark != nil; calls++ {
		b.WriteString(strings.TrimSuffix(content, mark[0]))
		idx, _ := strconv.Atoi(mark[2])
		offset, _ := strconv.Atoi(mark[4])
		args := map[string]any{"session_id": sid, "start_idx": idx, "end_idx": idx, "content_offset": offset, "max_tokens": 1000}
		if mark[5] != "" {
			args["view"] = "raw"
		}
		res, _, refused := f.call(t, "get_message_range", args)
		if refused != "" {
			t.Fatalf("reading on at %d: %s", offset, refused)
		}
		list, _ := res["messages"].([]any)
		if len(list) != 1 {
			t.Fatalf("reading on at %d gives %d messages: %.300v", offset, len(list), res)
		}
		m := list[0].(map[string]any)
		if got, _ := m["content_offset"].(float64); int(got) != offset {
			t.Fatalf("content_offset %v, asked %d", m["content_offset"], offset)
		}
		content = m["content"].(string)
		mark = cutMarker.FindStringSubmatch(content)
		if calls > 100 {
			t.Fatal("still reading on after 100 calls")
		}
	}
	b.WriteString(content)
	return b.String()
}

// TestMessageRangeRefusals: get_message_range's budget and content
// offset are checked like every read's, and a refusal changes nothing.
func TestMessageRangeRefusals(t *testing.T) {
	t.Parallel()
	svc, sid := toolHeavy(t)
	fs, _ := faces(t, svc)
	for _, f := range fs {
		before := versions(t, svc)
		for _, c := range []struct {
			args map[string]any
			says string
		}{
			{map[string]any{"start_idx": 0, "end_idx": 5, "max_tokens": 499}, "max_tokens 499 is too small"},
			{map[string]any{"start_idx": 0, "end_idx": 5, "max_tokens": -3}, "max_tokens -3 is too small"},
			{map[string]any{"start_idx": 0, "end_idx": 5, "max_tokens": "all"}, "max_tokens"},
			{map[string]any{"start_idx": 0, "end_idx": 5, "content_offset": 10}, "give start_idx equal to end_idx"},
			{map[string]any{"start_idx": 32, "end_idx": 32, "content_offset": -1}, "content_offset -1 is negative"},
			{map[string]any{"start_idx": 32, "end_idx": 32, "content_offset": 1 << 30}, "past the end"},
		} {
			c.args["session_id"] = sid
			if _, _, refused := f.call(t, "get_message_range", c.args); !strings.Contains(refused, c.says) {
				t.Errorf("%s %v: %q, want it refused saying %q", f.name, c.args, refused, c.says)
			}
		}
		if after := versions(t, svc); len(after) != len(before) || after[sid] != before[sid] {
			t.Errorf("%s: a refusal changed the session", f.name)
		}
	}
}
