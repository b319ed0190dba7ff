package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"weft/ops/listen"
	"weft/ops/relay"
	"weft/ops/tools"
	"weft/store"
)

// access is what a command does with the database file.
type access int

const (
	// reading never changes the file: it is opened read-only, and a
	// file that is not there is not made.
	reading access = iota
	// writing may make the file (and its folder).
	writing
)

// target is where a command does its work: on the file, opened here
// (tools.Local), or through the running weft that holds it
// (relay.Remote). Every command goes through the same calls either
// way, so its output is the same.
type target interface {
	tools.Backend
	tools.Files
}

// invoke runs the tool name on t, its result as R.
func invoke[R any](ctx context.Context, t target, name string, args any) (R, error) {
	var res R
	tool, ok := tools.Lookup(name)
	if !ok {
		return res, fmt.Errorf("this weft has no tool %s", name)
	}
	err := t.Invoke(ctx, tool, args, &res)
	return res, err
}

// withTarget runs fn on the database file: opened here (read-only for
// reading), or, when a running weft holds it, through that weft. A
// reading command on a file that is not there says so and makes none.
func (a *app) withTarget(acc access, fn func(target) error) (err error) {
	if acc == reading {
		if _, err := os.Stat(a.db); !isStoreURL(a.db) && errors.Is(err, os.ErrNotExist) {
			return a.noDatabase()
		}
	}
	f, err := a.openDB(a.lockTimeout(), acc == reading)
	if errors.Is(err, store.ErrInUse) {
		url := listen.ReadAddrFile(a.db)
		if url == "" {
			return fmt.Errorf("%w; nothing that listens for other wefts holds it (a TUI started with --no-mcp, or another command at work), so this command cannot go through it: run it again once that one is done", err)
		}
		r, err := relay.Dial(url, relay.Options{Token: a.bearer()})
		if err != nil {
			return fmt.Errorf("%s.addr: %w", a.db, err)
		}
		return fn(r)
	}
	if err != nil {
		return err
	}
	defer func() { f.close(err) }()
	return fn(tools.Local{Service: f.svc})
}

// heldWait is how long a run waits for the file's lock when the file's
// address says a weft is running.
const heldWait = 200 * time.Millisecond

// lockTimeout is how long to wait for the file's lock (0: the store's
// default). A weft that left its address is most likely running: find
// out quickly rather than wait the whole lock timeout to go through it.
func (a *app) lockTimeout() time.Duration {
	if a.lockWait > 0 {
		return a.lockWait
	}
	if listen.ReadAddrFile(a.db) != "" {
		return heldWait
	}
	return 0
}

// noDatabase says that --db names no file, and how to make one.
func (a *app) noDatabase() error {
	return fmt.Errorf("there is no database at %s: weft import FILE or weft new TITLE makes one there (or --db names the file you meant)", a.db)
}
