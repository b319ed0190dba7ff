package ops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"sync"

	"weft/formats/openai"
	"weft/model"
)

// Reading a caller's thread, which the pre-request hook and the context
// proxy share. An agent sends its whole conversation with every
// request, and all of it but the last message or two was in the request
// before: reading it all again (parsing every block, hashing every
// text) would cost far more than the rest of a request. So the messages
// read are remembered by the chain of the raw messages up to them (a
// hash of every byte before and of the message itself, and its length):
// a message read in the same place after the same messages reads the
// same, so only the messages past the last one remembered are read.

// CallerMessage is a caller's message read the way an import reads it
// (ListReader), with its parts and the identity that recognises it
// (model.Identity).
type CallerMessage struct {
	Message  model.NewMessage
	Parts    []model.Part
	Identity model.Ident
}

// ListReader reads a caller's list of messages in one shape (chat
// completions, the Messages API's messages, the Responses API's items)
// as that shape's importer reads them.
type ListReader struct {
	// Shape names the shape: what is remembered of a list read in one
	// shape is never taken for another's.
	Shape string
	// Read reads raw, whose first message is the list's offset-th: the
	// messages, the parts each was made of (those encoded in its Parts,
	// so that they need not be decoded again; nil, or a nil entry: they
	// are), and for each the index of the message of raw it came from (a
	// Messages API message of tool results is a message per result).
	// Any message it cannot read refuses the whole list, and the refusal
	// says its place.
	// Blocks of lend bytes or more may be kept where they lie in raw
	// (formats.KeepParts), when lend > 0.
	Read func(raw []json.RawMessage, offset, lend int) ([]model.NewMessage, [][]model.Part, []int, error)
	// Mark, if not empty, is what a raw message carries to be listed
	// among the marked (ReadThread): the Messages API's cache
	// breakpoint, "cache_control".
	Mark []byte
}

// ChatMessages reads chat-completions messages ({role, content,
// tool_calls, ...}) as the OpenAI importer reads a file of them: the
// pre-request hook's thread, and the context proxy's for Chat
// Completions.
var ChatMessages = ListReader{Shape: "chat", Read: readChat}

// readChat reads chat-completions messages, one message each.
func readChat(raw []json.RawMessage, offset, lend int) ([]model.NewMessage, [][]model.Part, []int, error) {
	for i, m := range raw {
		if m = bytes.TrimSpace(m); len(m) == 0 || m[0] != '{' {
			return nil, nil, nil, Invalidf("messages[%d] is not a message object ({role, content})", offset+i)
		}
	}
	nms, parts, errs := openai.ReadMessages(raw, lend)
	if len(errs) > 0 {
		texts := make([]string, len(errs))
		for i, e := range errs {
			texts[i] = fmt.Sprintf("messages[%d]: %s", offset+e.Index, e.Reason)
		}
		return nil, nil, nil, Invalidf("messages are not all chat-completions messages ({role, content}): %s", strings.Join(texts, "; "))
	}
	from := make([]int, len(nms))
	for i := range from {
		from[i] = i
	}
	return nms, parts, from, nil
}

// List reads raw whole, remembering nothing (ReadThread remembers): the
// caller's messages, and for each the index of the message of raw it
// came from.
func (r ListReader) List(raw []json.RawMessage, offset, lend int) ([]CallerMessage, []int, error) {
	nms, read, from, err := r.Read(raw, offset, lend)
	if err != nil {
		return nil, nil, err
	}
	out := make([]CallerMessage, len(nms))
	for i, nm := range nms {
		var parts []model.Part
		switch {
		case len(nm.ReadParts) > 0:
			parts = nm.ReadParts
		case len(nm.Parts) == 0:
		case i < len(read) && read[i] != nil:
			parts = read[i] // as read: a message may be megabytes
		default:
			parts = model.DecodeParts(nm.Parts)
		}
		out[i] = CallerMessage{Message: nm, Parts: parts, Identity: model.Identity(nm.Role, nm.Content, parts)}
	}
	return out, from, nil
}

// Places say where a thread's messages were read from: each raw
// message's key (the hash of every byte up to its end), and the index of
// the first message read from it.
type Places struct {
	keys   []PlaceKey
	starts []int32
}

// Raw is how many raw messages the thread was read from.
func (p Places) Raw() int { return len(p.starts) }

// Range is the thread's messages read from raw message r: from..to-1.
func (p Places) Range(r int) (from, to int) {
	from = int(p.starts[r])
	if r+1 < len(p.starts) {
		return from, int(p.starts[r+1])
	}
	return from, -1 // to the end of the thread
}

// KeyOf is the key of the raw message the thread's message i was read
// from: two threads with the same key there have the same messages up
// to i.
func (p Places) KeyOf(i int) (PlaceKey, bool) {
	r, _ := slices.BinarySearch(p.starts, int32(i)+1) // the first raw message read after i
	if r == 0 || r > len(p.keys) {
		return 0, false
	}
	return p.keys[r-1], true
}

// ReadThread reads a caller's whole thread (r.List), reading again only
// the messages past the last one remembered. It also says which of raw
// carry r's Mark (so that the Messages API's cache breakpoints are
// looked for only there), and where the messages were read from.
func (s *Service) ReadThread(r ListReader, raw []json.RawMessage, lend int) ([]CallerMessage, []int, Places, error) {
	m := &s.memo
	keys := m.chain(r.Shape, raw)
	out := make([]CallerMessage, 0, len(raw)+len(raw)/4)
	starts := make([]int32, len(raw))
	var marked []int
	k := 0
	m.mu.Lock()
	for ; k < len(raw); k++ {
		e, ok := m.getLocked(keys[k], len(raw[k]))
		if !ok {
			break
		}
		starts[k] = int32(len(out))
		out = append(out, e.read...)
		if e.marked {
			marked = append(marked, k)
		}
	}
	m.mu.Unlock()
	if k == len(raw) {
		return out, marked, Places{keys, starts}, nil
	}
	fresh, from, err := r.List(raw[k:], k, lend)
	if err != nil {
		return nil, nil, Places{}, err
	}
	// A result's tool is named after its call, which may be among the
	// messages not read again.
	for i := range fresh {
		if fresh[i].Message.Role == model.RoleTool && fresh[i].Message.Name == "" && len(fresh[i].Parts) > 0 {
			fresh[i].Message.Name = calledTool(out, fresh[i].Parts[0].ToolCallID)
		}
	}
	m.mu.Lock()
	j := 0
	for i := range raw[k:] {
		e := memoEntry{n: len(raw[k+i]), marked: len(r.Mark) > 0 && bytes.Contains(raw[k+i], r.Mark)}
		starts[k+i] = int32(len(out) + j)
		first := j
		for j < len(fresh) && from[j] == i {
			e.size += len(fresh[j].Message.Content) + 3*len(fresh[j].Message.Parts)
			if len(fresh[j].Message.Parts) == 0 {
				e.size += partsSize(fresh[j].Parts) // as read, not encoded
			}
			j++
		}
		e.read = fresh[first:j:j]
		e.size += 64 * (len(e.read) + 1)
		m.putLocked(keys[k+i], e)
		if e.marked {
			marked = append(marked, k+i)
		}
	}
	m.mu.Unlock()
	return append(out, fresh...), marked, Places{keys, starts}, nil
}

// partsSize is about the bytes parts hold of their own.
func partsSize(parts []model.Part) int {
	n := 0
	for i := range parts {
		p := &parts[i]
		n += 64 + len(p.Text) + len(p.ToolCallID) + len(p.ToolName) + len(p.Input) + len(p.MediaType) + len(p.Raw)
	}
	return n
}

// calledTool is the name of the latest call with the given ID in msgs,
// or "".
func calledTool(msgs []CallerMessage, id string) string {
	if id == "" {
		return ""
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Message.Role != model.RoleAssistant {
			continue
		}
		for _, p := range msgs[i].Parts {
			if p.Type == model.PartToolCall && p.ToolCallID == id {
				return p.ToolName
			}
		}
	}
	return ""
}

// memoBytes bounds what one generation of the memo holds; two are kept.
const memoBytes = 32 << 20

// PlaceKey is a message's place: the hash of every raw byte up to and
// including it.
type PlaceKey uint64

// threadMemo remembers messages read, by their place. It keeps two
// generations: when the newer fills up, the older is dropped, so what
// the requests of late use stays, and memory is bounded.
type threadMemo struct {
	mu       sync.Mutex
	seed     maphash.Seed
	seeded   bool
	cur, old map[PlaceKey]memoEntry
	curBytes int
}

// memoEntry is what one raw message read as: its messages (none for an
// empty one), whether it carries its reader's mark, its length (which
// must match, as well as the key) and about how many bytes it holds.
type memoEntry struct {
	read   []CallerMessage
	marked bool
	n      int
	size   int
}

// chain is the key of each message of raw.
func (m *threadMemo) chain(shape string, raw []json.RawMessage) []PlaceKey {
	m.mu.Lock()
	if !m.seeded {
		m.seed, m.seeded = maphash.MakeSeed(), true
	}
	seed := m.seed
	m.mu.Unlock()
	keys := make([]PlaceKey, len(raw))
	var h maphash.Hash
	h.SetSeed(seed)
	h.WriteString(shape)
	for i, msg := range raw {
		// The hash goes on over every message: each key covers all
		// the bytes before it.
		h.Write(msg)
		h.WriteByte(0)
		keys[i] = PlaceKey(h.Sum64())
	}
	return keys
}

func (m *threadMemo) getLocked(k PlaceKey, n int) (memoEntry, bool) {
	if e, ok := m.cur[k]; ok && e.n == n {
		return e, true
	}
	e, ok := m.old[k]
	if !ok || e.n != n {
		return memoEntry{}, false
	}
	m.putLocked(k, e)
	return e, true
}

func (m *threadMemo) putLocked(k PlaceKey, e memoEntry) {
	if m.cur == nil || m.curBytes > memoBytes {
		m.old, m.cur, m.curBytes = m.cur, make(map[PlaceKey]memoEntry), 0
	}
	m.cur[k] = e
	m.curBytes += e.size
}
