package httpx

import "net/http"

// Mount is a path a face serves on the listener (ops/listen), with what
// the listener's guard must know of it before the face sees a request:
// how large a body may be, where the token comes, and how a refusal
// reads to the face's clients.
type Mount struct {
	// Pattern is the path, as http.ServeMux takes it ("/mcp", "/api/").
	Pattern string
	Handler http.Handler
	// Serves says what is there, for the listener's answer at a path
	// nothing serves ("POST /api/TOOL"); empty leaves the mount unsaid.
	Serves string
	// MaxBody caps a request's body; 0 means MaxBodyBytes.
	MaxBody int64
	// TooLarge answers a request whose body is over MaxBody; nil
	// answers as WriteTooLarge does.
	TooLarge func(w http.ResponseWriter, r *http.Request)
	// TokenHeader, when set, is the header the listener's token comes
	// in on these paths, in place of Authorization: Bearer, which here
	// is someone else's; TokenWhy says whose, for the refusal
	// ("Authorization goes to the provider").
	TokenHeader, TokenWhy string
	// Refuse answers a request the guard refuses, in the face's own
	// shape; nil answers with WriteError.
	Refuse func(w http.ResponseWriter, r *http.Request, status int, msg string)
}

// Face is what a face hands the listener: its mounts, and what it does
// as the listener closes.
type Face struct {
	Mounts []Mount
	// Closing, if not nil, is called as the listener starts to close,
	// before it waits for the requests in flight: the face ends what
	// would hold them open (streams of events, MCP sessions).
	Closing func()
	// Closed, if not nil, is called once the listener has stopped
	// serving: the face finishes the work its answers left (the proxy
	// storing them).
	Closed func()
}
