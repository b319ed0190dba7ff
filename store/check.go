package store

// Finding is one thing Check found wrong with a file.
type Finding struct {
	Session string `json:"session,omitempty"` // the session it concerns, "" for the file as a whole
	Record  string `json:"record,omitempty"`  // the record, e.g. "message 12", "op #3", "page 7"
	Problem string `json:"problem"`
}

// Check verifies the file at path.
func Check(path string) ([]Finding, error) { return nil, nil }
