package reads

import (
	"context"

	"weft/ops"
)

// The read tools' methods: each runs its read through fitTo (fit.go), so
// that every caller, through the registry or not, gets a result whose
// result_tokens is exact and which holds its budget.

// ListSessions lists sessions, most recently updated first, within a
// budget (list_sessions).
func ListSessions(s *ops.Service, ctx context.Context, a ListSessionsArgs) (ListSessionsResult, error) {
	return fitTo(listSessions)(s, ctx, a)
}

// SearchSessions finds the sessions whose title or effective thread
// contains the query, within a budget (search_sessions).
func SearchSessions(s *ops.Service, ctx context.Context, a SearchSessionsArgs) (SearchSessionsResult, error) {
	return fitTo(searchSessions)(s, ctx, a)
}

// GetSessionByRoom finds the sessions of a room, or its one session on
// an interface, within a budget (get_session_by_room).
func GetSessionByRoom(s *ops.Service, ctx context.Context, a SessionByRoomArgs) (SessionByRoomResult, error) {
	return fitTo(getSessionByRoom)(s, ctx, a)
}

// GetSessionHistory returns a session's thread, formatted, the latest
// items that fit a budget (get_session_history).
func GetSessionHistory(s *ops.Service, ctx context.Context, a SessionHistoryArgs) (SessionHistoryResult, error) {
	return fitTo(getSessionHistory)(s, ctx, a)
}

// ListOperations lists a session's operations, the latest that fit a
// budget (list_operations).
func ListOperations(s *ops.Service, ctx context.Context, a ListOperationsArgs) (ListOperationsResult, error) {
	return fitTo(listOperations)(s, ctx, a)
}

// GetConversationContext blends summaries and raw turns to cover a
// number of turns, within a budget (get_conversation_context).
func GetConversationContext(s *ops.Service, ctx context.Context, a ConversationContextArgs) (ConversationContextResult, error) {
	return fitTo(getConversationContext)(s, ctx, a)
}

// GetTurnsSince returns the turns created at or after a moment, the
// oldest that fit a budget (get_turns_since).
func GetTurnsSince(s *ops.Service, ctx context.Context, a TurnsSinceArgs) (TurnsSinceResult, error) {
	return fitTo(getTurnsSince)(s, ctx, a)
}

// GetTurnsAround returns the effective thread around a moment, the
// items nearest it that fit a budget (get_turns_around).
func GetTurnsAround(s *ops.Service, ctx context.Context, a TurnsAroundArgs) (TurnsAroundResult, error) {
	return fitTo(getTurnsAround)(s, ctx, a)
}

// SearchSessionHistory searches the thread's content, giving snippets
// around the hits within a budget (search_session_history).
func SearchSessionHistory(s *ops.Service, ctx context.Context, a SearchArgs) (SearchResult, error) {
	return fitTo(searchSessionHistory)(s, ctx, a)
}

// GetMessageRange returns an inclusive range of the thread, the first
// items that fit a budget (get_message_range).
func GetMessageRange(s *ops.Service, ctx context.Context, a MessageRangeArgs) (MessageRangeResult, error) {
	return fitTo(getMessageRange)(s, ctx, a)
}

// GetStartupContext returns the startup package, the summaries and the
// latest turns that fit a budget (get_startup_context).
func GetStartupContext(s *ops.Service, ctx context.Context, a StartupContextArgs) (StartupContextResult, error) {
	return fitTo(getStartupContext)(s, ctx, a)
}

// Each read's arguments carry its budget (budgeted, for fitTo).

func (a *ListSessionsArgs) budget() **int        { return &a.MaxTokens }
func (a *SearchSessionsArgs) budget() **int      { return &a.MaxTokens }
func (a *SessionByRoomArgs) budget() **int       { return &a.MaxTokens }
func (a *SessionHistoryArgs) budget() **int      { return &a.MaxTokens }
func (a *ListOperationsArgs) budget() **int      { return &a.MaxTokens }
func (a *ConversationContextArgs) budget() **int { return &a.MaxTokens }
func (a *TurnsSinceArgs) budget() **int          { return &a.MaxTokens }
func (a *TurnsAroundArgs) budget() **int         { return &a.MaxTokens }
func (a *SearchArgs) budget() **int              { return &a.MaxTokens }
func (a *MessageRangeArgs) budget() **int        { return &a.MaxTokens }
func (a *StartupContextArgs) budget() **int      { return &a.MaxTokens }
