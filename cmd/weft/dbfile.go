package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"weft/formats"
	"weft/store"
	"weft/store/boltstore"
)

// openStore opens the database file path as store.Open does, but calls
// a file that is a thread to import (a Claude Code .jsonl given as
// --db) what it is, with the command that imports it: to the store it
// is only a file whose header pages are not a database's, "damaged".
func openStore(path string, opt boltstore.Options) (store.Store, error) {
	if isStoreURL(path) {
		return openServer(path)
	}
	st, err := boltstore.Open(path, opt)
	if err != nil && errors.Is(err, store.ErrDamaged) {
		if kind := importable(path); kind != "" {
			return nil, fmt.Errorf("%s is %s, not a weft database: import it with weft import %s (into the default database, or add --db FILE for another)", path, kind, shellQuote(path))
		}
	}
	return st, err
}

// importable says what importable file path is ("a Claude Code
// transcript"), or "" when it is none weft reads.
func importable(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer func() { _ = f.Close() }()
	head, err := io.ReadAll(io.LimitReader(f, formats.DetectSize))
	if err != nil {
		return ""
	}
	format, err := formats.Detect(head)
	if err != nil {
		return ""
	}
	switch format {
	case formats.ClaudeCode:
		return "a Claude Code transcript"
	case formats.ChatGPT:
		return "a ChatGPT export"
	case formats.Codex:
		return "a Codex session"
	case formats.OpenAI:
		return "a file of chat messages"
	case formats.ShareGPT:
		return "a ShareGPT file"
	case formats.Weft:
		return "a weft export"
	}
	return "a " + string(format) + " file"
}
