package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// Role is who speaks in a message.
type Role string

// The roles a message can have.
const (
	RoleSystem    Role = "system"    // instructions: the system prompt, a digest's summary
	RoleUser      Role = "user"      // the person (or program) asking
	RoleAssistant Role = "assistant" // the model answering, and calling tools
	RoleTool      Role = "tool"      // a tool's result
)

// Roles lists the valid roles in a stable order.
var Roles = []Role{RoleSystem, RoleUser, RoleAssistant, RoleTool}

// Valid reports whether r is one of the four roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// Code is a compact encoding of a role, used in the head index.
func (r Role) Code() uint8 {
	switch r {
	case RoleSystem:
		return 1
	case RoleUser:
		return 2
	case RoleAssistant:
		return 3
	case RoleTool:
		return 4
	}
	return 0
}

// RoleFromCode is the inverse of Role.Code.
func RoleFromCode(c uint8) Role {
	switch c {
	case 1:
		return RoleSystem
	case 2:
		return RoleUser
	case 3:
		return RoleAssistant
	case 4:
		return RoleTool
	}
	return ""
}

// Message is a stored message. Once stored it never changes: operations
// act on views of messages, never on the messages themselves.
type Message struct {
	// ID is stable and derived from Seq (see MessageID), so a view can name
	// a stored message without reading it.
	ID  ItemID `json:"id"`
	Seq uint64 `json:"seq"`

	Role    Role   `json:"role"`
	Content string `json:"content"`
	Name    string `json:"name,omitempty"`
	// Parts keeps structured content (tool calls, tool results, thinking
	// blocks) verbatim as the source had it.
	Parts json.RawMessage `json:"parts,omitempty"`
	// ReadParts are the parts as a reader read them, of a message on its
	// way to a store, when they are not written as Parts (nil): the
	// store writes them into its own form itself, so a block of
	// megabytes is never written out in memory as JSON first (and its
	// text twice, in the part and in the block). A message read from a
	// store has Parts.
	ReadParts []Part            `json:"-"`
	CreatedAt time.Time         `json:"created_at"`
	Tokens    int               `json:"tokens"`
	Meta      map[string]string `json:"meta,omitempty"`
	// Digest is the hex SHA-256 of role and content (see ContentDigest).
	Digest string `json:"digest"`
}

// Head is the part of a message that views and indexes need: enough to
// place, time and count a message without reading its body.
type Head struct {
	At     int64 // created_at, Unix nanoseconds, UTC
	Tokens uint32
	Role   uint8 // Role.Code
	Flags  uint8 // HeadHasParts, ...
}

// Head flags.
const (
	HeadHasParts uint8 = 1 << iota
)

// Head returns the message's head.
func (m *Message) Head() Head {
	h := Head{At: m.CreatedAt.UnixNano(), Tokens: clampTokens(m.Tokens), Role: m.Role.Code()}
	if len(m.Parts) > 0 || len(m.ReadParts) > 0 {
		h.Flags |= HeadHasParts
	}
	return h
}

// Time returns the head's timestamp in UTC.
func (h Head) Time() time.Time { return time.Unix(0, h.At).UTC() }

func clampTokens(n int) uint32 {
	if n < 0 {
		return 0
	}
	if uint64(n) > uint64(^uint32(0)) {
		return ^uint32(0)
	}
	return uint32(n)
}

// ContentDigest is the SHA-256 of role and content that recognises a
// message again (on re-import and in the pre-request hook).
func ContentDigest(role Role, content string) string {
	h := sha256.New()
	h.Write([]byte(role))
	h.Write([]byte{0})
	// A hash never keeps or changes what it is given (io.Writer's
	// contract), so the content is hashed in place, not copied: imports
	// digest every message they store.
	h.Write(unsafe.Slice(unsafe.StringData(content), len(content)))
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// NewMessage is a message as a caller supplies it, before it is stored or
// made synthetic by an operation.
type NewMessage struct {
	Role    Role            `json:"role"`
	Content string          `json:"content"`
	Name    string          `json:"name,omitempty"`
	Parts   json.RawMessage `json:"parts,omitempty"`
	// ReadParts are the parts as read, not written as Parts, for the
	// store to write (Message.ReadParts). A message that has them is
	// only stored, never encoded as JSON itself (an operation's).
	ReadParts []Part            `json:"-"`
	CreatedAt time.Time         `json:"created_at,omitzero"`
	Tokens    int               `json:"tokens,omitempty"`
	Meta      map[string]string `json:"meta,omitempty"`
}

// ItemID names an item of a view: a stored message ("m42") or a synthetic
// message made by an operation ("<op-id>/<k>").
type ItemID string

// MessageID is the ID of the stored message with the given seq.
func MessageID(seq uint64) ItemID { return ItemID("m" + strconv.FormatUint(seq, 10)) }

// SyntheticID is the ID of the k-th synthetic item made by an operation.
func SyntheticID(opID string, k int) ItemID {
	return ItemID(opID + "/" + strconv.Itoa(k))
}

// Seq returns the seq of a stored-message ID, or false if id does not name
// a stored message.
func (id ItemID) Seq() (uint64, bool) {
	s := string(id)
	if len(s) < 2 || s[0] != 'm' || s[1] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(s[1:], 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// Synthetic splits a synthetic item ID into its operation ID and index.
func (id ItemID) Synthetic() (opID string, k int, ok bool) {
	s := string(id)
	i := strings.LastIndexByte(s, '/')
	if i <= 0 || i == len(s)-1 {
		return "", 0, false
	}
	k, err := strconv.Atoi(s[i+1:])
	if err != nil || k < 0 || strconv.Itoa(k) != s[i+1:] {
		return "", 0, false
	}
	return s[:i], k, true
}

// Validate checks a new message the way every face must: a known role and
// some content.
func (m NewMessage) Validate() error {
	if !m.Role.Valid() {
		return fmt.Errorf("role %q is not one of system, user, assistant, tool", m.Role)
	}
	if strings.TrimSpace(m.Content) == "" && len(m.Parts) == 0 && len(m.ReadParts) == 0 {
		return fmt.Errorf("a %s message needs content", m.Role)
	}
	if len(m.Parts) > 0 && !json.Valid(m.Parts) {
		return fmt.Errorf("parts is not valid JSON")
	}
	return nil
}
