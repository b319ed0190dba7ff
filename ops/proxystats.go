package ops

// The context proxy's requests, counted by session for list_sessions:
// the proxy (ops/proxy) counts each request it takes, and the reads,
// which cannot ask a face, read the counts here.

// ProxyStats describe a session's proxied requests since this weft
// started (list_sessions).
type ProxyStats struct {
	Requests int `json:"requests"`
	// RawTokens → SentTokens: the last request's messages, and the
	// effective thread sent in their place.
	RawTokens  int    `json:"raw_tokens"`
	SentTokens int    `json:"sent_tokens"`
	LastAt     string `json:"last_at"`
	// Usage is what the provider said the last whole answer cost, and
	// CacheReadTotal and InputTotal the cached and all input tokens of
	// every answer it said that of.
	Usage          *Usage `json:"usage,omitempty"`
	CacheReadTotal int    `json:"cache_read_total,omitempty"`
	InputTotal     int    `json:"input_total,omitempty"`
	// PrefixBreaks counts the requests whose thread sent was not the
	// previous one's and more: each makes a provider's prompt cache
	// miss from there on (an edit, a compaction, a client's own change).
	PrefixBreaks int `json:"prefix_breaks"`
	// LastSent is what the last request sent upstream, by part.
	LastSent *SentParts `json:"last_sent,omitempty"`
}

// SentParts is a request sent upstream by part, in tokens: its system
// prompt and tool definitions, and its thread's summaries, turns and
// tool outputs.
type SentParts struct {
	System      int `json:"system"`
	Tools       int `json:"tools"`
	Summaries   int `json:"summaries"`
	Turns       int `json:"turns"`
	ToolOutputs int `json:"tool_outputs"`
}

// CountSent records what a session's latest request sent, by part.
func (s *Service) CountSent(sessionID string, p SentParts) {
	s.countFor(sessionID, func(st *ProxyStats) { st.LastSent = &p })
}

// countFor changes a session's proxy stats under the service's lock.
func (s *Service) countFor(sessionID string, change func(*ProxyStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.requests == nil {
		s.requests = map[string]ProxyStats{}
	}
	st := s.requests[sessionID]
	change(&st)
	s.requests[sessionID] = st
}

// Usage is what a provider said an answer cost, in tokens: the input
// read from its cache, written to it, neither, and the output.
type Usage struct {
	Input      int `json:"input"`
	CacheRead  int `json:"cache_read"`
	CacheWrite int `json:"cache_write"`
	Output     int `json:"output"`
}

// CountUsage records what the provider said a session's latest answer
// cost.
func (s *Service) CountUsage(sessionID string, u Usage) {
	s.countFor(sessionID, func(st *ProxyStats) {
		st.Usage = &u
		st.CacheReadTotal += u.CacheRead
		st.InputTotal += u.Input + u.CacheRead + u.CacheWrite
	})
}

// CountPrefixBreak counts a request of a session whose thread sent broke
// the previous one's prefix.
func (s *Service) CountPrefixBreak(sessionID string) {
	s.countFor(sessionID, func(st *ProxyStats) { st.PrefixBreaks++ })
}

// CountRequest counts a proxied request in its session's stats: its
// messages' tokens (raw) and those of the thread sent in their place.
func (s *Service) CountRequest(sessionID string, raw, sent int) {
	at := FormatTime(s.Clock())
	s.countFor(sessionID, func(st *ProxyStats) {
		st.Requests++
		st.RawTokens, st.SentTokens, st.LastAt = raw, sent, at
	})
}

// ProxyStatsOf returns a session's proxied requests since this weft
// started, or nil when it had none.
func (s *Service) ProxyStatsOf(sessionID string) *ProxyStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.requests[sessionID]
	if !ok {
		return nil
	}
	return &st
}
