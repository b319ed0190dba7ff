package proxy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The body sent upstream from a session's kept head (its messages
// encoded once, then the rest) is byte for byte the body written with
// every message encoded anew, whatever the client marks for its cache
// and whatever fields of their own its messages carry: a breakpoint or
// fields on a message of the head encode that message again, in its
// place.
func TestProxyHeadSendsTheBodyOfTheWholeThread(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	thread := agentThread(300)
	// An agent's system turn with fields of its own (Claude Code's
	// per-turn settings on its environment), in what will be the head.
	env := `{"role":"system","content":"# Environment\nPrimary working directory: /w","output_config":{"effort":"medium"}}`
	thread = slices.Insert(thread, 120, env)
	// send writes a request's body as the proxy sends it, and as it
	// sends it from the whole thread.
	send := func(msgs []string) (sent, whole string, turn Turn) {
		t.Helper()
		body := []byte(anBody(false, msgs...))
		req, err := parseProxyBody(Anthropic, body)
		if err != nil {
			t.Fatal(err)
		}
		turn, err = EngineOf(rig.svc).Take(t.Context(), Request{API: Anthropic, Messages: req.messages})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := turn.Wait(); err != nil {
			t.Fatal(err)
		}
		if turn.Unchanged {
			return string(body), string(body), turn
		}
		out, err := req.rewrite(nil, &turn)
		if err != nil {
			t.Fatal(err)
		}
		// The same thread without a head: every message encoded now.
		wholeTurn := turn
		if turn.AnthropicHead != nil {
			w := *turn.Anthropic
			w.Messages = append(slices.Clone(turn.AnthropicHead.Messages()), w.Messages...)
			wholeTurn.AnthropicHead, wholeTurn.Anthropic = nil, &w
		}
		all, err := req.rewrite(nil, &wholeTurn)
		if err != nil {
			t.Fatal(err)
		}
		return string(out), string(all), turn
	}
	_, _, first := send(thread)
	digest(t, rig.svc, first.SessionID, 0, 99, "The limiter's bucket refill reads the wall clock.")

	mark := func(msg string) string {
		// A cache breakpoint on the message's last block.
		k := strings.LastIndex(msg, "}]}")
		return msg[:k] + `,"cache_control":{"type":"ephemeral"}` + msg[k:]
	}
	heads := 0
	for i := range 60 {
		thread = append(thread, `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`, fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"next %d"}]}`, i))
		msgs := thread
		marks := 0
		switch i % 3 {
		case 1: // the latest message, after the head
			msgs = append(thread[:len(thread)-1:len(thread)-1], mark(thread[len(thread)-1]))
			marks = 1
		case 2: // a message of the head too, and fields of its own on the latest
			msgs = append([]string{}, thread...)
			msgs[150] = mark(msgs[150])
			msgs[len(msgs)-1] = mark(msgs[len(msgs)-1])
			msgs[len(msgs)-1] = strings.Replace(msgs[len(msgs)-1], `{"role":"user",`, `{"role":"user","x_turn":{"n":1},`, 1)
			marks = 2
		}
		sent, whole, turn := send(msgs)
		if sent != whole {
			t.Fatalf("request %d: sent\n%s\nthe whole thread's body\n%s", i, sent, whole)
		}
		// The system's and the tools' breakpoints, and the messages'.
		if got, want := strings.Count(sent, "cache_control"), strings.Count(anBody(false), "cache_control")+marks; got != want {
			t.Errorf("request %d: %d cache breakpoints sent, want %d", i, got, want)
		}
		if turn.AnthropicHead != nil {
			heads++
		}
		if strings.Count(sent, `"output_config":{"effort":"medium"}}`) != 1 || strings.Contains(sent, `"x_turn":{"n":1}}`) != (i%3 == 2) {
			t.Errorf("request %d: the messages' own fields are not where they were", i)
		}
	}
	if heads < 50 {
		t.Errorf("%d of 60 requests sent from a head", heads)
	}
}

// Requests of one session at once share its head: each sends what the
// whole thread's body is (run with -race).
func TestProxyHeadSharedByRequestsAtOnce(t *testing.T) {
	rig := newProxyRig(t, rigOptions{})
	thread := agentThread(120)
	body := []byte(anBody(false, thread...))
	req, err := parseProxyBody(Anthropic, body)
	if err != nil {
		t.Fatal(err)
	}
	turn, err := EngineOf(rig.svc).Take(t.Context(), Request{API: Anthropic, Messages: req.messages})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := turn.Wait(); err != nil {
		t.Fatal(err)
	}
	digest(t, rig.svc, turn.SessionID, 0, 39, "Read twenty files.")
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			errs <- func() error {
				for i := range 20 {
					// A token count: the thread and a question of its
					// own, nothing stored.
					msgs := append(slices.Clip(thread), fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"question %d.%d","cache_control":{"type":"ephemeral"}}]}`, g, i))
					req, err := parseProxyBody(Anthropic, []byte(anBody(false, msgs...)))
					if err != nil {
						return err
					}
					turn, err := EngineOf(rig.svc).Take(t.Context(), Request{API: Anthropic, Messages: req.messages, Probe: true})
					if err != nil {
						return err
					}
					sent, err := req.rewrite(nil, &turn)
					if err != nil {
						return err
					}
					if turn.AnthropicHead == nil {
						return fmt.Errorf("request %d.%d: no head", g, i)
					}
					w := *turn.Anthropic
					w.Messages = append(slices.Clone(turn.AnthropicHead.Messages()), w.Messages...)
					whole := turn
					whole.AnthropicHead, whole.Anthropic = nil, &w
					all, err := req.rewrite(nil, &whole)
					if err != nil {
						return err
					}
					if string(sent) != string(all) {
						return fmt.Errorf("request %d.%d: sent\n%s\nwhole\n%s", g, i, sent, all)
					}
				}
				return nil
			}()
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
