package claudecode

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"weft/formats"
	"weft/model"
)

// The thread made of the active branch: its messages, digests, key and
// title, and emitting it.

// ccThread is the thread as it will be emitted.
type ccThread struct {
	info    formats.ThreadInfo
	msgs    []ccOut
	digests []recordedDigestCC
}

type recordedDigestCC struct{ from, to, summary string }

type ccOut struct {
	key   string
	role  model.Role
	name  string
	parts []model.Part
	// content, when set, is the parts rendered, made with them (a tool
	// result's: ccResult.content).
	content string
	at      int64
	meta    map[string]string
	msgID   string // an assistant message's API message ID
	isMeta  bool
	toolID  map[string]bool
}

// assemble turns the ordered records into the thread's messages and
// digests.
func (rd *ccReader) assemble(th *ccThread, order, path []int32, leaf int32) {
	nodes := rd.nodes
	var (
		segStart  = 0  // first message since the last boundary
		lastAsst  = -1 // latest assistant message of this segment
		lastOther = -1 // latest message that is not a tool result
		pending   = -1 // digest waiting for its summary
		toolNames = map[string]string{}
	)
	for _, i := range order {
		nd := &nodes[i]
		if nd.flags&ccBoundary != 0 {
			pending = -1
			if len(th.msgs) > segStart {
				th.digests = append(th.digests, recordedDigestCC{
					from: th.msgs[segStart].key, to: th.msgs[len(th.msgs)-1].key,
				})
				pending = len(th.digests) - 1
			}
			segStart, lastAsst, lastOther = len(th.msgs), -1, -1
			continue
		}
		rec := nd.rec
		if rec == nil {
			continue
		}
		switch nd.kind {
		case ccAssistant:
			if len(rec.parts) == 0 {
				continue
			}
			for _, p := range rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					toolNames[p.ToolCallID] = p.ToolName
				}
			}
			// more of the latest response, with at most its first calls'
			// results in between
			if lastAsst >= 0 && lastOther == lastAsst && rec.msgID != "" && th.msgs[lastAsst].msgID == rec.msgID {
				m := &th.msgs[lastAsst]
				for _, p := range rec.parts {
					if p.Type == model.PartToolCall && p.ToolCallID != "" {
						if m.toolID[p.ToolCallID] {
							continue // written twice
						}
						if m.toolID == nil {
							m.toolID = map[string]bool{}
						}
						m.toolID[p.ToolCallID] = true
					}
					m.parts = append(m.parts, p)
				}
				continue
			}
			m := ccOut{key: nd.uuid, role: model.RoleAssistant, parts: rec.parts, at: nd.at, msgID: rec.msgID,
				meta: map[string]string{"uuid": nd.uuid}}
			if rec.model != "" {
				m.meta["model"] = rec.model
			}
			for _, p := range rec.parts {
				if p.Type == model.PartToolCall && p.ToolCallID != "" {
					if m.toolID == nil {
						m.toolID = map[string]bool{}
					}
					m.toolID[p.ToolCallID] = true
				}
			}
			// the slice is shared with the record: copy before appending
			m.parts = m.parts[:len(m.parts):len(m.parts)]
			th.msgs = append(th.msgs, m)
			lastAsst, lastOther = len(th.msgs)-1, len(th.msgs)-1
		case ccUser:
			if rec.compactSummary {
				if pending >= 0 {
					th.digests[pending].summary = strings.TrimSpace(formats.RenderContent(rec.parts))
					pending = -1
					continue
				}
				// nothing before the boundary to collapse: the summary is
				// all there is of the earlier conversation, so it stays
			}
			user := func() {
				if len(rec.parts) == 0 {
					return
				}
				m := ccOut{key: nd.uuid, role: model.RoleUser, parts: rec.parts, at: nd.at, isMeta: rec.isMeta,
					meta: map[string]string{"uuid": nd.uuid}}
				if rec.weftSystem {
					m.role, m.parts = model.RoleSystem, ccUnlabel(rec.parts)
				}
				if rec.isMeta {
					m.meta["isMeta"] = "true"
				}
				if rec.compactSummary {
					m.meta["isCompactSummary"] = "true"
				}
				th.msgs = append(th.msgs, m)
				lastOther = len(th.msgs) - 1
			}
			tools := func() {
				for k, res := range rec.results {
					key := nd.uuid + "#" + strconv.Itoa(k+1)
					if k == 0 && len(rec.parts) == 0 {
						key = nd.uuid
					}
					id := res.parts[0].ToolCallID
					th.msgs = append(th.msgs, ccOut{key: key, role: model.RoleTool, name: toolNames[id],
						parts: res.parts, content: res.content, at: nd.at, meta: map[string]string{"uuid": nd.uuid}})
				}
			}
			if rec.resultsFirst {
				tools()
				user()
			} else {
				user()
				tools()
			}
		}
	}
	for k := range th.digests {
		if th.digests[k].summary == "" {
			th.digests[k].summary = ccDefaultSummary
		}
	}
	if len(th.msgs) == 0 {
		return
	}

	// Times: a record without one takes its predecessor's.
	var last int64
	for k := range th.msgs {
		if th.msgs[k].at != 0 {
			last = th.msgs[k].at
			break
		}
	}
	for k := range th.msgs {
		if th.msgs[k].at == 0 {
			th.msgs[k].at = last
		}
		last = th.msgs[k].at
	}

	// cwd and branch on the first message
	for _, i := range path {
		if rec := nodes[i].rec; rec != nil && (rec.cwd != "" || rec.gitBranch != "") {
			if rec.cwd != "" {
				th.msgs[0].meta["cwd"] = rec.cwd
			}
			if rec.gitBranch != "" {
				th.msgs[0].meta["gitBranch"] = rec.gitBranch
			}
			break
		}
	}

	th.info = formats.ThreadInfo{Key: rd.threadKey(path, leaf), Title: rd.threadTitle(th, ccPathSet(path)), Source: formats.ClaudeCode}
	if at := th.msgs[0].at; at != 0 {
		th.info.CreatedAt = time.Unix(0, at).UTC()
	}
}

func ccPathSet(path []int32) map[int32]bool {
	m := make(map[int32]bool, len(path))
	for _, i := range path {
		m[i] = true
	}
	return m
}

// threadKey is the session ID (the leaf's, as the file is named after
// it); an agent transcript, which carries its parent session's ID, adds
// its agent ID. A file without session IDs is known by its root's uuid.
func (rd *ccReader) threadKey(path []int32, leaf int32) string {
	nodes := rd.nodes
	sid := nodes[leaf].sessionID
	for k := len(path) - 1; sid == "" && k >= 0; k-- {
		sid = nodes[path[k]].sessionID
	}
	if nodes[leaf].flags&ccSidechain != 0 {
		for _, i := range path {
			if rec := nodes[i].rec; rec != nil && rec.agentID != "" {
				return sid + "/agent-" + rec.agentID
			}
		}
	}
	if sid == "" {
		return "uuid:" + nodes[path[0]].uuid
	}
	return sid
}

// threadTitle: the last custom title; else a summary of this branch (or
// of any record in the file, or the first one); else the first line of
// the first thing the user typed.
func (rd *ccReader) threadTitle(th *ccThread, onPath map[int32]bool) string {
	if rd.title != "" {
		return formats.CutTitle(rd.title)
	}
	best, rank := "", 0
	for _, s := range rd.summary {
		r := 1
		if i, ok := rd.index[s.leaf]; ok {
			r = 2
			if onPath[i] {
				r = 3
			}
		}
		if r > rank || (r == rank && r > 1) {
			best, rank = s.text, r
		}
	}
	if best != "" {
		return formats.CutTitle(best)
	}
	command := ""
	for _, m := range th.msgs {
		if m.role != model.RoleUser || m.isMeta {
			continue
		}
		text := strings.TrimSpace(formats.RenderContent(m.parts))
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "<") {
			if command == "" {
				command = ccCommand(text)
			}
			continue
		}
		return formats.CutTitle(text)
	}
	return formats.CutTitle(command)
}

// ccCommand reads "/name args" from a slash command's user record.
func ccCommand(text string) string {
	tag := func(name string) string {
		open, end := "<"+name+">", "</"+name+">"
		i := strings.Index(text, open)
		if i < 0 {
			return ""
		}
		rest := text[i+len(open):]
		j := strings.Index(rest, end)
		if j < 0 {
			return ""
		}
		return strings.TrimSpace(rest[:j])
	}
	name := tag("command-name")
	if name == "" {
		return ""
	}
	if args := tag("command-args"); args != "" {
		return name + " " + args
	}
	return name
}

func (th *ccThread) emit(emit formats.Emitter) error {
	if err := emit.Begin(th.info); err != nil {
		return err
	}
	for _, m := range th.msgs {
		content := m.content
		if content == "" {
			content = formats.RenderContent(m.parts)
		}
		nm := model.NewMessage{
			Role:    m.role,
			Content: content,
			Name:    m.name,
			Parts:   formats.MessageParts(m.parts),
			Meta:    m.meta,
		}
		if m.at != 0 {
			nm.CreatedAt = time.Unix(0, m.at).UTC()
		}
		if err := emit.Message(formats.Message{Key: m.key, NewMessage: nm}); err != nil {
			return err
		}
	}
	for _, d := range th.digests {
		if err := emit.Digest(d.from, d.to, d.summary); err != nil {
			return err
		}
	}
	return emit.End()
}

// ccUnlabel is the parts of a record weft wrote for a system message
// without the label line its text starts with ("[system]", "[summary of
// ...]"), which only told Claude Code's reader what the text is.
func ccUnlabel(parts []model.Part) []model.Part {
	if len(parts) == 0 || parts[0].Type != model.PartText {
		return parts
	}
	label, rest, ok := strings.Cut(parts[0].Text, "\n")
	if !ok || !strings.HasPrefix(label, "[") || !strings.HasSuffix(label, "]") {
		return parts
	}
	out := slices.Clone(parts)
	out[0].Text = rest
	return out
}
