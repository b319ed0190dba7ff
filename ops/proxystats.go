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
}

// CountRequest counts a proxied request in its session's stats: its
// messages' tokens (raw) and those of the thread sent in their place.
func (s *Service) CountRequest(sessionID string, raw, sent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.requests == nil {
		s.requests = map[string]ProxyStats{}
	}
	st := s.requests[sessionID]
	st.Requests++
	st.RawTokens, st.SentTokens, st.LastAt = raw, sent, FormatTime(s.Clock())
	s.requests[sessionID] = st
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
