package codex

import (
	"bytes"
	"encoding/json"
)

// Pending says how much of a growing rollout (data: whole lines) can be
// imported now: all of it, unless its last line is an event that repeats
// a response item (user_message, agent_message, agent_reasoning). Codex
// writes the event a moment before the item; a file read between the
// two keeps the event as a message of its own, and the item, read once
// it is there, would repeat it. Such a last line waits for the next.
func Pending(data []byte) int {
	end := len(bytes.TrimRight(data, "\n"))
	if end == 0 {
		return len(data)
	}
	start := bytes.LastIndexByte(data[:end], '\n') + 1
	var rec struct {
		Type    string `json:"type"`
		Payload struct {
			Type string `json:"type"`
		} `json:"payload"`
	}
	if json.Unmarshal(data[start:end], &rec) != nil || rec.Type != "event_msg" {
		return len(data)
	}
	switch rec.Payload.Type {
	case "user_message", "agent_message", "agent_reasoning":
		return start
	}
	return len(data)
}
