package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"
)

// A bad line on weft mcp's stdin is answered with a JSON-RPC error and the
// process serves on, whether it holds the file or relays to the weft that
// does.
func TestMCPStdioBadLine(t *testing.T) {
	t.Parallel()
	for _, relayed := range []bool{false, true} {
		db, _ := seededDB(t)
		if relayed {
			startServe(t, db, "--addr", "127.0.0.1:0")
		}
		cmd := weftProcess("--db", db, "mcp")
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		outPipe, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr syncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out := bufio.NewScanner(outPipe)
		out.Buffer(nil, 16<<20)
		lines := make(chan map[string]json.RawMessage)
		go func() {
			for out.Scan() {
				var m map[string]json.RawMessage
				json.Unmarshal(out.Bytes(), &m)
				lines <- m
			}
			close(lines)
		}()
		// Answers may come in any order: collect them by id.
		answers := map[string]map[string]json.RawMessage{}
		await := func(id string) map[string]json.RawMessage {
			t.Helper()
			deadline := time.After(20 * time.Second)
			for answers[id] == nil {
				select {
				case m, ok := <-lines:
					if !ok {
						t.Fatalf("relayed=%v: weft mcp closed stdout waiting for id %s; stderr: %s", relayed, id, stderr.String())
					}
					answers[string(m["id"])] = m
				case <-deadline:
					t.Fatalf("relayed=%v: no answer with id %s", relayed, id)
				}
			}
			m := answers[id]
			delete(answers, id)
			return m
		}
		send := func(line string) {
			t.Helper()
			if _, err := io.WriteString(in, line+"\n"); err != nil {
				t.Fatalf("relayed=%v: weft mcp stopped reading: %v; stderr: %s", relayed, err, stderr.String())
			}
		}

		send(`{bad json`)
		if m := await("null"); !bytes.Contains(m["error"], []byte(`"code":-32700`)) {
			t.Errorf("relayed=%v: bad JSON answered %v", relayed, m)
		}
		send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		if m := await("1"); m["result"] == nil {
			t.Fatalf("relayed=%v: initialize answered %v", relayed, m)
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(`{"jsonrpc":"2.0","id":[2],"method":"ping"}`)
		if m := await("null"); !bytes.Contains(m["error"], []byte(`"code":-32600`)) {
			t.Errorf("relayed=%v: an array id answered %v", relayed, m)
		}
		send(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		if m := await("3"); !bytes.Contains(m["result"], []byte(`"get_message_range"`)) {
			t.Errorf("relayed=%v: tools/list answered %.300v", relayed, m)
		}
		in.Close()
		// Read stdout to its end before Wait closes it.
		for drained := false; !drained; {
			select {
			case _, ok := <-lines:
				drained = !ok
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("relayed=%v: weft mcp did not end after stdin closed", relayed)
			}
		}
		if err := waitExit(t, cmd); err != nil {
			t.Errorf("relayed=%v: weft mcp exit: %v; stderr: %s", relayed, err, stderr.String())
		}
		if s := stderr.String(); strings.Contains(s, "ERROR") {
			t.Errorf("relayed=%v: stderr: %s", relayed, s)
		}
	}
}
