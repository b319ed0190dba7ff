package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"weft/formats"
	"weft/internal/english"
	"weft/model"
	"weft/ops/assemble"
	"weft/store"
)

// The pre-request hook (seed 002): a client sends its whole thread
// before each request to a model; weft recognises the messages it has
// already stored by their digest, stores the new ones at the end, and
// answers with the thread as the model should see it — the stored
// messages with the active operations applied.

// ApplyOpsArgs are apply_context_operations' arguments.
type ApplyOpsArgs struct {
	SessionID       string            `json:"session_id,omitempty" jsonschema:"the session; default: the one the operator has open in weft, else the most recently updated"`
	Messages        []json.RawMessage `json:"messages" jsonschema:"the caller's whole thread, oldest first, as chat-completions messages: {role, content, name?, tool_calls?, tool_call_id?}"`
	ExpectedVersion *uint64           `json:"expected_version,omitempty" jsonschema:"refuse the request if the session's version is not this one"`
}

// ApplyOpsResult is apply_context_operations' result.
type ApplyOpsResult struct {
	SessionID string `json:"session_id"`
	Version   uint64 `json:"version"`
	// Recognized counts the caller's messages found stored already,
	// Appended the new ones stored now (AppendedIDs).
	Recognized  int            `json:"recognized"`
	Appended    int            `json:"appended"`
	AppendedIDs []model.ItemID `json:"appended_ids"`
	// Messages is the caller's thread with the active operations
	// applied, as chat-completions messages.
	Messages []assemble.ChatMessage `json:"messages"`
	// ItemCount and Tokens describe the effective thread.
	ItemCount int `json:"item_count"`
	Tokens    int `json:"tokens"`
	// OperationsApplied counts the operations in effect (wholly or in
	// part).
	OperationsApplied int `json:"operations_applied"`
	// Adjustments say what the chat-completions shape required.
	Adjustments []string `json:"adjustments,omitempty"`
}

// ApplyContextOperations is the pre-request hook: it syncs the caller's
// thread into the session, in one write, and returns it with the active
// operations applied. Sending the same thread again appends nothing.
func (s *Service) ApplyContextOperations(ctx context.Context, a ApplyOpsArgs) (ApplyOpsResult, error) {
	if len(a.Messages) == 0 {
		return ApplyOpsResult{}, Invalidf("messages is empty: send the caller's whole thread, oldest first, as chat-completions messages {role, content}")
	}
	msgs, _, _, err := s.ReadThread(ChatMessages, a.Messages, 0)
	if err != nil {
		return ApplyOpsResult{}, err
	}
	// Count what is likely new before taking the lock (what is not
	// counted by then is counted when stored).
	if snap, err := s.Snapshot(a.SessionID); err == nil && snap.Info.MessageCount < len(msgs) {
		fresh := msgs[snap.Info.MessageCount:]
		CountCallerMessages(fresh)
	}
	var sync SyncResult
	info, err := s.Write(ctx, a.SessionID, a.ExpectedVersion, s.SyncPrepare(msgs, &sync, nil))
	if err != nil {
		return ApplyOpsResult{}, err
	}
	snap, err := s.Snapshot(info.ID)
	if err != nil {
		return ApplyOpsResult{}, err
	}
	v := snap.View
	res := ApplyOpsResult{
		SessionID: snap.Info.ID, Version: snap.Info.Version, Recognized: sync.Recognized,
		Appended: len(sync.IDs), AppendedIDs: sync.IDs, ItemCount: v.Len(), Tokens: v.Tokens,
	}
	if res.AppendedIDs == nil {
		res.AppendedIDs = []model.ItemID{}
	}
	for _, st := range v.Status {
		if st == model.StatusActive || st == model.StatusPartial {
			res.OperationsApplied++
		}
	}
	err = s.st.View(func(tx store.Tx) error {
		items, err := threadItems(tx, v, msgs)
		if err != nil {
			return err
		}
		if images := dropImages(items); images > 0 {
			res.Adjustments = append(res.Adjustments, ImagesNote(images))
		}
		var folded []string
		res.Messages, folded = assemble.OpenAI(items)
		res.Adjustments = append(res.Adjustments, folded...)
		return nil
	})
	if err != nil {
		return ApplyOpsResult{}, err
	}
	return res, nil
}

// SyncResult is what SyncPrepare did: how many of the caller's messages
// were stored already, and the IDs of those it stored now.
type SyncResult struct {
	Recognized int
	IDs        []model.ItemID
}

// SyncPrepare is the write of a caller's whole thread into a session,
// which the pre-request hook and the context proxy share: the caller's
// messages must be the stored ones (hookMatch), then new ones, which are
// appended. out, when not nil, says what it did; describe, when not
// nil, may reword the change of an append (next is the session as it
// leaves it). The identities of what it stores are kept, so the next
// request does not read those messages back to recognise them.
func (s *Service) SyncPrepare(msgs []CallerMessage, out *SyncResult, describe func(c *Thread, next *model.Session, ch *Change)) Prepare {
	if out == nil {
		out = &SyncResult{}
	}
	return func(tx store.Tx, th *Thread, next *model.Session) (*Change, error) {
		n := th.Info.MessageCount
		var err error
		if out.Recognized, err = hookMatch(tx, th, msgs); err != nil {
			return nil, err
		}
		if len(msgs) < n {
			return nil, Conflictf("the caller sent %s, which match the start of session %s, but it stores %d: the hook takes the whole thread, oldest first, and a thread only grows. Send all of it (get_session_history shows it), or start a new session with create_session",
				english.Count(len(msgs), "message"), th.Info.ID, n)
		}
		added := msgs[n:]
		if len(added) == 0 {
			return nil, nil // nothing new: nothing to write
		}
		if err := CheckNewMessages(len(added)); err != nil {
			return nil, err
		}
		var ch *Change
		ch, out.IDs = s.AppendRead(th, next, added, "appended by the pre-request hook")
		if describe != nil {
			describe(th, next, ch)
		}
		return ch, nil
	}
}

// CheckNewMessages refuses a caller's thread with more new messages (n)
// than one append takes.
func CheckNewMessages(n int) error {
	if n > maxAppend {
		return Invalidf("%d new messages in one request is more than %d; store the older ones first with append_messages", n, maxAppend)
	}
	return nil
}

// AppendRead is appendChange for messages read from a caller's thread
// (or a proxied answer), whose identities are known: they are kept with
// the session's, so the next request does not read those messages back
// to recognise them.
func (s *Service) AppendRead(th *Thread, next *model.Session, added []CallerMessage, what string) (*Change, []model.ItemID) {
	n := th.Info.MessageCount
	nms := make([]model.NewMessage, len(added))
	for i, hm := range added {
		nms[i] = hm.Message
	}
	ch, ids := s.appendChange(th, next, nms, what)
	appended := ch.Apply
	ch.Apply = func(c *Thread) {
		appended(c)
		if len(c.idents) == n {
			for _, hm := range added {
				c.idents = append(c.idents, hm.Identity)
			}
		}
	}
	return ch, ids
}

// threadItems are the items of view v as exporters take them, when msgs
// are the caller's thread that v's stored messages began: a stored
// message the caller sent is the caller's message (the same by
// identity, and as the caller has it now), others are read in tx.
func threadItems(tx store.Tx, v *model.View, msgs []CallerMessage) ([]formats.Item, error) {
	items := make([]formats.Item, v.Len())
	var rest []int
	for i, it := range v.Items {
		if it.Seq == 0 || it.Seq > uint64(len(msgs)) {
			rest = append(rest, i)
			continue
		}
		items[i] = CallerItem(v, it, &msgs[it.Seq-1])
	}
	if len(rest) == 0 {
		return items, nil
	}
	read, err := viewItems(tx, v, rest)
	if err != nil {
		return nil, err
	}
	for k, i := range rest {
		items[i] = read[k]
	}
	return items, nil
}

// ThreadItems are threadItems, read in a read of their own.
func (s *Service) ThreadItems(v *model.View, msgs []CallerMessage) ([]formats.Item, error) {
	var items []formats.Item
	err := s.st.View(func(tx store.Tx) error {
		var err error
		items, err = threadItems(tx, v, msgs)
		return err
	})
	return items, err
}

// CallerItem is the item of v's stored message it, as the caller's
// message m, the same by identity, has it now.
func CallerItem(v *model.View, it model.Item, m *CallerMessage) formats.Item {
	nm := &m.Message
	return formats.Item{
		ID: model.MessageID(it.Seq), Role: nm.Role, Content: nm.Content, Name: nm.Name, Parts: m.Parts,
		CreatedAt: nm.CreatedAt, Tokens: nm.Tokens, Tags: v.Tags(it),
	}
}

// hookMatch compares the caller's messages with the stored ones, by
// identity (whatever shape a message left weft in), position by position, and returns how many match; a caller's
// message that differs from the stored one in its place is a conflict
// that says where and how.
func hookMatch(tx store.Tx, c *Thread, msgs []CallerMessage) (int, error) {
	info := c.Info
	m := min(len(msgs), info.MessageCount)
	if m == 0 {
		return 0, nil
	}
	ids, err := c.Identities(tx, m)
	if err != nil {
		return 0, err
	}
	matched := 0
	for matched < m && ids[matched] == msgs[matched].Identity {
		matched++
	}
	if matched == m {
		return matched, nil
	}
	differs, err := tx.Message(info.ID, uint64(matched+1))
	if err != nil {
		return matched, err
	}
	hm := msgs[matched]
	return matched, Conflictf("messages[%d] is not the message session %s stores there: the caller has %s %s, stored message %s is %s %s. %s; stored messages never change, so only new messages at the end can be appended. Send the thread as stored, edit it with the editing tools (revise_messages, snip_messages, ...), or start a new session with create_session",
		matched, info.ID, hm.Message.Role, hookSnippet(hm.Message.Content), differs.ID, differs.Role, hookSnippet(differs.Content), hookMatched(matched))
}

// hookMatched says how many of the caller's messages matched before one
// did not.
func hookMatched(n int) string {
	switch n {
	case 0:
		return "It is the first message"
	case 1:
		return "The first message matches"
	}
	return fmt.Sprintf("The first %d messages match", n)
}

// hookSnippet quotes the start of a message's content for an error.
func hookSnippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:59]) + "…"
	}
	return fmt.Sprintf("%q", s)
}
