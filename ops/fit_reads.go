package ops

import "context"

// The read tools' methods: each runs its read through fitTo (fit.go), so
// that every caller, through the registry or not, gets a result whose
// result_tokens is exact and which holds its budget.

// ListSessions lists sessions, most recently updated first, within a
// budget (list_sessions).
func (s *Service) ListSessions(ctx context.Context, a ListSessionsArgs) (ListSessionsResult, error) {
	return fitTo((*Service).listSessions)(s, ctx, a)
}

// SearchSessions finds the sessions whose title or effective thread
// contains the query, within a budget (search_sessions).
func (s *Service) SearchSessions(ctx context.Context, a SearchSessionsArgs) (SearchSessionsResult, error) {
	return fitTo((*Service).searchSessions)(s, ctx, a)
}

// GetSessionHistory returns a session's thread, formatted, the latest
// items that fit a budget (get_session_history).
func (s *Service) GetSessionHistory(ctx context.Context, a SessionHistoryArgs) (SessionHistoryResult, error) {
	return fitTo((*Service).getSessionHistory)(s, ctx, a)
}

// ListOperations lists a session's operations, the latest that fit a
// budget (list_operations).
func (s *Service) ListOperations(ctx context.Context, a ListOperationsArgs) (ListOperationsResult, error) {
	return fitTo((*Service).listOperations)(s, ctx, a)
}

// GetConversationContext blends summaries and raw turns to cover a
// number of turns, within a budget (get_conversation_context).
func (s *Service) GetConversationContext(ctx context.Context, a ConversationContextArgs) (ConversationContextResult, error) {
	return fitTo((*Service).getConversationContext)(s, ctx, a)
}

// GetTurnsSince returns the turns created at or after a moment, the
// oldest that fit a budget (get_turns_since).
func (s *Service) GetTurnsSince(ctx context.Context, a TurnsSinceArgs) (TurnsSinceResult, error) {
	return fitTo((*Service).getTurnsSince)(s, ctx, a)
}

// GetTurnsAround returns the effective thread around a moment, the
// items nearest it that fit a budget (get_turns_around).
func (s *Service) GetTurnsAround(ctx context.Context, a TurnsAroundArgs) (TurnsAroundResult, error) {
	return fitTo((*Service).getTurnsAround)(s, ctx, a)
}

// SearchSessionHistory searches the thread's content, giving snippets
// around the hits within a budget (search_session_history).
func (s *Service) SearchSessionHistory(ctx context.Context, a SearchArgs) (SearchResult, error) {
	return fitTo((*Service).searchSessionHistory)(s, ctx, a)
}

// GetMessageRange returns an inclusive range of the thread, the first
// items that fit a budget (get_message_range).
func (s *Service) GetMessageRange(ctx context.Context, a MessageRangeArgs) (MessageRangeResult, error) {
	return fitTo((*Service).getMessageRange)(s, ctx, a)
}

// GetStartupContext returns the startup package, the summaries and the
// latest turns that fit a budget (get_startup_context).
func (s *Service) GetStartupContext(ctx context.Context, a StartupContextArgs) (StartupContextResult, error) {
	return fitTo((*Service).getStartupContext)(s, ctx, a)
}

// Each read's arguments carry its budget (budgeted, for fitTo).

func (a *ListSessionsArgs) budget() **int        { return &a.MaxTokens }
func (a *SearchSessionsArgs) budget() **int      { return &a.MaxTokens }
func (a *SessionHistoryArgs) budget() **int      { return &a.MaxTokens }
func (a *ListOperationsArgs) budget() **int      { return &a.MaxTokens }
func (a *ConversationContextArgs) budget() **int { return &a.MaxTokens }
func (a *TurnsSinceArgs) budget() **int          { return &a.MaxTokens }
func (a *TurnsAroundArgs) budget() **int         { return &a.MaxTokens }
func (a *SearchArgs) budget() **int              { return &a.MaxTokens }
func (a *MessageRangeArgs) budget() **int        { return &a.MaxTokens }
func (a *StartupContextArgs) budget() **int      { return &a.MaxTokens }
